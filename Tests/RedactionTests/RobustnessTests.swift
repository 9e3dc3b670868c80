import HAR
@testable import Redaction
import TestSupport
import TextEncodings
import XCTest

/// Hostile and random input through both passes: nothing crashes, no internal mark of pass 1
/// ever reaches the output, redacting the output again changes nothing, and binary bodies keep
/// their length. Seeded, so a failure names the input that caused it.
final class RobustnessTests: XCTestCase {
    /// The compiled default rules, shared: building them (pair tables, the name matcher) per
    /// call would be most of the time here.
    static let rules = CompiledRules(RedactionConfiguration())
    static func fresh() -> RedactionEngine { RedactionEngine(rules: rules, collectFindings: false) }

    /// Pieces that trigger detectors, cut and glued at random.
    static let fragments: [String] = [
        "token=", "password: ", "Bearer ", "Basic ", "eyJhbGciOiJIUzI1NiJ9.", "eyJzdWIiOiIxIn0", ".c2ln",
        "-----BEGIN PRIVATE KEY-----\n", "-----END PRIVATE KEY-----", "https://", "u:p@", "@corp.com", "%40",
        "AKIAIOSFODNN7EXAMPLE", "sk-ant-", "sk-proj-", "SG.", "xoxb-", "ghp_", "hooks.slack.com/services/",
        "AccountKey=", "8Q~", "+1 415 555 2671", "(415) 555-2671", "4111 1111 1111 1111", "GB82WEST12345698765432",
        "<password>", "</password>", "<input name=\"csrf_token\" value=\"", "\">", "<![CDATA[", "]]>",
        "\"api_key\": \"", "\"", "{", "}", "[", "]", ",", ":", "=", "&", "?", "#", ";", " ", "\n", "\r\n", "\t",
        "10.0.0.1", "fe80::1", "db.corp", "firmwareVersion=10.4.1.7", "data: ", "\u{E000}", "\u{E001}", "\u{E002}su",
        "\u{E003}", "\u{E004}", "\u{E005}", "\u{E006}", "\u{E007}", "abc", "Zz9", "é", "🎉", "\\", "\\u0041", "redacted-3",
        "user1@example.com", "%2F", "%3D", "AAAA", "/", "+", "-",
    ]

    /// Private-use characters the engine uses for its marks; any in the output must have been in
    /// the input.
    static func privateUseCount(_ s: String) -> Int {
        s.unicodeScalars.filter { (0xE000...0xE007).contains($0.value) }.count
    }

