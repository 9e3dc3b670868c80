import HTTP1
import Recording
import SOCKS5
import Synchronization
import TLS
import WebSocket

/// A source of unique ids shared by all sessions of one proxy.
public final class IDSource: Sendable {
    let next = Atomic<UInt64>(1)
    public init() {}
    public func make() -> UInt64 { next.add(1, ordering: .relaxed).oldValue }
}

/// The sans-IO state machine for one client connection and the upstream connections it uses.
///
/// The runtime delivers events (bytes, EOFs, connect results, ticks) and then executes the commands
/// the session queued (`takeCommands()`). The session never blocks and never touches a socket, so
/// every path can be driven byte by byte in a test.
///
/// Protocol detection is deferred, as in mitmproxy: the first client byte picks SOCKS5 (0x05) or
/// HTTP; after CONNECT or a SOCKS5 CONNECT, the first tunnel bytes pick HTTP (parsed and recorded)
/// or an opaque relay.
public final class ProxySession {
    /// Bytes buffered from one peer while the session cannot forward them; past this the runtime
    /// stops reading that peer (backpressure instead of memory growth).
    public static let maxBufferedInputBytes = 256 * 1024

    public let id: UInt64
    public let clientAddress: String
    let configuration: ProxyConfiguration
    /// Set when the connection came to a reverse listener: requests go to its upstreams.
    let reverse: ReverseProxy?
    let flowIDs: IDSource
    /// The instant of the event being handled: time arrives with each event (the runtime owns the
    /// clock), so a transcript replays the same way every time.
    var now: Double

    var commands: [ProxyCommand] = []
    /// True once the session has asked to close the client; the runtime drops it after executing.
    public private(set) var isFinished = false

    enum Mode {
        case detecting
        case socksHandshake
        case connectingTunnel(ProxyTarget, viaSOCKS: Bool)
        case sniffingTunnel(ProxyTarget)
        /// A ClientHello to intercept arrived; its leaf is being signed off the loop.
        case awaitingCertificate(ProxyTarget, serverName: String?)
        /// The client offered h2: its ClientHello is held until the upstream's handshake says
        /// which protocol it chose (`resumeClientHandshake`).
        case awaitingUpstreamALPN(ProxyTarget)
        case http
        /// HTTP/2 on both sides of an intercepted tunnel (`HTTP2Layer`).
        case http2
        case relay(TunnelRelay)
        case finished
    }

    var mode: Mode = .detecting
    var socks: SOCKS5Layer
    var requestDecoder = HTTP1RequestDecoder()
    /// Client bytes held while a tunnel is being set up or sniffed.
    var pendingClientBytes: [UInt8] = []
    /// An h2c server's SETTINGS, held while the client's first bytes are sniffed.
    var pendingUpstreamBytes: [UInt8] = []
    /// Set inside a CONNECT or SOCKS5 tunnel: every request goes to this target.
    var tunnelTarget: ProxyTarget?
    /// When the tunnel opened (its CONNECT or SOCKS5 success), for entries about the tunnel itself.
    var tunnelStartedAt: Double?
    /// The upstream connection in use (one at a time; see `UpstreamPool`).
    let upstreams: UpstreamPool
    var exchange: HTTP1Exchange?
    /// The request being answered from the HAR (`harrec replay`, `ProxySession+Replay`).
    var replayExchange: ReplayExchange?
    /// The recorded WebSocket conversation being replayed after a 101 (`ProxySession+Replay`).
    var replaySocket: (any ReplayedWebSocket)?
    /// Its ws:// or wss:// URL, for messages.
    var replaySocketURL = ""
    var clientSentEOF = false
    var shuttingDown = false
    let createdAt: Double
    var lastActivity: Double
    /// Arrival time of the upstream chunk being processed, for the first-byte instant.
    var currentUpstreamChunkTime: Double = 0
    let auth: ProxyAuth
    /// TLS toward the client once a tunnel is intercepted; nil for plain HTTP and opaque tunnels.
    var clientTLS: TLSLayer?
    /// "https" inside an intercepted tunnel, else "http": the scheme of recorded URLs.
    var scheme = "http"
    /// The name the client asked for (SNI, else the tunnel target): upstream SNI and verification.
    var interceptedServerName: String?
    /// An upstream TLS failure that happened before any request arrived; the next request gets it.
    var pendingUpstreamFailure: String?
    /// The WebSocket conversation being recorded after a 101.
    var webSocket: WebSocketRelay?
    /// When the request head being received began (nil between requests); see `requestHead`.
    var headStartedAt: Double?
    /// Sec-WebSocket-Extensions of the 101, when the upgrade is to websocket.
    var webSocketExtensions: String?
    var upgradeIsWebSocket = false
    /// The HTTP/2 streams of an intercepted tunnel whose client and upstream chose h2.
    var http2: HTTP2Layer?
    /// The current upstream proved to speak only HTTP/2 (here or in another session): HTTP/1
    /// exchanges to it are translated. Setting it tells every session of the proxy.
    var upstreamRequiresHTTP2: Bool {
        get { (upstreams.active?.target ?? tunnelTarget).map { configuration.http2OnlyUpstreams.contains($0) } ?? false }
        set { if newValue, let target = upstreams.active?.target ?? tunnelTarget { configuration.http2OnlyUpstreams.insert(target) } }
    }


