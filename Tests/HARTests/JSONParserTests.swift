import Foundation
import XCTest
@testable import HAR

final class JSONParserTests: XCTestCase {
    func parse(_ s: String) throws -> JSONValue { try JSONParser.parse(utf8(s)) }

    func parseError(_ s: String, file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        do {
            let v = try JSONParser.parse(utf8(s))
            XCTFail("expected an error, got \(v)", file: file, line: line)
            return nil
        } catch {
            XCTAssertFalse(error.reason.contains(where: { $0.asciiValue.map { $0 < 0x20 } ?? false }),
                           "reason has a control character", file: file, line: line)
            return error
        }
    }

    func testScalars() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse(" true "), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("\"x\""), .string("x"))
        XCTAssertEqual(try parse("\t\r\n 0 \n"), .number("0"))
    }

    func testNumberLiteralsAreKept() throws {
        for lit in ["0", "-0", "12", "-12", "1.50", "1e5", "1E+05", "-2.5e-3", "123456789012345678901234567890", "1e999", "0.0"] {
            XCTAssertEqual(try parse(lit), .number(lit), lit)
            XCTAssertEqual(text(JSONWriter.serialize(try parse("[\(lit)]"), pretty: false)), "[\(lit)]")
        }
        XCTAssertEqual(try parse("12.0").intValue, 12)
        XCTAssertEqual(try parse("1.2e1").intValue, 12)
        XCTAssertNil(try parse("12.5").intValue)
        XCTAssertEqual(try parse("12.5").doubleValue, 12.5)
    }

    func testObjectsKeepOrderAndDuplicates() throws {
        let v = try parse(#"{"b": 1, "a": [true, null], "b": "two"}"#)
        guard case .object(let fields) = v else { return XCTFail() }
        XCTAssertEqual(fields.map(\.key), ["b", "a", "b"])
        XCTAssertEqual(v["b"], .string("two"), "subscript returns the last duplicate like JSON.parse")
        XCTAssertEqual(v["a"]?[1], .null)
        XCTAssertNil(v["zz"])
        XCTAssertEqual(try parse("{}"), .object([]))
        XCTAssertEqual(try parse("[ ]"), .array([]))
    }

    func testEscapesAndUnicode() throws {
        XCTAssertEqual(try parse(#""\"\\\/\b\f\n\r\t""#), .string("\"\\/\u{8}\u{C}\n\r\t"))
        XCTAssertEqual(try parse(#""\u0041\u00e9\u20AC""#), .string("A\u{E9}\u{20AC}"))
        XCTAssertEqual(try parse("\"caf\u{E9} \u{1F600}\""), .string("caf\u{E9} \u{1F600}"))
        // Surrogate pair.
        XCTAssertEqual(try parse(#""\ud83d\ude00""#), .string("\u{1F600}"))
        XCTAssertEqual(try parse(#""a\uD83D\uDE00b""#), .string("a\u{1F600}b"))
        // Lone surrogates become U+FFFD by default...
        XCTAssertEqual(try parse(#""\ud800""#), .string("\u{FFFD}"))
        XCTAssertEqual(try parse(#""\udc00x""#), .string("\u{FFFD}x"))
        XCTAssertEqual(try parse(#""\ud800\u0041""#), .string("\u{FFFD}A"))
        XCTAssertEqual(try parse(#""\ud800\ud800\udc00""#), .string("\u{FFFD}\u{10000}"))
        // ...or an error on request.
        XCTAssertThrowsError(try JSONParser.parse(utf8(#""\ud800""#), rejectLoneSurrogates: true)) { error in
            XCTAssertTrue("\(error)".contains("lone UTF-16 surrogate"))
        }
        XCTAssertEqual(try parse(#""\u0000""#), .string("\u{0}"))
    }

    func testErrorsHaveLineAndColumn() {
        let e = parseError("{\n  \"a\": 1,\n  \"b\": tru\n}")
        XCTAssertEqual(e?.line, 3)
        XCTAssertEqual(e?.column, 8)
        XCTAssertEqual(e?.reason, "invalid literal, expected 'true'")
        XCTAssertEqual(e.map { "\($0)" }, "line 3, column 8: invalid literal, expected 'true'")
    }

    func testMalformedDocuments() {
        let cases: [(String, String, Int, Int)] = [
            ("", "unexpected end of input, expected a value", 1, 1),
            ("{\"a\": 1", "unexpected end of input, expected ',' or '}' in object", 1, 8),
            ("[1, 2", "unexpected end of input, expected ',' or ']' in array", 1, 6),
            ("\"abc", "unterminated string", 1, 1),
            ("[1,]", "trailing comma in array", 1, 4),
            ("{\"a\":1,}", "trailing comma in object", 1, 8),
            ("\"\\x\"", "invalid escape sequence '\\' followed by 'x'", 1, 2),
            ("\"\\u12G4\"", "invalid \\u escape, expected 4 hex digits", 1, 2),
            ("01", "leading zeros are not allowed in numbers", 1, 1),
            ("-01", "leading zeros are not allowed in numbers", 1, 2),
            ("1.", "unexpected end of input, expected a digit after the decimal point", 1, 3),
            (".5", "unexpected '.', expected a value", 1, 1),
            ("+1", "unexpected '+', expected a value", 1, 1),
            ("1e", "unexpected end of input, expected a digit in the exponent", 1, 3),
            ("-", "unexpected end of input, expected a digit after '-'", 1, 2),
            ("NaN", "unexpected 'N', expected a value", 1, 1),
            ("{'a': 1}", "unexpected ''', expected a string key", 1, 2),
            ("{\"a\" 1}", "unexpected '1', expected ':' after object key", 1, 6),
            ("{1: 2}", "unexpected '1', expected a string key", 1, 2),
            ("[1 2]", "unexpected '2', expected ',' or ']' in array", 1, 4),
            ("1 2", "unexpected '2' after the JSON value", 1, 3),
            ("\"a\nb\"", "unescaped control character byte 0x0A in string", 1, 3),
            ("\"a\u{7}b\"", "unescaped control character byte 0x07 in string", 1, 3),
            ("[1] // c", "unexpected '/' after the JSON value", 1, 5),
            ("\u{FEFF}{}", "unexpected byte 0xEF, expected a value", 1, 1),
        ]
        for (input, reason, line, column) in cases {
            guard let e = parseError(input) else { continue }
            XCTAssertEqual(e.reason, reason, "input \(input.debugDescription)")
            XCTAssertEqual(e.line, line, "input \(input.debugDescription)")
            XCTAssertEqual(e.column, column, "input \(input.debugDescription)")
        }
    }

    /// A string with escapes is decoded after a pre-scan for its end; its errors must still come
    /// in the order they stand, as the byte-by-byte decoder reported them.
    func testEscapedStringErrorsComeInTextOrder() {
        let cases: [(String, String, Int)] = [
            ("\"a\\nb\\x\u{1}\"", "invalid escape sequence '\\' followed by 'x'", 6),
            ("\"a\\nb\u{1}\\x\"", "unescaped control character byte 0x01 in string", 6),
            ("\"a\\nb\\", "unterminated string", 1),
            ("\"a\\nb", "unterminated string", 1),
            ("\"a\\n\\ud83d", "unterminated string", 1),
            ("\"a\\n\\u12", "invalid \\u escape, expected 4 hex digits", 5),
            ("\"\\\"\\u00\"", "invalid \\u escape, expected 4 hex digits", 4),
            ("\"\\t\u{1F}\"", "unescaped control character byte 0x1F in string", 4),
        ]
        for (input, reason, column) in cases {
            guard let e = parseError(input) else { continue }
            XCTAssertEqual(e.reason, reason, "input \(input.debugDescription)")
            XCTAssertEqual(e.column, column, "input \(input.debugDescription)")
        }
    }

    /// Long bodies with an escape every few bytes (pretty-printed JSON inside a HAR string), with
    /// multi-byte escapes and raw UTF-8 between them, against Foundation's parser.
    func testLongEscapedStringsMatchFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["\\n", "\\\"", "\\\\", "\\u00e9", "\\ud83d\\ude00", "é", "€", "abc", " ", "\\t", "\\/", "\\b", "\\f",
                      "\\r", "abcdefghijklmnopq", "0123456"]
        for _ in 0..<200 {
            let json = (0..<Int.random(in: 1...400, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let document = "[\"\(json)\"]"
            let reference = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String]
            XCTAssertEqual(try parse(document), .array([.string(reference![0])]), document)
        }
    }

    func testInvalidUTF8IsRejectedWithPosition() {
        for bad: [UInt8] in [[0x22, 0x61, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22],
                             [0x22, 0x61, 0xC0, 0xAF, 0x22], [0x22, 0x5C, 0x6E, 0x61, 0xF5, 0x80, 0x80, 0x80, 0x22]] {
            XCTAssertThrowsError(try JSONParser.parse(bad)) { error in
                let e = error as! JSONParseError
                XCTAssertEqual(e.reason, "invalid UTF-8 in string")
                XCTAssertEqual(e.offset, bad.firstIndex(where: { $0 >= 0x80 }), "\(bad)")
            }
        }
    }

    func testDepthLimit() throws {
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        XCTAssertNoThrow(try parse(ok))
        let bomb = String(repeating: "[", count: 100_000)
        let e = parseError(bomb)
        XCTAssertEqual(e?.reason, "nesting deeper than \(JSONParser.maximumDepth) levels")
        XCTAssertEqual(e?.column, JSONParser.maximumDepth + 1)
        let objectBomb = String(repeating: "{\"a\":", count: 100_000)
        XCTAssertEqual(parseError(objectBomb)?.reason, "nesting deeper than \(JSONParser.maximumDepth) levels")
    }

    func testTruncationsOfAValidDocumentAllFailCleanly() throws {
        let doc = utf8(#"{"a": [1, -2.5e3, "x\u00e9\ud83d\ude00", {"b": null}], "c": true, "d": "caf"# + "\u{E9}\"}")
        XCTAssertNoThrow(try JSONParser.parse(doc))
        for n in 0..<doc.count {
            XCTAssertThrowsError(try JSONParser.parse(Array(doc[0..<n])), "prefix \(n)")
        }
    }

    /// The string scans look at 8 bytes at a time; a quote, backslash, control character or
    /// multibyte character at every offset of a word, in strings with and without escapes, must
    /// read as Foundation reads it (and a raw control character is an error at every offset).
    func testStringStopsAtEveryOffsetOfAWord() throws {
        let stops: [(json: String, decoded: String)] = [("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"),
                                                        ("\\u00e9", "\u{e9}"), ("é", "é"), ("\\/", "/")]
        for length in 0..<26 {
            for at in 0...length {
                for stop in stops {
                    for (secondAt, second) in [(-1, ""), (length, "\\\"")] {
                        let plain = String((0..<length).map { Character(UnicodeScalar(UInt8(0x61 + $0 % 26))) })
                        var json = plain, expected = plain
                        if secondAt >= 0 { json += second; expected += "\"" }
                        json.insert(contentsOf: stop.json, at: json.index(json.startIndex, offsetBy: at))
                        expected.insert(contentsOf: stop.decoded, at: expected.index(expected.startIndex, offsetBy: at))
                        let document = "[\"\(json)\", \"\(json)\"]"
                        let reference = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String]
                        XCTAssertEqual(reference, [expected, expected], document)
                        XCTAssertEqual(try parse(document), .array([.string(expected), .string(expected)]), document)
                    }
                }
                let controlled = "[\"" + String(repeating: "a", count: at) + "\u{01}" + String(repeating: "b", count: length - at) + "\"]"
                XCTAssertEqual(parseError(controlled)?.reason.contains("control"), true, controlled)
            }
        }
    }
}
