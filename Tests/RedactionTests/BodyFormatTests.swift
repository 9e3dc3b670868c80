import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// Bodies beyond plain JSON: server-sent events, JSON lines, JSON cut off mid-value, binary bodies
/// and binary WebSocket messages (same length, only printable runs touched), values that are
/// base64 of JSON (decoded, redacted, encoded back in the same alphabet and padding), multipart.
final class BodyFormatTests: XCTestCase {
    private func responseText(_ r: (log: HARLog, report: RedactionReport, bytes: [UInt8]), _ index: Int = 0) -> String? {
        r.log.entries[index].response.content.text
    }

    // MARK: Server-sent events

    func testEventStreamDataLinesAreJSONOrText() {
        let sse = "event: token\ndata: {\"access_token\":\"sse-tok-12345678\",\"n\":1}\n\nid: 42\n"
            + "data: plain text from ann@corp.com\ndata:{\"password\":\"pw-sse-2\",\"secret\":7}\n: comment 10.0.0.9\n\n"
        let r = redacted([makeEntry(responseBody: ("text/event-stream", sse))])
        XCTAssertEqual(responseText(r),
                       "event: token\ndata: {\"access_token\":\"redacted-1\",\"n\":1}\n\nid: 42\n"
                           + "data: plain text from user1@example.com\ndata:{\"password\":\"redacted-2\",\"secret\":0}\n: comment 192.0.2.1\n\n")
        XCTAssertEqual(r.report.counts[.jsonKeys]?[.body], 3)
        XCTAssertEqual(r.log.entries[0].response.content.size, responseText(r)?.utf8.count)
    }

    func testEventStreamWithAnOpenAIStyleStream() {
        // Each data line is one JSON document; keys, types and formatting of each are kept.
        let sse = "data: {\"choices\":[{\"delta\":{\"content\":\"key sk-proj-AbCdEfGhIjKlMnOpQrStUv\"}}]}\n\ndata: [DONE]\n\n"
        let r = redacted([makeEntry(responseBody: ("text/event-stream; charset=utf-8", sse))])
        XCTAssertEqual(responseText(r), "data: {\"choices\":[{\"delta\":{\"content\":\"key redacted-1\"}}]}\n\ndata: [DONE]\n\n")
        XCTAssertEqual(r.report.counts[.openAIKey]?[.body], 1)
    }

    // MARK: JSON lines

    func testNDJSONLineByLine() {
        let lines = "{\"id\":1,\"token\":\"nd-tok-1111\"}\n{\"id\":2, \"email\": \"ann@corp.com\"}\nnot json from 10.0.0.1\n{\"secret\":42}\n"
        for mime in ["application/x-ndjson", "application/json"] {
            let r = redacted([makeEntry(responseBody: (mime, lines))])
            XCTAssertEqual(responseText(r),
                           "{\"id\":1,\"token\":\"redacted-1\"}\n{\"id\":2, \"email\": \"user1@example.com\"}\nnot json from 192.0.2.1\n{\"secret\":0}\n", mime)
        }
    }

    // MARK: JSON cut off