    /// `now`: when the client connection was accepted; `reverse`: the reverse listener it came
    /// to, nil for the forward proxy.
    public init(id: UInt64, clientAddress: String, configuration: ProxyConfiguration, reverse: ReverseProxy? = nil,
                flowIDs: IDSource, now: Double) {
        self.id = id
        self.clientAddress = clientAddress
        self.configuration = configuration
        self.reverse = reverse
        self.flowIDs = flowIDs
        self.now = now
        self.createdAt = now
        self.lastActivity = now
        socks = SOCKS5Layer(credentials: configuration.credentials)
        auth = ProxyAuth(credentials: configuration.credentials)
        upstreams = UpstreamPool(sessionID: id)
    }

    /// The commands queued since the last call, in order.
    public func takeCommands() -> [ProxyCommand] {
        flushPlaintext()
        let taken = commands
        commands.removeAll(keepingCapacity: true)
        return taken
    }

    /// Hands each queued command to `body`, then clears the queue without reallocating it (the
    /// runtime's hot path). `body` must not call back into the session.
    public func drainCommands(_ body: (ProxyCommand) -> Void) {
        flushPlaintext()
        for command in commands { body(command) }
        commands.removeAll(keepingCapacity: true)
    }

    /// Whether commands are waiting. Plaintext written to a TLS side during the event is
    /// encrypted first, so it is counted.
    public var hasCommands: Bool {
        flushPlaintext()
        return !commands.isEmpty
    }

    /// Whether the runtime should read from the client now.
    public var wantsClientData: Bool {
        switch mode {
        case .finished: return false
        case .http: return requestDecoder.bufferedByteCount < Self.maxBufferedInputBytes
        // Bounded by the HTTP/2 windows: received bytes are acknowledged only once passed on.
        case .http2: return true
        case .relay(let relay): return relay.clientToUpstreamOpen
        default: return pendingClientBytes.count < Self.maxBufferedInputBytes
        }
    }

    /// True while the session answers HTTP/1 requests from its own state (`harrec replay`): no
    /// upstream paces it, so the runtime stops reading the client while the client's own
    /// answers back up (else a client that pipelines and never reads makes harrec keep an
    /// endless queue). HTTP/2 output is bounded by the stream windows and concurrent streams.
    public var answersClientItself: Bool {
        guard configuration.replay != nil, case .http = mode else { return false }
        return true
    }

    /// True while a replayed body streams from its source (HTTP/1) or a stream's does (HTTP/2,
    /// one whose queue is low): `clientDrained` writes the next piece.
    public var wantsClientDrained: Bool {
        switch mode {
        case .http:
            guard let current = replayExchange, case .streaming = current.phase else { return false }
            return true
        case .http2: return http2?.wantsStreamedBodyPieces ?? false
        default: return false
        }
    }

    public func clientDrained(at time: Double) {
        now = max(now, time)
        switch mode {
        case .http: continueStreamedReplay()
        case .http2:
            http2?.continueStreamedBodies(at: now)
            pumpHTTP2()
        default: break
        }
    }

    /// Whether the runtime should read from the upstream now.
    public var wantsUpstreamData: Bool {
        switch mode {
        case .finished: return false
        case .relay(let relay): return relay.upstreamToClientOpen
        case .http2: return http2?.wantsUpstreamBytes ?? true
        default: return true
        }
    }

    // MARK: - Time and shutdown

