import Foundation
import HAR
@testable import Redaction
import TestSupport
import XCTest

/// Placeholders are hidden by construction (`PlaceholderText`): found once, before any detector,
/// in every view of a field. These tests hold that one step to its contract: every shape is found
/// wherever it stands, nothing else is, and a redacted file is a fixed point in every view.
final class PlaceholderViewTests: XCTestCase {
    static let sampleJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJl"

    /// One placeholder of every kind and a few numbers (an IPv4 past the RFC 5737 ranges too).
    static var placeholders: [String] {
        var all: [String] = []
        for n in [1, 9, 10, 254, 763, 4321, 70_000] {
            for kind in [ValueKind.secret, .email, .host, .ipv4, .ipv6, .phone, .card, .person] {
                all.append(PlaceholderFormat.make(kind, number: n, value: ""))
            }
            all.append(PlaceholderFormat.make(.secret, number: n, value: sampleJWT))
        }
        return all
    }

    func found(_ text: String) -> [String] {
        var copy = text
        return copy.withUTF8 { p in PlaceholderText.find(in: p).map { String(decoding: UnsafeBufferPointer(rebasing: p[$0.range]), as: UTF8.self) } }
    }

    func testEveryShapeIsFoundWhereverItStands() {
        for placeholder in Self.placeholders {
            for (before, after) in [("", ""), ("token=", "&page=2"), ("\"", "\""), ("(", ")"), ("x ", " y"), ("<a>", "</a>"), ("k:", "\n")] {
                XCTAssertEqual(found(before + placeholder + after), [placeholder], "\(before)\(placeholder)\(after)")
            }
            // A binary body's same-length placeholder: the stars are part of it.
            XCTAssertEqual(found(placeholder + "***;"), [placeholder + "***"])
        }
        XCTAssertEqual(found("a user1%40example.com b"), ["user1%40example.com"])
        XCTAssertEqual(found("phone=%2B12015550100&x"), ["%2B12015550100"])
        XCTAssertEqual(found("Jredacted-3 and 7redacted-4"), ["redacted-3", "redacted-4"], "a placeholder a first run wrote next to text")
    }

    /// An address's number is the one `PlaceholderFormat` made it from, past the RFC 5737
    /// ranges too (the 763rd address is 240.0.0.1), so new addresses are numbered after it.
    func testAddressesCarryTheirNumbers() {
        // An IPv6 placeholder past ffff takes a second group (a group has four hex digits).
        XCTAssertEqual(PlaceholderFormat.make(.ipv6, number: 70_000, value: ""), "2001:db8::1:1170")
        for n in [1, 254, 255, 762, 763, 65_535, 65_536, 70_000, 4_000_000] {
            for kind in [ValueKind.ipv4, .ipv6] {
                let text = PlaceholderFormat.make(kind, number: n, value: "")
                var copy = text
                let found = copy.withUTF8 { PlaceholderText.find(in: $0) }
                XCTAssertEqual(found.map(\.number), [n], text)
            }
        }
    }

    /// A binary body's bare same-length placeholder is a placeholder with the punctuation a value
    /// reader takes beside it; stars inside a value with letters or digits are not.
    func testStarRunsWithPunctuationArePlaceholders() {
        for value in ["***", "**********", "**********[", "(*****)", "'****';"] {
            XCTAssertTrue(Placeholder.isPlaceholder(value), value)
            XCTAssertEqual(Placeholder.parts(of: value)?.count, 0, value)
        }
        for value in ["a*****", "*****1", "**a**", "*[*", "p@ss*w0rd", "[", ""] {
            XCTAssertFalse(Placeholder.isPlaceholder(value), value)
        }
    }

    func testLookAlikesAreNoPlaceholders() {
        for text in ["redacted-", "redacted-x", "REDACTED-1", "user1@example.community", "user1@example.com.au", "userx@example.com",
                     "jane@example.com", "internal-1.example.invalidity", "192.0.2.255", "192.0.2.1.5", "1192.0.2.1", "10.192.0.2.1",
                     "+120155501001", "+12005550100", "240.0.0.0", "240.1.2.256", "240.1.2.3.4", "240.1.2", "4000000000000011", "40000000000000281", "2001:db8::12345", "2001:db8::1:2:3", "2001:db8::1:",
                     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.cmVkYWN0ZWQ", "person-", "internal-3.example.org"] {
            XCTAssertEqual(found(text), [], text)
        }
    }

    func testPlaceholderDigitsAreNoneOfTheValues() {
        XCTAssertEqual(RedactionEngine.ownDigitCount("call +12015550100 or user12@example.com, ref 7"), 1)
        XCTAssertEqual(RedactionEngine.longestOwnDigitGroup("4000000000000010 and 12"), 2)
    }

    // MARK: - Every view: a redacted file is a fixed point

    /// Real values of many kinds, for the views to hold beside placeholders.
    static let secrets = ["ghp_" + String(repeating: "aB3x", count: 9), "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "hunter2-Correct",
                          "jane.doe@corp-mail.org", "+1 415 555 2671", "4111 1111 1111 1111", "10.20.30.40",
                          "AKIAIOSFODNN7EXAMPLE", "xoxb-2048-4096-aBcDeFgHiJkLmNoPqRsT", sampleJWT]

