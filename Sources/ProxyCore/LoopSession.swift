/// One client connection's state machine as the runtime's event loop drives it: the proxy's
/// `ProxySession`, or a session of one of harrec's own services (the live view). Sans-IO like the
/// layers: events in, `ProxyCommand`s out.
public protocol LoopSession: AnyObject {
    var id: UInt64 { get }
    /// Commands are waiting for the runtime.
    var hasCommands: Bool { get }
    /// Hands the waiting commands to `body`, in order.
    func drainCommands(_ body: (ProxyCommand) -> Void)
    /// The session is over: the runtime closes what is left once its commands ran.
    var isFinished: Bool { get }
    /// Whether to read more from the client now (back-pressure).
    var wantsClientData: Bool { get }
    /// The session writes its own answers to the client (its backlog counts against reading it).
    var answersClientItself: Bool { get }
    /// Whether to read more from the upstreams now.
    var wantsUpstreamData: Bool { get }
    /// Whether the session has more to write once the client takes what is queued (a replayed
    /// body streamed from the HAR file): the runtime then calls `clientDrained`.
    var wantsClientDrained: Bool { get }

    func clientReceived(_ bytes: UnsafeRawBufferPointer, at time: Double)
    func clientClosed(at time: Double)
    func clientFailed(_ failure: ClientFailure, at time: Double)
    func upstreamConnected(_ upstreamID: UpstreamID, _ connection: UpstreamConnection, at time: Double)
    func upstreamConnectFailed(_ upstreamID: UpstreamID, _ failure: UpstreamFailure, at time: Double)
    func upstreamReceived(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer, at time: Double)
    func upstreamClosed(_ upstreamID: UpstreamID, at time: Double)
    func upstreamFailed(_ upstreamID: UpstreamID, _ reason: String, at time: Double)
    func certificatePrepared(at time: Double)
    /// The client's queued output fell below the runtime's low-water mark while the session
    /// `wantsClientDrained`: it writes its next piece.
    func clientDrained(at time: Double)
    /// The regular tick, or a `wake(at:)` the session asked for. `clientBacklog`: bytes queued
    /// for the client and not yet taken by it (a session that writes on its own, an event stream,
    /// waits while it is large).
    func tick(at time: Double, clientBacklog: Int)
    /// harrec is stopping: finish what is in flight, take nothing new.
    func beginShutdown(at time: Double)
    /// harrec stops now.
    func abort(_ reason: String, at time: Double)
}

extension ProxySession: LoopSession {
    public func tick(at time: Double, clientBacklog: Int) { tick(at: time) }
}

/// A session that opens no upstream connections and signs no certificates (harrec's own
/// services): those events never come, and do nothing.
public protocol ServiceSession: LoopSession {}

extension ServiceSession {
    public var wantsUpstreamData: Bool { false }
    public var answersClientItself: Bool { true }
    public var wantsClientDrained: Bool { false }
    public func clientDrained(at time: Double) {}
    public func upstreamConnected(_ upstreamID: UpstreamID, _ connection: UpstreamConnection, at time: Double) {}
    public func upstreamConnectFailed(_ upstreamID: UpstreamID, _ failure: UpstreamFailure, at time: Double) {}
    public func upstreamReceived(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer, at time: Double) {}
    public func upstreamClosed(_ upstreamID: UpstreamID, at time: Double) {}
    public func upstreamFailed(_ upstreamID: UpstreamID, _ reason: String, at time: Double) {}
    public func certificatePrepared(at time: Double) {}
}

/// What a listener's connections are: proxy sessions (forward, or a reverse listener's with its
/// upstreams), or sessions a service makes.
public enum ListenerKind: Sendable {
    case proxy(reverse: ReverseProxy?)
    /// `make(sessionID, clientAddress, now)`: a new session for an accepted connection.
    case service(@Sendable (UInt64, String, Double) -> any LoopSession)

    /// The reverse listener's upstreams, if it is one.
    public var reverse: ReverseProxy? {
        if case .proxy(let reverse) = self { return reverse }
        return nil
    }
}
