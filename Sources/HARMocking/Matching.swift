// A live URLRequest as the shared matcher (HARScenarios/RequestMatching.swift) sees it, and host
// remaps.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A live URLRequest as matching sees it (`input`), with the request itself for predicates.
struct RequestSnapshot {
    var input: MatchInput
    /// The request, its body in `httpBody` (for predicates).
    var request: URLRequest

    init(_ request: URLRequest) {
        let body = RequestSnapshot.bodyBytes(of: request)
        input = MatchInput(method: request.httpMethod ?? "GET", url: request.url?.absoluteString ?? "",
                           headers: request.allHTTPHeaderFields ?? [:], body: body)
        var whole = request
        if request.httpBody == nil && request.httpBodyStream != nil {
            whole.httpBodyStream = nil
            whole.httpBody = Data(body)
        }
        self.request = whole
    }

    var method: String { input.method }
    var url: String { input.url }
    var parts: MockURLParts? {
        get { input.parts }
        set { input.parts = newValue }
    }
    var queryItems: [(name: String, value: String?)] { input.queryItems }
    var body: [UInt8] { input.body }
    var headers: [String: String] { input.headers }
    var remappedHost: String? {
        get { input.remappedHost }
        set { input.remappedHost = newValue }
    }

    /// The body from `httpBody`, else read from `httpBodyStream`: URLSession hands protocols the
    /// body as a stream (always on Apple platforms, for some task kinds on Linux).
    static func bodyBytes(of request: URLRequest) -> [UInt8] {
        if let data = request.httpBody { return [UInt8](data) }
        guard let stream = request.httpBodyStream else { return [] }
        var bytes: [UInt8] = []
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return bytes
    }

    /// The request as predicates see it.
    var mockRequest: MockRequest { input.mockRequest }

    /// "GET https://host/path?query", for messages.
    var requestLine: String { input.requestLine }
}

extension RequestMatcher {
    static func evaluate(_ condition: RequestCondition, headers: [HeaderCondition] = [],
                         against request: RequestSnapshot) -> MatchReport {
        evaluate(condition, headers: headers, against: request.input)
    }
}

