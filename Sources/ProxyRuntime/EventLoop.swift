import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import Recording
import Synchronization


/// One epoll loop on one thread: its listeners (loop 0 only), its connections and their sessions.
final class EventLoop: @unchecked Sendable {
    /// Bytes queued for one peer before the loop stops reading the other side (backpressure).
    static let writeHighWater = 512 * 1024
    /// A session that streams its own output (`LoopSession.wantsClientDrained`) writes its next
    /// piece once the client's queue is below this.
    static let drainLowWater = 256 * 1024
    /// Pieces such a session writes per event before other connections get a turn.
    static let piecesPerEvent = 8
    /// Size of the shared read buffer: one read takes at most this much from a socket.
    static let readChunk = 64 * 1024
    /// How long a closing connection drains unread input so the last response is not reset away.
    static let lingerSeconds = 2.0
    /// Grace period for in-flight exchanges at shutdown.
    static let shutdownGraceSeconds = 2.0
    /// How often sessions check their timeouts.
    static let tickInterval = 0.5

    let index: Int
    let shared: LoopGroup
    let configuration: ProxyConfiguration
    let sink: FlowSink
    let log: LogOutput
    var flowIDs: IDSource { shared.flowIDs }
    /// epoll and the waker: the loop's only platform calls besides sockets.
    let poller: Poller
    var listeners: [UInt64: (fd: Int32, label: String, kind: ListenerKind)] = [:]
    /// Accepted sockets handed over by loop 0, adopted when this loop wakes.
    let handedOver = Mutex<[(fd: Int32, address: SocketAddress, kind: ListenerKind)]>([])
    let available = Atomic<Bool>(true)

    var connections: [UInt64: Connection] = [:]
    var sessions: [UInt64: SessionBox] = [:]
    var nextToken: UInt64 = 2
    let signalToken: UInt64 = 1
    var readBuffer: UnsafeMutableRawBufferPointer
    /// Connections whose output must be flushed at the end of the current batch.
    var dirty: [Connection] = []
    /// Upstream connects requested during the current command batch.
    var deferredOpens: [(connection: Connection, host: String, port: UInt16)] = []

    var shutdownDeadline: Double?
    /// Sessions that asked to be ticked at an instant (`ProxyCommand.wake`), earliest first.
    var wakeups: [(at: Double, session: UInt64)] = []
    /// Accepting paused for want of descriptors (see `AcceptBackoff`).
    var acceptBackoff = AcceptBackoff()
    let resolved = Mutex<[(token: UInt64, result: Result<[SocketAddress], UpstreamFailure>, start: Double, end: Double)]>([])
    var resolverQueue: DispatchQueue { shared.resolverQueue }
    var certificateQueue: DispatchQueue { shared.certificateQueue }
    let preparedCertificates = Mutex<[UInt64]>([])

    final class SessionBox {
        let session: any LoopSession
        var client: Connection?
        var upstreams: [UpstreamID: Connection] = [:]
        init(session: any LoopSession) { self.session = session }
    }

    final class Connection {
        enum Role { case client, upstream(UpstreamID) }
        enum State {
            case resolving
            case connecting(addresses: [SocketAddress], index: Int)
            case open
            case lingering(until: Double)
            case closed
        }

        let token: UInt64
        var fd: Int32 = -1
        let role: Role
        weak var box: SessionBox?
        var state: State
        var output = OutputQueue()
        var interest: Interest = []
        var registered = false
        var readEOF = false
        var closeAfterFlush = false
        var shutdownAfterFlush = false
        var writeShutDown = false
        var dnsStart: Double?
        var dnsEnd: Double?
        var connectStart: Double = 0
        var remoteIP = ""
        /// Set while a tunnel through the upstream proxy is being opened: the session hears of
        /// the connection only once the proxy has said yes.
        var proxyHandshake: UpstreamProxyHandshake?

        init(token: UInt64, role: Role, state: State) {
            self.token = token
            self.role = role
            self.state = state
        }

        var pendingOutput: Int { output.count }
    }

