// The serving engine shared by NetworkMock (generated scenarios) and HARReplayProtocol (a .har
// replayed directly): queue, use counts, call log, diagnostics and delivery to the URLProtocol client.

import Foundation
import TextEncodings
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HAR

final class MockServer: @unchecked Sendable {
    struct Entry {
        var item: ResponseQueueItem
        /// Extra header conditions (HAR replay only).
        var headers: [HeaderCondition] = []
        /// Makes the response per request (hand-written stubs); `item.response` is then unused.
        var responder: (@Sendable (URLRequest) -> MockResponse)? = nil
    }

    struct State {
        var active = false
        /// The items, their use counts and what was ever served (shared with `harrec replay`).
        var queue = ServingQueue()
        /// Per entry, parallel to `queue.entries`: the stub responder, if any.
        var responders: [(@Sendable (URLRequest) -> MockResponse)?] = []
        var calls: [MockCall] = []
        /// One readable text per request that an item answered without meeting its expectations.
        var expectationFailures: [String] = []
        var remaps: [HostRemap] = []
        /// Set when the NetworkMock that owns this server is gone: sessions made from its
        /// configurations still get answers, but nobody can read the calls, so none are kept.
        var orphaned = false
    }

    /// "NetworkMock" or "HARReplayProtocol", for messages.
    let owner: String
    /// How to make something active, for messages: "NetworkMock.activate(_:)".
    let activation: String
    /// What to do about query items, for messages: the code to write.
    let queryAdvice: QueryAdvice
    let state = Locked(State())

    init(owner: String, activation: String,
         queryAdvice: QueryAdvice = .code) {
        self.owner = owner
        self.activation = activation
        self.queryAdvice = queryAdvice
    }

    func activate(_ entries: [Entry], source: String) {
        state.withLock {
            $0 = State(active: true, queue: ServingQueue(entries: entries.map { QueueEntry(item: $0.item, headers: $0.headers) },
                                                         source: source),
                       responders: entries.map(\.responder), calls: [], remaps: $0.remaps)
        }
    }

    func deactivate() {
        state.withLock { $0.active = false }
    }

    /// Puts a stub first in the queue.
    func addStub(_ entry: Entry) {
        state.withLock { s in
            s.queue.insertFirst(QueueEntry(item: entry.item, headers: entry.headers))
            s.responders.insert(entry.responder, at: 0)
            for i in s.calls.indices { s.calls[i].itemIndex = s.calls[i].itemIndex.map { $0 + 1 } }
        }
    }

    /// Every queue back to its first item; what was ever served and the calls are kept.
    func reset() {
        state.withLock { $0.queue.reset() }
    }

    var calls: [MockCall] { state.withLock { $0.calls } }

    var expectationFailures: [String] { state.withLock { $0.expectationFailures } }

    /// The calls in the static API's shape.
    var callRecords: [RequestResponseItem] {
        state.withLock { s in
            s.calls.map { call in
                RequestResponseItem(method: call.method, url: call.url?.absoluteString ?? "", itemIndex: call.itemIndex,
                                    status: call.response.flatMap { $0.failure == nil ? $0.status : nil })
            }
        }
    }

    var items: [ResponseQueueItem] { state.withLock { $0.queue.entries.map(\.item) } }

    /// Items never served since activation, whatever their repeatability, then `.once`/`.times`
    /// items with uses left in the current round; in queue order, each once.
    func unusedItems() -> [ResponseQueueItem] {
        unusedEntries().map(\.item)
    }

    /// `unusedItems()` with each item's 0-based index in the queue.
    func unusedEntries() -> [(index: Int, item: ResponseQueueItem)] {
        state.withLock { s in s.queue.unusedIndices().map { (index: $0, item: s.queue.entries[$0].item) } }
    }

    /// How many items the queue has (stubs included).
    var itemCount: Int { state.withLock { $0.queue.entries.count } }

