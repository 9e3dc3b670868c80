// Matching a live URLRequest against a RequestCondition, part by part, so that a miss can say
// which part differed.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request header an item requires (HAR replay only; generated conditions carry no headers).
struct HeaderCondition: Sendable, Equatable {
    var name: String
    /// nil: any value, as long as the header is there (redacted values).
    var value: String?
}

/// The parts of a live request that matching looks at, read once per request.
struct RequestSnapshot {
    var method: String
    var url: String
    var parts: MockURLParts?
    var queryItems: [(name: String, value: String?)]
    var body: [UInt8]
    var headers: [String: String]
    /// The request, its body in `httpBody` (for predicates).
    var request: URLRequest
    /// Set by a `HostRemap`: the recorded host this request stands for. Conditions for that host
    /// then match whatever scheme and port the request used.
    var remappedHost: String?

    init(_ request: URLRequest) {
        method = (request.httpMethod ?? "GET").uppercased()
        url = request.url?.absoluteString ?? ""
        parts = MockURLParts(url)
        queryItems = parts?.queryItems ?? []
        body = RequestSnapshot.bodyBytes(of: request)
        var headers: [String: String] = [:]
        for (k, v) in request.allHTTPHeaderFields ?? [:] { headers[k.lowercased()] = v }
        self.headers = headers
        var whole = request
        if request.httpBody == nil && request.httpBodyStream != nil {
            whole.httpBodyStream = nil
            whole.httpBody = Data(body)
        }
        self.request = whole
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
    var mockRequest: MockRequest { MockRequest(method: method, url: url, headers: headers, body: body) }

    /// "GET https://host/path?query", for messages.
    var requestLine: String { "\(method) \(url)" }
}

/// One part of a condition that a request did not satisfy.
enum Mismatch: Equatable {
    case method(expected: String, actual: String)
    case scheme(expected: String, actual: String)
    case host(expected: String, actual: String)
    case port(expected: Int?, actual: Int?)
    case path(expected: String, actual: String)
    /// `expected`: nil for `.present`; `.some(nil)` for an item without "=". `actual`: the values the
    /// request has under that name (empty: the name is missing).
    case query(name: String, expected: String??, actual: [String?])
    case body(expected: String, actual: String)
    case header(name: String, expected: String?, actual: String?)
    case headerAbsent(name: String, actual: String)
    case predicate(name: String)

    /// What differed, in words.
    var explanation: String {
        switch self {
        case let .method(e, a): return "method: expected \(e), got \(a)"
        case let .scheme(e, a): return "scheme: expected \(e), got \(a)"
        case let .host(e, a): return "host: expected \(e), got \(a)"
        case let .port(e, a): return "port: expected \(e.map(String.init) ?? "default"), got \(a.map(String.init) ?? "none")"
        case let .path(e, a): return "path: expected \(e), got \(a)"
        case let .query(name, expected, actual):
            let want: String
            switch expected {
            case .none: want = "present"
            case .some(.none): want = "\(name) (no value)"
            case .some(.some(let v)): want = "\"\(v)\""
            }
            if actual.isEmpty { return "query item \"\(name)\": expected \(want), missing in the request" }
            let got = actual.map { $0.map { "\"\($0)\"" } ?? "(no value)" }.joined(separator: ", ")
            return "query item \"\(name)\": expected \(want), got \(got)"
        case let .body(e, a): return "body: expected \(e), got \(a)"
        case let .header(name, e, a):
            return "header \(name): expected \(e.map { "\"\($0)\"" } ?? "present"), got \(a.map { "\"\($0)\"" } ?? "none")"
        case let .headerAbsent(name, a):
            return "header \(name): expected none, got \"\(a)\""
        case let .predicate(name):
            return "\(name): false for this request"
        }
    }

    var isQueryValue: Bool {
        if case .query(_, _, let actual) = self { return !actual.isEmpty }
        return false
    }
}

/// The outcome of matching one condition: how many parts agreed and which did not.
struct MatchReport {
    var matchedParts: Int
    var mismatches: [Mismatch]
    var matches: Bool { mismatches.isEmpty }
}

