// Shared by the two HTTP/1 targets: drives a decoder over chunks and collects its events, body
// events joined (how bodies are cut depends on the chunks; their bytes must not).
import HTTP1

protocol FuzzedDecoder {
    associatedtype Event: Equatable
    mutating func feed(_ bytes: [UInt8])
    mutating func finish()
    mutating func nextEvent() throws(HTTP1ParseError) -> Event?
    /// The bytes of a body event; nil for other events.
    static func bodyBytes(_ event: Event) -> [UInt8]?
    static func bodyEvent(_ bytes: [UInt8]) -> Event
    /// Runs after each event.
    mutating func saw(_ event: Event)
}

extension FuzzedDecoder {
    mutating func saw(_ event: Event) {}
}

extension HTTP1RequestDecoder: FuzzedDecoder {
    mutating func nextEvent() throws(HTTP1ParseError) -> HTTP1RequestEvent? { try next() }
    static func bodyBytes(_ event: HTTP1RequestEvent) -> [UInt8]? {
        if case .body(let bytes) = event { return bytes }
        return nil
    }
    static func bodyEvent(_ bytes: [UInt8]) -> HTTP1RequestEvent { .body(bytes) }
}

/// The response decoder for one method, expecting the next response after each one (keep-alive).
struct ResponseDecoding: FuzzedDecoder {
    var decoder = HTTP1ResponseDecoder()
    let method: String

    init(method: String) {
        self.method = method
        decoder.expectResponse(toMethod: method)
    }

    mutating func feed(_ bytes: [UInt8]) { decoder.feed(bytes) }
    mutating func finish() { decoder.finish() }
    mutating func nextEvent() throws(HTTP1ParseError) -> HTTP1ResponseEvent? { try decoder.next() }
    mutating func saw(_ event: HTTP1ResponseEvent) {
        if case .end = event { decoder.expectResponse(toMethod: method) }
    }
    static func bodyBytes(_ event: HTTP1ResponseEvent) -> [UInt8]? {
        if case .body(let bytes) = event { return bytes }
        return nil
    }
    static func bodyEvent(_ bytes: [UInt8]) -> HTTP1ResponseEvent { .body(bytes) }
}

/// Every event `decoder` gives for `chunks` (then EOF), and the kind of the error it stopped at.
func decodeAll<D: FuzzedDecoder>(_ decoder: D, _ chunks: [ArraySlice<UInt8>]) -> (events: [D.Event], error: HTTP1ParseError.Kind?) {
    var decoder = decoder
    var events: [D.Event] = []
    func drain() -> HTTP1ParseError.Kind? {
        while true {
            do {
                guard let event = try decoder.nextEvent() else { return nil }
                if let bytes = D.bodyBytes(event), let last = events.last, let previous = D.bodyBytes(last) {
                    events[events.count - 1] = D.bodyEvent(previous + bytes)
                } else {
                    events.append(event)
                }
                decoder.saw(event)
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
