// A scenario served without URLSession, for code that takes an injected client.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serves a scenario to code that sends requests through an injected client instead of a
/// URLSession (a `MockHTTPClient`-style seam):
///
/// ```swift
/// let transport = ScenarioTransport(OrderFlowHTTPScenario())
/// let (data, response) = try await transport.send(request)
/// ```
///
/// The same queues, ordered repeats, matching, delays, failures and diagnostics as `NetworkMock`:
/// an unmatched request throws `UnmatchedRequestError`, a `.failure` item (and a response with an
/// `interruption`) throws its `URLError`,
/// and a delay longer than the request's `timeoutInterval` throws `URLError(.timedOut)`.
public final class ScenarioTransport: Sendable {
    let server: MockServer

    /// A transport that serves `scenario`.
    public init(_ scenario: any Scenario) {
        server = MockServer(owner: "ScenarioTransport", activation: "ScenarioTransport(_:)")
        server.activate(scenario.responseQueue.map { MockServer.Entry(item: $0) },
                        source: "scenario \"\(scenario.scenarioId.rawValue)\"")
    }

    /// The answer to `request`: the first matching item with uses left, after its delay.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let url = request.url ?? URL(string: "http://invalid.invalid/")!
        switch server.decide(request) {
        case .fail(let error):
            throw error
        case .serve(_, let response):
            let delay = max(0, response.delay ?? 0)
            let timeout = request.timeoutInterval
            if timeout > 0 && delay > timeout {
                try await Task.sleep(nanoseconds: UInt64(timeout * 1e9))
                throw MockServer.urlError(.timedOut, url: url)
            }
            if delay > 0 { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
            if let code = response.failure { throw MockServer.urlError(code, url: url) }
            let body = try response.body.resolvedData()
            guard let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1",
                                             headerFields: MockServer.headerFields(response.headers)) else {
                throw MockServer.urlError(.badServerResponse, url: url)
            }
            // A response cut short: URLSession's async API throws once the connection breaks.
            if let code = response.interruption { throw MockServer.urlError(code, url: url) }
            return (body, http)
        }
    }

    /// Every request sent, in order, whole, with the item that answered and what it served.
    public var calls: [MockCall] { server.calls }

    /// Items never served, then `.once`/`.times` items not used up (as `NetworkMock.unusedItems()`).
    public func unusedItems() -> [ResponseQueueItem] { server.unusedItems() }

    /// Requests answered without meeting their item's `expectations`, in words.
    public var expectationFailures: [String] { server.expectationFailures }

    /// Every queue back to its first item.
    public func reset() { server.reset() }
}
