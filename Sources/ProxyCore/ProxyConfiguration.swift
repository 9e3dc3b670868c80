import Recording
import Synchronization
import TLS

/// Credentials the proxy requires from its clients (`--proxy-auth user:pass`).
public struct ProxyCredentials: Sendable, Equatable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// Timeouts in seconds. Each is a named limit so that a stuck peer costs a bounded amount of time.
public struct ProxyTimeouts: Sendable, Equatable {
    /// An idle keep-alive client between requests (nginx uses 75 s; browsers keep ~60–300 s).
    public var clientIdle: Double = 120
    /// Until the first bytes decide SOCKS5 or HTTP, and for the SOCKS5 handshake itself.
    public var handshake: Double = 15
    /// From the first byte of a request head to its end (then 408 and close). A client that sends
    /// one byte a second (slowloris) would otherwise hold a connection forever; nginx's
    /// client_header_timeout is 60 s and Apache's RequestReadTimeout allows 20-40 s.
    public var requestHead: Double = 30
    /// The longest `requestHead` may be set to.
    public static let maximumRequestHead: Double = 30
    /// DNS plus TCP connect to the upstream.
    public var upstreamConnect: Double = 15
    /// Silence from the upstream while a response is awaited or streaming. Long enough for slow
    /// APIs and long polling, short enough that a dead server does not pin a connection forever.
    public var upstreamResponse: Double = 120
    /// Silence in both directions of an opaque tunnel.
    public var tunnelIdle: Double = 600

    public init() {}
}

/// Settings shared by every session of one proxy.
public struct ProxyConfiguration: Sendable {
    /// Recording cap per body. The proxied body is never cut, only the recorded copy.
    public var maxRecordedBodyBytes: Int = 64 << 20
    public var credentials: ProxyCredentials?
    public var timeouts = ProxyTimeouts()
    /// Whether sessions produce a live line per finished exchange (`--quiet` turns it off, and the
    /// lines are then not even formatted).
    public var liveLog = true
    /// Record WebSocket ping and pong frames too (`--record-ws-control`).
    public var recordWebSocketControlFrames = false
    /// TLS interception; nil relays TLS tunnels opaquely.
    public var interception: TLSInterception?
    /// WebSocket messages are recorded one by one as they complete (`.webSocketStart`, then
    /// `.webSocketMessage`), and the flow recorded at the end carries none: what a journal needs
    /// (`FlowSink.streamsWebSocketMessages`). Otherwise the final flow carries them all.
    public var streamWebSocketMessages = false
    /// A body past `RecordedBody.partBytes` goes to the recording a part at a time as it crosses
    /// (`.bodyPart`), and the flow recorded at the end carries only the rest: what a journal needs
    /// (`FlowSink.streamsBodies`). Otherwise the final flow carries the whole body.
    public var streamBodies = false
    /// The size of those parts (`RecordedBody.partBytes`; tests make it small).
    public var bodyPartBytes = RecordedBody.partBytes
    /// Requests harrec answers itself (400, 407, 408) and tunnels it cannot open are recorded
    /// as entries with `_error` and `_refused` (`--no-record-errors` turns it off).
    public var recordRefusals = true
    /// Which exchanges are recorded (`--record-hosts`, `--skip-hosts`, ...); the runtime passes
    /// only those to the sink, and marks the others in the live log.
    public var recordingFilter = RecordingFilter()
    /// Leave exchanges the filter skips out of the live log instead of marking them.
    public var quietSkipped = false
    /// Every upstream connection (but the proxy's exclusions) goes through this proxy.
    public var upstreamProxy: UpstreamProxy?
    /// Offer HTTP/2 to intercepted TLS clients when their upstream speaks it (`--no-http2`
    /// turns it off: every intercepted connection then stays on HTTP/1.1).
    public var http2 = true
    /// The CA certificate that `http://harrec/ca.pem`, `/ca.crt` and `/ca.mobileconfig` serve, so
    /// a device can install it from its browser; nil answers 404 there (no interception).
    public var caDownloads: CADownloads?
    /// Upstreams that proved to speak only HTTP/2, learned by any session and used by all.
    public var http2OnlyUpstreams = HTTP2OnlyUpstreams()
    /// Set by `harrec replay`: requests are answered by this responder, and nothing is connected.
    package var replay: (any Responder)?

    public init() {}
}

/// How intercepted tunnels are handled: the certificate source toward clients, verification
/// toward upstreams, and which hosts to intercept.
public struct TLSInterception: Sendable {
    public var serverContext: TLSServerContext
    public var clientContext: TLSClientContext
    /// Given the tunnel's names as `host:port` (the target, then the SNI name when it differs),
    /// whether to intercept. False relays the tunnel byte for byte.
    public var shouldIntercept: @Sendable ([String]) -> Bool
    /// The CA behind `serverContext`, when leaves are issued per host: a host without a cached
    /// leaf is signed off the event loop first.
    public var authority: CertificateAuthority?

    public init(serverContext: TLSServerContext, clientContext: TLSClientContext,
                authority: CertificateAuthority? = nil,
                shouldIntercept: @escaping @Sendable ([String]) -> Bool = { _ in true }) {
        self.serverContext = serverContext
        self.clientContext = clientContext
        self.authority = authority
        self.shouldIntercept = shouldIntercept
    }
}

/// Upstreams (host and port) that answered an HTTP/1 request in HTTP/2, or refused http/1.1 in
/// ALPN: HTTP/1 clients' exchanges to them are carried as h2 streams from the first request on,
/// so a request with a body is not lost to the discovery. Shared by the sessions of one proxy.
public final class HTTP2OnlyUpstreams: Sendable {
    /// Entries kept at most; a proxy meets few such servers, and the set must not grow unbounded.
    static let capacity = 4096
    private let targets = Mutex<Set<ProxyTarget>>([])

    public init() {}

    func contains(_ target: ProxyTarget) -> Bool { targets.withLock { $0.contains(target) } }

    func insert(_ target: ProxyTarget) {
        targets.withLock { if $0.count < Self.capacity { $0.insert(target) } }
    }
}
