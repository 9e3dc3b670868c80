import XCTest
import HAR
@testable import Redaction

/// Byte-level edges of the scanners and the JSON rewriter.
final class ParserEdgeTests: XCTestCase {
    func testTextsEndingRightAfterATriggerByte() {
        let triggers = ["x@", "@", "a=", "=", "token=", "Bearer", "Bearer ", "bearer\t", "eyJ", "eyJhbGciOiJIUzI1NiJ9.",
                        "eyJhbGciOiJIUzI1NiJ9.e30.", "-----BEGIN ", "-----BEGIN PRIVATE KEY-----", "----", "://",
                        "https://u:p@", "https://u:@", "10.", "10.0.0.", "192.168.1", "fc", "fd00:", "fe80::", ".", "a.",
                        "a.corp", "a.co", "AKIA", "AIza", "ghp_", "github_pat_", "xox", "xoxb-", "sk", "sk_live_", "rk_live",
                        "1", "f", "e", "b", "A", "g", "x", "s", "r", "-", ":"]
        // The few that are complete matches already (an unsecured JWT has an empty signature).
        let matches = [
            "a.corp": "internal-1.example.invalid",
            "-----BEGIN PRIVATE KEY-----": "redacted-1",
            "eyJhbGciOiJIUzI1NiJ9.e30.": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWRhY3RlZC0xIn0.cmVkYWN0ZWQ",
            "https://u:p@": "https://redacted-1@",
            "https://u:@": "https://redacted-1@",
            "fe80::": "2001:db8::1",
        ]
        for t in triggers {
            XCTAssertEqual(scanned(t), matches[t] ?? t)
            // The same bytes as a JSON string and as a broken JSON body must not crash either.
            _ = body("{\"k\": \"\(t.replacingOccurrences(of: "\"", with: ""))\"")
            _ = body("[\"" + t)
        }
    }

    func testEmptyValues() {
        XCTAssertEqual(scanned(""), "")
        XCTAssertEqual(body(""), "")
        XCTAssertEqual(body("{}"), "{}")
        XCTAssertEqual(body("[]"), "[]")
        XCTAssertEqual(body(#"{"token": ""}"#), #"{"token": ""}"#)
        XCTAssertEqual(scanned("token=&code=;sig="), "token=&code=;sig=")
        let r = redacted([makeEntry(url: "https://api.example.com/?token=&code", requestHeaders: [("Authorization", ""), ("Cookie", ""),
                                                                                                  ("X-Api-Key", "")])])
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/?token=&code")
        XCTAssertEqual(r.report.total, 0)
    }

    func testUnicodeAroundMatches() {
        let input = "café ☃ über@corp.com? no: ünïcødé jo@corp.com, token=秘密の値 ok 🎉 db.corp 🎉"
        // The local part is ASCII; a non-ASCII letter before it stays (the domain and the rest go).
        XCTAssertEqual(scanned(input), "café ☃ üuser1@example.com? no: ünïcødé user2@example.com, token=redacted-1 ok 🎉 internal-1.example.invalid 🎉")
        XCTAssertEqual(body(#"{"name":"Zoë","password":"pässwörd✓","n":"\u2603 ad@corp.com"}"#),
                       #"{"name":"Zoë","password":"redacted-1","n":"☃ user1@example.com"}"#)
    }

    func testVeryLongInputs() {
        let filler = String(repeating: "a", count: 1 << 20)
        XCTAssertEqual(scanned(filler + " token=zzz999zzz"), filler + " token=redacted-1")
        XCTAssertEqual(scanned(String(repeating: "=", count: 100_000)), String(repeating: "=", count: 100_000))
        XCTAssertEqual(scanned(String(repeating: "@", count: 100_000)), String(repeating: "@", count: 100_000))
        let dots = String(repeating: "a.", count: 50_000) + "corp"
        XCTAssertEqual(scanned(dots), "internal-1.example.invalid")
        let longToken = "Bearer " + String(repeating: "Zz09", count: 25_000)
        XCTAssertEqual(scanned(longToken), "Bearer redacted-1")
        let longJSON = "{\"items\": [" + (0..<20_000).map { "{\"id\":\($0),\"token\":\"t\($0 % 7)\"}" }.joined(separator: ",") + "]}"
        let out = body(longJSON)
        XCTAssertTrue(jsonIsValid(out))
        XCTAssertFalse(out.contains("\"t3\""))
        XCTAssertTrue(out.contains("{\"id\":19999,\"token\":\"redacted-"))
    }

    func testDeepNestingFallsBackToTextWithoutCrashing() {
        let deep = String(repeating: "[", count: 5000) + "\"ann@corp.com\"" + String(repeating: "]", count: 5000)
        let out = body(deep)
        XCTAssertEqual(out, String(repeating: "[", count: 5000) + "\"user1@example.com\"" + String(repeating: "]", count: 5000))
        let okDepth = String(repeating: "{\"a\":", count: 200) + "{\"token\":\"x1\"}" + String(repeating: "}", count: 200)
        XCTAssertTrue(body(okDepth).contains("\"token\":\"redacted-1\""))
    }

    func testMalformedJSONFallsBackToText() {
        for broken in [#"{"a": "bob@corp.com""#, #"{"a" "bob@corp.com"}"#, #"{"a": 'bob@corp.com'}"#, #"[1, 2, "bob@corp.com"]]"#,
                       #"{"a": "bob@corp.com"} {"b": 1}"#, #"{"a": "bob@corp.com\x"}"#, "{\"a\": \"bob@corp.com\u{1}\"}"] {
            let out = body(broken)
            XCTAssertFalse(out.contains("bob@corp.com"), broken)
            XCTAssertTrue(out.contains("user1@example.com"), broken)
        }
        // JSON lines: each line's secrets.
        let ndjson = "{\"token\":\"line-1-tok\"}\n{\"token\":\"line-2-tok\"}\n"
        XCTAssertEqual(body(ndjson), "{\"token\":\"redacted-1\"}\n{\"token\":\"redacted-2\"}\n")
        // Cut off inside an escape and inside a key.
        XCTAssertEqual(body(#"{"password": "ab\"#), #"{"password": "redacted-1"#)
        XCTAssertEqual(body(#"{"pass"#), #"{"pass"#)
        XCTAssertEqual(body(#"{"token":"#), #"{"token":"#)
    }

    func testJSONStringEscapesAndSurrogates() {
        let input = #"{"msg": "\ud83d\ude00 \u00e9 mail: ann@corp.com \/ \b\f", "lone": "\ud800 x"}"#
        let out = body(input)
        XCTAssertEqual(out, #"{"msg": "😀 é mail: user1@example.com / \b\f", "lone": "\ud800 x"}"#)
        XCTAssertTrue(jsonIsValid(out))
    }

    func testQueryEdgeCases() {
        let r = redacted([makeEntry(url: "https://api.example.com/p?&&token&=x&token==a=b&%74oken=enc#")])
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/p?&&token&=x&token=redacted-1&%74oken=redacted-2#")
        XCTAssertEqual(redacted([makeEntry(url: "")]).log.entries[0].request.url, "")
        XCTAssertEqual(redacted([makeEntry(url: "/relative?sig=1")]).log.entries[0].request.url, "/relative?sig=redacted-1")
    }

    func testMultipartEdgeCases() {
        let boundary = "b"
        // No closing delimiter, LF line endings, a part without headers.
        let text = "--b\nContent-Disposition: form-data; name=\"token\"\n\nmp-tok-1\n--b\n\njust text ann@corp.com\n--b"
        let e = makeEntry(method: "POST", requestBody: ("multipart/form-data; boundary=\"\(boundary)\"", text))
        let out = redacted([e]).log.entries[0].request.postData!.text!
        XCTAssertEqual(out, "--b\nContent-Disposition: form-data; name=\"token\"\n\nredacted-1\n--b\n\njust text user1@example.com\n--b")
        // A multipart type without a boundary parameter is scanned as text.
        let e2 = makeEntry(method: "POST", requestBody: ("multipart/form-data", "password=x ann@corp.com"))
        XCTAssertEqual(redacted([e2]).log.entries[0].request.postData?.text, "password=redacted-1 user1@example.com")
    }
}
