import Foundation
import HAR
@testable import Redaction
import XCTest

/// Inputs `scripts/fuzz` found (Fuzz/redaction.swift): each is redacted as the harness does, and
/// the output must be a fixed point and keep JSON bodies JSON.
final class FuzzRegressionTests: XCTestCase {
    static let mimeTypes = ["application/json", "text/plain", "application/x-www-form-urlencoded",
                            "multipart/form-data; boundary=XyZ", "text/event-stream", "text/html",
                            "application/x-ndjson", "application/grpc-web+proto"]

    /// The harness's log for `input` (first byte: body type and base64 flag; the rest: body,
    /// query and header separated by 0x01).
    static func log(_ input: [UInt8]) -> HARLog {
        let text = String(decoding: input.dropFirst(), as: UTF8.self)
        let parts = text.split(separator: "\u{1}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let body = parts[0], query = parts.count > 1 ? parts[1] : "", header = parts.count > 2 ? parts[2] : ""
        let mimeType = mimeTypes[Int(input[0] & 7)]
        let base64 = input[0] & 8 != 0
        let request = HARRequest(method: "POST", url: "https://api.example.com/v1/x?" + query, httpVersion: "HTTP/1.1",
                                 headers: [HARHeader(name: "X-Fuzz", value: header)],
                                 postData: HARPostData(mimeType: mimeType, text: body))
        let content = HARContent(size: body.utf8.count, mimeType: mimeType,
                                 text: base64 ? HARBuild.base64(Array(body.utf8)) : body, encoding: base64 ? "base64" : nil)
        let response = HARResponse(status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
                                   headers: [HARHeader(name: "Content-Type", value: mimeType)], content: content)
        let entry = HAREntry(startedDateTime: "2026-12-01T00:00:00.000Z", time: 1, request: request, response: response,
                             timings: HARTimings(send: 0, wait: 1, receive: 0))
        return HARLog(creator: HARCreator(name: "fuzz", version: "1"), entries: [entry])
    }

    func assertFixedPoint(_ base64: String, absent: [String] = [], present: [String] = [],
                          file: StaticString = #filePath, line: UInt = #line) {
        let input = [UInt8](Data(base64Encoded: base64)!)
        var first = Self.log(input)
        RedactionEngine().redact(&first)
        var second = first
        RedactionEngine().redact(&second)
        let a = String(decoding: first.serialize(pretty: true), as: UTF8.self)
        let b = String(decoding: second.serialize(pretty: true), as: UTF8.self)
        for secret in absent { XCTAssertFalse(a.contains(secret), "\(secret) survived the first run", file: file, line: line) }
        for kept in present { XCTAssertTrue(a.contains(kept), "\(kept) was changed", file: file, line: line) }
        if a != b {
            let la = a.split(separator: "\n"), lb = b.split(separator: "\n")
            let diff = zip(la, lb).filter { $0 != $1 }.prefix(4).map { "- \($0)\n+ \($1)" }.joined(separator: "\n")
            XCTFail("redacting the output again changed it:\n\(diff)", file: file, line: line)
        }
    }

    func testFormBodyWithControlBytesAndEncodedEmail() {
        // `jane@corp.examplne@corp.example.org`: the first run replaces the first address; the
        // placeholder it leaves must not make `example.com@corp.example.org` an address next time.
        assertFixedPoint("AnBhc3MPDw8PDw8PDw8PDw8PDw8PDw8PDw8PYQ8PDw8PDw8P/////////////////////////////////////////////////////wJwYepzc3dvNjEYAQAAAAkAAGNvcnAuZXg9aHVudGlsZXIyJnVzZXI9amFuZSU0MGNvcnAuZXhhbXBsbmUlNDBjb3JwLmV4YW1wbGUub3JnAXg9ZS5vcv//////////////AAAAAAAAAAT/////////ZwF4PTEBa2V5OiFBQU3/OQ==")
    }

    func testJSONBodyWithAnEscapeInsideAJWT() {
        // The body is not JSON (`\0` is no JSON escape), so the lenient path runs: it must still
        // redact the JSON inside the "nested" string and keep the version under "version".
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjogImV5SmhiR2NpT2lKSVV6STFOaUo5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzVOWlhnXDBuM0k5UGxGVVAwVEhzUjhVIiwgImVtYSlsIjogImphbmVAY29ycC5leGFtcGxlLm9yZyIsICJwaG9uZSI6ICIrMSA0MTUgNTU1IDAxMDAiLCAiY2FyZCI6ICI0MTExIDExMTEgMTExMSAxMTExIiwgIm5lc3RlZCI6ICJ7XCJwYXNzd29yZFwiOlwiaHVudGVyMjJcIn0iLCAidmVyc2lvbiI6ICIxMC40LjEuNyJ9AXRva2VuPWFiYzEyM2RlZjQ1NmdoaSZwYWdlPTImYXBpX2tleT1zay1wcm9qLUFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaMDEyMzQ1AUJlYXJlciBhYmMuZGVmLmdoaQ==",
                         absent: ["hunter22", "jane@corp"], present: ["10.4.1.7"])
    }

    func testBinaryBodyWithAJWTFollowedByATilde() {
        assertFixedPoint("DwoQZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4SW4wLnNpZzEyM340NTc4EgNhYmMBAQ==",
                         absent: ["eyJzdWIiOiIxIn0"])
    }
}
