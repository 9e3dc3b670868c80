import HTTP1
import TLS
import TextEncodings
import WebSocket

/// What stands in for the upstream when harrec serves a recording (`harrec replay`): it decides
/// each answer, and the session puts it on the wire. ProxyCore knows nothing of HARs; the
/// HARReplay target's `ReplayService` is the responder harrec uses.
package protocol Responder: AnyObject, Sendable {
    /// `--passthrough`: a request nothing matches may go to its real upstream (and is recorded).
    var passthrough: Bool { get }

    /// Picks the answer for one complete request. `canForward`: the caller can send an unmatched
    /// request upstream.
    func decide(method: String, url: String, headers: [HTTPField], body: [UInt8], canForward: Bool) -> ReplayDecision

    /// Picks the conversation for a WebSocket upgrade; `deflate` is permessage-deflate as the 101
    /// will accept it (nil: not offered, or not acceptable).
    func decideWebSocket(url: String, headers: [HTTPField], deflate: PerMessageDeflate?) -> WebSocketReplayDecision

    /// How a tunnel to `target` failed in the recording, or nil when it is served.
    func refusedTunnel(_ target: ProxyTarget) -> UpstreamFailure?

    /// Whether an intercepted tunnel to `target` speaks HTTP/2 with a client that offers it: as
    /// the recording's exchanges with that host did.
    func speaksHTTP2(to target: ProxyTarget) -> Bool

    /// A replayed WebSocket client did not follow the recording (`line` says where and how).
    func noteDivergence(_ line: String)

    /// Every queue back to its first item (`http://harrec/reset`).
    func reset()
}

/// How a recorded exchange ended without a whole answer, replayed as the client saw it.
package enum ReplayFailure: Sendable, Equatable {
    /// The client gave up (or timed out): nothing more is sent, until the client leaves again.
    case silence
    /// The connection broke: HTTP/1 closes it; HTTP/2 resets the stream with `resetCode` (the
    /// recorded one for a passed-on reset), else INTERNAL_ERROR.
    case broken(resetCode: UInt32?)
}

/// What the recorded client got.
package enum ReplayOutcome: Sendable, Equatable {
    /// The whole response.
    case answered
    /// No response: the exchange ended with the failure.
    case failed(ReplayFailure)
    /// The head and the recorded part of the body, then the failure (a response cut short: it
    /// goes out framed so the client can tell, chunked without its last chunk over HTTP/1.1).
    case cut(ReplayFailure)
}

/// A replayed body read a piece at a time as it is sent, never held whole: a large body left in
/// the HAR file. Each serve has its own source (it keeps its position).
package protocol ReplayBodySource: AnyObject {
    /// The body's length in bytes (its head announces it).
    var count: Int { get }
    /// The next bytes, at most `maximum` and at least one while any are left; empty at the end;
    /// nil when the body can no longer be read as it was (the file changed).
    func read(upTo maximum: Int) -> [UInt8]?
}