enum RequestMatcher {
    static func evaluate(_ condition: RequestCondition, headers: [HeaderCondition] = [],
                         against request: RequestSnapshot) -> MatchReport {
        var matched = 0
        var mismatches: [Mismatch] = []
        func check(_ ok: Bool, _ mismatch: @autoclosure () -> Mismatch) {
            if ok { matched += 1 } else { mismatches.append(mismatch()) }
        }
        let parts = request.parts
        check(condition.method == "*" || condition.method.uppercased() == request.method,
              .method(expected: condition.method.uppercased(), actual: request.method))
        let scheme = parts?.scheme ?? ""
        let host = parts?.host ?? ""
        let anyHost = condition.host == "*"
        // A remapped request stands for the recorded host on whatever scheme and port it used.
        let remapped = request.remappedHost != nil && request.remappedHost == condition.host.lowercased()
        check(remapped || condition.scheme == "*" || condition.scheme.lowercased() == scheme,
              .scheme(expected: condition.scheme.lowercased(), actual: scheme))
        check(anyHost || condition.host.lowercased() == host, .host(expected: condition.host.lowercased(), actual: host))
        let expectedPort = condition.port ?? MockURLParts.defaultPort(condition.scheme)
        let actualPort = parts?.effectivePort
        // Without a port, a condition on any host or any scheme takes any port.
        let anyPort = condition.port == nil && (anyHost || condition.scheme == "*")
        check(remapped || anyPort || expectedPort == actualPort,
              .port(expected: condition.port, actual: parts?.port))
        let path = parts?.path ?? ""
        if let pattern = condition.pathPattern {
            check(pattern.matches(path), .path(expected: pattern.description, actual: path))
        } else {
            check(condition.path == path, .path(expected: condition.path, actual: path))
        }

        // Query items as a multiset: exact items first, so that a `.present` cannot take the item an
        // `.equals` needs.
        var available = request.queryItems.map { Optional($0) }
        var queryFailures: [Int: Mismatch] = [:]
        let ordered = condition.query.enumerated().sorted { a, b in
            if case .equals = a.element, case .present = b.element { return true }
            if case .present = a.element, case .equals = b.element { return false }
            return a.offset < b.offset
        }
        for (offset, item) in ordered {
            let name: String, want: String??
            switch item {
            case let .equals(n, v): name = n; want = .some(v)
            case let .present(n): name = n; want = nil
            }
            let index = available.firstIndex { candidate in
                guard let candidate, candidate.name == name else { return false }
                if let want { return candidate.value == want }
                return true
            }
            if let index {
                available[index] = nil
                matched += 1
            } else {
                queryFailures[offset] = .query(name: name, expected: want,
                                               actual: request.queryItems.filter { $0.name == name }.map(\.value))
            }
        }
        mismatches += queryFailures.keys.sorted().map { queryFailures[$0]! }

        if let body = condition.body {
            check(bodyMatches(body, request.body), .body(expected: describe(body), actual: describe(request.body)))
        }
        for header in headers {
            let actual = request.headers[header.name.lowercased()]
            let ok = header.value == nil ? actual != nil : actual == header.value
            check(ok, .header(name: header.name, expected: header.value, actual: actual))
        }
        for header in condition.headers {
            let actual = request.headers[header.name.lowercased()]
            switch header {
            case .equals(let name, let value): check(actual == value, .header(name: name, expected: value, actual: actual))
            case .present(let name): check(actual != nil, .header(name: name, expected: nil, actual: nil))
            case .absent(let name): check(actual == nil, .headerAbsent(name: name, actual: actual ?? ""))
            }
        }
        if let predicate = condition.predicate {
            check(predicate.test(request.mockRequest), .predicate(name: predicate.name))
        }
        return MatchReport(matchedParts: matched, mismatches: mismatches)
    }

    static func bodyMatches(_ match: BodyMatch, _ bytes: [UInt8]) -> Bool {
        switch match {
        case .text(let text):
            return Array(text.utf8) == bytes
        case .json(let json):
            guard let expected = MockJSON.canonical(json) else { return Array(json.utf8) == bytes }
            return MockJSON.canonical(bytes: bytes) == expected
        case .jsonSubset(let json):
            return MockJSON.contains(bytes: bytes, expected: json)
        }
    }

    static func describe(_ match: BodyMatch) -> String {
        switch match {
        case .text(let t): return t.isEmpty ? "an empty body" : "text \"" + abbreviate(t) + "\""
        case .json(let j): return "JSON " + abbreviate(j)
        case .jsonSubset(let j): return "JSON containing " + abbreviate(j)
        }
    }

    static func describe(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "an empty body" }
        guard let text = String(validating: bytes, as: UTF8.self) else { return "\(bytes.count) bytes of binary data" }
        return "\"" + abbreviate(text) + "\""
    }

    static func abbreviate(_ s: String, limit: Int = 80) -> String {
        let flat = s.replacingOccurrences(of: "\n", with: "\\n")
        return flat.count <= limit ? flat : String(flat.prefix(limit)) + "… (\(s.utf8.count) bytes)"
    }
}

/// Requests to `target` (scheme, host, port and an optional path prefix) are matched as if they
/// went to `recordedHost`: a scenario recorded against `api.example.com` answers an app pointed
/// at a staging host or a local server on a random port.
struct HostRemap: Sendable, Equatable {
    /// Lowercased.
    var recordedHost: String
    var scheme: String
    var host: String
    var port: Int?
    /// "" or a path without a trailing "/" ("/api").
    var pathPrefix: String

    init?(recordedHost: String, target: URL) {
        guard let parts = MockURLParts(target.absoluteString) else { return nil }
        self.recordedHost = recordedHost.lowercased()
        scheme = parts.scheme
        host = parts.host
        port = parts.effectivePort
        var prefix = parts.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        pathPrefix = prefix
    }

    func applies(to request: RequestSnapshot) -> Bool {
        guard let parts = request.parts, parts.scheme == scheme, parts.host == host, parts.effectivePort == port else {
            return false
        }
        if pathPrefix.isEmpty { return true }
        return parts.path == pathPrefix || parts.path.hasPrefix(pathPrefix + "/")
    }

    func apply(to request: inout RequestSnapshot) {
        guard var parts = request.parts else { return }
        parts.host = recordedHost
        if !pathPrefix.isEmpty {
            let rest = String(parts.path.dropFirst(pathPrefix.count))
            parts.path = rest.isEmpty ? "/" : rest
        }
        request.parts = parts
        request.remappedHost = recordedHost
    }
}
