import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MockResponse {
    /// When set, the task fails with this `URLError` code (after `delay`) instead of getting a
    /// response: a transport failure such as `.notConnectedToInternet` or `.timedOut`.
    public var failure: URLError.Code? {
        get { failureCode.flatMap { URLError.Code(rawValue: $0.rawValue) } }
        set { failureCode = newValue.map { MockFailureCode(rawValue: $0.rawValue) } }
    }

    /// When set, the response is cut short: its head and `body` (what arrived) are delivered,
    /// then the task fails with this `URLError` code, as when the connection breaks mid-body
    /// (`.networkConnectionLost`) or the app stopped waiting (`.timedOut`). `harrec generate`
    /// emits it for a recorded response with an `_error`.
    public var interruption: URLError.Code? {
        get { interruptionCode.flatMap { URLError.Code(rawValue: $0.rawValue) } }
        set { interruptionCode = newValue.map { MockFailureCode(rawValue: $0.rawValue) } }
    }

    /// A transport failure: the task fails with `URLError(code)` after `delay` seconds (at once
    /// when nil), and no response is delivered. `harrec generate` emits these for recorded
    /// failures (a refused connection, a DNS failure, a timeout, a reset, a TLS trust failure).
    public static func failure(_ code: URLError.Code, delay: TimeInterval? = nil) -> MockResponse {
        .failure(code: MockFailureCode(rawValue: code.rawValue), delay: delay)
    }
}