    enum Decision {
        case serve(index: Int, response: MockResponse)
        case fail(UnmatchedRequestError)
    }

    /// Picks the first item in queue order that matches and has uses left, counts the use and logs
    /// the call, all under one lock so concurrent requests never share a `.once` item.
    func decide(_ request: URLRequest) -> Decision {
        var snapshot = RequestSnapshot(request)
        let whole = snapshot.request
        var responder: (@Sendable (URLRequest) -> MockResponse)?
        var callIndex = -1
        let decision = state.withLock { s -> Decision in
            if let remap = s.remaps.first(where: { $0.applies(to: snapshot.input) }) { remap.apply(to: &snapshot.input) }
            guard s.active else {
                if !s.orphaned { s.calls.append(MockCall(request: whole, itemIndex: nil, item: nil, response: nil)) }
                return .fail(UnmatchedRequestError(request: snapshot, state: s, reports: [], owner: owner,
                                                   activation: activation, queryAdvice: queryAdvice))
            }
            switch s.queue.pick(for: snapshot.input) {
            case .served(let i):
                let item = s.queue.entries[i].item
                let response = item.response
                responder = s.responders[i]
                let unmet = RequestMatcher.unmet(item.expectations, by: snapshot)
                if !unmet.isEmpty {
                    s.expectationFailures.append("\(owner): \(s.queue.label(i)) answered \(snapshot.requestLine), but the request is not what was expected:\n"
                                                 + unmet.map { "  " + $0 }.joined(separator: "\n"))
                }
                if !s.orphaned {
                    callIndex = s.calls.count
                    s.calls.append(MockCall(request: whole, itemIndex: i, item: item, response: response))
                }
                return .serve(index: i, response: response)
            case .unmatched:
                if !s.orphaned { s.calls.append(MockCall(request: whole, itemIndex: nil, item: nil, response: nil)) }
                return .fail(UnmatchedRequestError(request: snapshot, state: s, reports: s.queue.diagnosisReports(for: snapshot.input),
                                                   owner: owner,
                                                   activation: activation, queryAdvice: queryAdvice))
            }
        }
        // A stub's response is made outside the lock: its code may look at the mock.
        guard let responder, case .serve(let index, _) = decision else { return decision }
        let response = responder(whole)
        if callIndex >= 0 {
            state.withLock { s in if callIndex < s.calls.count { s.calls[callIndex].response = response } }
        }
        return .serve(index: index, response: response)
    }

    // MARK: - Delivery

