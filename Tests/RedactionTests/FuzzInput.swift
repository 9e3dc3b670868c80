import HAR
import TextEncodings

/// The log `Fuzz/redaction.swift` redacts for one fuzz input, here so that the harness (which
/// compiles this file in, `scripts/fuzz`) and its regression tests (`FuzzRegressionTests`) build
/// the same one; the library holds no fuzz-only code. The first byte picks the body type
/// (low 3 bits) and whether the response body is base64 (bit 3); the rest is the body, the URL
/// query and a header value, separated by 0x01.
enum FuzzInput {
    static let mimeTypes = ["application/json", "text/plain", "application/x-www-form-urlencoded",
                            "multipart/form-data; boundary=XyZ", "text/event-stream", "text/html",
                            "application/x-ndjson", "application/grpc-web+proto"]

    static func log(_ input: [UInt8]) -> HARLog {
        let text = String(decoding: input.dropFirst(), as: UTF8.self)
        let parts = text.split(separator: "\u{1}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        let body = parts[0], query = parts.count > 1 ? parts[1] : "", header = parts.count > 2 ? parts[2] : ""
        let mimeType = mimeTypes[Int((input.first ?? 0) & 7)]
        let base64 = (input.first ?? 0) & 8 != 0
        let request = HARRequest(method: "POST", url: "https://api.example.com/v1/x?" + query, httpVersion: "HTTP/1.1",
                                 headers: [HARHeader(name: "X-Fuzz", value: header)],
                                 postData: HARPostData(mimeType: mimeType, text: body))
        let content = HARContent(size: body.utf8.count, mimeType: mimeType,
                                 text: base64 ? Base64.encode(Array(body.utf8)) : body, encoding: base64 ? "base64" : nil)
        let response = HARResponse(status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
                                   headers: [HARHeader(name: "Content-Type", value: mimeType)], content: content)
        let entry = HAREntry(startedDateTime: "2026-12-01T00:00:00.000Z", time: 1, request: request, response: response,
                             timings: HARTimings(send: 0, wait: 1, receive: 0))
        return HARLog(creator: HARCreator(name: "fuzz", version: "1"), entries: [entry])
    }
}
