import CSystemShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Threads without Foundation's `Thread`: harrec links FoundationEssentials only, which has none
// (and Foundation proper maps ICU and more into every process, a cost the export's peak RSS shows).

/// Starts a joinable thread running `body`; nil when the system refuses.
public func startThread(named name: String, _ body: @escaping () -> Void) -> pthread_t? {
    final class Box {
        let name: String
        let body: () -> Void
        init(_ name: String, _ body: @escaping () -> Void) { (self.name, self.body) = (name, body) }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        // Named from inside: Darwin names only the calling thread.
        box.name.withCString { _ = harrec_name_this_thread($0) }
        box.body()
        return nil
    }, box)
    if result != 0 {
        Unmanaged<Box>.fromOpaque(box).release()
        return nil
    }
    return thread
}

/// Starts a thread nobody joins (its resources go when it returns); false when the system refuses.
@discardableResult
public func startDetachedThread(named name: String, _ body: @escaping () -> Void) -> Bool {
    guard let thread = startThread(named: name, body) else { return false }
    pthread_detach(thread)
    return true
}

/// Sleeps the calling thread for `seconds`.
public func sleepThread(seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
