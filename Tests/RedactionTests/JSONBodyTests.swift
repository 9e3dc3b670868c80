import XCTest
import HAR
@testable import Redaction

/// JSON members by key, types kept, formatting kept byte for byte outside replaced tokens.
final class JSONBodyTests: XCTestCase {
    func testKeysInEveryCaseStyleKeepTypesAndFormatting() {
        let input = """
        {
          "user" :  {"id": 42, "name": "Ann"},
          "password": "p@ss w0rd",
          "accessToken":"t-123456",   "refresh-token" : "r-987654",
          "CLIENT_SECRET": "shh",
          "apiKey": 12345.5e2,
          "Authorization": "Bearer xyz-abcdefgh",
          "cookie": "sid=1",
          "sessionId": -17,
          "token_type": "Bearer",
          "expires_in": 3600,
          "tokenizer": "wordpiece",
          "passwordPolicy": "strong",
          "list": [1, 2.50, true, null, "\\u00e9t\\u00e9"],
          "id_token": null,
          "secret": false,
          "empty_token": ""
        }
        """
        let expected = """
        {
          "user" :  {"id": 42, "name": "person-1"},
          "password": "redacted-1",
          "accessToken":"redacted-2",   "refresh-token" : "redacted-3",
          "CLIENT_SECRET": "redacted-4",
          "apiKey": 0,
          "Authorization": "redacted-5",
          "cookie": "redacted-6",
          "sessionId": 0,
          "token_type": "Bearer",
          "expires_in": 3600,
          "tokenizer": "wordpiece",
          "passwordPolicy": "strong",
          "list": [1, 2.50, true, null, "\\u00e9t\\u00e9"],
          "id_token": null,
          "secret": false,
          "empty_token": ""
        }
        """
        let engine = RedactionEngine()
        XCTAssertEqual(body(input, engine: engine), expected)
        XCTAssertEqual(engine.currentReport.counts[.jsonKeys]?[.body], 8)
        XCTAssertTrue(jsonIsValid(expected))
    }

