// The URLProtocol that serves generated scenarios, and the mocks tests create from it.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serves scenarios to URLSession.
///
/// **One mock per test** (recommended): each instance serves its own scenario to the sessions
/// made from its configurations, independently of every other instance, on any thread. Tests that
/// run at the same time (Swift Testing's default) never see each other's responses.
///
/// ```swift
/// let mock = NetworkMock(OrderFlowHTTPScenario())
/// let session = URLSession(configuration: mock.configuration())
/// // ... exercise the app ...
/// XCTAssertEqual(mock.unusedItems(), [])     // every item was served
/// mock.calls                                  // every request, whole, with what it got
/// ```
///
/// Keep a reference to the mock while its sessions are used: once it is gone its sessions are
/// still answered, but their calls are no longer kept.
///
/// **Process-wide** (the original API): `NetworkMock.activate(_:)` serves one scenario to every
/// session whose configuration has `NetworkMock.self` (or came from `NetworkMock.configuration()`).
///
/// Either way the protocol is registered on a configuration, never globally, handles only http
/// and https (WebSocket traffic goes to the app's `WebSocketSimulating` stand-in), and fails
/// unmatched requests with `UnmatchedRequestError`. Each request takes the first item in queue
/// order that matches and still has uses left.
open class NetworkMock: URLProtocol {
    static let server = MockServer(owner: "NetworkMock", activation: "NetworkMock.activate(_:)")

    /// Cleared by `stopLoading`, so a cancelled or timed-out task gets no late callbacks.
    private let loading = Locked(false)
    /// Set on instances made with `init(_:)`: the mock's own server.
    private var instanceServer: MockServer?
    /// False for the handles `current` gives out.
    private var ownsServer = true

    /// The route of requests this class serves: the process-wide server for `NetworkMock` itself
    /// (and subclasses a test defines), a mock's own for the classes its configurations name.
    class var route: MockRoute { MockRoute(server: NetworkMock.server, configuration: nil) }

    // MARK: - Instances

    /// A mock that serves `scenario` to the sessions made from its `configuration(base:)`, and to
    /// no other session.
    public convenience init(_ scenario: any Scenario) {
        self.init(request: URLRequest(url: URL(string: "about:blank")!), cachedResponse: nil, client: nil)
        let server = MockServer(owner: "NetworkMock", activation: "NetworkMock(_:)")
        server.activate(scenario.responseQueue.map { MockServer.Entry(item: $0) },
                        source: "scenario \"\(scenario.scenarioId.rawValue)\"")
        instanceServer = server
    }

    deinit {
        if ownsServer { instanceServer?.state.withLock { $0.orphaned = true; $0.calls = [] } }
    }

    var mockServer: MockServer {
        guard let instanceServer else {
            preconditionFailure("NetworkMock: this instance was made by URLSession; create mocks with NetworkMock(_:)")
        }
        return instanceServer
    }

    /// A configuration whose sessions this mock answers: `base` with a protocol class of this
    /// mock's first in `protocolClasses`. Each call makes a new one; all of them share the mock's
    /// queues and calls. The session's `timeoutIntervalForRequest` applies to delays.
    public func configuration(base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        let protocolClass: AnyClass = MockRoutes.register(MockRoute(server: mockServer, configuration: base)).protocolClass
        base.protocolClasses = [protocolClass] + (base.protocolClasses ?? []).filter { !($0 is NetworkMock.Type) }
        return base
    }

    /// Every request this mock saw, in arrival order, whole (method, URL, headers and body, also
    /// when the app streamed it), with the item that answered and what it served.
    public var calls: [MockCall] { mockServer.calls }

    /// Items this mock never served, whatever their repeatability, followed by `.once` and
    /// `.times(n)` items not used up since the last `reset()`, in queue order. Empty when the app
    /// made every recorded request.
    public func unusedItems() -> [ResponseQueueItem] { mockServer.unusedItems() }

