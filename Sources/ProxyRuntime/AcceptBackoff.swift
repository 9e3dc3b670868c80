/// What the accept loop does when accept(2) fails for want of file descriptors (EMFILE, ENFILE):
/// the pending connection stays in the listen backlog and the listener stays readable, so trying
/// again at once is a busy loop. Instead the listeners leave the poll set for a delay that doubles
/// with each failure up to a second, and the failures are logged at most once a second with a
/// count. A successful accept resets the delay. Pure: the event loop applies it.
struct AcceptBackoff {
    /// The first pause: short, because descriptors often free up within milliseconds.
    static let initialDelay = 0.01
    /// The longest pause: a connection waits at most this long in the backlog once descriptors
    /// are free again.
    static let maximumDelay = 1.0
    /// At most one log line per this many seconds, however many accepts fail.
    static let logInterval = 1.0

    private(set) var delay: Double = 0
    /// When the listeners go back into the poll set; nil while accepting.
    private(set) var pausedUntil: Double?
    private var failuresSinceLog = 0
    private var lastLog = -Double.infinity

    /// An accept failed at `now`: pause (longer than last time). Returns a line to log when one
    /// is due.
    mutating func failed(at now: Double, reason: String) -> String? {
        delay = min(Self.maximumDelay, max(Self.initialDelay, delay * 2))
        pausedUntil = now + delay
        failuresSinceLog += 1
        guard now - lastLog >= Self.logInterval else { return nil }
        let count = failuresSinceLog
        failuresSinceLog = 0
        lastLog = now
        return "harrec: accept failed: \(reason)" + (count > 1 ? " (\(count) times since the last report)" : "") +
            "; new connections wait in the backlog, next try in \(Int((delay * 1000).rounded())) ms (raise the open-file limit: ulimit -n)"
    }

    /// Whether the pause is over at `now`.
    func shouldResume(at now: Double) -> Bool {
        guard let pausedUntil else { return false }
        return now >= pausedUntil
    }

    /// The listeners are back in the poll set.
    mutating func resumed() { pausedUntil = nil }

    /// A connection was accepted: descriptors are available again.
    mutating func accepted() { delay = 0 }
}
