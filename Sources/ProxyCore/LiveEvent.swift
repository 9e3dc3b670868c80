import Recording

/// What the live log reports, as data: the session says what happened to a connection, and the
/// runtime's `LiveLog` (the one place with the wording) turns it into a line. Transcripts can then
/// assert on what happened rather than on sentences.
public struct LiveEvent: Equatable, Sendable {
    /// The client connection's address.
    public var client: String
    public var kind: Kind

    public enum Kind: Equatable, Sendable {
        /// An exchange finished (the flow as recorded).
        case exchange(Flow)
        /// An exchange failed. `cut`: its response had already started, so the client saw it cut
        /// rather than `status`.
        case exchangeFailed(Flow, status: Int?, reason: String, cut: Bool)
        /// A CONNECT or SOCKS5 tunnel to the target is open.
        case tunnel(ProxyTarget)
        case tunnelFailed(ProxyTarget, reason: String)
        case tunnelIdle(seconds: Double)
        /// No SOCKS5 handshake or first request within the limit.
        case handshakeTimeout(seconds: Double)
        case socksRefused(reason: String)
        /// A request answered by harrec itself with `status` (400, 408, ...) before it was forwarded.
        case rejected(status: Int, reason: String)
        case proxyAuthenticationRequired(method: String)
        case webSocketOpened(Flow)
        case webSocketEnded(Flow, stillOpen: Bool, sent: Int, received: Int)
        /// The client hung up during the TLS handshake (apps that distrust a certificate often do).
        case clientAbandonedTLS(host: String)
        /// The client's TLS handshake failed; `rejectedCertificate` when it sent an alert.
        case clientTLSFailed(host: String, message: String, rejectedCertificate: Bool)
        case cannotIntercept(ProxyTarget, reason: String)
        /// A scenario marker: a new HAR page starts (a separator line in the live log).
        case pageMark(name: String)
        /// `harrec replay` answered from item `label`; `status` nil: a recorded failure (closed).
        case replayed(method: String, url: String, status: Int?, label: String)
        /// `harrec replay` had no item for a request and answered 599 with `diagnosis`.
        case replayUnmatched(method: String, url: String, diagnosis: String)
        /// A replayed WebSocket client did not follow the recording.
        case replayDivergence(url: String, detail: String)
        /// `harrec replay --passthrough` had no item for a request and forwards it upstream.
        case replayForwarded(method: String, url: String)
        /// `harrec replay`'s queues restarted (`trigger`: the request or command that did it).
        case replayReset(trigger: String)
        /// A body `harrec replay` streams from the HAR file could no longer be read there after
        /// `sent` of its `count` bytes (the file was changed in place): the client's connection
        /// or stream ends short, so it sees the answer cut.
        case replayBodyLost(url: String, label: String, sent: Int, count: Int)
    }

    public init(client: String, _ kind: Kind) {
        self.client = client
        self.kind = kind
    }
}

extension LiveEvent.Kind {
    /// The exchange the event is about, if any (the recording filter marks its line).
    public var flow: Flow? {
        switch self {
        case .exchange(let flow), .exchangeFailed(let flow, _, _, _), .webSocketOpened(let flow),
             .webSocketEnded(let flow, _, _, _):
            return flow
        default:
            return nil
        }
    }
}
