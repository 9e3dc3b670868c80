// HTTP/1 response decoder (chunked, close-delimited, HEAD and CONNECT answers): never crashes, and
// whole or chunked feeding gives the same events and error kind.
import HTTP1

private func decode(_ chunks: [ArraySlice<UInt8>], method: String) -> (events: [HTTP1ResponseEvent], error: HTTP1ParseError.Kind?) {
    var decoder = HTTP1ResponseDecoder()
    decoder.expectResponse(toMethod: method)
    var events: [HTTP1ResponseEvent] = []
    func drain() -> HTTP1ParseError.Kind? {
        while true {
            do {
                guard let event = try decoder.next() else { return nil }
                if case .body(let bytes) = event, case .body(let previous)? = events.last {
                    events[events.count - 1] = .body(previous + bytes)
                } else {
                    events.append(event)
                }
                // Keep-alive: the next response answers the same method.
                if case .end = event { decoder.expectResponse(toMethod: method) }
                if events.count > 10_000 { fuzzFail("more than 10,000 events") }
            } catch {
                return error.kind
            }
        }
    }
    for chunk in chunks {
        decoder.feed(Array(chunk))
        if let error = drain() { return (events, error) }
    }
    decoder.finish()
    return (events, drain())
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let method = ["GET", "HEAD", "POST", "CONNECT"][Int(pointer[0] >> 6)]
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = decode([data[...]], method: method)
    let split = decode(fuzzChunks(data, seed: pointer[0] & 0x3F), method: method)
    if whole.events != split.events || whole.error != split.error {
        fuzzFail("\(method): whole \(whole.events.count) events, error \(String(describing: whole.error)); split \(split.events.count), \(String(describing: split.error))")
    }
    return 0
}
