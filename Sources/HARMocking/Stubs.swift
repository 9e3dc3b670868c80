// A short way to write stubs by hand, beside generated scenarios (OHHTTPStubs-style):
// `mock.stub(.get("/v1/me")) { .json(["id": 7]) }`.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestCondition {
    /// A condition on method and path, any scheme and host (unless `host` is given). A path with
    /// `{name}` segments is a template (`/v1/orders/{id}`). Query items are not compared unless
    /// `query(_:_:)` requires some; others may come too.
    public static func request(_ method: String, _ path: String, host: String = "*") -> RequestCondition {
        var condition = RequestCondition(method: method.uppercased(), scheme: "*", host: host, path: path,
                                         unlistedQueryItems: .allowed)
        if path.contains("{") { condition.pathPattern = .template(path) }
        return condition
    }

    /// `GET path` on any host.
    public static func get(_ path: String, host: String = "*") -> RequestCondition { request("GET", path, host: host) }
    /// `POST path` on any host.
    public static func post(_ path: String, host: String = "*") -> RequestCondition { request("POST", path, host: host) }
    /// `PUT path` on any host.
    public static func put(_ path: String, host: String = "*") -> RequestCondition { request("PUT", path, host: host) }
    /// `PATCH path` on any host.
    public static func patch(_ path: String, host: String = "*") -> RequestCondition { request("PATCH", path, host: host) }
    /// `DELETE path` on any host.
    public static func delete(_ path: String, host: String = "*") -> RequestCondition { request("DELETE", path, host: host) }
    /// Any method, a path matching the regular expression `pattern` (whole path), any host.
    public static func path(regex pattern: String, method: String = "*", host: String = "*") -> RequestCondition {
        var condition = RequestCondition(method: method, scheme: "*", host: host, path: pattern, unlistedQueryItems: .allowed)
        condition.pathPattern = .regex(pattern)
        return condition
    }

    /// This condition, also requiring header `name` with `value` (any value when nil).
    public func header(_ name: String, _ value: String? = nil) -> RequestCondition {
        var copy = self
        copy.headers.append(value.map { .equals(name, $0) } ?? .present(name))
        return copy
    }

    /// This condition, also requiring the query item `name` with `value` (any value when nil).
    public func query(_ name: String, _ value: String? = nil) -> RequestCondition {
        var copy = self
        copy.query.append(value.map { .equals(name, $0) } ?? .present(name))
        return copy
    }

    /// This condition, also requiring a JSON body that contains `json` (`.jsonSubset`).
    public func jsonBody(containing json: String) -> RequestCondition {
        var copy = self
        copy.body = .jsonSubset(json)
        return copy
    }

    /// This condition, also requiring `test` to hold for the whole request (`$0.header("X-Cart")`,
    /// `$0.body`, `$0.url`).
    public func matching(_ name: String = "predicate", _ test: @escaping @Sendable (MockRequest) -> Bool) -> RequestCondition {
        var copy = self
        copy.predicate = RequestPredicate(name, test)
        return copy
    }
}

extension MockResponse {
    /// `value` (an array or dictionary of JSON values) as a JSON body with sorted keys.
    public static func json(_ value: Any, status: Int = 200, headers: [HTTPHeader] = []) -> MockResponse {
        let data = (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])) ?? Data("null".utf8)
        return MockResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")] + headers,
                            body: .text(String(decoding: data, as: UTF8.self)))
    }

    /// An `Encodable` value as a JSON body with sorted keys.
    public static func json<Value: Encodable>(encoding value: Value, status: Int = 200,
                                              headers: [HTTPHeader] = []) throws -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return MockResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")] + headers,
                            body: .text(String(decoding: data, as: UTF8.self)))
    }

    /// A text body (`text/plain; charset=utf-8` unless `contentType` says otherwise).
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> MockResponse {
        MockResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)], body: .text(text))
    }

    /// A body of bytes.
    public static func data(_ data: Data, status: Int = 200, contentType: String = "application/octet-stream") -> MockResponse {
        MockResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)],
                     body: data.isEmpty ? .empty : .base64(data.base64EncodedString()))
    }

    /// A status and no body.
    public static func status(_ code: Int, headers: [HTTPHeader] = []) -> MockResponse {
        MockResponse(status: code, headers: headers)
    }

    /// This response, answered after `seconds`.
    public func delay(_ seconds: TimeInterval) -> MockResponse {
        var copy = self
        copy.delay = seconds
        return copy
    }

    /// This response with its body delivered at about `bytesPerSecond`: a slow network for
    /// progress and cancellation tests. On Apple platforms the body comes in tenth-of-a-second
    /// chunks; on Linux in one piece when the whole body would have arrived (FoundationNetworking
    /// keeps only the last chunk a custom protocol delivers to a completion handler).
    public func bandwidth(bytesPerSecond: Int) -> MockResponse {
        var copy = self
        copy.bytesPerSecond = max(1, bytesPerSecond)
        return copy
    }

    /// This response with one more header.
    public func header(_ name: String, _ value: String) -> MockResponse {
        var copy = self
        copy.headers.append(HTTPHeader(name, value))
        return copy
    }
}

extension NetworkMock {
    /// A mock with no scenario, for stubs only.
    public convenience init() {
        self.init(StubsOnly())
    }

    private struct StubsOnly: Scenario {
        var scenarioId: ScenarioIdentifier { "stubs" }
        var responseQueue: [ResponseQueueItem] { [] }
    }

    /// Adds a stub that answers `condition` with `response()`, evaluated for each request. Stubs
    /// come before the scenario's items, the latest first, so a stub overrides what was recorded.
    @discardableResult
    public func stub(_ condition: RequestCondition, _ repeatability: Repeatability = .always, label: String? = nil,
                     response: @escaping @Sendable () -> MockResponse) -> ResponseQueueItem {
        stub(condition, repeatability, label: label, responder: { _ in response() })
    }

    /// Adds a stub whose response depends on the request (its body included).
    @discardableResult
    public func stub(_ condition: RequestCondition, _ repeatability: Repeatability = .always, label: String? = nil,
                     responder: @escaping @Sendable (URLRequest) -> MockResponse) -> ResponseQueueItem {
        let path = condition.pathPattern.map(\.description) ?? condition.path
        let item = ResponseQueueItem(condition: condition, response: MockResponse(status: 200), repeatability: repeatability,
                                     label: label ?? "stub \(condition.method) \(path)")
        mockServer.addStub(MockServer.Entry(item: item, responder: responder))
        return item
    }
}
