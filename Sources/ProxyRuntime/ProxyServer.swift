import CHarrecShims
import Dispatch
import Glibc
import ProxyCore
import Recording
import Synchronization

/// Where live log lines go. Lines are collected during one loop iteration and written with one
/// system call, so logging costs little even at tens of thousands of exchanges per second.
public final class LogOutput: @unchecked Sendable {
    private var pending: [UInt8] = []
    private let fd: Int32
    public var quiet: Bool

    public init(fd: Int32 = 2, quiet: Bool = false) {
        self.fd = fd
        self.quiet = quiet
    }

    /// Queues one line (control characters escaped).
    public func line(_ text: String) {
        pending.append(contentsOf: sanitizedForLog(text).utf8)
        pending.append(10)
    }

    /// A second output to the same descriptor, for another loop thread: each loop buffers its own
    /// lines and writes them with one call, so lines never interleave mid-line.
    func sibling() -> LogOutput {
        LogOutput(fd: fd, quiet: quiet)
    }

    public func flush() {
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
        pending.removeAll(keepingCapacity: true)
    }
}

/// The I/O runtime: a few epoll loops, one thread each, drive every session. No thread per
/// connection. The first loop owns the listeners and the signals and hands each accepted
/// connection to the loops in turn; a connection and its upstream connections stay on one loop for
/// their whole life, so sessions need no locks. DNS lookups and leaf signing run on Dispatch
/// queues and report back through each loop's eventfd.
public final class ProxyServer: @unchecked Sendable {
    /// More loops than this only add context switches: the proxy's work per byte is small next to
    /// the kernel's, and each loop costs a thread and a 64 KiB read buffer.
    public static let maximumLoopCount = 16

    /// Grace period for in-flight exchanges at shutdown.
    public static var shutdownGraceSeconds: Double { EventLoop.shutdownGraceSeconds }

