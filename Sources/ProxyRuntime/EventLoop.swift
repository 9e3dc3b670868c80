import CHarrecShims
import Dispatch
import Glibc
import ProxyCore
import Recording
import Synchronization


/// One epoll loop on one thread: its listeners (loop 0 only), its connections and their sessions.
final class EventLoop: @unchecked Sendable {
    /// Bytes queued for one peer before the loop stops reading the other side (backpressure).
    static let writeHighWater = 512 * 1024
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
    let epollFD: Int32
    let wakeFD: Int32
    var listeners: [UInt64: (fd: Int32, label: String)] = [:]
    /// Accepted sockets handed over by loop 0, adopted when this loop wakes.
    let handedOver = Mutex<[(fd: Int32, address: SocketAddress)]>([])
    let available = Atomic<Bool>(true)

    var connections: [UInt64: Connection] = [:]
    var sessions: [UInt64: SessionBox] = [:]
    var nextToken: UInt64 = 2
    let wakeToken: UInt64 = 0
    let signalToken: UInt64 = 1
    var signalFD: Int32 = -1
    var readBuffer: UnsafeMutableRawBufferPointer
    /// Connections whose output must be flushed at the end of the current batch.
    var dirty: [Connection] = []
    /// Upstream connects requested during the current command batch.
    var deferredOpens: [(connection: Connection, host: String, port: UInt16)] = []

    var shutdownDeadline: Double?
    /// Accepting paused for want of descriptors (see `AcceptBackoff`).
    var acceptBackoff = AcceptBackoff()
    let resolved = Mutex<[(token: UInt64, result: Result<[SocketAddress], UpstreamFailure>, start: Double, end: Double)]>([])
    var resolverQueue: DispatchQueue { shared.resolverQueue }
    var certificateQueue: DispatchQueue { shared.certificateQueue }
    let preparedCertificates = Mutex<[UInt64]>([])

    final class SessionBox {
        let session: ProxySession
        var client: Connection?
        var upstreams: [UpstreamID: Connection] = [:]
        init(session: ProxySession) { self.session = session }
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
        var interest: UInt32 = 0
        var registered = false
        var readEOF = false
        var closeAfterFlush = false
        var shutdownAfterFlush = false
        var writeShutDown = false
        var dnsStart: Double?
        var dnsEnd: Double?
        var connectStart: Double = 0
        var remoteIP = ""

        init(token: UInt64, role: Role, state: State) {
            self.token = token
            self.role = role
            self.state = state
        }

        var pendingOutput: Int { output.count }
    }

    init(index: Int, shared: LoopGroup, configuration: ProxyConfiguration, sink: FlowSink, log: LogOutput) throws {
        self.index = index
        self.shared = shared
        self.configuration = configuration
        self.sink = sink
        self.log = log
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw SocketError("epoll_create1") }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw SocketError("eventfd") }
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readChunk, alignment: 16)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = wakeToken
        epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)
    }

    deinit {
        readBuffer.deallocate()
    }

    func listen(label: String, address: String, port: UInt16) throws -> UInt16 {
        let (fd, actualPort) = try makeListener(address: address, port: port)
        let token = makeToken()
        listeners[token] = (fd, label)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = token
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        return actualPort
    }

    func handleShutdownSignals() throws {
        let fd = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw SocketError("eventfd") }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = signalToken
        epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        signalFD = fd
        guard harrec_install_shutdown_signals(fd) == 0 else { throw SocketError("sigaction") }
    }

    /// Wakes the loop from epoll_wait. Safe from any thread.
    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
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
    func handOver(fd: Int32, address: SocketAddress) {
        handedOver.withLock { $0.append((fd, address)) }
        wake()
    }

    /// Closes sockets handed over after this loop stopped. Call once every loop has stopped.
    func closeUnadopted() {
        for item in handedOver.takeAll() { close(item.fd) }
    }

    /// Runs until shutdown completes. Returns on the calling thread.
    func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var nextTick = wallClock() + Self.tickInterval
        var handledShutdownRequests = 0
        while true {
            let now = wallClock()
            if acceptBackoff.shouldResume(at: now) { resumeAccepting() }
            let wakeAt = min(nextTick, acceptBackoff.pausedUntil ?? nextTick)
            let timeout = max(0, Int32((wakeAt - now) * 1000))
            let count = epoll_wait(epollFD, &events, Int32(events.count), min(timeout, 500))
            if count < 0 && harrec_errno() != EINTR { break }
            if count > 0 {
                for index in 0..<Int(count) {
                    handle(token: events[index].data.u64, events: events[index].events)
                }
            }
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
            epoll_ctl(epollFD, EPOLL_CTL_DEL, listener.fd, nil)
            close(listener.fd)
            listeners[token] = nil
        }
        shutdownDeadline = wallClock() + Self.shutdownGraceSeconds
        for box in Array(sessions.values) {
            box.session.beginShutdown()
            process(box)
        }
    }

    func abortAll(_ reason: String) {
        for box in Array(sessions.values) {
            box.session.abort(reason)
            process(box)
        }
        for connection in Array(connections.values) { closeNow(connection) }
    }

    func tick() {
        for box in Array(sessions.values) {
            box.session.tick()
            process(box)
        }
        closeLingering(force: false)
    }

    func closeLingering(force: Bool) {
        let now = wallClock()
        for connection in Array(connections.values) {
            if case .lingering(let until) = connection.state, force || now >= until {
                closeNow(connection)
            }
        }
    }

    func handle(token: UInt64, events: UInt32) {
        if token == wakeToken {
            var value: UInt64 = 0
            _ = read(wakeFD, &value, 8)
            adoptHandedOver()
            drainResolved()
            drainPreparedCertificates()
            return
        }
        if token == signalToken {
            var count: UInt64 = 0
            if read(signalFD, &count, 8) == 8 {
                shared.requestShutdown(count: Int(count))
            }
            return
        }
        if let listener = listeners[token] {
            acceptAll(listener.fd)
            return
        }
        guard let connection = connections[token] else { return }
        switch connection.state {
        case .connecting:
            if events & (EPOLLOUT.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
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
        if events & EPOLLOUT.rawValue != 0 {
            flush(connection)
        }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0, case .open = connection.state {
            if !connection.readEOF {
                readOnce(connection)
            } else if connection.pendingOutput == 0, connection.registered {
                // EPOLLHUP cannot be masked: after EOF with nothing to write it would fire on every
                // wait. Stop watching the socket; queuing output registers it again.
                epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.fd, nil)
                connection.registered = false
                connection.interest = 0
            }
        }
        if let box = connection.box { process(box) }
    }
}
