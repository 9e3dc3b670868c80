import TestSupport
import XCTest
import HAR
@testable import Redaction

/// `ByteShape`: the word-at-a-time test for digits and capitals that lets a JSON string skip
/// the suspect scan and the base64 test. A wrong bit would let a secret through unscanned.
final class ByteShapeTests: XCTestCase {
    private func expected(_ bytes: [UInt8]) -> ByteShape {
        ByteShape(hasDigit: bytes.contains { $0 >= 0x30 && $0 <= 0x39 }, hasUpper: bytes.contains { $0 >= 0x41 && $0 <= 0x5A },
                  hasOther: bytes.contains { !($0 >= 0x61 && $0 <= 0x7A) && $0 != 0x20 })
    }

    private func shape(_ bytes: [UInt8]) -> ByteShape {
        var w: UInt64 = 0
        for (k, b) in bytes.enumerated() { w |= UInt64(b) << UInt64(8 * k) }
        return ByteShape(bits: ByteShape.bits(w))
    }

    func testEveryByteInEveryPosition() {
        for b in 0...255 {
            for position in 0..<8 {
                // Neighbours of 0xFF and 0x7F: a carry out of a byte would show in the next one.
                for filler: UInt8 in [0x20, 0x7F, 0xFF, 0x2F, 0x3A, 0x40, 0x5B, 0x61, 0x7A, 0x21, 0xA0] {
                    var bytes = [UInt8](repeating: filler, count: 8)
                    bytes[position] = UInt8(b)
                    let got = shape(bytes), want = expected(bytes)
                    XCTAssertEqual(got.hasDigit, want.hasDigit, "byte \(b) at \(position) among \(filler)")
                    XCTAssertEqual(got.hasUpper, want.hasUpper, "byte \(b) at \(position) among \(filler)")
                    XCTAssertEqual(got.hasOther, want.hasOther, "byte \(b) at \(position) among \(filler)")
                }
            }
        }
    }

    func testRandomWords() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let bytes = (0..<8).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let got = shape(bytes), want = expected(bytes)
            XCTAssertEqual(got.hasDigit, want.hasDigit, "\(bytes)")
            XCTAssertEqual(got.hasUpper, want.hasUpper, "\(bytes)")
            XCTAssertEqual(got.hasOther, want.hasOther, "\(bytes)")
        }
    }

    /// Through the JSON rewriter: strings of every length around the 8-byte step, with the one
    /// digit or capital that makes them suspect at every position, and escapes before it.
    func testJSONStringsKeepTheirSuspects() {
        let engine = RedactionEngine()
        for prefix in ["token ", "token:\\t", "the token is \\\"x\\\" "] {
            for value in ["8fjzkqzqxlmw", "xfjzkqz0x7lm", "Kfjzkqzqxlmwpq9"] {
                // A second digit or capital where the entropy test wants it.
                let text = prefix + value + "2b"
                var log = HARLog(creator: HARCreator(name: "t", version: "1"), entries: [
                    makeEntry(responseBody: ("application/json", #"{"note": "\#(text)", "n": 1}"#)),
                ])
                engine.redact(&log)
                let out = log.entries[0].response.content.text ?? ""
                XCTAssertFalse(out.contains(value), "\(text) -> \(out)")
            }
        }
    }

    /// `nonAlnumMask` marks exactly the bytes that are no ASCII letter or digit: every byte value
    /// at every position of a word of word bytes, and mixed words at random.
    func testNonAlnumMaskIsExact() {
        func expected(_ bytes: [UInt8]) -> UInt64 {
            var m: UInt64 = 0
            for (k, b) in bytes.enumerated() where !RedactionEngine.isAlnum(b) { m |= 0x80 << UInt64(k * 8) }
            return m
        }
        func word(_ bytes: [UInt8]) -> UInt64 {
            bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << UInt64($1.offset * 8) }
        }
        for position in 0..<8 {
            for b in 0...255 {
                var bytes = [UInt8](repeating: 0x61, count: 8)
                bytes[position] = UInt8(b)
                XCTAssertEqual(ByteShape.nonAlnumMask(word(bytes)), expected(bytes), "byte \(b) at \(position)")
            }
        }
        var rng = SplitMix64(seed: 3)
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            XCTAssertEqual(ByteShape.nonAlnumMask(word(bytes)), expected(bytes))
        }
    }
}

