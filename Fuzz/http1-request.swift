// HTTP/1 request decoder: never crashes, and feeding an input whole or in chunks gives the same
// events (bodies joined) and the same error kind.
import HTTP1

private func decode(_ chunks: [ArraySlice<UInt8>]) -> (events: [HTTP1RequestEvent], error: HTTP1ParseError.Kind?) {
    var decoder = HTTP1RequestDecoder()
    var events: [HTTP1RequestEvent] = []
    func drain() -> HTTP1ParseError.Kind? {
        while true {
            do {
                guard let event = try decoder.next() else { return nil }
                if case .body(let bytes) = event, case .body(let previous)? = events.last {
                    events[events.count - 1] = .body(previous + bytes)
                } else {
                    events.append(event)
                }
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
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = decode([data[...]])
    let split = decode(fuzzChunks(data, seed: pointer[0]))
    if whole.events != split.events || whole.error != split.error {
        fuzzFail("whole \(whole.events.count) events, error \(String(describing: whole.error)); split \(split.events.count), \(String(describing: split.error))")
    }
    return 0
}
