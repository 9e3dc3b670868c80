import HTTP1
@testable import ProxyCore
import XCTest

final class ErrorResponsesTests: XCTestCase {
    func testPlainErrorIsAValidResponseWithASanitizedReason() throws {
        let bytes = ErrorResponses.plain(status: 502, reason: "cannot connect\r\nX-Evil: 1", close: true)
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "), text)
        XCTAssertTrue(text.contains("\r\nConnection: close\r\n\r\nharrec: cannot connect"), text)
        XCTAssertFalse(text.contains("\r\nX-Evil"), "control characters from the wire never reach the head")
        // A real decoder reads it whole: head, body of the stated length, end.
        var decoder = HTTP1ResponseDecoder()
        decoder.expectResponse(toMethod: "GET")
        decoder.feed(bytes)
        guard case .head(let head, _)? = try decoder.next() else { return XCTFail("no head") }
        XCTAssertEqual(head.status, 502)
        guard case .body(let body)? = try decoder.next() else { return XCTFail("no body") }
        XCTAssertEqual(String(decoding: body, as: UTF8.self).hasSuffix("\n"), true)
        guard case .end? = try decoder.next() else { return XCTFail("no end") }
    }

    func testProxyAuthenticationAndConnectReplies() {
        let answer = ErrorResponses.proxyAuthenticationRequired(close: false)
        let auth = String(decoding: answer.bytes, as: UTF8.self)
        // The recorded response is the one sent: status, fields in order, sizes and body.
        XCTAssertEqual(answer.recorded.status, 407)
        XCTAssertEqual(answer.recorded.reason, "Proxy Authentication Required")
        XCTAssertEqual(answer.recorded.fields.map(\.name), ["Proxy-Authenticate", "Content-Type", "Content-Length"])
        XCTAssertEqual(answer.recorded.headSize + answer.recorded.body.bytes.count, answer.bytes.count)
        XCTAssertEqual(answer.recorded.body.bytes, Array("harrec: proxy authentication required\n".utf8))
        XCTAssertTrue(auth.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"harrec\"\r\n"), auth)
        XCTAssertFalse(auth.contains("Connection: close"))
        XCTAssertTrue(auth.hasSuffix("\r\n\r\nharrec: proxy authentication required\n"))
        XCTAssertEqual(String(decoding: ErrorResponses.connectionEstablished, as: UTF8.self), "HTTP/1.1 200 Connection established\r\n\r\n")
        XCTAssertEqual(HTTP1Forwarding.reasonPhrase(408), "Request Timeout")
        XCTAssertEqual(HTTP1Forwarding.reasonPhrase(599, fallback: "Error"), "Error")
        XCTAssertEqual(HTTP1Forwarding.reasonPhrase(599), "Status 599")
    }
}
