import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// Base64 and binary bodies, WebSocket messages, consistency, determinism and idempotence.
final class BodyAndPropertyTests: XCTestCase {
    func testBase64TextBodyIsDecodedRedactedReencodedAndSized() throws {
        let json = #"{"refresh_token":"rt-zz-1234","user":"fay@corp.com","note":"caf\u00e9 ✓"}"#
        let e = makeEntry(method: "POST", requestBody: ("application/json", #"{"password":"pw-base64-req"}"#), requestBase64: true,
                          responseBody: ("application/json", json), responseBase64: true)
        let r = redacted([e])
        let content = r.log.entries[0].response.content
        XCTAssertEqual(content.encoding, "base64")
        let decoded = text(try XCTUnwrap(Base64.decode(content.text!)))
        XCTAssertEqual(decoded, #"{"refresh_token":"redacted-2","user":"user1@example.com","note":"caf\u00e9 ✓"}"#)
        XCTAssertEqual(content.size, decoded.utf8.count)
        XCTAssertEqual(r.log.entries[0].response.bodySize, decoded.utf8.count)
        XCTAssertEqual(header(r.log.entries[0].response.headers, "Content-Length"), String(decoded.utf8.count))
        let post = r.log.entries[0].request.postData!
        let reqDecoded = text(try XCTUnwrap(Base64.decode(post.text!)))
        XCTAssertEqual(reqDecoded, #"{"password":"redacted-1"}"#)
        XCTAssertEqual(r.log.entries[0].request.bodySize, reqDecoded.utf8.count)
        XCTAssertEqual(r.report.binaryBodies, 0)
        assertNoOccurrence(["rt-zz-1234", "fay@corp.com", "pw-base64-req"], in: r.bytes)
        XCTAssertTrue(HARValidator.validate(bytes: r.bytes).isEmpty, "\(HARValidator.validate(bytes: r.bytes))")
    }

    func testBinaryBodiesKeepTheirBytesButPrintableSecrets() throws {
        let bytes = binaryBytes(3000, seed: 7)
        // An AWS key inside a binary body (a protobuf field, say): replaced by a placeholder of the
        // same length, so length-prefixed framing stays valid; every other byte stays.
        var planted = bytes
        planted.replaceSubrange(99..<121, with: [0] + Array("AKIAIOSFODNN7EXAMPLE".utf8) + [0])
        var e = makeEntry(responseBody: ("image/png", "x"))
        e.response.content = HARContent(size: planted.count, mimeType: "image/png", text: Base64.encode(planted), encoding: "base64")
        var e2 = makeEntry(index: 1, responseBody: ("application/json", "x"))
        // JSON-typed but not UTF-8 (mitmproxy's small.bin): binary too, and nothing printable in it.
        e2.response.content = HARContent(size: bytes.count, mimeType: "application/json", text: Base64.encode(bytes), encoding: "base64")
        let r = redacted([e, e2])
        let out = try XCTUnwrap(Base64.decode(try XCTUnwrap(r.log.entries[0].response.content.text)))
        XCTAssertEqual(out.count, planted.count)
        XCTAssertEqual(Array(out[..<100]), Array(planted[..<100]))
        XCTAssertEqual(Array(out[120...]), Array(planted[120...]))
        XCTAssertNotEqual(r.log.entries[0].response.content.text, e.response.content.text)
        XCTAssertEqual(text(Array(out[100..<120])), "redacted-1**********")
        XCTAssertEqual(r.log.entries[0].response.content.size, planted.count)
        XCTAssertEqual(r.log.entries[1].response.content, e2.response.content)
        XCTAssertEqual(r.report.binaryBodies, 2)
        XCTAssertEqual(r.report.total, 1)
        XCTAssertEqual(r.report.counts[.awsAccessKey]?[.body], 1)
    }

    func testWebSocketMessages() {
        let messages: [JSONValue] = [
            .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.5)), (key: "opcode", value: .integer(1)),
                     (key: "data", value: .string(#"{"type":"auth","token":"ws-tok-123456"}"#))]),
            .object([(key: "type", value: .string("receive")), (key: "time", value: .double(1.6)), (key: "opcode", value: .integer(1)),
                     (key: "data", value: .string("hello gil@corp.com from 10.9.8.7"))]),
            .object([(key: "type", value: .string("receive")), (key: "time", value: .double(1.7)), (key: "opcode", value: .integer(2)),
                     (key: "data", value: .string(Base64.encode(Array("token=abcdef123".utf8))))]),
            .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.8)), (key: "opcode", value: .integer(1)),
                     (key: "data", value: .string("/w+/w+/w+/w+AAAA")), (key: "_encoding", value: .string("base64")),
                     (key: "_invalidUTF8", value: .bool(true))]),
            .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.9)), (key: "opcode", value: .integer(1)),
                     (key: "data", value: .string(#"{"echo":"{\"password\":\"pw-in-ws\"}"}"#))]),
        ]
        let e = makeEntry(url: "wss://chat.example.com/socket", status: 101,
                          custom: [(key: "_resourceType", value: .string("websocket")),
                                   (key: "_webSocketMessages", value: .array(messages))])
        let r = redacted([e])
        let out = r.log.entries[0].custom.first { $0.key == "_webSocketMessages" }!.value.arrayValue!
        XCTAssertEqual(out[0]["data"]?.stringValue, #"{"type":"auth","token":"redacted-1"}"#)
        XCTAssertEqual(out[1]["data"]?.stringValue, "hello user1@example.com from 192.0.2.1")
        // A binary message keeps its length: "abcdef123" is 9 bytes, too short for a numbered
        // placeholder, so it becomes '*'s.
        XCTAssertEqual(out[2]["data"]?.stringValue, Base64.encode(Array("token=*********".utf8)))
        XCTAssertEqual(out[3], messages[3], "base64-stored text message with nothing printable: untouched")
        XCTAssertEqual(out[4]["data"]?.stringValue, #"{"echo":"{\"password\":\"redacted-3\"}"}"#)
        XCTAssertEqual(out[0]["time"], .double(1.5))
        XCTAssertEqual(r.report.counts[.jsonKeys]?[.webSocket], 2)
        XCTAssertEqual(r.report.counts[.email]?[.webSocket], 1)
        XCTAssertEqual(r.report.binaryBodies, 2)
    }

    func testSameSecretSameePlaceholderAcrossEntries() {
        let login = makeEntry(index: 0, method: "POST", url: "https://api.example.com/login",
                              requestBody: ("application/json", #"{"email":"hal@corp.com","password":"pw-login-1"}"#),
                              responseBody: ("application/json", #"{"access_token":"at-7f9e2d1c0b","refresh_token":"rt-11aa22bb"}"#))
        let use = makeEntry(index: 1, url: "https://api.example.com/me?access_token=at-7f9e2d1c0b",
                            requestHeaders: [("Authorization", "Bearer at-7f9e2d1c0b")],
                            responseBody: ("application/json", #"{"email":"hal@corp.com"}"#))
        let refresh = makeEntry(index: 2, method: "POST", url: "https://api.example.com/token",
                                requestBody: ("application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=rt-11aa22bb"))
        let r = redacted([login, use, refresh])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"access_token":"redacted-2","refresh_token":"redacted-3"}"#)
        XCTAssertEqual(header(r.log.entries[1].request.headers, "Authorization"), "Bearer redacted-2")
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/me?access_token=redacted-2")
        XCTAssertEqual(r.log.entries[1].response.content.text, #"{"email":"user1@example.com"}"#)
        XCTAssertEqual(r.log.entries[2].request.postData?.text, "grant_type=refresh_token&refresh_token=redacted-3")
    }

    func testDeterministicAcrossRuns() {
        let log = richLog()
        XCTAssertEqual(redacted(log).bytes, redacted(log).bytes)
    }

    func testIdempotentAndCheckFindsNothingAfterwards() {
        let log = richLog()
        let once = redacted(log)
        XCTAssertGreaterThan(findings(log).count, 20)
        let twice = redacted(once.log)
        XCTAssertEqual(text(twice.bytes), text(once.bytes))
        XCTAssertEqual(twice.report.total, 0)
        XCTAssertEqual(findings(once.log).map { "\($0.path) \($0.rule)" }, [])
    }

    func testRedactedOutputPassesTheValidator() {
        let log = richLog()
        XCTAssertEqual(HARValidator.validate(bytes: log.serialize()).map(\.description), [], "the input is valid")
        let out = redacted(log)
        XCTAssertEqual(HARValidator.validate(bytes: out.bytes).map(\.description), [])
        // Sizes follow the bodies.
        for entry in out.log.entries {
            let content = entry.response.content
            if let t = content.text {
                let size = content.encoding == "base64" ? Base64.decodedCount(t)! : t.utf8.count
                XCTAssertEqual(content.size, size, entry.request.url)
                if content.compression == nil {
                    XCTAssertEqual(entry.response.bodySize, size, entry.request.url)
                    XCTAssertEqual(header(entry.response.headers, "Content-Length"), String(size), entry.request.url)
                }
            }
            if let post = entry.request.postData, let t = post.text {
                let b64 = post.encoding == "base64"
                XCTAssertEqual(entry.request.bodySize, b64 ? Base64.decodedCount(t)! : t.utf8.count)
            }
        }
    }

    func testFindingsShowMaskedPreviewsAndPaths() {
        let e = makeEntry(url: "https://api.example.com/?api_key=SUPERSECRETVALUE123",
                          requestHeaders: [("Authorization", "Bearer bearer-secret-0987654321"), ("Cookie", "sid=cookie-secret-xyz")],
                          responseBody: ("application/json", #"{"data":{"token":"tok-secret-456789"}}"#))
        let f = findings(makeLog([e]))
        XCTAssertEqual(f.map(\.rule), [.secretParameters, .authorizationHeader, .cookies, .cookies, .secretParameters, .jsonKeys])
        XCTAssertEqual(f[0].path, "log.entries[0].request.url")
        XCTAssertEqual(f[1].path, "log.entries[0].request.headers[0].value")
        XCTAssertEqual(f.last?.path, "log.entries[0].response.content.text ($.data.token)")
        XCTAssertEqual(f[0].preview, "SU… (19 chars)")
        for finding in f {
            for secret in ["SUPERSECRETVALUE123", "bearer-secret-0987654321", "cookie-secret-xyz", "tok-secret-456789"] {
                XCTAssertFalse(finding.preview.contains(secret) || finding.path.contains(secret))
            }
        }
        XCTAssertEqual(RedactionEngine.mask("abc"), "… (3 chars)")
        XCTAssertEqual(RedactionEngine.mask("abcdefg"), "a… (7 chars)")
        XCTAssertEqual(RedactionEngine.mask("\u{1}bcdefghijklm"), "?b… (13 chars)")
    }

    func testReportCountsByLocation() {
        let r = redacted(richLog())
        XCTAssertEqual(r.report.entries, richLog().entries.count)
        XCTAssertEqual(r.report.counts.values.reduce(0) { $0 + $1.values.reduce(0, +) }, r.report.total)
        XCTAssertNotNil(r.report.counts[.cookies]?[.cookie])
        XCTAssertNotNil(r.report.counts[.jsonKeys]?[.body])
        XCTAssertNotNil(r.report.counts[.jsonKeys]?[.webSocket])
        XCTAssertNotNil(r.report.counts[.secretParameters]?[.url])
        XCTAssertNotNil(r.report.counts[.secretParameters]?[.query])
        XCTAssertNotNil(r.report.counts[.authorizationHeader]?[.header])
    }

    func testPagesAndCommentsAreScanned() {
        var log = makeLog([makeEntry()])
        log.pages = [HARPage(startedDateTime: log.entries[0].startedDateTime, id: "p1", title: "https://wiki.corp/page?token=page-tok-1")]
        log.entries[0].comment = "by ivy@corp.com"
        log.comment = "recorded against 192.168.0.10"
        let r = redacted(log)
        XCTAssertEqual(r.log.pages?[0].title, "https://internal-1.example.invalid/page?token=redacted-1")
        XCTAssertEqual(r.log.entries[0].comment, "by user1@example.com")
        XCTAssertEqual(r.log.comment, "recorded against 192.0.2.1")
    }
}

/// A log touching most rules and locations, valid HAR before and after.
func richLog() -> HARLog {
    let jwt = makeJWT(header: #"{"alg":"RS256","typ":"JWT"}"#, payload: #"{"sub":"jo","email":"jo@corp.com"}"#)
    let ws: [JSONValue] = [
        .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.5)), (key: "opcode", value: .integer(1)),
                 (key: "data", value: .string(#"{"token":"ws-0011223344"}"#))]),
    ]
    let boundary = "XyZ"
    let multipart = "--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nmp-pass-1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"bio\"\r\n\r\nmail kim@corp.com\r\n--XyZ--\r\n"
    return makeLog([
        makeEntry(index: 0, method: "POST", url: "https://auth.example.com/login?client_id=app&code=c0de-1234",
                  requestHeaders: [("Host", "auth.example.com"), ("Cookie", "sid=abc123; theme=dark")],
                  requestBody: ("application/json", #"{"username":"jo@corp.com","password":"pw-1"}"#),
                  responseHeaders: [("Set-Cookie", "sid=new-sid-99; Path=/; HttpOnly")],
                  responseBody: ("application/json", "{\n  \"access_token\": \"\(jwt)\",\n  \"expires_in\": 3600\n}")),
        makeEntry(index: 1, url: "https://api.example.com/me",
                  requestHeaders: [("Authorization", "Bearer " + jwt), ("X-Api-Key", "key-5566"),
                                   ("Referer", "https://app.example.com/?token=ref-tok-1")],
                  responseBody: ("text/html", "<p>Contact jo@corp.com, server db1.corp (10.1.1.1), key AKIAIOSFODNN7EXAMPLE</p>"),
                  serverIPAddress: "10.1.1.1"),
        makeEntry(index: 2, method: "POST", url: "https://api.example.com/upload",
                  requestBody: ("multipart/form-data; boundary=\(boundary)", multipart),
                  responseBody: ("application/json", #"{"ok":true,"secret":42}"#), responseBase64: true),
        makeEntry(index: 3, method: "POST", url: "https://api.example.com/form",
                  requestBody: ("application/x-www-form-urlencoded", "a=1&password=f0rm-pw&b=x%20y"),
                  status: 302, responseHeaders: [("Location", "https://app.example.com/cb#access_token=frag-tok-1")]),
        makeEntry(index: 4, url: "wss://chat.example.com/ws", status: 101,
                  custom: [(key: "_resourceType", value: .string("websocket")), (key: "_webSocketMessages", value: .array(ws))]),
    ])
}