    func testValuesUnderASecretKeyAreReplacedAllTheWayDown() {
        let input = #"{"session": {"id": "s-1", "user": {"email": "x@y.com", "n": 7, "ok": true}, "ids": ["a", 9]}}"#
        XCTAssertEqual(body(input),
                       #"{"session": {"id": "redacted-1", "user": {"email": "user1@example.com", "n": 0, "ok": true}, "ids": ["redacted-2", 0]}}"#)
        XCTAssertTrue(RedactionEngine.isWholeEmail("a.b+c@d-e.example.org"))
        for notEmail in ["a@b", "@x.com", "a@x.c", "a b@x.com", "a@x..com", "a@-", ".a@x.com", "a@1.23"] {
            XCTAssertFalse(RedactionEngine.isWholeEmail(notEmail), notEmail)
        }
    }

    func testArraysOfObjectsAndKeyOrderKept() {
        let input = "[{\"z\":1,\"token\":\"a1\"},{\"token\":\"a1\",\"a\":[]},{\"token\":\"b2\"}]"
        XCTAssertEqual(body(input), "[{\"z\":1,\"token\":\"redacted-1\"},{\"token\":\"redacted-1\",\"a\":[]},{\"token\":\"redacted-2\"}]")
    }

    func testEscapedKeysAndValues() {
        // "pass\u0077ord" is "password"; the replaced value's escapes are gone, others stay.
        let input = #"{"pass\u0077ord": "a\"b\\c\n", "note": "caf\u00e9 \"q\"", "k\"ey": "v"}"#
        XCTAssertEqual(body(input), #"{"pass\u0077ord": "redacted-1", "note": "caf\u00e9 \"q\"", "k\"ey": "v"}"#)
    }

    func testReplacementNeedingEscapesIsEscaped() throws {
        // A value found by a text rule inside a string whose other characters need escaping.
        let input = #"{"msg": "line1\nmail bob@corp.com \"quoted\" \t tab \u0001"}"#
        let out = body(input)
        XCTAssertEqual(out, #"{"msg": "line1\nmail user1@example.com \"quoted\" \t tab \u0001"}"#)
        XCTAssertTrue(jsonIsValid(out))
    }

    func testJSONNestedInStrings() {
        let inner = #"{\"token\":\"abc-123-def\",\"n\":1,\"deeper\":\"{\\\"password\\\":\\\"pw-999\\\"}\"}"#
        let input = #"{"payload":""# + inner + #"","other":"x"}"#
        let out = body(input)
        XCTAssertTrue(jsonIsValid(out), out)
        let parsed = try! JSONParser.parse(utf8(out))
        let payload = parsed["payload"]!.stringValue!
        let innerDoc = try! JSONParser.parse(utf8(payload))
        XCTAssertEqual(innerDoc["token"]?.stringValue, "redacted-1")
        XCTAssertEqual(innerDoc["n"]?.intValue, 1)
        let deeper = try! JSONParser.parse(utf8(innerDoc["deeper"]!.stringValue!))
        XCTAssertEqual(deeper["password"]?.stringValue, "redacted-2")
        XCTAssertFalse(out.contains("abc-123-def") || out.contains("pw-999"))
        XCTAssertEqual(parsed["other"]?.stringValue, "x")
    }

    func testTextRulesApplyInsideJSONStrings() {
        let jwt = makeJWT(header: #"{"alg":"RS256","typ":"JWT"}"#, payload: #"{"sub":"u-1"}"#)
        let input = #"{"note": "key AKIAIOSFODNN7EXAMPLE for bob@corp.com at db.corp via 10.0.0.7", "t": ""# + jwt + #""}"#
        let out = body(input)
        XCTAssertTrue(out.hasPrefix(#"{"note": "key redacted-1 for user1@example.com at internal-1.example.invalid via 192.0.2.1", "t": "eyJ"#), out)
        XCTAssertFalse(out.contains(jwt))
    }

    func testMalformedJSONFallsBackToTextAndStillFindsKeyedSecrets() {
        // Truncated (harrec's --max-body cuts bodies) and otherwise broken JSON.
        let truncated = #"{"user": "bob@corp.com", "access_token": "tok-55aa66bb", "refresh_token": "rt-0099"#
        let out = body(truncated)
        XCTAssertFalse(out.contains("tok-55aa66bb"), out)
        XCTAssertFalse(out.contains("rt-0099"), out)
        XCTAssertFalse(out.contains("bob@corp.com"), out)
        XCTAssertEqual(out, #"{"user": "user1@example.com", "access_token": "redacted-1", "refresh_token": "redacted-2"#)
        let trailingComma = #"{"password": "pw-1234", "n": 5,}"#
        XCTAssertEqual(body(trailingComma), #"{"password": "redacted-1", "n": 5,}"#)
        let notes = RedactionEngine()
        XCTAssertEqual(body(#"{"password": 123, "#, engine: notes), #"{"password": 0, "#)
        XCTAssertEqual(notes.currentReport.counts[.jsonKeys]?[.body] ?? 0, 1)
    }

    func testLeadingZeroOrBadLiteralIsNotJSON() {
        XCTAssertEqual(body(#"{"n": 01, "mail": "a@corp.com"}"#), #"{"n": 01, "mail": "user1@example.com"}"#)
        XCTAssertEqual(body(#"[tru]"#), "[tru]")
    }

    func testNumbersUnderSecretKeysBecomeZeroAndZeroStays() {
        XCTAssertEqual(body(#"{"pin_token": -0.5, "token": 0, "secret": 1e9}"#), #"{"pin_token": 0, "token": 0, "secret": 0}"#)
    }

    func testExtraJSONKeysFromRules() throws {
        let config = try configuration(rules: #"{"jsonKeys": ["pin", "deviceId"]}"#)
        XCTAssertEqual(body(#"{"pin": 1234, "device_id": "d-1", "pinned": true, "spin": 2}"#, config: config),
                       #"{"pin": 0, "device_id": "redacted-1", "pinned": true, "spin": 2}"#)
    }

    func testJSONKeyWords() {
        XCTAssertEqual(NameMatcher.words("accessToken"), ["access", "token"])
        XCTAssertEqual(NameMatcher.words("APIKey"), ["api", "key"])
        XCTAssertEqual(NameMatcher.words("x-csrf-token"), ["x", "csrf", "token"])
        XCTAssertEqual(NameMatcher.words("REFRESH_TOKEN"), ["refresh", "token"])
        XCTAssertEqual(NameMatcher.words(""), [])
        let m = NameMatcher()
        for key in ["token", "csrfToken", "X-Auth-Token", "client_secret", "apiKey", "api_key", "sessionId", "Cookie", "setCookie"] {
            XCTAssertEqual(m.classify(key), .secret, key)
        }
        for key in ["tokenizer", "tokens_used_count", "token_type", "tokenExpiresIn", "sessionCount", "keyboard",
                    "passwordPolicy", "secretary", "monkey", "apiVersion", "expires_in"] {
            XCTAssertNotEqual(m.classify(key), .secret, key)
        }
    }

    func testRequestAndResponseBodiesAndContentSize() {
        let e = makeEntry(method: "POST", url: "https://api.example.com/login",
                          requestBody: ("application/json; charset=utf-8", #"{"login":"ann@corp.com","password":"hunter2"}"#),
                          responseBody: ("application/json", #"{"access_token":"tok-aaaa-bbbb","token_type":"Bearer"}"#))
        let r = redacted([e])
        let entry = r.log.entries[0]
        XCTAssertEqual(entry.request.postData?.text, #"{"login":"user1@example.com","password":"redacted-1"}"#)
        XCTAssertEqual(entry.response.content.text, #"{"access_token":"redacted-2","token_type":"Bearer"}"#)
        XCTAssertEqual(entry.response.content.size, entry.response.content.text!.utf8.count)
        XCTAssertEqual(entry.response.bodySize, entry.response.content.size)
        XCTAssertEqual(header(entry.response.headers, "Content-Length"), String(entry.response.content.size))
        XCTAssertEqual(entry.request.bodySize, entry.request.postData!.text!.utf8.count)
        XCTAssertTrue(HARValidator.validate(bytes: r.bytes).isEmpty, "\(HARValidator.validate(bytes: r.bytes))")
    }

    func testCompressedResponseKeepsWireSizeAndAdjustsCompression() {
        var e = makeEntry(responseBody: ("application/json", #"{"token":"a-long-secret-token-value"}"#))
        let decoded = e.response.content.size
        e.response.headers = e.response.headers.filter { $0.name != "Content-Length" }
        e.response.headers.append(HARHeader(name: "Content-Encoding", value: "gzip"))
        e.response.headers.append(HARHeader(name: "Content-Length", value: "30"))
        e.response.bodySize = 30
        e.response.content.compression = decoded - 30
        let r = redacted([e])
        let out = r.log.entries[0].response
        XCTAssertEqual(out.content.text, #"{"token":"redacted-1"}"#)
        XCTAssertEqual(out.content.size, out.content.text!.utf8.count)
        XCTAssertEqual(out.bodySize, 30, "the transferred size did not change")
        XCTAssertEqual(header(out.headers, "Content-Length"), "30")
        XCTAssertEqual(out.content.compression, out.content.size - 30)
    }
}
