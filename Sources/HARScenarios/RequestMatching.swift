// Matching a request against a RequestCondition, part by part, so that a miss can say which part
// differed. Pure: HARMocking (URLSession) and the replaying proxy use the same matcher.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request header an item requires (HAR replay only; generated conditions carry no headers).
package struct HeaderCondition: Sendable, Hashable {
    package var name: String
    /// nil: any value, as long as the header is there (redacted values).
    package var value: String?

    package init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}

/// The parts of a request that matching looks at, read once per request: the same for
/// URLSession requests (HARMocking) and requests arriving at a replaying proxy.
package struct MatchInput {
    package var method: String
    package var url: String
    package var parts: MockURLParts?
    package var queryItems: [(name: String, value: String?)]
    package var body: [UInt8]
    /// Lowercased names.
    package var headers: [String: String]
    /// Set by a host remap: the recorded host this request stands for. Conditions for that host
    /// then match whatever scheme and port the request used.
    package var remappedHost: String?

    package init(method: String, url: String, headers: [String: String], body: [UInt8]) {
        self.method = method.uppercased()
        self.url = url
        parts = MockURLParts(url)
        queryItems = parts?.queryItems ?? []
        self.body = body
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
    }

    /// The request as predicates see it.
    package var mockRequest: MockRequest { MockRequest(method: method, url: url, headers: headers, body: body) }

    /// "GET https://host/path?query", for messages.
    package var requestLine: String { "\(method) \(url)" }
}

/// One part of a condition that a request did not satisfy.
package enum Mismatch: Equatable {
    case method(expected: String, actual: String)
    case scheme(expected: String, actual: String)
    case host(expected: String, actual: String)
    case port(expected: Int?, actual: Int?)
    case path(expected: String, actual: String)
    /// `expected`: nil for `.present`; `.some(nil)` for an item without "=". `actual`: the values the
    /// request has under that name (empty: the name is missing).
    case query(name: String, expected: String??, actual: [String?])
    /// A request item the condition does not list (`value` nil: the item has no "=").
    case unlistedQuery(name: String, value: String?)
    case body(expected: String, actual: String)
    case header(name: String, expected: String?, actual: String?)
    case headerAbsent(name: String, actual: String)
    case predicate(name: String)

    /// What differed, in words.
    package var explanation: String {
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
        case let .unlistedQuery(name, value):
            return "query item \"\(name)\(value.map { "=" + $0 } ?? "")\": not in the recorded request"
        case let .body(e, a): return "body: expected \(e), got \(a)"
        case let .header(name, e, a):
            return "header \(name): expected \(e.map { "\"\($0)\"" } ?? "present"), got \(a.map { "\"\($0)\"" } ?? "none")"
        case let .headerAbsent(name, a):
            return "header \(name): expected none, got \"\(a)\""
        case let .predicate(name):
            return "\(name): false for this request"
        }
    }

    package var isQueryValue: Bool {
        if case .query(_, _, let actual) = self { return !actual.isEmpty }
        return false
    }
}

/// The outcome of matching one condition: how many parts agreed and which did not.
package struct MatchReport {
    package var matchedParts: Int
    package var mismatches: [Mismatch]
    /// How many of the condition's query items the request has: the more, the more specific.
    package var queryItemsMatched: Int
    package var matches: Bool { mismatches.isEmpty }

    package init(matchedParts: Int, mismatches: [Mismatch], queryItemsMatched: Int = 0) {
        self.matchedParts = matchedParts
        self.mismatches = mismatches
        self.queryItemsMatched = queryItemsMatched
    }
}

package enum RequestMatcher {
    package static func evaluate(_ condition: RequestCondition, headers: [HeaderCondition] = [],
                                 against request: MatchInput) -> MatchReport {
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
        let queryItemsMatched = condition.query.count - queryFailures.count
        if case .rejected(let except) = condition.unlistedQueryItems {
            // What the listed items left over must be names the condition lets come and go. An
            // item whose name a failed listed item has is said once, by that failure.
            let lowered = except.isEmpty ? [] : Set(except.map { $0.lowercased() })
            let explained = Set(queryFailures.values.compactMap { m -> String? in
                if case .query(let name, _, _) = m { return name }
                return nil
            })
            for case let item? in available where !lowered.contains(item.name.lowercased()) && !explained.contains(item.name) {
                mismatches.append(.unlistedQuery(name: item.name, value: item.value))
            }
        }

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
        return MatchReport(matchedParts: matched, mismatches: mismatches, queryItemsMatched: queryItemsMatched)
    }

    package static func bodyMatches(_ match: BodyMatch, _ bytes: [UInt8]) -> Bool {
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

    package static func describe(_ match: BodyMatch) -> String {
        switch match {
        case .text(let t): return t.isEmpty ? "an empty body" : "text \"" + abbreviate(t) + "\""
        case .json(let j): return "JSON " + abbreviate(j)
        case .jsonSubset(let j): return "JSON containing " + abbreviate(j)
        }
    }

    package static func describe(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "an empty body" }
        guard let text = String(validating: bytes, as: UTF8.self) else { return "\(bytes.count) bytes of binary data" }
        return "\"" + abbreviate(text) + "\""
    }

    package static func abbreviate(_ s: String, limit: Int = 80) -> String {
        let flat = s.replacing("\n", with: "\\n")
        return flat.count <= limit ? flat : String(flat.prefix(limit)) + "… (\(s.utf8.count) bytes)"
    }
}
