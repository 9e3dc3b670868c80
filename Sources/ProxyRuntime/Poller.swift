import CSystemShims
#if canImport(Glibc)
import Glibc
private let systemPoll = Glibc.poll
#elseif canImport(Darwin)
import Darwin
private let systemPoll = Darwin.poll
#endif

/// What a loop waits for on a descriptor.
struct Interest: OptionSet, Equatable {
    let rawValue: UInt32
    static let read = Interest(rawValue: 1)
    static let write = Interest(rawValue: 2)
}

/// What a descriptor is ready for. `hangup` and `error` come whatever the interest (epoll cannot
/// mask them), so a socket that hung up must leave the poller once nothing is left to write.
struct Readiness: OptionSet {
    let rawValue: UInt32
    static let read = Readiness(rawValue: 1)
    static let write = Readiness(rawValue: 2)
    static let hangup = Readiness(rawValue: 4)
    static let error = Readiness(rawValue: 8)
}

/// Which readiness API a poller uses: epoll (the default on Linux), or poll(2), the portable one
/// and the only one elsewhere, chosen with `HARREC_POLLER=poll` so the code that runs where epoll
/// does not exist is tested here.
public enum PollerBackend: String, Sendable {
    case epoll
    case poll

    /// epoll where the system has it, else poll.
    public static var platformDefault: PollerBackend {
        #if os(Linux)
        .epoll
        #else
        .poll
        #endif
    }

    /// `HARREC_POLLER`'s value: the platform's default when unset or empty, nil when it names no
    /// backend this system has.
    public static var fromEnvironment: PollerBackend? {
        guard let raw = getenv("HARREC_POLLER"), raw.pointee != 0 else { return platformDefault }
        let backend = PollerBackend(rawValue: String(cString: raw).lowercased())
        #if !os(Linux)
        if backend == .epoll { return nil }
        #endif
        return backend
    }
}

/// The readiness notifier of one event loop, and the only type that calls epoll or poll, or opens
/// wakers and installs the signal handlers (through the platform file, CSystemShims): a kqueue
/// backend would be one more case here and nothing else.
///
/// Descriptors are registered with a token (level-triggered); `wait` reports tokens. A waker
/// (an eventfd, or a pipe) under `wakeToken` lets other threads interrupt a wait.
final class Poller {
    /// The token of the waker.
    static let wakeToken: UInt64 = 0
    /// Events taken from the kernel per wait.
    static let batchSize = 256

    /// The backend's own state.
    private enum State {
        #if os(Linux)
        case epoll(fd: Int32)
        #endif
        /// Every registration; `wait` builds the pollfd array from it (O(descriptors) per wait,
        /// which is what poll costs anyway).
        case poll(registrations: [Int32: (token: UInt64, interest: Interest)])
    }

    private var state: State
    #if os(Linux)
    /// epoll's result buffer, outside `state` so a wait writes into it without copying it.
    private var events: [epoll_event] = []
    #endif
    /// The waker's descriptors: watched, and fired (the same eventfd on Linux).
    private var waker: (watched: Int32, fired: Int32) = (-1, -1)
    private var signals: (watched: Int32, fired: Int32) = (-1, -1)

    init(backend: PollerBackend = .platformDefault) throws {
        switch backend {
        case .epoll:
            #if os(Linux)
            let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard fd >= 0 else { throw SocketError("epoll_create1") }
            state = .epoll(fd: fd)
            events = [epoll_event](repeating: epoll_event(), count: Poller.batchSize)
            #else
            throw SocketError("epoll", code: ENOSYS)
            #endif
        case .poll:
            state = .poll(registrations: [:])
        }
        waker = try Self.openWaker()
        add(waker.watched, token: Self.wakeToken, interest: .read)
    }

    private static func openWaker() throws -> (watched: Int32, fired: Int32) {
        var fds: [Int32] = [-1, -1]
        guard harrec_waker_open(&fds) == 0 else { throw SocketError("waker") }
        return (fds[0], fds[1])
    }

