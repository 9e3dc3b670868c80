import HARScenarios
import ProxyCore
import WebSocket

/// One recorded WebSocket conversation replayed to a client after the 101 (`harrec replay`).
///
/// Sans-IO: client bytes and time in, frames and findings out. Server messages are sent after the
/// client message that preceded them in the recording (those before any client message right
/// after the open), at their recorded offsets with `--latency recorded`. Client messages are
/// matched in recorded order; one that differs, or that the recording does not have, is a
/// divergence, and the replay goes on. The recorded close is replayed, and a client's close is
/// always answered (RFC 6455 §5.5.1).
final class WebSocketReplay: ReplayedWebSocket {
    enum State: Equatable {
        /// Messages flow both ways.
        case open
        /// harrec sent its close frame and waits for the client's.
        case closeSent
        /// Both close frames went (or the client broke the protocol): the connection ends.
        case closed
    }

    typealias Output = WebSocketReplayOutput

    /// The close status harrec sends when it stops while a replayed WebSocket is open.
    static let goingAway: UInt16 = 1001

    let conversation: RecordedConversation
    let label: String
    let latency: Bool
    private(set) var state = State.open
    private var parser: WebSocketParser
    /// The next recorded message not yet replayed or matched.
    private var cursor = 0
    private var scheduled: [(at: Double, frame: [UInt8], isClose: Bool)] = []
    private var clientMessages = 0

    /// `deflate`: permessage-deflate as the 101 accepted it; the client's compressed messages
    /// are inflated before they are compared, and harrec's own frames go out uncompressed
    /// (RFC 7692 §6.1 allows that).
    init(conversation: RecordedConversation, label: String, latency: Bool, deflate: PerMessageDeflate? = nil) {
        self.conversation = conversation
        self.label = label
        self.latency = latency
        parser = WebSocketParser(direction: .clientToServer, deflate: deflate)
    }

    /// The 101 went out: the server's opening messages are scheduled.
    package func start(at now: Double) -> Output {
        release(anchor: conversation.openedAt, at: now)
        return flush(at: now)
    }

    /// Bytes from the client.
    package func clientBytes(_ bytes: [UInt8], at now: Double) -> Output {
        var out = Output()
        guard state != .closed else { return flush(at: now) }
        parser.feed(bytes)
        while state != .closed, let event = parser.next() {
            switch event {
            case .message(let opcode, let data, _, _, _, _):
                clientMessage(opcode: opcode, data: data, at: now, into: &out)
            case .close(let code, let reason):
                clientClose(code: code, reason: reason, at: now, into: &out)
            case .ping(let payload):
                out.frames += WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.pong, payload: payload)
            case .pong:
                break
            case .protocolError(let reason):
                out.divergences.append("the client broke the WebSocket protocol: \(reason)")
                out.frames += Self.closeFrame(code: 1002, reason: "")
                state = .closed
            }
        }
        let due = flush(at: now)
        out.frames += due.frames
        out.wakeAt = due.wakeAt
        out.close = state == .closed
        return out
    }

    /// Frames whose recorded offset has come.
    package func due(at now: Double) -> Output {
        flush(at: now)
    }

    /// harrec stops: a going-away close, unless one was sent.
    package func stop() -> Output {
        guard state == .open else { return Output(close: true) }
        state = .closed
        return Output(frames: Self.closeFrame(code: Self.goingAway, reason: "harrec replay stopped"), close: true)
    }

    // MARK: - Client messages

    private func clientMessage(opcode: UInt8, data: [UInt8], at now: Double, into out: inout Output) {
        clientMessages += 1
        skipRecordedClientControlFrames()
        let messages = conversation.messages
        guard cursor < messages.count, messages[cursor].fromClient, messages[cursor].opcode != WebSocketOpcode.close else {
            out.divergences.append("client message \(clientMessages) (\(Self.preview(opcode, data))) is not in the recording")
            return
        }
        let expected = messages[cursor]
        cursor += 1
        if expected.opcode != opcode || expected.data != data {
            out.divergences.append("client message \(clientMessages) differs from the recording: expected "
                                   + "\(Self.preview(expected.opcode, expected.data)), got \(Self.preview(opcode, data))")
        }
        release(anchor: expected.time, at: now)
    }

    private func clientClose(code: UInt16?, reason: String, at now: Double, into out: inout Output) {
        if state == .closeSent {
            state = .closed
            return
        }
        skipRecordedClientControlFrames()
        let messages = conversation.messages
        if cursor < messages.count, messages[cursor].fromClient, messages[cursor].opcode == WebSocketOpcode.close {
            cursor += 1
            release(anchor: nil, at: now)
        }
        // Everything scheduled goes now, then a close answers the client's if the recording had none.
        let pending = scheduled
        scheduled.removeAll()
        var answered = false
        for item in pending where !answered {
            out.frames += item.frame
            answered = item.isClose
        }
        if !answered { out.frames += Self.closeFrame(code: code ?? 1000, reason: "") }
        state = .closed
    }

    private func skipRecordedClientControlFrames() {
        let messages = conversation.messages
        while cursor < messages.count, messages[cursor].fromClient,
              messages[cursor].opcode == WebSocketOpcode.ping || messages[cursor].opcode == WebSocketOpcode.pong {
            cursor += 1
        }
    }

    // MARK: - Server messages

    /// Schedules the server messages from the cursor up to the next client message, at their
    /// offsets from `anchor` (the recorded time of what triggered them) with recorded latency.
    private func release(anchor: Double?, at now: Double) {
        let messages = conversation.messages
        while cursor < messages.count, !messages[cursor].fromClient {
            let message = messages[cursor]
            cursor += 1
            let frame: [UInt8]
            let isClose = message.opcode == WebSocketOpcode.close
            switch message.opcode {
            case WebSocketOpcode.text, WebSocketOpcode.binary:
                frame = WebSocketFrameEncoder.frame(opcode: message.opcode, payload: message.data)
            case WebSocketOpcode.close:
                frame = Self.recordedCloseFrame(message.data)
            default:
                continue // recorded pings and pongs are the server's keep-alive, not the conversation
            }
            var at = now
            if latency, let anchor, let time = message.time { at = now + max(0, time - anchor) }
            // Frames keep their recorded order even if the clock would reorder them.
            if let last = scheduled.last { at = max(at, last.at) }
            scheduled.append((at, frame, isClose))
            if isClose { break }
        }
    }

    private func flush(at now: Double) -> Output {
        var out = Output()
        while let first = scheduled.first, first.at <= now, state == .open {
            scheduled.removeFirst()
            out.frames += first.frame
            if first.isClose { state = .closeSent }
        }
        if state == .closeSent { scheduled.removeAll() }
        out.wakeAt = scheduled.first?.at
        return out
    }

    // MARK: - Frames

    static func closeFrame(code: UInt16, reason: String) -> [UInt8] {
        WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.close,
                                    payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123)))
    }

    /// harrec records a close as "CODE reason" text (empty without a code).
    static func recordedCloseFrame(_ data: [UInt8]) -> [UInt8] {
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let code = UInt16(first) else {
            return WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.close, payload: [])
        }
        return closeFrame(code: code, reason: parts.count > 1 ? String(parts[1]) : "")
    }

    static func preview(_ opcode: UInt8, _ data: [UInt8]) -> String {
        if opcode == WebSocketOpcode.text, let text = String(validating: data, as: UTF8.self) {
            let short = text.count > 60 ? String(text.prefix(60)) + "…" : text
            return "text \"\(short)\""
        }
        return "\(opcode == WebSocketOpcode.binary ? "binary" : "opcode \(opcode)") of \(data.count) bytes"
    }
}
