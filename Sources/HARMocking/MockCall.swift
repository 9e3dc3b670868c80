// One request a NetworkMock saw.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request a `NetworkMock` instance saw, whole, with what it got.
public struct MockCall: @unchecked Sendable {
    /// The request as the app sent it. Its body is in `httpBody` even when the app streamed it
    /// (`httpBodyStream`, `uploadTask`).
    public var request: URLRequest
    /// Index into the scenario's `responseQueue` of the item that answered; nil when none matched.
    public var itemIndex: Int?
    /// The item that answered; nil when none matched.
    public var item: ResponseQueueItem?
    /// What was served: a response, or a `.failure`; nil when no item matched (the task then
    /// failed with `UnmatchedRequestError`).
    public var response: MockResponse?

    /// The method, uppercased ("GET" when the request has none).
    public var method: String { (request.httpMethod ?? "GET").uppercased() }
    /// The absolute URL.
    public var url: URL? { request.url }
    /// The body bytes (empty when there was none).
    public var body: Data { request.httpBody ?? Data() }
    /// The value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? { request.value(forHTTPHeaderField: name) }
}
