import CSystemShims
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import Recording
import Synchronization


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

    /// - Parameters:
    ///   - loopCount: event-loop threads; clamped to 1...`maximumLoopCount`.
    ///   - poller: the readiness API every loop uses.
    public init(configuration: ProxyConfiguration, sink: FlowSink, log: LogOutput,
                loopCount: Int = ProxyServer.defaultLoopCount, poller: PollerBackend = .platformDefault) throws {
        let count = min(Self.maximumLoopCount, max(1, loopCount))
        shared = LoopGroup()
        // What the filter skips is proxied but never reaches the recording.
        let sink = configuration.recordingFilter.isEmpty ? sink : FilteringSink(sink, filter: configuration.recordingFilter)
        var loops: [EventLoop] = []
        for index in 0..<count {
            loops.append(try EventLoop(index: index, shared: shared, configuration: configuration, sink: sink,
                                       log: index == 0 ? log : log.sibling(), poller: poller))
        }
        shared.loops = loops
    }

    /// Calls `observer` with every live-log event (on the loop's thread, so it must be quick),
    /// whether the log shows it or not. Call before `run`.
    public func observeLiveEvents(_ observer: @escaping @Sendable (LiveEvent) -> Void) {
        shared.liveEventObserver = observer
    }

    /// The listeners bound so far, in the order `listen` was called.
    public var boundListeners: [BoundListener] { shared.boundListeners }

    /// How many loop threads `run` uses.
    public var loopCount: Int { loops.count }

    /// Binds a listener. A forward listener serves both protocols (first byte 0x05 is SOCKS5); a
    /// reverse listener (`reverse`) is an ordinary HTTP server in front of its upstreams.
    /// Call before `run`.
    @discardableResult
    public func listen(label: String, address: String, port: UInt16, reverse: ReverseProxy? = nil) throws -> UInt16 {
        try listen(label: label, address: address, port: port, kind: .proxy(reverse: reverse))
    }

    /// Binds a listener whose connections get sessions of `kind` (a service's, such as the live
    /// view, or the proxy's). Call before `run`.
    @discardableResult
    public func listen(label: String, address: String, port: UInt16, kind: ListenerKind) throws -> UInt16 {
        let actual = try loops[0].listen(label: label, address: address, port: port, kind: kind)
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
