// WebSocket frame parser with permessage-deflate (both directions, small and default limits):
// never crashes, protocol errors are one printable line, and whole or chunked feeding gives the
// same events.
import WebSocket

private func parse(_ chunks: [ArraySlice<UInt8>], flags: UInt8) -> [WebSocketEvent] {
    let direction: WebSocketDirection = flags & 1 != 0 ? .clientToServer : .serverToClient
    let deflate = flags & 2 != 0 ? PerMessageDeflate(clientNoContextTakeover: flags & 4 != 0, serverNoContextTakeover: flags & 4 != 0,
                                                     clientMaxWindowBits: 8 + Int(flags >> 5), serverMaxWindowBits: 8 + Int(flags >> 5)) : nil
    let limits = flags & 8 != 0 ? WebSocketLimits(maxRecordedMessageBytes: 64, maxInflatedMessageBytes: 256, maxControlPayload: 125) : .default
    var parser = WebSocketParser(direction: direction, deflate: deflate, limits: limits)
    var events: [WebSocketEvent] = []
    for chunk in chunks {
        parser.feed(Array(chunk))
        while let event = parser.next() {
            events.append(event)
            if events.count > 100_000 { fuzzFail("more than 100,000 events") }
        }
    }
    if let last = parser.finish() { events.append(last) }
    return events
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let data = Array(UnsafeBufferPointer(start: pointer + 2, count: size - 2))
    let whole = parse([data[...]], flags: pointer[0])
    let split = parse(fuzzChunks(data, seed: pointer[1]), flags: pointer[0])
    if whole != split { fuzzFail("whole \(whole.count) events, split \(split.count)") }
    for event in whole {
        if case .protocolError(let text) = event, text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            fuzzFail("control character in a protocol error")
        }
    }
    return 0
}
