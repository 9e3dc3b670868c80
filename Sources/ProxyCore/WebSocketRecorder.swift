import Recording
import WebSocket

/// Records a WebSocket conversation from copies of the relayed bytes: one sans-IO parser per
/// direction turns frames into messages. Relaying never waits on it, and a protocol violation
/// only stops the recording of that direction.
struct WebSocketRecorder {
    private(set) var flow: Flow
    private var fromClient: WebSocketParser
    private var fromServer: WebSocketParser
    private let recordControlFrames: Bool
    /// Messages go out one by one (`takeStreamed`) instead of into the flow.
    private let streamsMessages: Bool
    /// Messages completed since the last `takeStreamed`.
    private var streamed: [RecordedWebSocketMessage] = []
    private(set) var sent = 0
    private(set) var received = 0
    private(set) var closeFromClient = false
    private(set) var closeFromServer = false

    init(flow: Flow, extensionHeader: String?, recordControlFrames: Bool, streamsMessages: Bool = false) {
        var flow = flow
        var recording = RecordedWebSocket()
        var deflate: PerMessageDeflate?
        if let extensionHeader {
            do {
                deflate = try PerMessageDeflate(extensionHeader: extensionHeader)
            } catch {
                recording.problems.append("cannot use Sec-WebSocket-Extensions: \(error)")
            }
        }
        flow.webSocket = recording
        self.flow = flow
        fromClient = WebSocketParser(direction: .clientToServer, deflate: deflate)
        fromServer = WebSocketParser(direction: .serverToClient, deflate: deflate)
        self.recordControlFrames = recordControlFrames
        self.streamsMessages = streamsMessages
    }

    /// Parses a copy of bytes that were relayed in `direction`.
    mutating func consume(_ bytes: [UInt8], from direction: WebSocketDirection, at time: Double) {
        guard !bytes.isEmpty else { return }
        switch direction {
        case .clientToServer:
            fromClient.feed(bytes)
            while let event = fromClient.next() { record(event, from: direction, at: time) }
        case .serverToClient:
            fromServer.feed(bytes)
            while let event = fromServer.next() { record(event, from: direction, at: time) }
        }
    }

    /// The messages completed since the last call, when they are streamed.
    mutating func takeStreamed() -> [RecordedWebSocketMessage] {
        guard !streamed.isEmpty else { return [] }
        defer { streamed.removeAll() }
        return streamed
    }

    /// The finished flow. `open` marks a conversation cut short by harrec stopping.
    mutating func finish(at time: Double, open: Bool) -> Flow {
        if let event = fromClient.finish() { record(event, from: .clientToServer, at: time) }
        if let event = fromServer.finish() { record(event, from: .serverToClient, at: time) }
        flow.webSocket?.isOpen = open
        flow.instants.end = time
        return flow
    }

    private mutating func record(_ event: WebSocketEvent, from direction: WebSocketDirection, at time: Double) {
        let side: RecordedWebSocketMessage.Direction = direction == .clientToServer ? .send : .receive
        let message: RecordedWebSocketMessage
        switch event {
        case .message(let opcode, let data, _, let textValid, let truncated, let note):
            message = RecordedWebSocketMessage(direction: side, time: time, opcode: opcode, data: data,
                                               textValid: textValid, truncated: truncated, note: note)
        case .close(let code, let reason):
            if direction == .clientToServer { closeFromClient = true } else { closeFromServer = true }
            let text = code.map { reason.isEmpty ? "\($0)" : "\($0) \(reason)" } ?? ""
            message = RecordedWebSocketMessage(direction: side, time: time, opcode: WebSocketOpcode.close, data: Array(text.utf8))
        case .ping(let payload), .pong(let payload):
            guard recordControlFrames else { return }
            let opcode = if case .ping = event { WebSocketOpcode.ping } else { WebSocketOpcode.pong }
            message = RecordedWebSocketMessage(direction: side, time: time, opcode: opcode, data: payload,
                                               textValid: String(validating: payload, as: UTF8.self) != nil)
        case .protocolError(let reason):
            let label = direction == .clientToServer ? "client to server" : "server to client"
            flow.webSocket?.problems.append("\(label): \(sanitizedForLog(reason))")
            return
        }
        if message.opcode == WebSocketOpcode.text || message.opcode == WebSocketOpcode.binary {
            if side == .send { sent += 1 } else { received += 1 }
        }
        if streamsMessages {
            streamed.append(message)
        } else {
            flow.webSocket?.messages.append(message)
        }
    }
}