    /// One loop per online core (at least 1, at most `maximumLoopCount`).
    public static var defaultLoopCount: Int {
        min(maximumLoopCount, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    public struct BoundListener: Sendable {
        public var label: String
        public var address: String
        public var port: UInt16
    }

    private let shared: LoopGroup
    private var loops: [EventLoop] { shared.loops }
    /// The threads of loops 1..., once started.
    private var loopThreads: [pthread_t]?

    /// - Parameter loopCount: event-loop threads; clamped to 1...`maximumLoopCount`.
    public init(configuration: ProxyConfiguration, sink: FlowSink, log: LogOutput,
                loopCount: Int = ProxyServer.defaultLoopCount) throws {
        let count = min(Self.maximumLoopCount, max(1, loopCount))
        shared = LoopGroup()
        var loops: [EventLoop] = []
        for index in 0..<count {
            loops.append(try EventLoop(index: index, shared: shared, configuration: configuration, sink: sink,
                                       log: index == 0 ? log : log.sibling()))
        }
        shared.loops = loops
    }

    /// The listeners bound so far, in the order `listen` was called.
    public var boundListeners: [BoundListener] { shared.boundListeners }

    /// How many loop threads `run` uses.
    public var loopCount: Int { loops.count }

    /// Binds a listener. Both protocols are served on every listener (first byte 0x05 is SOCKS5).
    /// Call before `run`.
    @discardableResult
    public func listen(label: String, address: String, port: UInt16) throws -> UInt16 {
        let actual = try loops[0].listen(label: label, address: address, port: port)
        shared.boundListeners.append(BoundListener(label: label, address: address, port: actual))
        return actual
    }

    /// Routes SIGINT and SIGTERM to this server: the first stops it gracefully, the second at
    /// once. Call before announcing the listeners, so no early signal is lost.
    public func handleShutdownSignals() throws {
        try loops[0].handleShutdownSignals()
    }

    /// Asks the loops to stop gracefully; a second call stops them at once. Safe from any thread.
    public func requestShutdown() {
        shared.requestShutdown(count: 1)
    }

    /// Starts every loop but the first on a thread of its own (once; `run` does it otherwise).
    /// Call after the last `listen`, from the thread that will call `run`.
    public func startLoops() {
        guard loopThreads == nil else { return }
        var threads: [pthread_t] = []
        for loop in loops.dropFirst() {
            // Named so `top -H` and the tests can tell the loops apart (15 characters at most).
            if let thread = startThread(named: "harrec-loop-\(loop.index)", { loop.run() }) {
                threads.append(thread)
            } else {
                // No thread: this loop's connections go to the others instead.
                loop.markUnavailable()
            }
        }
        loopThreads = threads
    }

    /// Runs every loop until shutdown completes: the first on the calling thread, the others on
    /// threads of their own. Returns on the calling thread once all have stopped.
    public func run() {
        startLoops()
        loops[0].run()
        for thread in loopThreads ?? [] { pthread_join(thread, nil) }
        // A connection handed over just as its loop stopped was never adopted: close it.
        for loop in loops { loop.closeUnadopted() }
    }
}

/// State the loops share. `boundListeners` and `loops` are written before `run` starts the
/// threads and only read afterwards (thread creation orders the writes before the reads).
final class LoopGroup: @unchecked Sendable {
    let shutdownRequests = Atomic<Int>(0)
    let flowIDs = IDSource()
    let sessionIDs = IDSource()
    let resolverQueue = DispatchQueue(label: "harrec.dns", attributes: .concurrent)
    /// Leaves signed off the loops: one at a time is plenty (about a millisecond each) and keeps a
    /// burst of new hosts from taking every core.
    let certificateQueue = DispatchQueue(label: "harrec.certificates")
    var boundListeners: [ProxyServer.BoundListener] = []
    var loops: [EventLoop] = []
    /// Round-robin position for handing out accepted connections (touched by loop 0 only).
    private var nextLoop = 0

    func requestShutdown(count: Int) {
        shutdownRequests.add(count, ordering: .sequentiallyConsistent)
        for loop in loops { loop.wake() }
    }

    /// The loop that takes the next accepted connection.
    func loopForNextConnection() -> EventLoop {
        for _ in 0..<loops.count {
            let loop = loops[nextLoop % loops.count]
            nextLoop &+= 1
            if loop.isAvailable { return loop }
        }
        return loops[0]
    }
}

/// Starts a joinable thread running `body`; nil when the system refuses.
private func startThread(named name: String, _ body: @escaping () -> Void) -> pthread_t? {
    final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    if result != 0 {
        Unmanaged<Box>.fromOpaque(box).release()
        return nil
    }
    _ = harrec_set_thread_name(thread, name)
    return thread
}

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
    private let shared: LoopGroup
    private let configuration: ProxyConfiguration
    private let sink: FlowSink
    private let log: LogOutput
    private var flowIDs: IDSource { shared.flowIDs }
    private let epollFD: Int32
    private let wakeFD: Int32
    private var listeners: [UInt64: (fd: Int32, label: String)] = [:]
    /// Accepted sockets handed over by loop 0, adopted when this loop wakes.
    private let handedOver = Mutex<[(fd: Int32, address: SocketAddress)]>([])
    private let available = Atomic<Bool>(true)

    private var connections: [UInt64: Connection] = [:]
    private var sessions: [UInt64: SessionBox] = [:]
    private var nextToken: UInt64 = 2
    private let wakeToken: UInt64 = 0
    private let signalToken: UInt64 = 1
    private var signalFD: Int32 = -1
    private var readBuffer: UnsafeMutableRawBufferPointer
    /// Connections whose output must be flushed at the end of the current batch.
    private var dirty: [Connection] = []
    /// Upstream connects requested during the current command batch.
    private var deferredOpens: [(connection: Connection, host: String, port: UInt16)] = []

    private var shutdownDeadline: Double?
    /// Accepting paused for want of descriptors (see `AcceptBackoff`).
    private var acceptBackoff = AcceptBackoff()
    private let resolved = Mutex<[(token: UInt64, result: Result<[SocketAddress], UpstreamFailure>, start: Double, end: Double)]>([])
    private var resolverQueue: DispatchQueue { shared.resolverQueue }
    private var certificateQueue: DispatchQueue { shared.certificateQueue }
    private let preparedCertificates = Mutex<[UInt64]>([])

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

    private func makeToken() -> UInt64 {
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

    private func beginShutdown() {
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

    private func abortAll(_ reason: String) {
        for box in Array(sessions.values) {
            box.session.abort(reason)
            process(box)
        }
        for connection in Array(connections.values) { closeNow(connection) }
    }

    private func tick() {
        for box in Array(sessions.values) {
            box.session.tick()
            process(box)
        }
        closeLingering(force: false)
    }

    private func closeLingering(force: Bool) {
        let now = wallClock()
        for connection in Array(connections.values) {
            if case .lingering(let until) = connection.state, force || now >= until {
                closeNow(connection)
            }
        }
    }

    private func handle(token: UInt64, events: UInt32) {
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

    // MARK: - Accept

    private func acceptAll(_ listenerFD: Int32) {
        while true {
            var address = SocketAddress()
            address.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address.storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    harrec_accept_nonblocking(listenerFD, $0, &address.length)
                }
            }
            if fd < 0 {
                let code = harrec_errno()
                if code == EMFILE || code == ENFILE {
                    pauseAccepting(reason: String(cString: strerror(code)))
                }
                return
            }
            acceptBackoff.accepted()
            let loop = shared.loopForNextConnection()
            if loop === self {
                adopt(fd: fd, address: address)
            } else {
                loop.handOver(fd: fd, address: address)
            }
        }
    }

    /// Takes the listeners out of the poll set until the back-off delay has passed.
    private func pauseAccepting(reason: String) {
        if acceptBackoff.pausedUntil == nil {
            for listener in listeners.values { epoll_ctl(epollFD, EPOLL_CTL_DEL, listener.fd, nil) }
        }
        if let line = acceptBackoff.failed(at: wallClock(), reason: reason) { log.line(line) }
    }

    private func resumeAccepting() {
        acceptBackoff.resumed()
        for (token, listener) in listeners {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = token
            epoll_ctl(epollFD, EPOLL_CTL_ADD, listener.fd, &event)
        }
    }

    private func adoptHandedOver() {
        for item in handedOver.takeAll() { adopt(fd: item.fd, address: item.address) }
    }

    /// Starts serving an accepted client socket on this loop.
    private func adopt(fd: Int32, address: SocketAddress) {
        setNoDelay(fd)
        let session = ProxySession(id: shared.sessionIDs.make(), clientAddress: address.description,
                                   configuration: configuration, sink: sink, flowIDs: flowIDs, clock: wallClock)
        let box = SessionBox(session: session)
        let connection = Connection(token: makeToken(), role: .client, state: .open)
        connection.fd = fd
        connection.box = box
        box.client = connection
        connections[connection.token] = connection
        sessions[session.id] = box
        updateInterest(connection, EPOLLIN.rawValue)
        if shutdownDeadline != nil {
            session.beginShutdown()
            process(box)
        }
    }

    // MARK: - Reading

    private func readOnce(_ connection: Connection) {
        guard let box = connection.box else { return }
        let received = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
        if received > 0 {
            let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<received])
            switch connection.role {
            case .client: box.session.clientReceived(bytes)
            case .upstream(let id): box.session.upstreamReceived(id, bytes)
            }
        } else if received == 0 {
            connection.readEOF = true
            switch connection.role {
            case .client: box.session.clientClosed()
            case .upstream(let id): box.session.upstreamClosed(id)
            }
        } else {
            let code = harrec_errno()
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
            connection.readEOF = true
            let reason = String(cString: strerror(code))
            switch connection.role {
            case .client: box.session.clientFailed(reason)
            case .upstream(let id): box.session.upstreamFailed(id, reason)
            }
        }
    }

