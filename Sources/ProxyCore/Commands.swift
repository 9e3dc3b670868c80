import Recording
import TLS

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

/// Identifies one upstream connection of a session. Unique within the session.
public typealias UpstreamID = UInt32

/// What a session asks the runtime to do. The session never touches a socket; the runtime executes
/// these in order after every event it delivers.
public enum ProxyCommand: Equatable, Sendable {
    /// Queue bytes for the client connection.
    case sendToClient([UInt8])
    /// Flush what is queued for the client, then close it (lingering, so a final error response
    /// is not destroyed by a reset).
    case closeClient
    /// Flush, then half-close the client's write direction (tunnel EOF forwarding).
    case shutdownClientWrite
    /// Resolve `host` (unless it is an IP literal) and connect. Answered by `upstreamConnected` or
    /// `upstreamConnectFailed`.
    case openUpstream(UpstreamID, host: String, port: UInt16)
    case sendToUpstream(UpstreamID, [UInt8])
    /// Flush, then half-close the upstream write direction (tunnel EOF forwarding).
    case shutdownUpstreamWrite(UpstreamID)
    /// Close the upstream connection now; queued bytes are dropped.
    case closeUpstream(UpstreamID)
    /// Something for the live log; the runtime words it (`LiveLog`) and sanitizes the line.
    /// Indirect, like `record`: a flow is hundreds of bytes, and inline it would make every
    /// command that large (each `sendToClient` copied through a big enum; 7% more instructions
    /// per small request, measured with scripts/bench-cpu).
    indirect case log(LiveEvent)
    /// Sign a leaf for this host off the event loop (signing costs about a millisecond), then
    /// call `certificatePrepared(at:)`. The session waits meanwhile; other connections do not.
    case prepareCertificate(String)
    /// Hand this to the recording (the runtime's `FlowSink`).
    indirect case record(RecordCommand)
}

/// What a session asks the recording to keep. Recording is a command like any other effect, so a
/// transcript shows it in order with the bytes that caused it.
public enum RecordCommand: Equatable, Sendable {
    /// A finished exchange (or failed one, with its error), or a WebSocket conversation as it ends.
    case flow(Flow)
    /// A WebSocket conversation began; only with `ProxyConfiguration.streamWebSocketMessages`.
    case webSocketStart(Flow)
    /// One message of conversation `flowID`; only with `ProxyConfiguration.streamWebSocketMessages`.
    case webSocketMessage(RecordedWebSocketMessage, flowID: UInt64)
}

/// Why an upstream connection could not be made or broke.
public struct UpstreamFailure: Equatable, Sendable, Error {
    public enum Kind: Sendable, Equatable {
        /// The name did not resolve.
        case dns
        /// ECONNREFUSED.
        case refused
        /// The host cannot be reached (EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL).
        case unreachable
        /// No route to the network (ENETUNREACH, ENETDOWN).
        case networkUnreachable
        /// The connect (or DNS plus connect) took longer than its limit (ETIMEDOUT too).
        case timeout
        /// ECONNRESET.
        case reset
        /// The system forbids the destination (EACCES, EPERM).
        case notAllowed
        /// The address family is not available (EAFNOSUPPORT), e.g. IPv6 on an IPv4-only host.
        case addressFamily
        case other
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

/// What the runtime reports once an upstream connection is established.
public struct UpstreamConnection: Equatable, Sendable {
    public var remoteIP: String
    public var dnsStart: Double?
    public var dnsEnd: Double?
    public var connectStart: Double
    public var connectEnd: Double

    public init(remoteIP: String, dnsStart: Double?, dnsEnd: Double?, connectStart: Double, connectEnd: Double) {
        self.remoteIP = remoteIP
        self.dnsStart = dnsStart
        self.dnsEnd = dnsEnd
        self.connectStart = connectStart
        self.connectEnd = connectEnd
    }
}

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

    public init() {}
}