    /// A random text of fragments; `separated`: with a separator between fragments, as values in
    /// real traffic are (glued fragments make new tokens out of placeholders and their neighbours).
    static func randomText(_ rng: inout SplitMix64, separated: Bool) -> String {
        let separators = [" ", "\n", ", ", "; ", "&", "\" ", " = ", ": ", "/", "\t"]
        var input = ""
        for _ in 0..<Int.random(in: 1...40, using: &rng) {
            if Int.random(in: 0..<5, using: &rng) == 0 {
                input += String(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &rng)))
            } else {
                input += Self.fragments.randomElement(using: &rng)!
            }
            if separated { input += separators.randomElement(using: &rng)! }
        }
        return input
    }

    func testRandomTextNeverCrashesNorLeaksMarks() {
        var rng = SplitMix64(seed: 0x12_2026)
        for round in 0..<800 {
            let input = Self.randomText(&rng, separated: Bool.random(using: &rng))
            let once = body(input, engine: Self.fresh())
            // Fewer is fine (one inside a replaced value goes with it); more is a mark that leaked.
            XCTAssertLessThanOrEqual(Self.privateUseCount(once), Self.privateUseCount(input), "round \(round): a mark leaked for \(input.debugDescription)")
            XCTAssertLessThanOrEqual(Self.privateUseCount(body(once, engine: Self.fresh())), Self.privateUseCount(input), "round \(round)")
            let text = scanned(input, engine: Self.fresh())
            XCTAssertLessThanOrEqual(Self.privateUseCount(text), Self.privateUseCount(input), "round \(round): \(input.debugDescription)")
        }
    }

    /// Values of the shapes real traffic carries, secret or not.
    static func randomValue(_ rng: inout SplitMix64) -> String {
        func chars(_ alphabet: String, _ n: Int) -> String {
            let a = Array(alphabet)
            return String((0..<n).map { _ in a.randomElement(using: &rng)! })
        }
        let alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        switch Int.random(in: 0..<16, using: &rng) {
        case 0: return "AKIA" + chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
        case 1: return "ghp_" + chars(alnum, 36)
        case 2: return makeJWT(header: #"{"alg":"HS256"}"#, payload: "{\"sub\":\"\(chars(alnum, 6))\"}")
        case 3: return chars("abcdefghij", 6) + "." + chars("klmnop", 5) + "@corp-mail.com"
        case 4: return "+1 415 555 " + chars("0123456789", 4)
        case 5: return "4111 1111 1111 1111"
        case 6: return "10.\(Int.random(in: 0...255, using: &rng)).0.\(Int.random(in: 1...254, using: &rng))"
        case 7: return chars("abcdef", 5) + ".corp"
        case 8: return "550e8400-e29b-41d4-a716-" + chars("0123456789abcdef", 12)
        case 9: return chars(alnum, Int.random(in: 10...40, using: &rng))
        case 10: return "sk-proj-" + chars(alnum + "-_", 40)
        case 11: return "https://api.example.com/v1/x?token=" + chars(alnum, 20) + "&page=2"
        case 12: return "10.4.1.7"
        case 13: return "git@github.com:org/app.git"
        case 14: return "redacted-\(Int.random(in: 1...9, using: &rng))"
        default: return ["alpha", "bravo charlie", "theme", "dark", "42", "true", "2026-12-01T10:00:00Z"].randomElement(using: &rng)!
        }
    }

    static let names = ["token", "password", "api_key", "apiKey", "firstName", "phone", "cvc", "note", "theme", "id",
                        "session_id", "client_secret", "firmwareVersion", "description", "email", "X-Auth-Key", "url"]

    /// A realistic document: JSON, .env, YAML, a query string, XML, HTML inputs or prose.
    static func randomDocument(_ rng: inout SplitMix64) -> String {
        var lines: [String] = []
        for _ in 0..<Int.random(in: 1...8, using: &rng) {
            let name = names.randomElement(using: &rng)!, value = randomValue(&rng)
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: lines.append("{\"\(name)\": \"\(value)\", \"n\": 1}")
            case 1: lines.append("\(name.uppercased())=\(value.replacingOccurrences(of: " ", with: ""))")
            case 2: lines.append("\(name): \(value)")
            case 3: lines.append("https://app.example.com/cb?\(name)=\(URLParts.percentEncodedQueryValue(value))&x=1")
            case 4: lines.append("<\(name)>\(value)</\(name)>")
            case 5: lines.append("<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">")
            default: lines.append("the \(name) is \(value) for now")
            }
        }
        return lines.joined(separator: "\n")
    }

    func testRealisticRandomDocumentsAreIdempotent() {
        var rng = SplitMix64(seed: 0x5E9_2026)
        for round in 0..<600 {
            let input = Self.randomDocument(&rng)
            let once = body(input, engine: Self.fresh())
            let twice = body(once, engine: Self.fresh())
            XCTAssertEqual(twice, once, "round \(round): not idempotent for \(input.debugDescription)")
            XCTAssertEqual(Self.privateUseCount(once), 0, "round \(round)")
        }
    }

    func testRandomBinaryBodiesKeepTheirLength() throws {
        var rng = SplitMix64(seed: 7_2026)
        var entries: [HAREntry] = []
        var inputs: [[UInt8]] = []
        for index in 0..<200 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...30, using: &rng) {
                if Bool.random(using: &rng) {
                    bytes += Array(Self.fragments.randomElement(using: &rng)!.utf8)
                } else {
                    bytes += (0..<Int.random(in: 1...12, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                }
            }
            inputs.append(bytes)
            var e = makeEntry(index: index, responseBody: ("application/x-protobuf", "x"))
            e.response.content = HARContent(size: bytes.count, mimeType: "application/x-protobuf",
                                            text: Base64.encode(bytes), encoding: "base64")
            entries.append(e)
        }
        let r = redacted(entries)
        for (index, entry) in r.log.entries.enumerated() {
            let out = try XCTUnwrap(Base64.decode(try XCTUnwrap(entry.response.content.text)), "entry \(index)")
            XCTAssertEqual(out.count, inputs[index].count, "entry \(index): binary length changed")
            XCTAssertEqual(entry.response.content.size, inputs[index].count)
            XCTAssertFalse(out.contains(0xEE) && !inputs[index].contains(0xEE) , "entry \(index): a mark byte appeared")
        }
        XCTAssertEqual(redacted(r.log).bytes, r.bytes, "binary bodies: not idempotent")
    }

    func testCraftedMarksInTheInputAreInert() {
        // Private-use characters shaped like the engine's marks, but without this run's nonce:
        // they stay exactly as they were, and the secret beside them still goes.
        for crafted in ["\u{E000}0\u{E001}", "\u{E000}abc0\u{E001}", "\u{E002}abcsp" + "dG9rZW4=" + "\u{E003}abc",
                        "\u{E004}abcAAAA\u{E005}abc", "\u{E006}abc%41\u{E007}abc"] {
            let input = "x \(crafted) token=s3cr3t-value-123 y"
            let out = scanned(input)
            XCTAssertTrue(out.contains(crafted), out.debugDescription)
            XCTAssertFalse(out.contains("s3cr3t-value-123"), out.debugDescription)
        }
    }
}