    init(index: Int, shared: LoopGroup, configuration: ProxyConfiguration, sink: FlowSink, log: LogOutput,
         poller backend: PollerBackend = .platformDefault) throws {
        self.index = index
        self.shared = shared
        var configuration = configuration
        configuration.streamWebSocketMessages = sink.streamsWebSocketMessages
        configuration.streamBodies = sink.streamsBodies
        self.configuration = configuration
        self.sink = sink
        self.log = log
        poller = try Poller(backend: backend)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunk, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    func listen(label: String, address: String, port: UInt16, kind: ListenerKind) throws -> UInt16 {
        let (fd, actualPort) = try makeListener(address: address, port: port)
        let token = makeToken()
        listeners[token] = (fd, label, kind)
        poller.add(fd, token: token, interest: .read)
        return actualPort
    }

    func handleShutdownSignals() throws {
        try poller.watchShutdownSignals(token: signalToken)
    }

    /// Wakes the loop from its wait. Safe from any thread.
    func wake() {
        poller.wake()
    }

    func makeToken() -> UInt64 {
        let token = nextToken
        nextToken += 1
        return token
    }

    // MARK: - Loop

    var isAvailable: Bool { available.load(ordering: .relaxed) }

    /// This loop will not run (its thread could not start): it takes no connections.
    func markUnavailable() {
        available.store(false, ordering: .relaxed)
    }

    /// Takes an accepted socket from loop 0; it is adopted when this loop wakes.
    func handOver(fd: Int32, address: SocketAddress, kind: ListenerKind) {
        handedOver.withLock { $0.append((fd, address, kind)) }
        wake()
    }

    /// Closes sockets handed over after this loop stopped. Call once every loop has stopped.
    func closeUnadopted() {
        for item in handedOver.takeAll() { close(item.fd) }
    }

    /// Runs until shutdown completes. Returns on the calling thread.
    func run() {
        var nextTick = wallClock() + Self.tickInterval
        var handledShutdownRequests = 0
        while true {
            let now = wallClock()
            if acceptBackoff.shouldResume(at: now) { resumeAccepting() }
            let wakeAt = min(nextTick, acceptBackoff.pausedUntil ?? nextTick, wakeups.first?.at ?? nextTick)
            let timeout = max(0, Int32(((wakeAt - now) * 1000).rounded(.up)))
            guard poller.wait(milliseconds: min(timeout, 500), { handle(token: $0, readiness: $1) }) else { break }
            let requests = shared.shutdownRequests.load(ordering: .sequentiallyConsistent)
            if requests > handledShutdownRequests {
                handledShutdownRequests = requests
                if requests == 1 {
                    beginShutdown()
                } else {
                    abortAll("aborted: harrec stopped before the exchange finished")
                    log.flush()
                    return
                }
            }
            if let first = wakeups.first, wallClock() >= first.at { fireWakeups() }
            if wallClock() >= nextTick {
                nextTick = wallClock() + Self.tickInterval
                tick()
            }
            log.flush()
            if let deadline = shutdownDeadline {
                if sessions.isEmpty {
                    closeLingering(force: true)
                    return
                }
                if wallClock() >= deadline {
                    abortAll("aborted: harrec stopped before the exchange finished")
                    log.flush()
                    return
                }
            }
        }
    }

    func beginShutdown() {
        for (token, listener) in listeners {
            poller.remove(listener.fd)
            close(listener.fd)
            listeners[token] = nil
        }
        let now = wallClock()
        shutdownDeadline = now + Self.shutdownGraceSeconds
        for box in Array(sessions.values) {
            box.session.beginShutdown(at: now)
            process(box)
        }
    }

    func abortAll(_ reason: String) {
        let now = wallClock()
        for box in Array(sessions.values) {
            box.session.abort(reason, at: now)
            process(box)
        }
        for connection in Array(connections.values) { closeNow(connection) }
    }

    func tick() {
        let now = wallClock()
        for box in Array(sessions.values) {
            box.session.tick(at: now, clientBacklog: box.client?.pendingOutput ?? 0)
            process(box)
        }
        closeLingering(force: false)
    }

    func scheduleWake(at instant: Double, session: UInt64) {
        let index = wakeups.firstIndex { $0.at > instant } ?? wakeups.count
        wakeups.insert((instant, session), at: index)
    }

    /// Ticks the sessions whose wake-up instant has come (sessions gone since are skipped).
    func fireWakeups() {
        let now = wallClock()
        while let first = wakeups.first, first.at <= now {
            wakeups.removeFirst()
            guard let box = sessions[first.session] else { continue }
            box.session.tick(at: now, clientBacklog: box.client?.pendingOutput ?? 0)
            process(box)
        }
    }

    func closeLingering(force: Bool) {
        let now = wallClock()
        for connection in Array(connections.values) {
            if case .lingering(let until) = connection.state, force || now >= until {
                closeNow(connection)
            }
        }
    }

    func handle(token: UInt64, readiness: Readiness) {
        if token == Poller.wakeToken {
            poller.drainWake()
            adoptHandedOver()
            drainResolved()
            drainPreparedCertificates()
            return
        }
        if token == signalToken {
            let count = poller.takeSignalCount()
            if count > 0 { shared.requestShutdown(count: count) }
            return
        }
        if let listener = listeners[token] {
            acceptAll(listener.fd, kind: listener.kind)
            return
        }
        guard let connection = connections[token] else { return }
        switch connection.state {
        case .connecting:
            if !readiness.isDisjoint(with: [.write, .error, .hangup]) {
                finishConnect(connection)
            }
            return
        case .lingering:
            drainLingering(connection)
            return
        case .resolving, .closed:
            return
        case .open:
            break
        }
        if readiness.contains(.write) {
            flush(connection)
        }
        if !readiness.isDisjoint(with: [.read, .hangup, .error]), case .open = connection.state {
            if !connection.readEOF {
                readOnce(connection)
            } else if connection.pendingOutput == 0, connection.registered {
                // A hang-up cannot be masked: after EOF with nothing to write it would fire on every
                // wait. Stop watching the socket; queuing output registers it again.
                poller.remove(connection.fd)
                connection.registered = false
                connection.interest = []
            }
        }
        if let box = connection.box { process(box) }
    }
}