    func testJSONCutOffMidValue() {
        XCTAssertEqual(body(#"{"user":"ann@corp.com","token":"abcdef1234"#), #"{"user":"user1@example.com","token":"redacted-1"#)
        XCTAssertEqual(body(#"{"a":1,"password": 12345"#), #"{"a":1,"password": 0"#)
        XCTAssertEqual(body(#"{"items":[{"id":1,"token":"t-aaaa1111"},{"id":2,"token":"t-bbbb"#),
                       #"{"items":[{"id":1,"token":"redacted-1"},{"id":2,"token":"redacted-2"#)
        XCTAssertEqual(body(#"{"refresh_token":"rt-1234567","na"#), #"{"refresh_token":"redacted-1","na"#, "cut inside a key")
        XCTAssertEqual(body(#"{"note":"esc \"q\" and AKIAIOSFODNN7EXAMPLE"#), #"{"note":"esc \"q\" and redacted-1"#)
        // A trailing comma is not JSON either.
        XCTAssertEqual(body(#"{"token": "tc-9999999", "n": 1,}"#), #"{"token": "redacted-1", "n": 1,}"#)
    }

    func testJSONCutOffInsideASecretObject() {
        // Complete, every value under a secret member is secret ("auth" -> "value") but what
        // describes it ("kind").
        XCTAssertEqual(body(#"{"auth": {"value": "abc123xyz789", "kind": "x", "key": "y"}}"#),
                       #"{"auth": {"value": "redacted-1", "kind": "x", "key": "redacted-2"}}"#)
        // Cut off inside an object under a secret key (--max-body): the same.
        XCTAssertEqual(body(#"{"auth": {"value": "abc123xyz789", "kind": "x", "key": "y""#),
                       #"{"auth": {"value": "redacted-1", "kind": "x", "key": "redacted-2""#)
    }

    // MARK: Binary bodies

    /// A protobuf-like message: a varint field, a JWT string field, an AWS credential scope field
    /// (its length byte, 55, is the printable '7' right before the key), a trailer of raw bytes.
    private func protobufMessage() -> (bytes: [UInt8], jwt: Range<Int>, key: Range<Int>) {
        let jwt = Array(makeJWT(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"ann"}"#).utf8)
        let scope = Array("AKIAIOSFODNN7EXAMPLE/20240115/us-east-1/s3/aws4_request".utf8)
        var bytes: [UInt8] = [0x08, 0x96, 0x01, 0x12, UInt8(jwt.count)]
        let jwtStart = bytes.count
        bytes += jwt
        bytes += [0x1A, UInt8(scope.count)]
        let keyStart = bytes.count
        bytes += scope + [0x20, 0x00, 0xFF, 0xFE, 0x80, 0x7F, 0x01]
        return (bytes, jwtStart..<jwtStart + jwt.count, keyStart..<keyStart + 20)
    }

    private func expectedBinary(_ message: (bytes: [UInt8], jwt: Range<Int>, key: Range<Int>)) -> [UInt8] {
        var expected = message.bytes
        expected.replaceSubrange(message.jwt, with: Finalizer.fit(Array("redacted-1".utf8), message.jwt.count))
        expected.replaceSubrange(message.key, with: Array("redacted-2**********".utf8))
        return expected
    }

    func testBinaryBodyKeepsItsLengthAndItsOtherBytes() throws {
        let message = protobufMessage()
        XCTAssertTrue((0x21...0x7E).contains(message.bytes[message.jwt.lowerBound - 1]), "the JWT's length byte is printable")
        XCTAssertEqual(message.bytes[message.key.lowerBound - 1], UInt8(ascii: "7"), "so is the key's")
        var e = makeEntry(method: "POST", url: "https://api.example.com/rpc")
        e.response.content = HARContent(size: message.bytes.count, mimeType: "application/x-protobuf",
                                        text: Base64.encode(message.bytes), encoding: "base64")
        e.request.postData = HARPostData(mimeType: "application/grpc-web+proto", text: Base64.encode([0, 0, 0, 0, UInt8(message.bytes.count)] + message.bytes),
                                         encoding: "base64")
        let r = redacted([e])
        let out = try XCTUnwrap(Base64.decode(try XCTUnwrap(responseText(r))))
        XCTAssertEqual(out, expectedBinary(message))
        XCTAssertEqual(r.log.entries[0].response.content.size, message.bytes.count)
        let request = try XCTUnwrap(Base64.decode(try XCTUnwrap(r.log.entries[0].request.postData?.text)))
        XCTAssertEqual(request, [0, 0, 0, 0, UInt8(message.bytes.count)] + expectedBinary(message), "gRPC-web frame intact")
        XCTAssertEqual(r.report.counts[.jwt]?[.body], 2)
        XCTAssertEqual(r.report.counts[.awsAccessKey]?[.body], 2)
        XCTAssertEqual(r.report.binaryBodies, 2)
        XCTAssertTrue(findings(r.log).isEmpty)
    }

    func testBinaryWebSocketMessages() throws {
        let message = protobufMessage()
        let ws: [JSONValue] = [
            .object([(key: "type", value: .string("receive")), (key: "time", value: .double(1.5)), (key: "opcode", value: .integer(2)),
                     (key: "data", value: .string(Base64.encode(message.bytes)))]),
            .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.6)), (key: "opcode", value: .integer(2)),
                     (key: "data", value: .string(Base64.encode([0x00, 0x01, 0x02, 0xFF])))]),
        ]
        let e = makeEntry(url: "wss://stream.example.com/ws", status: 101,
                          custom: [(key: "_webSocketMessages", value: .array(ws))])
        let r = redacted([e])
        let out = try XCTUnwrap(r.log.entries[0].custom.first { $0.key == "_webSocketMessages" }?.value.arrayValue)
        let data = try XCTUnwrap(Base64.decode(try XCTUnwrap(out[0]["data"]?.stringValue)))
        XCTAssertEqual(data, expectedBinary(message))
        XCTAssertEqual(out[0]["opcode"], .integer(2))
        XCTAssertEqual(out[1], ws[1], "nothing printable: untouched")
        XCTAssertEqual(r.report.counts[.jwt]?[.webSocket], 1)
        XCTAssertEqual(r.report.counts[.awsAccessKey]?[.webSocket], 1)
    }

    func testShortSecretsInBinaryBecomeStars() throws {
        // A value shorter than its placeholder cannot hold `redacted-N`: all '*', same length.
        let bytes: [UInt8] = [0x0A, 0x0D] + Array("password=hunter2".utf8) + [0x00, 0x10]
        var e = makeEntry()
        e.response.content = HARContent(size: bytes.count, mimeType: "application/octet-stream", text: Base64.encode(bytes), encoding: "base64")
        let out = try XCTUnwrap(Base64.decode(try XCTUnwrap(responseText(redacted([e])))))
        XCTAssertEqual(out, [0x0A, 0x0D] + Array("password=*******".utf8) + [0x00, 0x10])
    }

    /// Binary bodies are skipped 4 bytes at a time where a block holds a byte that is not
    /// printable; a printable run at any offset, of the shortest length scanned (8), touching
    /// either end of the body or its last partial block, is still scanned.
    func testPrintableRunsAtEveryOffsetOfABinaryBody() throws {
        let secret = Array("pwd=Xy7#kq2!".utf8)  // 12 bytes: an assignment with a secret word
        let short = Array("otp=1234".utf8)  // exactly the shortest run scanned
        for total in 24...31 {
            for value in [secret, short] {
                for offset in 0...(total - value.count) {
                    var bytes = [UInt8](repeating: 0x01, count: total)
                    bytes.replaceSubrange(offset..<offset + value.count, with: value)
                    var e = makeEntry()
                    e.response.content = HARContent(size: bytes.count, mimeType: "application/octet-stream",
                                                    text: Base64.encode(bytes), encoding: "base64")
                    let out = try XCTUnwrap(Base64.decode(try XCTUnwrap(responseText(redacted([e])))),
                                            "total \(total) offset \(offset)")
                    XCTAssertEqual(out.count, total)
                    let name = value.prefix(4)
                    XCTAssertEqual(Array(out[offset..<offset + 4]), Array(name), "total \(total) offset \(offset)")
                    XCTAssertNotEqual(Array(out[offset + 4..<offset + value.count]), Array(value.dropFirst(4)),
                                      "total \(total) offset \(offset): \(String(decoding: value, as: UTF8.self)) kept")
                    XCTAssertEqual(out[..<offset].filter { $0 != 0x01 }, [], "bytes before the run kept")
                    XCTAssertEqual(out[(offset + value.count)...].filter { $0 != 0x01 }, [], "bytes after the run kept")
                }
            }
        }
    }

    // MARK: Base64 of JSON

    private let contextJSON = #"{"user":"ann@corp.com","token":"ctx-tok-12345678","pad":"~~~?>"}"#
    private let contextRedacted = #"{"user":"user1@example.com","token":"redacted-1","pad":"~~~?>"}"#

    func testBase64OfJSONInAHeaderKeepsTheStandardAlphabetAndPadding() {
        let encoded = Base64.encode(utf8(contextJSON))
        XCTAssertTrue(encoded.contains("+") || encoded.contains("/"))
        let r = redacted([makeEntry(requestHeaders: [("X-Context", encoded)])])
        XCTAssertEqual(r.log.entries[0].request.headers[0].value, Base64.encode(utf8(contextRedacted)))
        XCTAssertEqual(r.report.counts[.jsonKeys]?[.header], 1)
        XCTAssertEqual(r.report.counts[.email]?[.header], 1)
    }

    func testBase64URLOfJSONInAJSONFieldKeepsTheURLAlphabetWithoutPadding() {
        let json = #"{"user":"ann@corp.com","token":"ctx-tok-12345678","pad":"~~~"}"#
        let encoded = Base64URL.encode(utf8(json))
        XCTAssertTrue(encoded.contains("-") || encoded.contains("_"))
        // Inside a JSON string the base64 wrap is not JSON-quoted: the value decodes to the redacted
        // JSON itself, not to JSON with escaped quotes.
        XCTAssertEqual(body(#"{"state": "\#(encoded)", "n": 1}"#),
                       #"{"state": "\#(Base64URL.encode(utf8(#"{"user":"user1@example.com","token":"redacted-1","pad":"~~~"}"#)))", "n": 1}"#)
        // Padded base64url stays padded.
        let padded = Base64URL.encode(utf8(json), urlSafe: true, padded: true)
        XCTAssertTrue(padded.hasSuffix("="))
        XCTAssertEqual(body(#"{"state": "\#(padded)"}"#),
                       #"{"state": "\#(Base64URL.encode(utf8(#"{"user":"user1@example.com","token":"redacted-1","pad":"~~~"}"#), urlSafe: true, padded: true))"}"#)
    }

    func testBase64OfJSONInACookie() throws {
        let encoded = Base64.encode(utf8(contextJSON))
        // With the cookies rule on, the whole value is a placeholder.
        let r = redacted([makeEntry(requestHeaders: [("Cookie", "ctx=\(encoded); theme=dark")])])
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Cookie"), "ctx=redacted-1; theme=redacted-2")
        // With it off, the cookie is redacted as text, like any header value.
        // With the cookies rule off each cookie value is still redacted as a value: base64 of JSON
        // is decoded, its email and token replaced.
        let off = redacted([makeEntry(requestHeaders: [("Cookie", "ctx=\(encoded)")])],
                           config: try configuration(rules: #"{"disable": ["cookies"]}"#))
        let expected = Base64.encode(utf8(contextRedacted))
        XCTAssertEqual(header(off.log.entries[0].request.headers, "Cookie"), "ctx=\(expected)")
        XCTAssertEqual(off.log.entries[0].request.cookies.first?.value, expected)
    }

    func testBase64OfTextThatIsNotJSON() {
        let encoded = Base64.encode(utf8("user=ann@corp.com;token=abcdef987654"))
        XCTAssertEqual(body(#"{"ctx": "\#(encoded)"}"#),
                       #"{"ctx": "\#(Base64.encode(utf8("user=user1@example.com;token=redacted-1")))"}"#)
        // Not base64 of text (a hash, an id): left alone.
        for value in ["0123456789abcdef0123456789abcdef", "QUFBQUFBQUFBQUFBQUFBQQ", Base64.encode(binaryBytes(24, seed: 3))] {
            XCTAssertEqual(body(#"{"v": "\#(value)"}"#), #"{"v": "\#(value)"}"#, value)
        }
    }

    /// Base64 of text as a word inside text (a sentence, a CSV cell, a text body): its text is
    /// redacted and encoded back, as a whole value's is. A JWT's parts are the JWT's.
    func testBase64OfTextInsideText() {
        let email = Base64.encode(utf8("maria.gonzalez@corp-mail.com"))
        let placeholder = Base64.encode(utf8("user1@example.com"))
        XCTAssertEqual(body(#"{"note": "Use \#(email) for the store", "rows": "id,label\n33,\#(email)\n"}"#),
                       #"{"note": "Use \#(placeholder) for the store", "rows": "id,label\n33,\#(placeholder)\n"}"#)
        let r = redacted([makeEntry(responseBody: ("text/plain", "echo: \(email), again (\(Base64URL.encode(utf8("ann@corp.com is here"))))"))])
        XCTAssertEqual(r.log.entries[0].response.content.text,
                       "echo: \(Base64.encode(utf8("user1@example.com"))), again (\(Base64URL.encode(utf8("user2@example.com is here"))))")
        // Words that are no base64 of text, or hold nothing to redact, are left as they are.
        for text in ["see QUFBQUFBQUFBQUFBQUFBQQ here", "id \(Base64.encode(binaryBytes(24, seed: 5))) ok",
                     "hi \(Base64.encode(utf8("nothing to see in here"))) ok", "camelCaseIdentifierNamesAreFine too"] {
            XCTAssertEqual(body(#"{"note": "\#(text)"}"#), #"{"note": "\#(text)"}"#, text)
        }
        // A JWT in a sentence is replaced by the placeholder JWT, not part by part.
        let jwt = "eyJhbGciOiJIUzI1NiJ9." + Base64URL.encode(utf8(#"{"sub":"u-1","email":"ann@corp.com"}"#)) + ".c2lnbmF0dXJlLWJ5dGVz"
        let out = body(#"{"note": "token \#(jwt) end"}"#)
        XCTAssertFalse(out.contains("ann@corp.com") || out.contains(jwt) || out.contains(".c2lnbmF0dXJlLWJ5dGVz"), out)
    }

    // MARK: Multipart
    // MARK: Multipart

    func testMultipartFieldsJSONTextAndBinaryFiles() throws {
        let b = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        let parts = [
            "Content-Disposition: form-data; name=\"password\"\r\n\r\nmp-pass-123",
            "Content-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{\"token\":\"mp-tok-456\",\"owner\":\"ann@corp.com\"}",
            "Content-Disposition: form-data; name=\"file\"; filename=\"creds.txt\"\r\nContent-Type: text/plain\r\n\r\naws AKIAIOSFODNN7EXAMPLE by bob@corp.com",
            "Content-Disposition: form-data; name=\"blob\"; filename=\"x.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n\u{1}\u{2}AKIAIOSFODNN7EXAMPLE\u{3}",
            "Content-Disposition: form-data; name=\"note\"\r\n\r\nplain note",
        ]
        let text = parts.map { "--\(b)\r\n\($0)\r\n" }.joined() + "--\(b)--\r\n"
        let r = redacted([makeEntry(method: "POST", url: "https://api.example.com/upload",
                                    requestBody: ("multipart/form-data; boundary=\(b)", text))])
        let expectedParts = [
            "Content-Disposition: form-data; name=\"password\"\r\n\r\nredacted-1",
            "Content-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{\"token\":\"redacted-2\",\"owner\":\"user1@example.com\"}",
            "Content-Disposition: form-data; name=\"file\"; filename=\"creds.txt\"\r\nContent-Type: text/plain\r\n\r\naws redacted-3 by user2@example.com",
            "Content-Disposition: form-data; name=\"blob\"; filename=\"x.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n\u{1}\u{2}redacted-3**********\u{3}",
            "Content-Disposition: form-data; name=\"note\"\r\n\r\nplain note",
        ]
        let post = try XCTUnwrap(r.log.entries[0].request.postData)
        XCTAssertEqual(post.text, expectedParts.map { "--\(b)\r\n\($0)\r\n" }.joined() + "--\(b)--\r\n")
        XCTAssertEqual(r.log.entries[0].request.bodySize, post.text?.utf8.count)
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Content-Length"), String(post.text!.utf8.count))
    }
}
