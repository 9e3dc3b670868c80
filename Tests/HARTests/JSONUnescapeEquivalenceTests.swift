import TestSupport
import XCTest
@testable import HAR

/// The parser's string decoding (word-at-a-time, one pass into a reused scratch buffer that grows)
/// against a plain byte-by-byte reference, on generated strings that mix every escape, raw UTF-8,
/// and the errors: bad escapes, control characters, invalid UTF-8 and a missing closing quote.
final class JSONUnescapeEquivalenceTests: XCTestCase {
    /// The decoded string, or nil for an error (lone surrogates are not generated).
    static func reference(_ content: [UInt8]) -> String? {
        var out: [UInt8] = []
        var i = 0
        func hex(_ at: Int) -> UInt32? {
            guard at + 4 <= content.count else { return nil }
            return UInt32(String(decoding: content[at..<(at + 4)], as: UTF8.self), radix: 16)
        }
        while i < content.count {
            let b = content[i]
            if b == 0x22 { return i == content.count - 1 ? String(validating: out, as: UTF8.self) : nil }
            if b < 0x20 { return nil }
            if b != 0x5C { out.append(b); i += 1; continue }
            guard i + 1 < content.count else { return nil }
            switch content[i + 1] {
            case 0x22: out.append(0x22)
            case 0x5C: out.append(0x5C)
            case 0x2F: out.append(0x2F)
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0C)
            case 0x6E: out.append(0x0A)
            case 0x72: out.append(0x0D)
            case 0x74: out.append(0x09)
            case 0x75:
                guard var scalar = hex(i + 2) else { return nil }
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    guard content.count > i + 7, content[i + 6] == 0x5C, content[i + 7] == 0x75, let low = hex(i + 8) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out += Array(String(Unicode.Scalar(scalar)!).utf8)
                i += 4
            default: return nil
            }
            i += 2
        }
        return nil  // no closing quote
    }

    /// A string's content (escaped, with its closing quote): pieces chosen at random, errors rare.
    static func generate(_ rng: inout SplitMix64, pieces: Int, errors: Bool) -> [UInt8] {
        let plain: [[UInt8]] = [utf8("abc"), utf8("hotel charlie"), utf8("é"), utf8("😀"), utf8("Ω"), utf8(" "),
                                utf8("0123456789abcdef"), utf8("{:,}[]")]
        let escapes: [[UInt8]] = [utf8("\\\""), utf8("\\\\"), utf8("\\/"), utf8("\\n"), utf8("\\t"), utf8("\\r"),
                                  utf8("\\b"), utf8("\\f"), utf8("\\u00e9"), utf8("\\u0041"), utf8("\\ud83d\\ude00"), utf8("\\u2028")]
        let bad: [[UInt8]] = [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0x01], [0x0A], utf8("\\x"), utf8("\\u12"), utf8("\\uZZZZ")]
        var out: [UInt8] = []
        for _ in 0..<pieces {
            let r = rng.next() % 100
            if errors && r == 0 {
                out += bad[Int(rng.next() % UInt64(bad.count))]
            } else if r < 45 {
                out += plain[Int(rng.next() % UInt64(plain.count))]
            } else {
                out += escapes[Int(rng.next() % UInt64(escapes.count))]
            }
        }
        if !errors || rng.next() % 20 != 0 { out.append(0x22) }
        return out
    }

    func check(_ content: [UInt8], _ what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = Self.reference(content)
        // Alone, and as a value after another string with escapes (the scratch buffer reused).
        for prefix in [[0x22], utf8("[\"x\\ty\", \"")] as [[UInt8]] {
            let document = prefix + content + (prefix.count > 1 ? [0x5D] : [])
            let parsed = try? JSONParser.parse(document)
            let got = prefix.count > 1 ? parsed?.arrayValue?.last?.stringValue : parsed?.stringValue
            if got != expected {
                XCTFail("\(what()), prefix \(prefix.count): got \(got.map { "\($0.utf8.count) bytes" } ?? "an error"), "
                        + "expected \(expected.map { "\($0.utf8.count) bytes" } ?? "an error")", file: file, line: line)
                return
            }
        }
    }

    func testReferenceItself() {
        XCTAssertEqual(Self.reference(utf8(#"a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#)), "a\"\\/\u{8}\u{C}\n\r\té😀")
        XCTAssertNil(Self.reference(utf8(#"a\x""#)))
        XCTAssertNil(Self.reference([0x61, 0xFF, 0x22]))
        XCTAssertNil(Self.reference(utf8("a")))
    }

    func testValidStringsOfEverySize() {
        var rng = SplitMix64(seed: 7)
        // Up to ~60 KB: the scratch buffer starts at 4 KB and grows while decoding.
        for n in [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 700, 2_000, 5_000, 12_000] {
            for round in 0..<4 {
                check(Self.generate(&rng, pieces: n, errors: false), "\(n) pieces, round \(round)")
            }
        }
    }

    func testErrorsWherever() {
        var rng = SplitMix64(seed: 11)
        for round in 0..<1_500 {
            let n = Int(rng.next() % 300)
            check(Self.generate(&rng, pieces: n, errors: true), "round \(round), \(n) pieces")
        }
    }
}
