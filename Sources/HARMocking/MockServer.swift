// The serving engine shared by NetworkMock (generated scenarios) and HARReplayProtocol (a .har
// replayed directly): queue, use counts, call log, diagnostics and delivery to the URLProtocol client.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class MockServer: @unchecked Sendable {
    struct Entry {
        var item: ResponseQueueItem
        /// Extra header conditions (HAR replay only).
        var headers: [HeaderCondition] = []
    }

    struct State {
        var active = false
        /// Names what is being served in messages: `scenario "login"`, `HAR file x.har`.
        var source = ""
        var entries: [Entry] = []
        /// Times each entry was served, parallel to `entries`.
        var served: [Int] = []
        var calls: [RequestResponseItem] = []
    }

    /// "NetworkMock" or "HARReplayProtocol", for messages.
    let owner: String
    /// How to make something active, for messages: "NetworkMock.activate(_:)".
    let activation: String
    /// How to match a query item by presence, for messages: given the name, the code to write.
    let presenceAdvice: @Sendable (String) -> String
    let state = Locked(State())

    init(owner: String, activation: String,
         presenceAdvice: @escaping @Sendable (String) -> String = { "match it with .present(\"\($0)\")" }) {
        self.owner = owner
        self.activation = activation
        self.presenceAdvice = presenceAdvice
    }

    func activate(_ entries: [Entry], source: String) {
        state.withLock {
            $0 = State(active: true, source: source, entries: entries, served: Array(repeating: 0, count: entries.count),
                       calls: [])
        }
    }

    func deactivate() {
        state.withLock { $0.active = false }
    }

    var calls: [RequestResponseItem] { state.withLock { $0.calls } }

    var items: [ResponseQueueItem] { state.withLock { $0.entries.map(\.item) } }

    func unusedItems() -> [ResponseQueueItem] {
        state.withLock { s in
            s.entries.indices.compactMap { i in
                switch s.entries[i].item.repeatability {
                case .always: return nil
                case .once, .times: return MockServer.usesLeft(s.entries[i].item.repeatability, served: s.served[i]) > 0
                    ? s.entries[i].item : nil
                }
            }
        }
    }

    static func usesLeft(_ r: Repeatability, served: Int) -> Int {
        switch r {
        case .once: return max(0, 1 - served)
        case .times(let n): return max(0, n - served)
        case .always: return Int.max
        }
    }

    enum Decision {
        case serve(index: Int, response: MockResponse)
        case fail(UnmatchedRequestError)
    }

    /// Picks the first item in queue order that matches and has uses left, counts the use and logs
    /// the call, all under one lock so concurrent requests never share a `.once` item.
    func decide(_ request: URLRequest) -> Decision {
        let snapshot = RequestSnapshot(request)
        return state.withLock { s in
            var reports: [MatchReport] = []
            if s.active {
                reports.reserveCapacity(s.entries.count)
                for i in s.entries.indices {
                    let report = RequestMatcher.evaluate(s.entries[i].item.condition, headers: s.entries[i].headers,
                                                         against: snapshot)
                    if report.matches, MockServer.usesLeft(s.entries[i].item.repeatability, served: s.served[i]) > 0 {
                        s.served[i] += 1
                        let response = s.entries[i].item.response
                        s.calls.append(RequestResponseItem(method: snapshot.method, url: snapshot.url, itemIndex: i,
                                                           status: response.status))
                        return .serve(index: i, response: response)
                    }
                    reports.append(report)
                }
            }
            s.calls.append(RequestResponseItem(method: snapshot.method, url: snapshot.url, itemIndex: nil, status: nil))
            return .fail(UnmatchedRequestError(request: snapshot, state: s, reports: reports, owner: owner,
                                               activation: activation, presenceAdvice: presenceAdvice))
        }
    }

    // MARK: - Delivery

    /// Answers `proto`'s request: an error, or the response after its delay. `loading` is the
    /// protocol instance's stop flag, so a cancelled task gets no callbacks after `stopLoading`.
    func startLoading(_ proto: URLProtocol, loading: Locked<Bool>) {
        let request = proto.request
        switch decide(request) {
        case .fail(let error):
            proto.client?.urlProtocol(proto, didFailWithError: error)
        case .serve(_, let response):
            let body: Data
            do {
                body = try response.body.resolvedData()
            } catch {
                proto.client?.urlProtocol(proto, didFailWithError: error)
                return
            }
            let url = request.url ?? URL(string: "http://invalid.invalid/")!
            guard let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1",
                                             headerFields: MockServer.headerFields(response.headers)) else {
                proto.client?.urlProtocol(proto, didFailWithError: URLError(.badServerResponse))
                return
            }
            let delivery = Delivery(proto: proto, response: http, body: body, loading: loading)
            if let delay = response.delay, delay > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { delivery.run() }
            } else {
                delivery.run()
            }
        }
    }

    /// One response on its way to a protocol's client. URLProtocol is not Sendable; the client
    /// accepts calls from any thread, and `loading` guards against calls after `stopLoading`.
    private final class Delivery: @unchecked Sendable {
        let proto: URLProtocol
        let response: HTTPURLResponse
        let body: Data
        let loading: Locked<Bool>

        init(proto: URLProtocol, response: HTTPURLResponse, body: Data, loading: Locked<Bool>) {
            self.proto = proto; self.response = response; self.body = body; self.loading = loading
        }

        func run() {
            guard loading.withLock({ $0 }), let client = proto.client else { return }
            client.urlProtocol(proto, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !body.isEmpty { client.urlProtocol(proto, didLoad: body) }
            client.urlProtocolDidFinishLoading(proto)
        }
    }

    /// Headers in recorded order; repeated names are joined with ", " (what HTTPURLResponse does too).
    static func headerFields(_ headers: [HTTPHeader]) -> [String: String] {
        var fields: [String: String] = [:]
        var spelling: [String: String] = [:]
        for h in headers {
            let key = h.name.lowercased()
            if let name = spelling[key] {
                fields[name] = fields[name]! + ", " + h.value
            } else {
                spelling[key] = h.name
                fields[h.name] = h.value
            }
        }
        return fields
    }
}

