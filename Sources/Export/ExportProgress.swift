import Synchronization

/// How far an export is, and a way to stop it (a signal during a long export).
public final class ExportProgress: @unchecked Sendable {
    private let state = Mutex<(done: Int, entries: Int, passes: Int, stopped: Bool)>((0, 0, 1, false))

    public init() {}

    func begin(total: Int, passes: Int) {
        state.withLock { $0 = (0, total, passes, $0.stopped) }
    }

    func advance() { state.withLock { $0.done += 1 } }

    /// The pass under way (1-based), of how many, and how many of the entries it has built.
    public var status: (pass: Int, passes: Int, built: Int, entries: Int) {
        state.withLock { s in
            guard s.entries > 0 else { return (1, s.passes, 0, 0) }
            let pass = min(s.passes, s.done / s.entries + 1)
            return (pass, s.passes, min(s.entries, s.done - (pass - 1) * s.entries), s.entries)
        }
    }

    /// Asks the export to stop; it throws `ExportStopped` soon after and writes nothing.
    public func stop() { state.withLock { $0.stopped = true } }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func check() throws {
        if isStopped { throw ExportStopped() }
    }
}

/// The export was stopped before it finished; the target file was not written.
public struct ExportStopped: Error, CustomStringConvertible {
    public var description: String { "the export was stopped" }
}