    private func drainLingering(_ connection: Connection) {
        while true {
            let received = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if received > 0 { continue }
            if received < 0 && (harrec_errno() == EAGAIN || harrec_errno() == EINTR) { return }
            closeNow(connection)
            return
        }
    }

    // MARK: - Commands

    /// Executes the session's commands, flushes output, and updates read interest, repeating
    /// while write failures produce new events.
    private func process(_ box: SessionBox) {
        var rounds = 0
        // Each round may produce new commands (a write failure, a synchronous connect result);
        // the bound only guards against a session that keeps talking to itself.
        while box.session.hasCommands && rounds < 16 {
            rounds += 1
            box.session.drainCommands { command in execute(command, box) }
            let toFlush = dirty
            dirty.removeAll(keepingCapacity: true)
            for connection in toFlush { flush(connection) }
            let opens = deferredOpens
            deferredOpens.removeAll()
            for open in opens { startUpstream(open.connection, host: open.host, port: open.port) }
        }
        if box.session.isFinished {
            for upstream in box.upstreams.values { closeNow(upstream) }
            box.upstreams.removeAll()
            if let client = box.client, case .open = client.state {
                if client.pendingOutput > 0 {
                    // Still flushing its last bytes; the box stays until the output drains.
                    updateInterest(client, EPOLLOUT.rawValue)
                    return
                }
                startClosing(client)
            }
            sessions[box.session.id] = nil
            return
        }
        refreshInterest(box)
    }

