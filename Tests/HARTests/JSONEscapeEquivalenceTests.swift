import TestSupport
import XCTest
@testable import HAR

/// `JSONWriter.appendEscaped` (word-at-a-time, one pass into pre-grown space) against a plain
/// byte-by-byte reference of the same rules, on inputs chosen to hit every path: word and tail
/// boundaries, the 0xE2 lookahead at buffer ends, and the growth needed by dense `\u00XX`.
final class JSONEscapeEquivalenceTests: XCTestCase {
    /// The escaping rules, one byte at a time.
    static func reference(_ s: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = [0x22]
        var i = 0
        while i < s.count {
            let b = s[i]
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, 0x62]
            case 0x09: out += [0x5C, 0x74]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0C: out += [0x5C, 0x66]
            case 0x0D: out += [0x5C, 0x72]
            case 0x00..<0x20: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0x0F)]]
            case 0xE2 where i + 2 < s.count && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9):
                out += Array((s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                i += 2
            default: out.append(b)
            }
            i += 1
        }
        out.append(0x22)
        return out
    }

    /// Checks `appendEscaped` on `s`, appending both to an empty array and after existing bytes.
    func check(_ s: [UInt8], _ what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = Self.reference(s)
        for prefix in [[], Array("pre:".utf8)] as [[UInt8]] {
            var out = prefix
            s.withUnsafeBufferPointer { JSONWriter.appendEscaped($0, to: &out) }
            guard out != prefix + expected else { continue }
            let got = Array(out.dropFirst(prefix.count))
            let at = (0..<min(got.count, expected.count)).first { got[$0] != expected[$0] } ?? min(got.count, expected.count)
            XCTFail("\(what()) (prefix \(prefix.count)): length \(got.count) vs \(expected.count), first difference at output byte \(at): "
                    + "got \(got[at..<min(at + 12, got.count)].map { String($0, radix: 16) }), "
                    + "expected \(expected[at..<min(at + 12, expected.count)].map { String($0, radix: 16) })",
                    file: file, line: line)
            return
        }
    }

    func testReferenceItself() {
        XCTAssertEqual(text(Self.reference(utf8("a\"\\\u{8}\t\n\u{C}\r\u{0}\u{1F}\u{7F}\u{2028}\u{2029}\u{2027}é"))),
                       #""a\"\\\b\t\n\f\r\u0000\u001f"# + "\u{7F}" + #"\u2028\u2029"# + "\u{2027}é\"")
    }

    func testEmpty() {
        check([], "empty")
    }

    /// Every byte value first, in the middle and last, in strings around the 8- and 16-byte
    /// word sizes, among plain bytes, among escapes (the writing path) and among `\u00XX`.
    func testEveryByteAtStartMiddleAndEnd() {
        for filler: UInt8 in [0x61, 0x22, 0x01, 0xE2] {
            for length in [1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47] {
                for position in Set([0, length / 2, length - 1]) {
                    for b in 0...255 {
                        var s = [UInt8](repeating: filler, count: length)
                        s[position] = UInt8(b)
                        check(s, "byte \(b) at \(position) of \(length), filler \(filler)")
                    }
                }
            }
        }
    }

    /// U+2028 / U+2029 and their prefixes E2, E2 80, E2 80 A7 (and neighbours) at the start and
    /// end of the buffer, at every offset across word boundaries.
    func testLineSeparatorsAndPrefixesAtBufferEnds() {
        let pieces: [[UInt8]] = [[0xE2], [0xE2, 0x80], [0xE2, 0x80, 0xA7], [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9],
                                 [0xE2, 0x80, 0xAA], [0xE2, 0x81, 0xA8], [0xE2, 0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA8, 0xE2, 0x80, 0xA9],
                                 [0x80, 0xA8], [0xA8]]
        for piece in pieces {
            for filler: [UInt8] in [[0x61], [0x22], [0x0A], [0x1F], [0xC3, 0xA9], [0xE2]] {
                for count in 0...24 {
                    let run = Array([[UInt8]](repeating: filler, count: count).joined())
                    check(run + piece, "\(piece) at the end after \(count) x \(filler)")
                    check(piece + run, "\(piece) at the start before \(count) x \(filler)")
                    check(run + piece + run, "\(piece) in the middle of \(count) x \(filler)")
                }
            }
        }
    }

    /// A plain (or two-character-escape) run, then a run of `\u00XX` escapes: the room runs out
    /// at every possible point.
    func testGrowthForDenseControlCharacters() {
        for lead: UInt8 in [0x61, 0x22, 0x0A] {
            for p in 0..<40 {
                for q in [1, 2, 3, 4, 5, 8, 9, 17, 40, 100] {
                    for tail in [0, 1, 7, 30] {
                        let s = [UInt8](repeating: lead, count: p) + [0x22] + [UInt8](repeating: 0x01, count: q)
                            + [UInt8](repeating: 0x61, count: tail)
                        check(s, "\(p) x \(lead), quote, \(q) controls, \(tail) plain")
                    }
                }
            }
        }
    }

    /// 10,000 seeded random buffers of length 0...300, mostly special bytes.
    func testRandomBuffersBiasedToSpecialBytes() {
        var rng = SplitMix64(seed: 0x4A53_4F4E)
        let specials: [UInt8] = [0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x00, 0x01, 0x1B, 0x1F, 0x20, 0x7F, 0xE2, 0x80, 0xA8, 0xA9]
        let sequences: [[UInt8]] = [[0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xE2, 0x80], [0xE2, 0x80, 0xA7], [0xE2, 0x80, 0x94],
                                    [0xC3, 0xA9], [0xF0, 0x9F, 0x98, 0x80], Array("\\\"".utf8), Array("\"key\": ".utf8)]
        for iteration in 0..<10_000 {
            let length = Int(rng.next() % 301)
            // Per buffer, how often a byte is special: from never to always.
            let specialPercent = [0, 2, 10, 30, 60, 100][Int(rng.next() % 6)]
            var s: [UInt8] = []
            s.reserveCapacity(length + 8)
            while s.count < length {
                let roll = Int(rng.next() % 100)
                if roll < specialPercent {
                    if rng.next() % 4 == 0 {
                        s += sequences[Int(rng.next() % UInt64(sequences.count))]
                    } else {
                        s.append(specials[Int(rng.next() % UInt64(specials.count))])
                    }
                } else if roll % 8 == 0 {
                    s.append(UInt8(truncatingIfNeeded: rng.next()))  // any byte at all
                } else {
                    s.append(0x61 + UInt8(rng.next() % 26))
                }
            }
            s.removeLast(s.count - length)
            check(s, "random buffer \(iteration) (length \(length), \(specialPercent)% special)")
        }
    }

    /// Megabyte buffers: JSON text, quote-dense ASCII, every byte a control character, and
    /// line separators throughout.
    func testLargeBuffers() {
        let size = 1 << 20
        func repeated(_ unit: [UInt8]) -> [UInt8] {
            var r: [UInt8] = []
            r.reserveCapacity(size + unit.count)
            while r.count < size { r += unit }
            return Array(r.prefix(size))
        }
        var rng = SplitMix64(seed: 7)
        check(repeated(utf8("{\"key\": \"value caf\u{E9}\", \"n\": 12345, \"list\": [1, 2, 3], \"s\": \"a\\\"b\u{2028}\"}\n")),
              "1 MB of JSON text")
        check((0..<size).map { _ in [0x22, 0x22, 0x5C, 0x61, 0x7A, 0x20][Int(rng.next() % 6)] }, "1 MB of quote-dense ASCII")
        check((0..<size).map { _ in UInt8(rng.next() % 0x20) }, "1 MB of control characters")
        check(repeated([0xE2, 0x80, 0xA8, 0xE2, 0x80, 0xA9, 0xE2, 0x80, 0x94]), "1 MB of U+2028, U+2029, U+2014")
        check(repeated(utf8("plain text with no escapes at all, caf\u{E9} \u{1F600}, ")) + [0x01], "1 MB of plain text, then a control")
    }

    /// Strings through the public writer API give the same bytes.
    func testWriterStringUsesTheSameEscaping() {
        let s = "k\u{0}\"\\\u{2028}\u{7}x"
        var w = JSONWriter(pretty: false)
        w.beginObject(); w.key(s); w.string(s); w.endObject()
        let e = Self.reference(utf8(s))
        XCTAssertEqual(w.finish(), [0x7B] + e + [0x3A] + e + [0x7D])
    }
}
