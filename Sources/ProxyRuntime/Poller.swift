import CSystemShims
import Glibc

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

/// Which readiness API a poller uses: epoll (the default on Linux), or poll(2), the portable one,
/// chosen with `HARREC_POLLER=poll` so the code that runs where epoll does not exist is tested here.
public enum PollerBackend: String, Sendable {
    case epoll
    case poll

    /// `HARREC_POLLER`'s value: epoll when unset or empty, nil when it names no backend.
    public static var fromEnvironment: PollerBackend? {
        guard let raw = getenv("HARREC_POLLER"), raw.pointee != 0 else { return .epoll }
        return PollerBackend(rawValue: String(cString: raw).lowercased())
    }
}

/// The readiness notifier of one event loop, and the only type that calls epoll, poll, eventfd or
/// installs the signal handlers: a kqueue backend would be one more case here and nothing else.
///
/// Descriptors are registered with a token (level-triggered); `wait` reports tokens. A waker
/// (eventfd) under `wakeToken` lets other threads interrupt a wait.
final class Poller {
    /// The token of the waker.
    static let wakeToken: UInt64 = 0
    /// Events taken from the kernel per wait.
    static let batchSize = 256

    /// The backend's own state.
    private enum State {
        case epoll(fd: Int32)
        /// Every registration; `wait` builds the pollfd array from it (O(descriptors) per wait,
        /// which is what poll costs anyway).
        case poll(registrations: [Int32: (token: UInt64, interest: Interest)])
    }

    private var state: State
    /// epoll's result buffer, outside `state` so a wait writes into it without copying it.
    private var events: [epoll_event] = []
    private let wakeFD: Int32
    private var signalFD: Int32 = -1

    init(backend: PollerBackend = .epoll) throws {
        switch backend {
        case .epoll:
            let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard fd >= 0 else { throw SocketError("epoll_create1") }
            state = .epoll(fd: fd)
            events = [epoll_event](repeating: epoll_event(), count: Poller.batchSize)
        case .poll:
            state = .poll(registrations: [:])
        }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw SocketError("eventfd") }
        add(wakeFD, token: Self.wakeToken, interest: .read)
    }

    private static func epollMask(_ interest: Interest) -> UInt32 {
        var mask: UInt32 = 0
        if interest.contains(.read) { mask |= EPOLLIN.rawValue }
        if interest.contains(.write) { mask |= EPOLLOUT.rawValue }
        return mask
    }

    private static func pollMask(_ interest: Interest) -> Int16 {
        var mask: Int16 = 0
        if interest.contains(.read) { mask |= Int16(POLLIN) }
        if interest.contains(.write) { mask |= Int16(POLLOUT) }
        return mask
    }

    /// Starts watching `fd` for `interest` (an empty interest still reports hang-ups and errors).
    func add(_ fd: Int32, token: UInt64, interest: Interest) {
        register(fd, token: token, interest: interest, operation: EPOLL_CTL_ADD)
    }

    /// Changes what `fd` (already added) is watched for.
    func modify(_ fd: Int32, token: UInt64, interest: Interest) {
        register(fd, token: token, interest: interest, operation: EPOLL_CTL_MOD)
    }

    /// Stops watching `fd` (call before closing it).
    func remove(_ fd: Int32) {
        switch state {
        case .epoll(let epollFD): epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        case .poll: updateRegistrations { $0[fd] = nil }
        }
    }

    private func register(_ fd: Int32, token: UInt64, interest: Interest, operation: Int32) {
        switch state {
        case .epoll(let epollFD):
            var event = epoll_event()
            event.events = Self.epollMask(interest)
            event.data.u64 = token
            epoll_ctl(epollFD, operation, fd, &event)
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
            let count = Glibc.poll(&descriptors, nfds_t(descriptors.count), milliseconds)
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
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Clears the waker after it fired.
    func drainWake() {
        var value: UInt64 = 0
        _ = read(wakeFD, &value, 8)
    }

    /// Reports SIGINT, SIGTERM and SIGHUP under `token` (one poller per process does this).
    func watchShutdownSignals(token: UInt64) throws {
        let fd = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard fd >= 0 else { throw SocketError("eventfd") }
        add(fd, token: token, interest: .read)
        signalFD = fd
        guard harrec_install_shutdown_signals(fd) == 0 else { throw SocketError("sigaction") }
    }

    /// How many shutdown signals arrived since the last call (0 when none).
    func takeSignalCount() -> Int {
        var count: UInt64 = 0
        return read(signalFD, &count, 8) == 8 ? Int(count) : 0
    }
}
