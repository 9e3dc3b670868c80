import HAR
import ProxyCore
import Recording

/// How a listed flow travelled.
enum LiveTransport: UInt8 {
    case h1, h2, ws, replay

    var name: StaticString {
        switch self {
        case .h1: "h1"
        case .h2: "h2"
        case .ws: "ws"
        case .replay: "replay"
        }
    }

    var text: String { name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) } }
}

/// A flow as the live view's index keeps it: plain data, its strings in the index's `ByteArena`.
/// `LiveFlowSummary` is the same row with its strings, for the API; the event stream writes rows
/// straight to JSON.
struct LiveRow {
    var id: UInt64
    var requestBytes: Int
    var responseBytes: Int
    var milliseconds: Double
    var started: Double
    var method = ArenaRef.none
    var url = ArenaRef.none
    var error = ArenaRef.none
    var mimeType = ArenaRef.none
    var replayItem = ArenaRef.none
    /// -1 when no response came.
    var status: Int32
    var page: Int32
    var messages: Int32
    var transport: LiveTransport
    var open: Bool
    var excluded = false

    /// The row of `flow`, all but its strings (stored under the index's lock with `store`).
    init(_ flow: Flow, page: Int) {
        // Each optional part is read once: reading `flow.response?.x` again copies it again.
        let response = flow.response, webSocket = flow.webSocket
        id = flow.id
        status = response.map { Int32(clamping: $0.status) } ?? -1
        // `http/2.0` as the HTTP/2 layer records it; any case, as a HAR may write it.
        transport = webSocket != nil ? .ws
            : flow.request.httpVersion.utf8.prefix(6).elementsEqual("http/2".utf8, by: { ($0 >= 65 && $0 <= 90 ? $0 + 32 : $0) == $1 }) ? .h2 : .h1
        requestBytes = flow.request.body.wireSize
        responseBytes = response?.body.wireSize ?? 0
        let end = flow.instants.end ?? flow.instants.responseEnd ?? flow.instants.requestStart
        milliseconds = max(0, (end - flow.instants.requestStart) * 1000)
        started = flow.instants.requestStart
        self.page = Int32(clamping: page)
        open = webSocket?.isOpen ?? false
        messages = Int32(clamping: webSocket?.messages.count ?? 0)
    }

    /// The row of a replay's answer (or its 599): no bodies counted, no duration.
    init(replayed id: UInt64, status: Int?, at time: Double, page: Int) {
        self.id = id
        requestBytes = 0
        responseBytes = 0
        milliseconds = 0
        started = time
        self.status = status.map { Int32(clamping: $0) } ?? -1
        self.page = Int32(clamping: page)
        messages = 0
        transport = .replay
        open = false
    }

    /// Puts `flow`'s strings in `arena` (a WebSocket's URL as ws(s)).
    mutating func store(stringsOf flow: Flow, in arena: ByteArena) {
        method = arena.append(flow.request.method)
        url = arena.append(transport == .ws ? webSocketURL(flow.request.url) : flow.request.url)
        error = arena.append(flow.error)
        mimeType = arena.append(flow.response?.fields.last { $0.name.equalsIgnoringASCIICase("Content-Type") }?.value)
    }

    func summary(seq: Int, strings chunks: [ByteArena.Chunk]) -> LiveFlowSummary {
        LiveFlowSummary(seq: seq, id: id, method: ByteArena.string(method, in: chunks) ?? "",
                        url: ByteArena.string(url, in: chunks) ?? "", status: status < 0 ? nil : Int(status),
                        transport: transport.text, requestBytes: requestBytes, responseBytes: responseBytes,
                        milliseconds: milliseconds, started: started, page: Int(page),
                        error: ByteArena.string(error, in: chunks), mimeType: ByteArena.string(mimeType, in: chunks),
                        open: open, messages: Int(messages), excluded: excluded,
                        replayItem: ByteArena.string(replayItem, in: chunks))
    }

    /// Appends the row as `LiveFlowSummary.json` has it, member for member, straight to bytes: a
    /// stream sends tens of thousands a second at full speed, so the names and punctuation are
    /// literals and nothing but the values is formatted. Members at their default (0, null,
    /// false) are left out, as proto3's JSON does, except those every row shows.
    func write(seq: Int, strings chunks: [ByteArena.Chunk], to out: inout [UInt8]) {
        func literal(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        func string(_ ref: ArenaRef) { JSONWriter.appendEscaped(ByteArena.bytes(ref, in: chunks), to: &out) }
        literal(#"{"seq":"#); JSONWriter.appendInt(seq, to: &out)
        literal(#","id":""#); JSONWriter.appendUInt(UInt(id), to: &out)
        literal(#"","method":"#); string(method)
        literal(#","url":"#); string(url)
        literal(#","status":"#)
        if status >= 0 { JSONWriter.appendInt(Int(status), to: &out) } else { literal("null") }
        literal(#","transport":""#); literal(transport.name); out.append(0x22)
        literal(#","ms":"#); JSONWriter.appendDouble((milliseconds * 10).rounded() / 10, to: &out)
        literal(#","started":"#); JSONWriter.appendDouble(started, to: &out)
        literal(#","page":"#); JSONWriter.appendInt(Int(page), to: &out)
        if requestBytes != 0 { literal(#","requestBytes":"#); JSONWriter.appendInt(requestBytes, to: &out) }
        if responseBytes != 0 { literal(#","responseBytes":"#); JSONWriter.appendInt(responseBytes, to: &out) }
        if !error.isNone { literal(#","error":"#); string(error) }
        if !mimeType.isNone { literal(#","mimeType":"#); string(mimeType) }
        if open { literal(#","open":true"#) }
        if messages != 0 { literal(#","messages":"#); JSONWriter.appendInt(Int(messages), to: &out) }
        if excluded { literal(#","excluded":true"#) }
        if !replayItem.isNone { literal(#","replayItem":"#); string(replayItem) }
        out.append(0x7D)
    }
}
