import HTTP1
import HTTP2
import Recording

/// The upstream connections of one session, with one owner: ids, opening, readiness, reuse,
/// which exchange pays for the connection's setup, and closing.
///
/// HTTP/1.1 carries one exchange at a time per connection, and a client connection's requests
/// arrive one at a time, so a session needs one upstream connection at a time: `active`, kept
/// alive for the next request to the same target and replaced for another target. The runtime
/// only maps ids to sockets; every decision about a connection is made here.
///
/// Classes, the pool and its connections: the session reads them on every event, and structs
/// stored in the session's class were copied out, buffers retained and released, for each read
/// (about 1% of a small request's instructions, measured with callgrind).
final class UpstreamPool {
    /// One upstream connection and what the session knows about it. A class, so that reading
    /// it never copies its buffers (the decoder, TLS) and changing them is always in place.
    final class Connection {
        let id: UpstreamID
        let target: ProxyTarget
        /// The HAR `connection` value: session id and upstream id.
        let connectionID: String
        let connectStartedAt: Double
        /// Set once connected.
        fileprivate(set) var details: UpstreamConnection?
        /// Connection setup not yet attributed to an exchange (the first exchange pays for it).
        fileprivate(set) var unclaimed: UpstreamConnection?
        var decoder = HTTP1ResponseDecoder()
        fileprivate(set) var exchangesCarried = 0
        /// TLS toward the upstream inside an intercepted tunnel.
        var tls: TLSLayer?
        /// HTTP/2 framing when an HTTP/1 client's upstream speaks only h2: one stream at a time.
        var http2: HTTP2Connection?
        var http2Stream: Int32?
        var http2Trailers: [HTTPField]?
        /// The h2 upstream sent GOAWAY: no new stream goes on it.
        var http2GoneAway = false

        fileprivate init(id: UpstreamID, target: ProxyTarget, connectionID: String, connectStartedAt: Double) {
            self.id = id
            self.target = target
            self.connectionID = connectionID
            self.connectStartedAt = connectStartedAt
        }

        var connected: Bool { details != nil }
        /// Ready for requests: connected, and the TLS handshake (if any) done.
        var ready: Bool { connected && (tls == nil || tls!.handshakeDone) }
    }

    /// What an exchange to a target can do with the active connection.
    enum Reuse: Equatable {
        /// Send now: connected to that target and ready.
        case ready
        /// Wait: connected to that target, TLS handshake running (the head goes out when it ends).
        case handshaking
        /// Open a new connection (after closing the active one, if any).
        case none
    }

    private let sessionID: UInt64
    private var nextID: UpstreamID = 1
    /// The connection in use, if any.
    private(set) var active: Connection?

    var activeID: UpstreamID? { active?.id }

    init(sessionID: UInt64) {
        self.sessionID = sessionID
    }

    func isActive(_ id: UpstreamID) -> Bool { activeID == id }

    /// Starts a connection to `target`; it becomes the active one. The caller closes the previous
    /// one first (`close()`). Returns the command for the runtime.
    func open(to target: ProxyTarget, at time: Double) -> ProxyCommand {
        let id = nextID
        nextID += 1
        active = Connection(id: id, target: target, connectionID: "\(sessionID)-\(id)", connectStartedAt: time)
        return .openUpstream(id, host: target.host, port: target.port)
    }

    /// Closes the active connection: the command for the runtime, or nil when there is none.
    func close() -> ProxyCommand? {
        guard let id = activeID else { return nil }
        active = nil
        return .closeUpstream(id)
    }

    /// Forgets the active connection without a command (the runtime already dropped it: a
    /// failed connect).
    func forget() {
        active = nil
    }

    /// The runtime connected `id`; false when it is not the active connection (a stale report).
    func connected(_ id: UpstreamID, _ details: UpstreamConnection) -> Bool {
        guard let connection = active, connection.id == id else { return false }
        connection.details = details
        connection.unclaimed = details
        return true
    }

    func reuse(for target: ProxyTarget) -> Reuse {
        guard let connection = active, connection.target == target, !connection.http2GoneAway else { return .none }
        if connection.ready { return .ready }
        if connection.connected && connection.tls != nil { return .handshaking }
        return .none
    }

    /// The active connection when it has been connecting (DNS, TCP and TLS) for longer than
    /// `limit` seconds at `now`.
    func overdueConnect(at now: Double, limit: Double) -> Connection? {
        guard let connection = active, !connection.ready, now - connection.connectStartedAt > limit else { return nil }
        return connection
    }

    /// The active connection carries `flow` now: its address and HAR connection id, and (for
    /// the first exchange on it) the DNS, connect and TLS instants of its setup.
    func assign(_ flow: inout Flow) {
        guard let connection = active else { return }
        if let setup = connection.unclaimed {
            flow.instants.dnsStart = setup.dnsStart
            flow.instants.dnsEnd = setup.dnsEnd
            flow.instants.connectStart = setup.connectStart
            flow.instants.connectEnd = setup.connectEnd
            flow.instants.tlsStart = connection.tls?.startedAt
            flow.instants.tlsEnd = connection.tls?.establishedAt
            connection.unclaimed = nil
        }
        flow.serverIPAddress = connection.details?.remoteIP
        flow.connectionID = connection.connectionID
        connection.exchangesCarried += 1
    }
}