/// Why a base64 response body could not be served.
struct InvalidBase64BodyError: Error, CustomStringConvertible, LocalizedError {
    var description: String { "HARMocking: a .base64 response body is not valid base64" }
    var errorDescription: String? { description }
}

extension ResponseBody {
    /// The bytes served for this body.
    func resolvedData() throws -> Data {
        switch self {
        case .empty: return Data()
        case .text(let text): return Data(text.utf8)
        case .base64(let encoded):
            guard let data = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters) else {
                throw InvalidBase64BodyError()
            }
            return data
        case .fixture(let name): return try FixtureLocator.data(named: name)
        }
    }
}

// MARK: - Diagnostics

/// The error an unmatched request fails with. `description` (and `localizedDescription`) shows the
/// request, the nearest candidates, what differed for each (method, path, a query item, the body)
/// and what to do.
public struct UnmatchedRequestError: Error, CustomStringConvertible, LocalizedError {
    public var description: String

    /// The same text as `description`, so `localizedDescription` shows the whole diagnosis.
    public var errorDescription: String? { description }

    init(description: String) { self.description = description }

    /// How alike two paths are: shared leading segments first, then shared leading characters.
    static func pathAffinity(_ a: String, _ b: String) -> Int {
        let sa = a.split(separator: "/"), sb = b.split(separator: "/")
        let segments = zip(sa, sb).prefix { $0 == $1 }.count
        let characters = zip(a.utf8, b.utf8).prefix { $0 == $1 }.count
        return segments * 10_000 + min(characters, 9_999)
    }

    init(request: RequestSnapshot, state: MockServer.State, reports: [MatchReport], owner: String, activation: String,
         presenceAdvice: (String) -> String) {
        var lines: [String] = []
        guard state.active else {
            lines.append("\(owner): nothing is being served, so there is no response for \(request.requestLine).")
            lines.append("What to do: call \(activation) before the app makes requests (and not deactivate it too early).")
            self.init(description: lines.joined(separator: "\n"))
            return
        }
        lines.append("\(owner): no response for \(request.requestLine) in \(state.source) (\(state.entries.count == 1 ? "1 item" : "\(state.entries.count) items")).")

        func label(_ i: Int) -> String {
            let item = state.entries[i].item
            return item.label ?? "#\(i + 1) \(item.condition.method) \(item.condition.path)"
        }
        // Full matches that had no uses left.
        var usedUp: [String] = []
        for (i, report) in reports.enumerated() where report.matches {
            let n = state.served[i]
            let times = n == 1 ? "once" : "\(n) times"
            usedUp.append("  \(label(i)): already served \(times)")
        }
        // Ranked by how many parts match, then how few differ, then how much of the path is
        // shared (so /v1/projects/42 comes before /v1/feed for /v1/projects/43); one candidate
        // per distinct condition, since repeats of one request say the same thing.
        let requestPath = request.parts?.path ?? ""
        var seen: [RequestCondition] = []
        let nearest = reports.enumerated().filter { !$0.element.matches }
            .map { (offset: $0.offset, element: $0.element,
                    affinity: Self.pathAffinity(state.entries[$0.offset].item.condition.path, requestPath)) }
            .sorted { a, b in
                if a.element.matchedParts != b.element.matchedParts { return a.element.matchedParts > b.element.matchedParts }
                if a.element.mismatches.count != b.element.mismatches.count {
                    return a.element.mismatches.count < b.element.mismatches.count
                }
                if a.affinity != b.affinity { return a.affinity > b.affinity }
                return a.offset < b.offset
            }
            .filter { candidate in
                let condition = state.entries[candidate.offset].item.condition
                if seen.contains(condition) { return false }
                seen.append(condition)
                return true
            }
            .prefix(3)
        if !nearest.isEmpty {
            lines.append("Nearest candidates:")
            for (rank, candidate) in nearest.enumerated() {
                let differences = candidate.element.mismatches.map(\.explanation).joined(separator: "; ")
                lines.append("  \(rank + 1). \(label(candidate.offset)): \(differences)")
            }
        } else if state.entries.isEmpty {
            lines.append("The queue is empty.")
        }
        if !usedUp.isEmpty {
            lines.append("Matched but used up:")
            lines += usedUp.prefix(5)
            if usedUp.count > 5 { lines.append("  … and \(usedUp.count - 5) more") }
        }

        var advice: [String] = []
        if !usedUp.isEmpty {
            advice.append("the app made this request more often than recorded: re-record, or give the item .always or .times(n)")
        } else {
            advice.append("re-record the scenario if the app's requests changed")
        }
        let queryNames = nearest.flatMap { $0.element.mismatches }.compactMap { m -> String? in
            if m.isQueryValue, case .query(let name, _, _) = m { return name }
            return nil
        }
        if let name = queryNames.first {
            advice.append("if \"\(name)\" changes from run to run, " + presenceAdvice(name))
        } else {
            advice.append("add a .present query match for values that change from run to run")
        }
        if let first = nearest.first?.element.mismatches, first.count == 1, case .body = first[0] {
            advice.append("if the body changes from run to run, leave it out of matching (bodyMatching: .never)")
        }
        advice.append("check that \(activation) was called with the intended scenario")
        lines.append("What to do: " + advice.joined(separator: "; ") + ".")
        self.init(description: lines.joined(separator: "\n"))
    }
}