    /// `unusedItems()` with each item's 0-based index in this mock's queue (stubs first), for
    /// reports that number items (`HARMockingTesting`).
    package func unusedEntries() -> [(index: Int, item: ResponseQueueItem)] { mockServer.unusedEntries() }

    /// How many items this mock's queue has, stubs included.
    package var itemCount: Int { mockServer.itemCount }

    /// One text per request that an item answered although it did not meet the item's
    /// `expectations` (what differed, part by part). `HARMockingTesting` reports these as failures.
    public var expectationFailures: [String] { mockServer.expectationFailures }

    /// The mock of the current task and its child tasks, inside `withCurrent(_:)` or the
    /// `.mocking(...)` test trait (`HARMockingTesting`); nil elsewhere. Each read gives a handle to
    /// the same mock (the same queues and calls).
    public static var current: NetworkMock? {
        currentServer.map { NetworkMock(sharing: $0) }
    }

    /// Runs `body` with `mock` as `NetworkMock.current`.
    public static func withCurrent<R>(_ mock: NetworkMock, _ body: () async throws -> R) async rethrows -> R {
        try await $currentServer.withValue(mock.mockServer) { try await body() }
    }

    /// The server behind `current` (a task-local value must be Sendable; a URLProtocol is not).
    @TaskLocal static var currentServer: MockServer?

    /// A handle to an existing mock's server (its deinit does not release the server).
    private convenience init(sharing server: MockServer) {
        self.init(request: URLRequest(url: URL(string: "about:blank")!), cachedResponse: nil, client: nil)
        instanceServer = server
        ownsServer = false
    }

    /// Sends every queue back to its first item (`.once` items answer again). `calls` are kept.
    public func reset() { mockServer.reset() }

    /// Answers requests sent to `target` (its scheme, host and port, and its path as a prefix)
    /// from the items recorded for `host`, whatever their scheme and port: a scenario recorded
    /// against `api.example.com` serves an app pointed at `http://127.0.0.1:8080` or at a staging
    /// host. `calls` keep the URLs the app used.
    public func remap(host: String, to target: URL) {
        guard let remap = HostRemap(recordedHost: host, target: target.absoluteString) else {
            preconditionFailure("NetworkMock.remap: \(target) is not an absolute http or https URL")
        }
        mockServer.state.withLock { s in
            s.remaps.removeAll { $0.scheme == remap.scheme && $0.host == remap.host && $0.port == remap.port
                && $0.pathPrefix == remap.pathPrefix }
            s.remaps.append(remap)
        }
    }

    // MARK: - Process-wide

    /// Makes `scenario` the one served process-wide (resets call counts).
    public static func activate(_ scenario: any Scenario) {
        server.activate(scenario.responseQueue.map { MockServer.Entry(item: $0) },
                        source: "scenario \"\(scenario.scenarioId.rawValue)\"")
    }

    /// Stops serving process-wide (requests then fail as unmatched).
    public static func deactivate() { server.deactivate() }

    /// Every request seen process-wide since `activate`, in arrival order.
    public static var calls: [RequestResponseItem] { server.callRecords }

    /// Items never served since `activate`, whatever their repeatability, followed by `.once` and
    /// `.times(n)` items not used up; empty when every item was served.
    public static func unusedItems() -> [ResponseQueueItem] { server.unusedItems() }

    /// A configuration served by the process-wide scenario (`activate(_:)`); its
    /// `timeoutIntervalForRequest` applies to delays.
    public static func configuration(base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        let protocolClass: AnyClass = MockRoutes.register(MockRoute(server: server, configuration: base)).protocolClass
        base.protocolClasses = [protocolClass] + (base.protocolClasses ?? []).filter { !($0 is NetworkMock.Type) }
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
        let route = type(of: self).route
        route.server.startLoading(self, loading: loading, timeout: route.timeout(for: request))
    }

    /// Drops a pending delayed response.
    open override func stopLoading() {
        loading.withLock { $0 = false }
    }
}
