// Redaction of one entry whose body, URL query and a header come from the input, under each
// body type: never crashes, a JSON body that parsed still parses, and redacting the output again
// changes nothing (the output is a fixed point).
import HAR
import Redaction

private let mimeTypes = ["application/json", "text/plain", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=XyZ", "text/event-stream", "text/html",
                         "application/x-ndjson", "application/grpc-web+proto"]

private func log(body: String, query: String, header: String, mimeType: String, base64: Bool) -> HARLog {
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

/// One engine for every input: compiling the rules is the expensive part, and `redact` keeps no
/// state between calls.
private let engine = RedactionEngine()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: pointer + 1, count: size - 1), as: UTF8.self)
    let parts = text.split(separator: "\u{1}", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let body = parts[0], query = parts.count > 1 ? parts[1] : "", header = parts.count > 2 ? parts[2] : ""
    let mimeType = mimeTypes[Int(pointer[0] & 7)]
    var first = log(body: body, query: query, header: header, mimeType: mimeType, base64: pointer[0] & 8 != 0)
    engine.redact(&first)
    if mimeType == "application/json", (try? JSONParser.parse(Array(body.utf8))) != nil,
       let out = first.entries[0].request.postData?.text, (try? JSONParser.parse(Array(out.utf8))) == nil {
        fuzzFail("a JSON body no longer parses after redaction")
    }
    var second = first
    engine.redact(&second)
    if second != first { fuzzFail("redacting the output again changed it") }
    return 0
}
