// The URLProtocol that serves generated scenarios.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The URLProtocol that serves the active scenario. Register it on a configuration, never globally:
/// `configuration.protocolClasses = [NetworkMock.self] + (configuration.protocolClasses ?? [])`.
/// It does not handle ws/wss. Unmatched requests fail with `UnmatchedRequestError`.
///
/// State is class-level (one active scenario per process, shared by subclasses) and thread-safe:
/// each request takes the first item in queue order that matches and still has uses left.
open class NetworkMock: URLProtocol {
    static let server = MockServer(owner: "NetworkMock", activation: "NetworkMock.activate(_:)")

    /// Cleared by `stopLoading`, so a cancelled or timed-out task gets no late callbacks.
    private let loading = Locked(false)

    /// Makes `scenario` the one served (resets call counts).
    public static func activate(_ scenario: any Scenario) {
        server.activate(scenario.responseQueue.map { MockServer.Entry(item: $0) },
                        source: "scenario \"\(scenario.scenarioId.rawValue)\"")
    }

    /// Stops serving (requests then fail as unmatched).
    public static func deactivate() { server.deactivate() }

    /// Every request seen since `activate`, in arrival order.
    public static var calls: [RequestResponseItem] { server.calls }

    /// Items with `.once` / `.times(n)` that were not used up; empty when all were.
    public static func unusedItems() -> [ResponseQueueItem] { server.unusedItems() }

    /// Convenience: a configuration with NetworkMock first.
    public static func configuration(base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        base.protocolClasses = [NetworkMock.self] + (base.protocolClasses ?? []).filter { $0 != NetworkMock.self }
        return base
    }

    // MARK: URLProtocol

    /// http and https only: WebSocket traffic goes to the app's `WebSocketSimulating` stand-in.
    open override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// The request unchanged: matching works on the request as the app built it.
    open override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Serves the first matching item with uses left (after its delay), or fails with
    /// `UnmatchedRequestError`.
    open override func startLoading() {
        loading.withLock { $0 = true }
        Self.server.startLoading(self, loading: loading)
    }

    /// Drops a pending delayed response.
    open override func stopLoading() {
        loading.withLock { $0 = false }
    }
}