    private func execute(_ command: ProxyCommand, _ box: SessionBox) {
        switch command {
        case .sendToClient(let bytes):
            if let client = box.client { queue(bytes, on: client) }
        case .closeClient:
            box.client?.closeAfterFlush = true
            if let client = box.client { dirtyMark(client) }
        case .shutdownClientWrite:
            box.client?.shutdownAfterFlush = true
            if let client = box.client { dirtyMark(client) }
        case .openUpstream(let id, let host, let port):
            openUpstream(id, host: host, port: port, box: box)
        case .sendToUpstream(let id, let bytes):
            if let upstream = box.upstreams[id] { queue(bytes, on: upstream) }
        case .shutdownUpstreamWrite(let id):
            if let upstream = box.upstreams[id] {
                upstream.shutdownAfterFlush = true
                dirtyMark(upstream)
            }
        case .closeUpstream(let id):
            if let upstream = box.upstreams.removeValue(forKey: id) { closeNow(upstream) }
        case .log(let line):
            if !log.quiet { log.line(line) }
        case .prepareCertificate(let host):
            prepareCertificate(host, for: box.session.id)
        }
    }

    private func queue(_ bytes: [UInt8], on connection: Connection) {
        guard !bytes.isEmpty else { return }
        switch connection.state {
        case .closed, .lingering: return
        default: break
        }
        connection.output.append(bytes)
        dirtyMark(connection)
    }

    private func dirtyMark(_ connection: Connection) {
        if !dirty.contains(where: { $0 === connection }) { dirty.append(connection) }
    }