/// A response `harrec replay` serves, made once when the HAR is loaded.
package struct ReplayResponse: Sendable {
    package var status: Int
    /// The recorded headers without framing or hop-by-hop ones.
    package var fields: HTTPFields
    /// Seconds to wait before answering (`--latency recorded`); nil answers at once.
    package var delay: Double?
    /// What the recorded client got: the whole response, none, or part of it.
    package var outcome: ReplayOutcome
    /// "#3 GET /v1/feed", for the live log and the summary.
    package var label: String
    /// Head and body for a keep-alive HTTP/1.1 client, made once (the common case); the body is
    /// kept only here, so a replayed HAR costs its bodies once in memory. For a streamed body,
    /// the head alone.
    package private(set) var keepAliveWire: [UInt8] = []
    private var bodyStart = 0
    /// The body when it is read as it is sent (`body` is then empty).
    package let streamed: UnsafeSendableSource?

    /// The recorded body (decoded); empty when it is `streamed`.
    package var body: ArraySlice<UInt8> { keepAliveWire[bodyStart...] }
    /// The body's length, held or streamed.
    package var bodyCount: Int { streamed?.source.count ?? body.count }

    /// `wire` false: a response whose wire form is made when it is served, from parts read again
    /// then (a replayed HAR's response left in the file); it keeps its status, fields, delay,
    /// outcome and label only, so a HAR of many entries does not hold a head for each.
    package init(status: Int, fields: HTTPFields, body: [UInt8], delay: Double?, outcome: ReplayOutcome, label: String,
                 wire: Bool = true) {
        self.status = status; self.fields = fields; self.delay = delay; self.outcome = outcome; self.label = label
        streamed = nil
        guard wire else { return }
        let head = ReplayResponse.head(status: status, fields: fields, bodyCount: body.count, close: false)
        keepAliveWire = head + body
        bodyStart = head.count
    }

    /// A whole answer whose body is read from `source` as it is sent.
    package init(status: Int, fields: HTTPFields, streaming source: any ReplayBodySource, delay: Double?, label: String) {
        self.status = status; self.fields = fields; self.delay = delay; self.outcome = .answered; self.label = label
        streamed = UnsafeSendableSource(source)
        keepAliveWire = ReplayResponse.head(status: status, fields: fields, bodyCount: source.count, close: false)
        bodyStart = keepAliveWire.count
    }

    /// The same response with other header fields (a reverse listener's rewrite-back).
    package func replacingFields(_ newFields: HTTPFields) -> ReplayResponse {
        guard newFields != fields else { return self }
        if let streamed {
            return ReplayResponse(status: status, fields: newFields, streaming: streamed.source, delay: delay, label: label)
        }
        return ReplayResponse(status: status, fields: newFields, body: Array(body), delay: delay, outcome: outcome, label: label)
    }

    /// The HTTP/1.1 head: recorded fields, then the framing for `body`.
    package func head(close: Bool) -> [UInt8] {
        ReplayResponse.head(status: status, fields: fields, bodyCount: bodyCount, close: close)
    }

    /// The wire form of a response cut short after `body` (`ReplayOutcome.cut`): chunked for an
    /// HTTP/1.1 client, without the last chunk, so the client sees it end early as it did; an
    /// HTTP/1.0 client gets the body up to the close. `headOnly`: a HEAD request's answer.
    package func cutWire(http11: Bool, headOnly: Bool) -> [UInt8] {
        var out = ReplayResponse.head(status: status, fields: fields, bodyCount: nil, close: !http11,
                                      chunked: http11 && !headOnly)
        guard !headOnly, !body.isEmpty else { return out }
        if http11 { HTTP1Serializer.appendChunk(Array(body), to: &out) } else { out += body }
        return out
    }

    private static func head(status: Int, fields: HTTPFields, bodyCount: Int?, close: Bool, chunked: Bool = false) -> [UInt8] {
        var out = fields
        if let bodyCount, !HTTP1Forwarding.hasNoContent(status: status) {
            out.append(name: "Content-Length", value: String(bodyCount))
        }
        if chunked { out.append(name: "Transfer-Encoding", value: "chunked") }
        if close { out.append(name: "Connection", value: "close") }
        return (try? HTTP1Serializer.responseHead(version: .http11, status: status,
                                                  reason: HTTP1Forwarding.reasonPhrase(status), fields: out)) ?? []
    }
}

/// A body source handed across threads: each serve makes its own, and only the session that
/// sends it reads it.
package struct UnsafeSendableSource: @unchecked Sendable {
    package let source: any ReplayBodySource
    package init(_ source: any ReplayBodySource) { self.source = source }
}

/// A streamed body on its way to the client (HTTP/1 or an HTTP/2 stream): its source, its item's
/// label, and how much of it went out.
struct StreamedBodyProgress {
    let body: UnsafeSendableSource
    let label: String
    private(set) var sent = 0

    init(_ body: UnsafeSendableSource, label: String) {
        self.body = body
        self.label = label
    }

    var count: Int { body.source.count }

    enum Next {
        /// The next bytes; `last`: the body is complete with them.
        case piece([UInt8], last: Bool)
        /// The source can no longer give the body as announced (the file changed in place).
        case lost
    }