    /// A value for a view: a placeholder, a secret, or both with something between.
    static func value(_ rng: inout SplitMix64) -> String {
        let placeholder = placeholders.randomElement(using: &rng)!, secret = secrets.randomElement(using: &rng)!
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return placeholder
        case 1: return secret
        case 2: return placeholder + " " + secret
        case 3: return secret + ", " + placeholder
        default: return placeholder + [";", "&", "/", "*", "x", "-"].randomElement(using: &rng)!
        }
    }

    static let names = ["token", "password", "email", "phone", "card_number", "note", "name", "client_ip", "address", "id"]

    /// One entry whose every view holds values: headers, cookies, query items, a form or
    /// multipart body, and a response body that is JSON (with JSON inside a string), CSV, XML or
    /// base64 of JSON.
    static func entry(_ rng: inout SplitMix64) -> HAREntry {
        func v() -> String { value(&rng) }
        func name() -> String { names.randomElement(using: &rng)! }
        func json(_ s: String) -> String { String(decoding: JSONWriter.serialize(.string(s), pretty: false), as: UTF8.self) }
        let query = "\(name())=\(URLParts.percentEncodedQueryValue(v()))&\(name())=\(URLParts.percentEncodedQueryValue(v()))"
        let requestBody: (String, String)
        if Bool.random(using: &rng) {
            requestBody = ("application/x-www-form-urlencoded", "\(name())=\(URLParts.percentEncodedQueryValue(v()))&n=1")
        } else {
            requestBody = ("multipart/form-data; boundary=XyZ",
                           "--XyZ\r\nContent-Disposition: form-data; name=\"\(name())\"\r\n\r\n\(v())\r\n--XyZ--\r\n")
        }
        let inner = "{\"\(name())\":\(json(v()))}"
        let responseBody: (String, String)
        var base64 = false
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: responseBody = ("application/json", "{\"\(name())\": \(json(v())), \"text\": \(json("see " + v())), \"nested\": \(json(inner))}")
        case 1: responseBody = ("text/csv", "name,email,phone,note\n\(v()),\(v()),\(v()),\(v())\n")
        case 2: responseBody = ("application/xml", "<r><\(name())>\(v())</\(name())><x \(name())=\"\(v())\"/></r>")
        default:
            responseBody = ("application/json", "{\"\(name())\": \(json(v()))}")
            base64 = true
        }
        return makeEntry(url: "https://api.example.com/v1/items?" + query,
                         requestHeaders: [("Authorization", "Bearer " + v()), ("X-Api-Key", v()), ("Cookie", "session=\(v()); theme=dark")],
                         requestBody: requestBody, responseHeaders: [("Set-Cookie", "sid=\(v()); Path=/")],
                         responseBody: responseBody, responseBase64: base64)
    }

    func testEveryViewIsAFixedPointAndKeepsItsPlaceholders() {
        var rng = SplitMix64(seed: 0x9_1ACE)
        for round in 0..<200 {
            var log = HARLog(creator: HARCreator(name: "t", version: "1"), entries: (0..<3).map { _ in Self.entry(&rng) })
            let engine = RedactionEngine()
            engine.redact(&log)
            let once = String(decoding: log.serialize(pretty: true), as: UTF8.self)
            engine.redact(&log)
            let twice = String(decoding: log.serialize(pretty: true), as: UTF8.self)
            if once != twice {
                let diff = zip(once.split(separator: "\n"), twice.split(separator: "\n")).filter { $0 != $1 }.prefix(3)
                XCTFail("round \(round): a second run changed\n" + diff.map { "- \($0)\n+ \($1)" }.joined(separator: "\n"))
            }
            // Key formats and addresses go wherever they stand (a word under `note` may stay).
            for secret in Self.secrets where secret.count > 16 || secret.contains("@") {
                XCTAssertFalse(once.contains(secret), "round \(round): \(secret) survived")
            }
        }
    }

    /// A placeholder met in the input keeps its number, and new values are numbered after it.
    func testNewValuesAreNumberedAfterThePlaceholdersMet() {
        var log = HARLog(creator: HARCreator(name: "t", version: "1"), entries: [
            makeEntry(responseBody: ("application/json", #"{"note": "was redacted-7 and user3@example.com", "token": "ghp_aB3xaB3xaB3xaB3xaB3xaB3xaB3xaB3xaB3x", "email": "jane@corp-mail.org"}"#)),
        ])
        RedactionEngine().redact(&log)
        let text = log.entries[0].response.content.text ?? ""
        XCTAssertTrue(text.contains("was redacted-7 and user3@example.com"), text)
        XCTAssertTrue(text.contains("\"redacted-8\""), text)
        XCTAssertTrue(text.contains("user4@example.com"), text)
    }

    /// Past 762 addresses their placeholders are in 240.0.0.0/4: a redacted file's are kept
    /// under an address name, and a new address is numbered after them (the 100 MB audit corpus
    /// redacted twice found both: `240.0.0.1` became `192.0.2.1`, another address's placeholder).
    func testAddressPlaceholdersPastTheDocumentationRangesAreKept() {
        var log = HARLog(creator: HARCreator(name: "t", version: "1"), entries: [
            makeEntry(url: "https://t.example.com/s?ip=240.0.0.3&x=1",
                      responseBody: ("application/json", #"{"user": {"ip_address": "240.0.0.2"}, "client_ip": "81.2.69.160"}"#)),
        ])
        RedactionEngine().redact(&log)
        XCTAssertEqual(log.entries[0].request.url, "https://t.example.com/s?ip=240.0.0.3&x=1")
        let text = log.entries[0].response.content.text ?? ""
        XCTAssertTrue(text.contains(#""ip_address": "240.0.0.2""#), text)
        XCTAssertTrue(text.contains(#""client_ip": "240.0.0.4""#), text)
    }
}