    /// Writes as much queued output as the socket takes, then applies pending half-close/close.
    private func flush(_ connection: Connection) {
        guard case .open = connection.state else { return }
        while connection.pendingOutput > 0 {
            let written = connection.output.withUnwrittenRegions { regions in
                gatherSend(connection.fd, regions)
            }
            if written > 0 {
                connection.output.consume(written)
                continue
            }
            let code = harrec_errno()
            if written < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == EINTR) { break }
            // The peer is gone: report it and drop what was queued.
            connection.output.removeAll()
            let reason = String(cString: strerror(code))
            if let box = connection.box {
                switch connection.role {
                case .client:
                    box.session.clientFailed(reason)
                    closeNow(connection)
                    box.client = nil
                case .upstream(let id):
                    box.session.upstreamFailed(id, reason)
                }
            } else {
                closeNow(connection)
            }
            return
        }
        if connection.pendingOutput == 0 {
            if connection.closeAfterFlush {
                startClosing(connection)
            } else if connection.shutdownAfterFlush && !connection.writeShutDown {
                connection.writeShutDown = true
                shutdown(connection.fd, Int32(SHUT_WR))
            }
        }
    }

    /// Half-closes and drains input for a short while before closing, so that a final response
    /// (a 400, say) reaches a client that is still sending.
    private func startClosing(_ connection: Connection) {
        guard case .open = connection.state else { return }
        if connection.readEOF {
            closeNow(connection)
            return
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.state = .lingering(until: wallClock() + Self.lingerSeconds)
        updateInterest(connection, EPOLLIN.rawValue)
        if let box = connection.box, box.session.isFinished {
            sessions[box.session.id] = nil
        }
        connection.box = nil
    }

    private func closeNow(_ connection: Connection) {
        if case .closed = connection.state { return }
        connection.state = .closed
        if connection.fd >= 0 {
            if connection.registered { epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.fd, nil) }
            close(connection.fd)
            connection.fd = -1
        }
        connections[connection.token] = nil
        if let box = connection.box {
            if case .client = connection.role {
                box.client = nil
                if box.session.isFinished { sessions[box.session.id] = nil }
            }
        }
    }

    // MARK: - Interest

    private func refreshInterest(_ box: SessionBox) {
        let upstreamBacklog = box.upstreams.values.reduce(0) { $0 + $1.pendingOutput }
        if let client = box.client, case .open = client.state {
            var mask: UInt32 = 0
            if !client.readEOF && box.session.wantsClientData && upstreamBacklog < Self.writeHighWater {
                mask |= EPOLLIN.rawValue
            }
            if client.pendingOutput > 0 { mask |= EPOLLOUT.rawValue }
            updateInterest(client, mask)
        }
        let clientBacklog = box.client?.pendingOutput ?? 0
        for upstream in box.upstreams.values {
            guard case .open = upstream.state else { continue }
            var mask: UInt32 = 0
            if !upstream.readEOF && box.session.wantsUpstreamData && clientBacklog < Self.writeHighWater {
                mask |= EPOLLIN.rawValue
            }
            if upstream.pendingOutput > 0 { mask |= EPOLLOUT.rawValue }
            updateInterest(upstream, mask)
        }
    }

    private func updateInterest(_ connection: Connection, _ mask: UInt32) {
        guard connection.fd >= 0 else { return }
        if connection.registered && connection.interest == mask { return }
        // Nothing to wait for and not registered: stay out (see the EPOLLHUP note in handle).
        if !connection.registered && mask == 0 && connection.readEOF { return }
        var event = epoll_event()
        event.events = mask
        event.data.u64 = connection.token
        if connection.registered {
            epoll_ctl(epollFD, EPOLL_CTL_MOD, connection.fd, &event)
        } else {
            epoll_ctl(epollFD, EPOLL_CTL_ADD, connection.fd, &event)
            connection.registered = true
        }
        connection.interest = mask
    }

    // MARK: - Upstream connections

    /// Registers the upstream connection now; the connect itself starts after the command batch,
    /// because a synchronous result calls back into the session.
    private func openUpstream(_ id: UpstreamID, host: String, port: UInt16, box: SessionBox) {
        let connection = Connection(token: makeToken(), role: .upstream(id), state: .resolving)
        connection.box = box
        box.upstreams[id] = connection
        connections[connection.token] = connection
        deferredOpens.append((connection, host, port))
    }

    private func startUpstream(_ connection: Connection, host: String, port: UInt16) {
        guard case .resolving = connection.state, connections[connection.token] != nil else { return }
        if let literal = SocketAddress(ip: host, port: port) {
            startConnect(connection, addresses: [literal], index: 0)
            return
        }
        connection.dnsStart = wallClock()
        let token = connection.token
        resolverQueue.async { [weak self] in
            let start = wallClock()
            let result = resolve(host: host, port: port)
            let end = wallClock()
            guard let self else { return }
            self.resolved.withLock { $0.append((token, result, start, end)) }
            self.wake()
        }
    }

    private func prepareCertificate(_ host: String, for sessionID: UInt64) {
        guard let authority = configuration.interception?.authority else { return }
        certificateQueue.async { [weak self] in
            _ = try? authority.issueLeaf(for: host)
            guard let self else { return }
            self.preparedCertificates.withLock { $0.append(sessionID) }
            self.wake()
        }
    }

    private func drainPreparedCertificates() {
        for sessionID in preparedCertificates.takeAll() {
            guard let box = sessions[sessionID] else { continue }
            box.session.certificatePrepared()
            process(box)
        }
    }

    private func drainResolved() {
        for item in resolved.takeAll() {
            guard let connection = connections[item.token], case .resolving = connection.state,
                  let box = connection.box, case .upstream(let id) = connection.role else { continue }
            connection.dnsStart = item.start
            connection.dnsEnd = item.end
            switch item.result {
            case .success(let addresses):
                startConnect(connection, addresses: addresses, index: 0)
            case .failure(let failure):
                connections[connection.token] = nil
                connection.state = .closed
                box.upstreams[id] = nil
                box.session.upstreamConnectFailed(id, failure)
            }
            process(box)
        }
    }

    private func startConnect(_ connection: Connection, addresses: [SocketAddress], index: Int) {
        guard let box = connection.box, case .upstream(let id) = connection.role else { return }
        var lastError: Int32 = ECONNREFUSED
        var position = index
        while position < addresses.count {
            let address = addresses[position]
            if isOwnListener(address) {
                // A request for harrec itself would come back in as a new request and loop.
                connections[connection.token] = nil
                connection.state = .closed
                box.upstreams[id] = nil
                let target = address.ipAndPort
                box.session.upstreamConnectFailed(id, UpstreamFailure(
                    .other, "\(target.ip):\(target.port) is this proxy's own listener (the request would loop)"))
                return
            }
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd < 0 {
                lastError = harrec_errno()
                position += 1
                continue
            }
            setNoDelay(fd)
            connection.fd = fd
            connection.remoteIP = address.ipAndPort.ip
            connection.connectStart = wallClock()
            let result = address.withSockaddr { Glibc.connect(fd, $0, $1) }
            if result == 0 {
                connection.state = .open
                connected(connection)
                return
            }
            let code = harrec_errno()
            if code == EINPROGRESS {
                connection.state = .connecting(addresses: addresses, index: position)
                updateInterest(connection, EPOLLOUT.rawValue)
                return
            }
            lastError = code
            close(fd)
            connection.fd = -1
            position += 1
        }
        connections[connection.token] = nil
        connection.state = .closed
        box.upstreams[id] = nil
        box.session.upstreamConnectFailed(id, failure(forErrno: lastError))
    }

    /// Whether `address` is one of this server's listeners: same port, and the listener's own
    /// address, or a loopback address when the listener is on every address.
    private func isOwnListener(_ address: SocketAddress) -> Bool {
        let target = address.ipAndPort
        return shared.boundListeners.contains { listener in
            guard listener.port == target.port else { return false }
            let ip = target.ip.hasPrefix("::ffff:") ? String(target.ip.dropFirst(7)) : target.ip
            if listener.address == ip { return true }
            // Connecting to 0.0.0.0 or :: reaches this host too.
            let loopbackTarget = ip.hasPrefix("127.") || ip == "::1" || ip == "0.0.0.0" || ip == "::"
            let wildcard = listener.address == "0.0.0.0" || listener.address == "::"
            // A listener on every address is also reached through each interface's address (asked
            // for only when the port matches, which is rare).
            return wildcard && (loopbackTarget || localInterfaceAddresses().contains(ip))
        }
    }

    private func finishConnect(_ connection: Connection) {
        guard case .connecting(let addresses, let index) = connection.state else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &code, &length)
        if code == 0 {
            connection.state = .open
            connected(connection)
            if let box = connection.box { process(box) }
            return
        }
        if connection.registered { epoll_ctl(epollFD, EPOLL_CTL_DEL, connection.fd, nil) }
        connection.registered = false
        close(connection.fd)
        connection.fd = -1
        if index + 1 < addresses.count {
            startConnect(connection, addresses: addresses, index: index + 1)
        } else if let box = connection.box, case .upstream(let id) = connection.role {
            connections[connection.token] = nil
            connection.state = .closed
            box.upstreams[id] = nil
            box.session.upstreamConnectFailed(id, failure(forErrno: code))
        }
        if let box = connection.box { process(box) }
    }

    private func connected(_ connection: Connection) {
        guard let box = connection.box, case .upstream(let id) = connection.role else { return }
        let info = UpstreamConnection(remoteIP: connection.remoteIP, dnsStart: connection.dnsStart,
                                      dnsEnd: connection.dnsEnd, connectStart: connection.connectStart,
                                      connectEnd: wallClock())
        updateInterest(connection, EPOLLIN.rawValue)
        box.session.upstreamConnected(id, info)
    }
}