    /// Reads the next piece (at most `ReplayWire.streamedPiece`). A source that ends early, or
    /// gives more than its count, is lost: the head already announced the length.
    mutating func next() -> Next {
        guard sent < count, let piece = body.source.read(upTo: min(count - sent, ReplayWire.streamedPiece)),
              !piece.isEmpty, sent + piece.count <= count else { return .lost }
        sent += piece.count
        return .piece(piece, last: sent == count)
    }
}

/// What `harrec replay` does with one request.
package enum ReplayDecision {
    /// Answer with `response` (or not, for a recorded failure). `resetAfter`: the request was a
    /// `--reset-on` trigger, and the queues restarted after it was served.
    case serve(ReplayResponse, resetAfter: Bool)
    /// Nothing matches: a 599 carrying `diagnosis`.
    case unmatched(diagnosis: String)
    /// Nothing matches, and `--passthrough` sends the request to its real upstream.
    case forward
}

/// What `harrec replay` does with a WebSocket upgrade.
package enum WebSocketReplayDecision {
    /// Switch protocols (choosing `subprotocol` when the client offered it) and replay the
    /// conversation through `socket`; `label` names its item.
    case conversation(any ReplayedWebSocket, subprotocol: String?, label: String)
    /// No recorded WebSocket matches: a 599 with the diagnosis.
    case unmatched(diagnosis: String)
    /// No recorded WebSocket matches, and `--passthrough` opens the real one (and records it).
    case forward
}

/// A recorded WebSocket conversation replayed after the 101. Sans-IO: client bytes and time in,
/// frames and findings out.
package protocol ReplayedWebSocket: AnyObject {
    /// The 101 went out: the server's opening messages are scheduled.
    func start(at now: Double) -> WebSocketReplayOutput
    /// Bytes from the client.
    func clientBytes(_ bytes: [UInt8], at now: Double) -> WebSocketReplayOutput
    /// Frames whose time has come.
    func due(at now: Double) -> WebSocketReplayOutput
    /// harrec stops: a going-away close, unless one was sent.
    func stop() -> WebSocketReplayOutput
}

/// What one step of a replayed WebSocket produced, in order.
package struct WebSocketReplayOutput: Equatable {
    package var frames: [UInt8] = []
    package var divergences: [String] = []
    /// The next scheduled frame's instant, when one waits.
    package var wakeAt: Double?
    /// The connection ends after `frames` went out.
    package var close = false

    package init(frames: [UInt8] = [], divergences: [String] = [], wakeAt: Double? = nil, close: Bool = false) {
        self.frames = frames; self.divergences = divergences; self.wakeAt = wakeAt; self.close = close
    }
}

/// The wire side of a replay that does not depend on the recording.
package enum ReplayWire {
    /// The largest request body a replayed request may carry: matching holds it whole.
    package static let maximumRequestBody = 64 << 20

    /// A streamed body (`ReplayBodySource`) is read this much at a time, each piece when the
    /// client has taken the last one.
    package static let streamedPiece = 256 << 10

    /// The 599 answer for an unmatched request: not a real status, so a test notices it.
    package static let unmatchedStatus = 599

    package static func unmatchedResponse(_ diagnosis: String, headOnly: Bool, close: Bool) -> [UInt8] {
        let body = Array((diagnosis + "\n").utf8)
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "text/plain; charset=utf-8")
        fields.append(name: "Content-Length", value: String(body.count))
        fields.append(name: "X-Harrec-Replay", value: "unmatched")
        if close { fields.append(name: "Connection", value: "close") }
        let head = (try? HTTP1Serializer.responseHead(version: .http11, status: unmatchedStatus,
                                                      reason: "No Recorded Response", fields: fields)) ?? []
        return headOnly ? head : head + body
    }

    /// A GET with `Upgrade: websocket` and `Connection: upgrade` (RFC 6455 §4.1).
    static func isWebSocketUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.method == "GET" && head.fields["Upgrade"]?.lowercased() == "websocket" && HTTP1Forwarding.isUpgrade(head)
    }

    /// `Sec-WebSocket-Accept` for a client's key (RFC 6455 §4.2.2).
    static func webSocketAccept(key: String) -> String {
        Base64.encode(Digest.sha1(Array((trimmingSpacesAndTabs(key) + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
    }
}