    /// Called by the runtime about once a second; enforces the timeouts.
    public func tick(at time: Double) {
        now = max(now, time)
        let timeouts = configuration.timeouts
        switch mode {
        case .detecting, .socksHandshake:
            if now - createdAt > timeouts.handshake {
                finish(log: .handshakeTimeout(seconds: timeouts.handshake))
            }
        case .connectingTunnel, .awaitingUpstreamALPN:
            failUpstreamConnectIfLate(now)
        case .http2:
            if configuration.replay != nil { failUpstreamConnectIfLate(now) } // a passthrough connection
            tickHTTP2()
        case .sniffingTunnel, .relay, .awaitingCertificate:
            if now - lastActivity > timeouts.tunnelIdle {
                finish(log: .tunnelIdle(seconds: timeouts.tunnelIdle))
            }
        case .http:
            if replaySocket != nil {
                replaySocketTick()
            } else if replayExchange != nil {
                replayDue()
            } else if let exchange {
                if upstreams.active?.ready == false {
                    failUpstreamConnectIfLate(now)
                } else if exchange.requestDone && now - exchange.lastUpstreamActivity > timeouts.upstreamResponse {
                    failExchange("upstream sent nothing for \(formatSeconds(timeouts.upstreamResponse))", respondWith: 504)
                }
            } else if requestDecoder.bufferedByteCount > 0 {
                // A request head has begun (seen at this tick at the latest) and must end in time.
                let started = headStartedAt ?? now
                headStartedAt = started
                if now - started > timeouts.requestHead {
                    rejectRequest(status: 408, reason: "the request head did not complete within \(formatSeconds(timeouts.requestHead))")
                }
            } else {
                headStartedAt = nil
                if now - lastActivity > timeouts.clientIdle { finish(log: nil) }
            }
        case .finished:
            break
        }
    }

    /// DNS, TCP connect and (inside an intercepted tunnel) the TLS handshake share one limit.
    func failUpstreamConnectIfLate(_ now: Double) {
        let limit = configuration.timeouts.upstreamConnect
        guard let current = upstreams.overdueConnect(at: now, limit: limit) else { return }
        commands.append(.closeUpstream(current.id))
        upstreamConnectFailed(current.id, UpstreamFailure(.timeout, "connect timed out after \(formatSeconds(limit))"), at: now)
    }

    /// Graceful shutdown: finish the exchange in flight, accept no new request.
    public func beginShutdown(at time: Double) {
        now = max(now, time)
        shuttingDown = true
        switch mode {
        case .http:
            if let socket = replaySocket { applyReplaySocket(socket.stop(), socket) }
            if exchange == nil && replayExchange == nil && !isFinished { finish(log: nil) }
        case .http2:
            http2?.drain()
            pumpHTTP2()
        case .finished:
            break
        default:
            finish(log: nil)
        }
    }

    /// Hard stop: the exchange in flight is recorded as aborted.
    public func abort(_ reason: String, at time: Double) {
        now = max(now, time)
        if exchange != nil {
            failExchange(reason, respondWith: nil)
        }
        if case .http2 = mode { http2?.clientLost(reason, at: now); pumpHTTP2() }
        if !isFinished { finish(log: nil) }
    }

    // MARK: - Failures and ending

    /// Records the exchange in flight as failed, answers the client if nothing was sent yet, and
    /// closes both sides. harrec's own answer (a 502 or 504 with the reason) is the recorded
    /// response when the upstream sent none: the entry shows what the client got.
    func failExchange(_ reason: String, respondWith status: Int?) {
        guard let current = exchange.take() else {
            finish(log: nil)
            return
        }
        current.flow.error = sanitizedForLog(reason)
        current.flow.instants.end = now
        let answer = status.flatMap { current.finalHeadForwarded ? nil : ErrorResponses.answer(status: $0, reason: reason, close: true) }
        if let answer, current.flow.response == nil {
            current.flow.response = answer.recorded
            current.flow.instants.responseStart = now
        }
        if current.flow.response != nil && current.flow.instants.responseEnd == nil {
            current.flow.instants.responseEnd = now
        }
        commands.append(.record(.flow(current.flow)))
        if let answer { sendClient(answer.bytes) }
        closeUpstream()
        finish(log: .exchangeFailed(current.flow, status: status, reason: reason, cut: current.finalHeadForwarded))
    }

    /// The client left `current` before it ended (`how`: "client closed the connection"): the
    /// exchange is recorded with what was delivered and when the client gave up, counted from
    /// the request's start (what a generated mock waits before it fails so), and the upstream
    /// is closed at once.
    func clientLeft(_ how: String, _ current: HTTP1Exchange) {
        failExchange(gaveUpReason(how, since: current.flow.instants.requestStart, at: now), respondWith: nil)
    }

    func finish(log event: LiveEvent.Kind?) {
        guard !isFinished else { return }
        finishWebSocket()
        if let layer = http2.take() {
            // Streams still in flight when the connection ends are recorded, not lost.
            layer.clientLost("the connection ended", at: now)
            emit(layer)
        }
        flushPlaintext()
        if let event { log(event) }
        closeUpstream()
        mode = .finished
        isFinished = true
        commands.append(.closeClient)
    }

    // MARK: - Helpers

    func log(_ event: LiveEvent.Kind) {
        commands.append(.log(LiveEvent(client: clientAddress, event)))
    }
}