    /// Answers `proto`'s request: an error, or the response after its delay. `loading` is the
    /// protocol instance's stop flag, so a cancelled task gets no callbacks after `stopLoading`.
    /// `timeout` (seconds; nil: none) fails the task with `URLError(.timedOut)` when a delay
    /// outlasts it, as URLSession does with a server that does not answer in time.
    func startLoading(_ proto: URLProtocol, loading: Locked<Bool>, timeout: TimeInterval? = nil) {
        let request = proto.request
        let url = request.url ?? URL(string: "http://invalid.invalid/")!
        switch decide(request) {
        case .fail(let error):
            proto.client?.urlProtocol(proto, didFailWithError: error)
        case .serve(_, let response):
            let outcome: Delivery.Outcome
            if let code = response.failure {
                outcome = .failure(MockServer.urlError(code, url: url))
            } else {
                let body: Data
                do {
                    body = try response.body.resolvedData()
                } catch {
                    proto.client?.urlProtocol(proto, didFailWithError: error)
                    return
                }
                guard let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1",
                                                 headerFields: MockServer.headerFields(response.headers)) else {
                    proto.client?.urlProtocol(proto, didFailWithError: URLError(.badServerResponse))
                    return
                }
                outcome = .response(http, body, then: response.interruption.map { MockServer.urlError($0, url: url) })
            }
            let delivery = Delivery(proto: proto, outcome: outcome, loading: loading, bytesPerSecond: response.bytesPerSecond)
            let delay = max(0, response.delay ?? 0)
            if let timeout, timeout > 0, delay > timeout {
                let timedOut = Delivery(proto: proto, outcome: .failure(MockServer.urlError(.timedOut, url: url)),
                                        loading: loading)
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { timedOut.run() }
            } else if delay > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { delivery.run() }
            } else {
                delivery.run()
            }
        }
    }

    /// A `URLError` as URLSession makes them: with the failing URL.
    static func urlError(_ code: URLError.Code, url: URL) -> URLError {
        URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url, NSURLErrorFailingURLStringErrorKey: url.absoluteString])
    }

    /// One answer on its way to a protocol's client. URLProtocol is not Sendable; the client
    /// accepts calls from any thread, and `loading` guards against calls after `stopLoading` (and
    /// against a second answer: a delivery clears it).
    private final class Delivery: @unchecked Sendable {
        enum Outcome {
            /// The head and body; `then`: the error that cuts the response short, after the body.
            case response(HTTPURLResponse, Data, then: URLError?)
            case failure(URLError)
        }
        let proto: URLProtocol
        let outcome: Outcome
        let loading: Locked<Bool>
        let bytesPerSecond: Int?

        init(proto: URLProtocol, outcome: Outcome, loading: Locked<Bool>, bytesPerSecond: Int? = nil) {
            self.proto = proto; self.outcome = outcome; self.loading = loading; self.bytesPerSecond = bytesPerSecond
        }

        func run() {
            if case .response(let response, let body, _) = outcome, let rate = bytesPerSecond, !body.isEmpty {
                guard loading.withLock({ $0 }), let client = proto.client else { return }
                client.urlProtocol(proto, didReceive: response, cacheStoragePolicy: .notAllowed)
                #if canImport(FoundationNetworking)
                // FoundationNetworking keeps only the last `didLoad` of a custom protocol for a
                // completion-handler task, so the body goes in one piece, after the time it would take.
                let duration = Double(body.count) / Double(rate)
                DispatchQueue.global().asyncAfter(deadline: .now() + duration) { self.trickle(body, chunk: body.count, from: 0) }
                #else
                trickle(body, chunk: max(1, rate / 10), from: 0)
                #endif
                return
            }
            let live = loading.withLock { live -> Bool in
                defer { live = false }
                return live
            }
            guard live, let client = proto.client else { return }
            switch outcome {
            case .failure(let error):
                client.urlProtocol(proto, didFailWithError: error)
            case .response(let response, let body, let interruption):
                client.urlProtocol(proto, didReceive: response, cacheStoragePolicy: .notAllowed)
                if !body.isEmpty { client.urlProtocol(proto, didLoad: body) }
                finish(client, interruption)
            }
        }

        /// The end of a delivered response: finished, or failed after its body when it was cut short.
        private func finish(_ client: URLProtocolClient, _ interruption: URLError?) {
            if let interruption {
                client.urlProtocol(proto, didFailWithError: interruption)
            } else {
                client.urlProtocolDidFinishLoading(proto)
            }
        }

        /// One chunk now, the next a tenth of a second later, until the body is out or the task stops.
        private func trickle(_ body: Data, chunk: Int, from offset: Int) {
            guard loading.withLock({ $0 }), let client = proto.client else { return }
            let end = min(body.count, offset + chunk)
            client.urlProtocol(proto, didLoad: body.subdata(in: body.startIndex + offset..<body.startIndex + end))
            if end == body.count {
                loading.withLock { $0 = false }
                if case .response(_, _, let interruption) = outcome { finish(client, interruption) }
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { self.trickle(body, chunk: chunk, from: end) }
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
            guard let bytes = Base64.decodeLenient(encoded) else { throw InvalidBase64BodyError() }
            return Data(bytes)
        case .fixture(let name): return try FixtureLocator.data(named: name)
        }
    }
}

