// An HTTP/2 server connection fed a client's frames (after the connection preface, which the
// harness sends first): never crashes or hangs, whether or not it answers the requests it
// delivers (flag 0x80). Without answers nothing is sent until the input ends, so the state is a
// function of the input alone, and whole or chunked feeding must give the same events per stream
// and on the connection (body bytes compared joined per stream, since nghttp2 hands them over as
// they arrive). With answers (sent between reads, as the runtime does), when a stream closes
// depends on where the input was split (a reset that arrives before the answer or after it, a
// stream error's RST_STREAM sent before a later frame ends the connection), so only the absence
// of crashes and hangs is checked.
import HTTP1
import HTTP2

private let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

private enum Seen: Equatable {
    case event(HTTP2Event)
    case data(Int32, [UInt8])
    case failed
}

private func run(_ chunks: [ArraySlice<UInt8>], answer: Bool) -> [Seen] {
    guard let server = try? HTTP2Connection(role: .server) else { fuzzFail("cannot create a connection") }
    var seen: [Seen] = []
    func drain(sending: Bool) {
        guard sending else { return drainEvents() }
        // Sending can close streams (their end went out), which queues events: repeat until quiet.
        var rounds = 0
        repeat {
            drainEvents()
            _ = server.takeOutput()
            rounds += 1
        } while server.hasEvents && rounds < 1_000
    }
    func drainEvents() {
        while let event = server.nextEvent() {
            switch event {
            case .data(let id, let bytes):
                server.consumed(bytes.count, on: id)
                if case .data(id, let earlier)? = seen.last {
                    seen[seen.count - 1] = .data(id, earlier + bytes)
                } else {
                    seen.append(.data(id, bytes))
                }
            case .headers(let id, _, let endStream):
                seen.append(.event(event))
                if answer {
                    try? server.sendResponse([HTTPField(name: ":status", value: "200")], on: id, endStream: false)
                    server.sendData(Array("ok".utf8), on: id, end: endStream, trailers: [HTTPField(name: "x-t", value: "1")])
                }
            default:
                seen.append(.event(event))
            }
            if seen.count > 100_000 { fuzzFail("more than 100,000 events") }
        }
    }
    for chunk in [preface[...]] + chunks {
        do {
            try Array(chunk).withUnsafeBytes { try server.receive($0) }
        } catch {
            drain(sending: true)
            seen.append(.failed)
            return seen
        }
        drain(sending: answer)
    }
    drain(sending: true)
    return seen
}

/// Events per stream (stream 0: the connection's own, GOAWAY and failure).
private func grouped(_ seen: [Seen]) -> [Int32: [Seen]] {
    var groups: [Int32: [Seen]] = [:]
    for item in seen {
        let stream: Int32
        switch item {
        case .data(let id, _): stream = id
        case .failed: stream = 0
        case .event(let event):
            switch event {
            case .headers(let id, _, _), .trailers(let id, _), .data(let id, _), .endStream(let id),
                 .reset(let id, _), .closed(let id, _):
                stream = id
            case .goAway:
                stream = 0
            }
        }
        if case .data(let id, let bytes) = item, case .data(_, let earlier)? = groups[stream]?.last {
            groups[stream]![groups[stream]!.count - 1] = .data(id, earlier + bytes)
        } else {
            groups[stream, default: []].append(item)
        }
    }
    return groups
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let answer = pointer[0] & 0x80 != 0
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = run([data[...]], answer: answer)
    let split = run(fuzzChunks(data, seed: pointer[0] & 0x7F), answer: answer)
    if !answer && !agree(grouped(whole), grouped(split)) { fuzzFail("whole \(whole.count) events, split \(split.count)") }
    return 0
}

/// Equal, or, when one feeding ended in a connection error, each stream's events in one a
/// prefix of the other's: nghttp2 counts some limits per read (a CONTINUATION flood fails when
/// fed a byte at a time and not when fed whole), so where a failure stops the events may differ,
/// never what came before it.
private func agree(_ a: [Int32: [Seen]], _ b: [Int32: [Seen]]) -> Bool {
    if a == b { return true }
    let failed = a[0]?.last == .failed || b[0]?.last == .failed
    guard failed else { return false }
    for key in Set(a.keys).union(b.keys) {
        var x = a[key] ?? [], y = b[key] ?? []
        if key == 0 { x.removeAll { $0 == .failed }; y.removeAll { $0 == .failed } }
        let (short, long) = x.count <= y.count ? (x, y) : (y, x)
        // The last body bytes before the failure may be cut anywhere.
        for (i, item) in short.enumerated() where item != long[i] {
            guard i == short.count - 1, case .data(let id, let s) = item, case .data(id, let l) = long[i], l.starts(with: s) else { return false }
        }
    }
    return true
}
