import Recording
import WebSocket

/// A WebSocket conversation after its 101: the bytes are relayed as in any tunnel
/// (`TunnelRelay`), and copies of them are recorded. This type turns those copies into the
/// recording commands: the start (when messages are streamed to a journal), each message as it
/// completes, and the final flow with what the live log says about it.
struct WebSocketRelay {
    private var recorder: WebSocketRecorder
    private let streamsMessages: Bool

    /// Starts recording the conversation that `flow`'s upgrade opened.
    init(upgrade flow: Flow, extensionHeader: String?, configuration: ProxyConfiguration) {
        var flow = flow
        flow.request.url = webSocketURL(flow.request.url)
        recorder = WebSocketRecorder(flow: flow, extensionHeader: extensionHeader,
                                     recordControlFrames: configuration.recordWebSocketControlFrames,
                                     streamsMessages: configuration.streamWebSocketMessages)
        streamsMessages = configuration.streamWebSocketMessages
    }

    /// The conversation's flow as it began (URL in ws:// or wss:// form).
    var flow: Flow { recorder.flow }

    /// What to record when the conversation begins: the flow, when messages are streamed (a
    /// journal keeps them one by one); otherwise nothing until the end.
    var startRecords: [RecordCommand] {
        streamsMessages ? [.webSocketStart(recorder.flow)] : []
    }

    /// Bytes relayed in `direction` at `time`: the messages they completed, to record now (when
    /// streamed; otherwise they stay in the flow until `finish`).
    mutating func relayed(_ bytes: [UInt8], from direction: WebSocketDirection, at time: Double) -> [RecordCommand] {
        recorder.consume(bytes, from: direction, at: time)
        let flowID = recorder.flow.id
        return recorder.takeStreamed().map { .webSocketMessage($0, flowID: flowID) }
    }

    /// The end of the conversation: the last messages and the flow to record, and the live log's
    /// event. `shuttingDown`: harrec is stopping, so a conversation without both close frames is
    /// marked still open.
    mutating func finish(at time: Double, shuttingDown: Bool) -> (records: [RecordCommand], event: LiveEvent.Kind) {
        let open = shuttingDown && !(recorder.closeFromClient && recorder.closeFromServer)
        let flow = recorder.finish(at: time, open: open)
        var records: [RecordCommand] = recorder.takeStreamed().map { .webSocketMessage($0, flowID: flow.id) }
        records.append(.flow(flow))
        return (records, .webSocketEnded(flow, stillOpen: open, sent: recorder.sent, received: recorder.received))
    }
}

/// The URL of a WebSocket entry: ws:// or wss:// as browsers record it (and the live view shows).
package func webSocketURL(_ url: String) -> String {
    if url.hasPrefix("https://") { return "wss://" + url.dropFirst("https://".count) }
    if url.hasPrefix("http://") { return "ws://" + url.dropFirst("http://".count) }
    return url
}
