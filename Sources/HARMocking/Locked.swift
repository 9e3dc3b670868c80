import Foundation

/// A value behind an NSLock. URLSession calls protocols on its own threads, so every piece of
/// state a URLProtocol touches lives in one of these. NSLock rather than `Mutex` because `Mutex`
/// needs iOS 18 / macOS 15 and generated scenarios run in apps with older deployment targets.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var snapshot: Value { withLock { $0 } }
}