    #if os(Linux)
    private static func epollMask(_ interest: Interest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= EPOLLIN.rawValue }
        if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
        return mask
    }
    #endif

    private static func pollMask(_ interest: Interest) -> Int16 {
        var mask: Int16 = 0
        if interest.contains(.read) { mask |= Int16(POLLIN) }
        if interest.contains(.write) { mask |= Int16(POLLOUT) }
        return mask
    }

    /// Starts watching `fd` for `interest` (an empty interest still reports hang-ups and errors).
    func add(_ fd: Int32, token: UInt64, interest: Interest) {
        register(fd, token: token, interest: interest, adding: true)
    }

    /// Changes what `fd` (already added) is watched for.
    func modify(_ fd: Int32, token: UInt64, interest: Interest) {
        register(fd, token: token, interest: interest, adding: false)
    }

    /// Stops watching `fd` (call before closing it).
    func remove(_ fd: Int32) {
        switch state {
        #if os(Linux)
        case .epoll(let epollFD): epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        #endif
        case .poll: updateRegistrations { $0[fd] = nil }
        }
    }

    private func register(_ fd: Int32, token: UInt64, interest: Interest, adding: Bool) {
        switch state {
        #if os(Linux)
        case .epoll(let epollFD):
            var event = epoll_event()
            event.events = Self.epollMask(interest)
            event.data.u64 = token
            epoll_ctl(epollFD, adding ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event)
        #endif
        case .poll:
            updateRegistrations { $0[fd] = (token, interest) }
        }
    }

    /// Changes the poll backend's registrations in place: the state lets go of its copy first, so
    /// the dictionary is not copied whole on every change.
    private func updateRegistrations(_ change: (inout [Int32: (token: UInt64, interest: Interest)]) -> Void) {
        guard case .poll(var registrations) = state else { return }
        state = .poll(registrations: [:])
        change(&registrations)
        state = .poll(registrations: registrations)
    }

    /// Waits up to `milliseconds` and reports each ready token. Returns false when waiting failed
    /// (other than by a signal), which ends the loop.
    func wait(milliseconds: Int32, _ ready: (UInt64, Readiness) -> Void) -> Bool {
        switch state {
        #if os(Linux)
        case .epoll(let epollFD):
            let count = epoll_wait(epollFD, &events, Int32(events.count), milliseconds)
            if count < 0 { return harrec_errno() == EINTR }
            for index in 0..<Int(count) {
                let mask = events[index].events
                var readiness: Readiness = []
                if mask & EPOLLIN.rawValue != 0 { readiness.insert(.read) }
                if mask & EPOLLOUT.rawValue != 0 { readiness.insert(.write) }
                if mask & EPOLLHUP.rawValue != 0 { readiness.insert(.hangup) }
                if mask & EPOLLERR.rawValue != 0 { readiness.insert(.error) }
                ready(events[index].data.u64, readiness)
            }
            return true
        #endif
        case .poll(let registrations):
            // A snapshot: `ready` may add, change or remove registrations (and reuse a closed
            // descriptor's number); tokens of connections gone by then are ignored by the loop.
            var descriptors: [pollfd] = []
            var tokens: [UInt64] = []
            descriptors.reserveCapacity(registrations.count)
            tokens.reserveCapacity(registrations.count)
            for (fd, registration) in registrations {
                descriptors.append(pollfd(fd: fd, events: Self.pollMask(registration.interest), revents: 0))
                tokens.append(registration.token)
            }
            let count = systemPoll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if count < 0 { return harrec_errno() == EINTR }
            for index in descriptors.indices where descriptors[index].revents != 0 {
                let mask = Int32(descriptors[index].revents)
                var readiness: Readiness = []
                if mask & Int32(POLLIN) != 0 { readiness.insert(.read) }
                if mask & Int32(POLLOUT) != 0 { readiness.insert(.write) }
                if mask & Int32(POLLHUP) != 0 { readiness.insert(.hangup) }
                if mask & (Int32(POLLERR) | Int32(POLLNVAL)) != 0 { readiness.insert(.error) }
                ready(tokens[index], readiness)
            }
            return true
        }
    }
    /// Interrupts a `wait` on another thread. Safe from any thread.
    func wake() {
        harrec_waker_fire(waker.fired)
    }

    /// Clears the waker after it fired.
    func drainWake() {
        _ = harrec_waker_take(waker.watched)
    }

    /// Reports SIGINT, SIGTERM and SIGHUP under `token` (one poller per process does this).
    func watchShutdownSignals(token: UInt64) throws {
        signals = try Self.openWaker()
        add(signals.watched, token: token, interest: .read)
        guard harrec_install_shutdown_signals(signals.fired) == 0 else { throw SocketError("sigaction") }
    }

    /// How many shutdown signals arrived since the last call (0 when none).
    func takeSignalCount() -> Int {
        signals.watched < 0 ? 0 : Int(harrec_waker_take(signals.watched))
    }
}
