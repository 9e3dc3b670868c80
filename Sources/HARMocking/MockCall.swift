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
    /// The 0-based index of the item that answered in the mock's queue (its stubs first, then the
    /// scenario's `responseQueue`), for code: `scenario.responseQueue[call.itemIndex!]` when no
    /// stubs were added. nil when none matched. Messages and labels count from 1: see `itemNumber`.
    public var itemIndex: Int?
    /// The 1-based number of the item that answered (`itemIndex + 1`), as messages write it
    /// (`#3`); nil when none matched. A generated item's label (`#3 GET /v1/feed`) has the same
    /// number unless stubs were added in front of it.
    public var itemNumber: Int? { itemIndex.map { $0 + 1 } }
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