/// One `sendmsg` of `regions` in order (a gathered write); the bytes written, or -1 with errno set.
func gatherSend(_ fd: Int32, _ regions: [UnsafeRawBufferPointer]) -> Int {
    var vectors = regions.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
    return vectors.withUnsafeMutableBufferPointer { buffer in
        var message = msghdr()
        message.msg_iov = buffer.baseAddress
        message.msg_iovlen = buffer.count
        return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
    }
}

func failure(forErrno code: Int32) -> UpstreamFailure {
    let text = String(cString: strerror(code))
    switch code {
    case ECONNREFUSED: return UpstreamFailure(.refused, "connection refused")
    case ENETUNREACH, EHOSTUNREACH: return UpstreamFailure(.unreachable, text.lowercased())
    case ETIMEDOUT: return UpstreamFailure(.timeout, "connect timed out")
    case ECONNRESET: return UpstreamFailure(.reset, "connection reset")
    default: return UpstreamFailure(.other, text.lowercased())
    }
}

/// Blocking getaddrinfo, run off the loop thread.
func resolve(host: String, port: UInt16) -> Result<[SocketAddress], UpstreamFailure> {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
        let message = String(cString: gai_strerror(status))
        return .failure(UpstreamFailure(.dns, "DNS lookup for \(host) failed: \(message)"))
    }
    defer { freeaddrinfo(list) }
    var addresses: [SocketAddress] = []
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
        if let raw = entry.pointee.ai_addr, entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
            addresses.append(SocketAddress(raw: raw, length: entry.pointee.ai_addrlen))
        }
        cursor = entry.pointee.ai_next
    }
    if addresses.isEmpty {
        return .failure(UpstreamFailure(.dns, "DNS lookup for \(host) returned no addresses"))
    }
    return .success(addresses)
}

extension Mutex {
    /// Everything queued so far, leaving the queue empty: how another thread's results reach a
    /// loop after it wakes.
    func takeAll<Element>() -> [Element] where Value == [Element] {
        withLock { pending in
            var taken: [Element] = []
            swap(&taken, &pending)
            return taken
        }
    }
}
