import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import Recording
import Synchronization


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
    /// Hears every live-log event, quiet or not (the live view of a replay). Set before `run`.
    var liveEventObserver: (@Sendable (LiveEvent) -> Void)?
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
