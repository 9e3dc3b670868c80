import TestSupport
import XCTest
@testable import HAR

final class JSONWriterTests: XCTestCase {
    func testPrettyOutputIsExactAndRoundTrips() throws {
        var w = JSONWriter(pretty: true)
        w.beginObject()
        w.key("name"); w.string("harrec")
        w.key("empty"); w.beginObject(); w.endObject()
        w.key("list"); w.beginArray()
        w.int(1); w.double(2.5); w.bool(true); w.null()
        w.beginArray(); w.endArray()
        w.beginObject(); w.key("k"); w.int(-7); w.endObject()
        w.endArray()
        w.key("n"); w.raw(.number("1.50e3"))
        w.endObject()
        let bytes = w.finish()
        let expected = """
        {
          "name": "harrec",
          "empty": {},
          "list": [
            1,
            2.5,
            true,
            null,
            [],
            {
              "k": -7
            }
          ],
          "n": 1.50e3
        }
        """
        XCTAssertEqual(text(bytes), expected)
        let parsed = try JSONParser.parse(bytes)
        XCTAssertEqual(JSONWriter.serialize(parsed, pretty: true), bytes, "parse -> write is byte-identical")
        XCTAssertEqual(text(JSONWriter.serialize(parsed, pretty: false)),
                       #"{"name":"harrec","empty":{},"list":[1,2.5,true,null,[],{"k":-7}],"n":1.50e3}"#)
    }

    func testStringEscaping() throws {
        let s = "q\" b\\ s/ \u{8}\u{C}\n\r\t \u{0}\u{1F}\u{7F} caf\u{E9} \u{1F600} \u{2028}\u{2029} \u{2027}\u{202A}"
        let out = text(JSONWriter.serialize(.string(s), pretty: false))
        XCTAssertEqual(out, #""q\" b\\ s/ \b\f\n\r\t \u0000\u001f"# + "\u{7F} caf\u{E9} \u{1F600} " + #"\u2028\u2029"# + " \u{2027}\u{202A}\"")
        XCTAssertEqual(try JSONParser.parse(utf8(out)), .string(s))
        // Keys are escaped the same way.
        var w = JSONWriter(pretty: false)
        w.beginObject(); w.key("a\"b\n"); w.null(); w.endObject()
        XCTAssertEqual(text(w.finish()), #"{"a\"b\n":null}"#)
    }

    /// Every ASCII byte (and U+2028, U+2029, U+2027, é) at every position of strings around the
    /// 8-byte word size, against a naive reference escaper; and parse gives the string back.
    func testEscapingAtEveryPositionMatchesReference() throws {
        func reference(_ s: String) -> String {
            var out = "\""
            for u in s.unicodeScalars {
                switch u {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\u{8}": out += "\\b"
                case "\u{C}": out += "\\f"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{2028}": out += "\\u2028"
                case "\u{2029}": out += "\\u2029"
                default:
                    if u.value < 0x20 {
                        out += "\\u00" + (u.value < 0x10 ? "0" : "") + String(u.value, radix: 16)
                    } else {
                        out.unicodeScalars.append(u)
                    }
                }
            }
            return out + "\""
        }
        var specials: [Unicode.Scalar] = (0..<0x80).map { Unicode.Scalar(UInt8($0)) }
        specials += ["\u{2028}", "\u{2029}", "\u{2027}", "\u{E9}", "\u{E2}"]
        for length in [1, 7, 8, 9, 15, 16, 17, 24] {
            for position in 0..<length {
                for special in specials {
                    var scalars = String.UnicodeScalarView(repeatElement("a", count: length))
                    let idx = scalars.index(scalars.startIndex, offsetBy: position)
                    scalars.replaceSubrange(idx...idx, with: [special])
                    let s = String(scalars)
                    let written = text(JSONWriter.serialize(.string(s), pretty: false))
                    XCTAssertEqual(written, reference(s))
                    XCTAssertEqual(try JSONParser.parse(utf8(written)), .string(s))
                }
            }
        }
    }

    func testDoubleFormatting() {
        let cases: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (1, "1"), (-1, "-1"), (2.5, "2.5"), (0.1, "0.1"), (0.125, "0.125"),
            (1.0004, "1"), (1.23451, "1.235"), (1.23449, "1.234"), (10.051488876342773, "10.051"),
            (0.0004, "0"), (-0.0004, "0"), (-0.0006, "-0.001"), (0.05, "0.05"), (0.007, "0.007"),
            (1e20, "100000000000000000000"), (-1e20, "-100000000000000000000"), (1e-10, "0"),
            (123456789.987654, "123456789.988"), (1_796_104_686.456, "1796104686.456"),
            (.nan, "-1"), (.infinity, "-1"), (-.infinity, "-1"), (8.99e15, "8990000000000000"),
        ]
        for (d, expected) in cases {
            var out: [UInt8] = []
            JSONWriter.appendDouble(d, to: &out)
            XCTAssertEqual(text(out), expected, "\(d)")
        }
        XCTAssertEqual(JSONValue.double(3.25), .number("3.25"))
    }

    func testDoublesSurviveParseAndRewrite() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let d = Double(rng.next() % 10_000_000) / 1000  // 3-decimal values as harrec writes them
            var first: [UInt8] = []
            JSONWriter.appendDouble(d, to: &first)
            let back = Double(text(first))!
            var second: [UInt8] = []
            JSONWriter.appendDouble(back, to: &second)
            XCTAssertEqual(first, second)
        }
    }

    func testIntegers() {
        for (i, s) in [(0, "0"), (7, "7"), (-7, "-7"), (1234567890, "1234567890"),
                       (Int.max, "9223372036854775807"), (Int.min, "-9223372036854775808")] {
            XCTAssertEqual(text(JSONWriter.serialize(.integer(i))), s)
            var w = JSONWriter()
            w.int(i)
            XCTAssertEqual(text(w.finish()), s)
        }
    }

    func testInvalidNumberLiteralIsWrittenAsNull() {
        XCTAssertEqual(text(JSONWriter.serialize(.array([.number("NaN"), .number("01"), .number("1.")]), pretty: false)),
                       "[null,null,null]")
        XCTAssertTrue(isValidJSONNumber("-0.5E+10"))
        XCTAssertFalse(isValidJSONNumber(""))
        XCTAssertFalse(isValidJSONNumber("1e"))
    }

    func testOptionalFieldHelpers() {
        var w = JSONWriter(pretty: false)
        w.beginObject()
        w.field("a", nil as String?)
        w.field("b", "x" as String?)
        w.field("c", 3 as Int?)
        w.field("d", 0.5 as Double?)
        w.field("e", false as Bool?)
        w.fields([("_x", .array([]))])
        w.endObject()
        XCTAssertEqual(text(w.finish()), #"{"b":"x","c":3,"d":0.5,"e":false,"_x":[]}"#)
    }

    func testMatchesPythonJSONDumpsIndent2() throws {
        // JSON.stringify(v, null, 2) and json.dumps(v, indent=2, ensure_ascii=False) agree.
        let value = try JSONParser.parse(utf8(#"{"a": [1, {"b": [], "c": {}}, "x\u00e9"], "d": {"e": null, "f": false}}"#))
        let mine = JSONWriter.serialize(value)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import json,sys; sys.stdout.write(json.dumps(json.load(sys.stdin), indent=2, ensure_ascii=False))"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        do { try p.run() } catch { throw ToolMissing(message: "cannot run python3: \(error)") }
        input.fileHandleForWriting.write(Data(mine))
        try input.fileHandleForWriting.close()
        let theirs = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(text(mine), String(decoding: theirs, as: UTF8.self))
    }
}
