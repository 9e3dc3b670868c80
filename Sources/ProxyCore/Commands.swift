import Recording

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
    /// Call `tick(at:)` at this instant (or soon after): an answer is due then (`harrec replay`'s
    /// recorded latency). The regular ticks still come.
    case wake(at: Double)
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
    /// A scenario marker: requests from now on belong to a new HAR page.
    case pageMark(PageMark)
    /// A flow left out of the HAR, or put back (the live view).
    case exportDecision(ExportDecision)
    /// A flow moved to another page (the live view).
    case pageMove(PageMove)
    /// The next part of a large body still in flight; only with `ProxyConfiguration.streamBodies`.
    case bodyPart(RecordedBodyPart)
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

/// How a client connection broke, as the runtime saw it: a reset is a client that left (it is
/// recorded as such), anything else keeps the system's words.
public enum ClientFailure: Equatable, Sendable {
    /// ECONNRESET: the client reset the connection.
    case reset
    /// Any other socket error, as `strerror` words it.
    case other(String)
}
