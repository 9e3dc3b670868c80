// Swift Testing: NetworkMock instances under the runner's default parallelism (every test here
// and every argument of a parameterized test may run at the same time, in one process).

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HARMocking

/// What one request through a real URLSession got.
struct Outcome: @unchecked Sendable {
    var data: Data?
    var response: HTTPURLResponse?
    var error: Error?
    var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
    var status: Int? { response?.statusCode }
    var urlErrorCode: URLError.Code? { (error as? URLError)?.code }
}

enum Client {
    static func send(_ request: URLRequest, _ session: URLSession) async -> Outcome {
        await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                continuation.resume(returning: Outcome(data: data, response: response as? HTTPURLResponse, error: error))
            }.resume()
        }
    }

    static func get(_ url: String, _ session: URLSession) async -> Outcome {
        await send(URLRequest(url: URL(string: url)!), session)
    }
}

func queued(_ url: String, status: Int = 200, body: String = "", delay: TimeInterval? = nil,
            _ repeatability: Repeatability = .always, label: String? = nil) -> ResponseQueueItem {
    queued("GET", url, status: status, body: body, delay: delay, repeatability, label: label)
}

func queued(_ method: String, _ url: String, status: Int = 200, body: String = "", delay: TimeInterval? = nil,
            _ repeatability: Repeatability = .always, label: String? = nil) -> ResponseQueueItem {
    let parts = MockURLParts(url)!
    return ResponseQueueItem(condition: RequestCondition(method: method, scheme: parts.scheme, host: parts.host,
                                                         port: parts.port, path: parts.path,
                                                         query: parts.queryItems.map { .equals($0.name, $0.value) }),
                             response: MockResponse(status: status, body: body.isEmpty ? .empty : .text(body), delay: delay),
                             repeatability: repeatability, label: label)
}

@Suite struct MockInstanceTests {
    /// Eight mocks at once serve the same URL with different answers, many times over; each sees
    /// only its own answers and its own calls.
    @Test(arguments: 0..<8)
    func mocksWithConflictingScenariosStayApart(_ n: Int) async {
        let mock = NetworkMock(TestScenario([
            queued("https://api.example.com/v1/me", body: "mock \(n)"),
            queued("POST", "https://api.example.com/v1/orders", status: 201, body: "order of \(n)", .once),
        ], id: ScenarioIdentifier("mock\(n)")))
        let session = URLSession(configuration: mock.configuration())
        for _ in 0..<20 {
            let me = await Client.get("https://api.example.com/v1/me", session)
            #expect(me.text == "mock \(n)")
        }
        var post = URLRequest(url: URL(string: "https://api.example.com/v1/orders")!)
        post.httpMethod = "POST"
        #expect(await Client.send(post, session).status == 201)
        // `.once` in this mock only: a second POST is unmatched here, whatever the others did.
        #expect(await Client.send(post, session).error is UnmatchedRequestError)
        #expect(mock.calls.count == 22)
        #expect(mock.calls.allSatisfy { $0.url?.host == "api.example.com" })
        #expect(mock.unusedItems().isEmpty)
    }

    @Test func twoMocksInOneTestAndTheProcessWideOneDoNotMix() async {
        let a = NetworkMock(TestScenario([queued("http://h.test/x", body: "a")]))
        let b = NetworkMock(TestScenario([queued("http://h.test/x", body: "b")]))
        let sa = URLSession(configuration: a.configuration()), sb = URLSession(configuration: b.configuration())
        // Sessions made earlier keep their mock when another mock appears.
        #expect(await Client.get("http://h.test/x", sb).text == "b")
        #expect(await Client.get("http://h.test/x", sa).text == "a")
        #expect(a.calls.count == 1 && b.calls.count == 1)
        // A second configuration of the same mock shares its queues and calls.
        let sa2 = URLSession(configuration: a.configuration())
        #expect(await Client.get("http://h.test/x", sa2).text == "a")
        #expect(a.calls.count == 2)
    }

    @Test func injectedFailuresAreURLErrors() async {
        let codes: [URLError.Code] = [.notConnectedToInternet, .cannotConnectToHost, .cannotFindHost, .timedOut,
                                      .networkConnectionLost, .serverCertificateUntrusted]
        var items = codes.enumerated().map { i, code in
            var it = queued("https://api.example.com/fail/\(i)")
            it.response = .failure(code)
            return it
        }
        var delayed = queued("https://api.example.com/slow-failure")
        delayed.response = .failure(.networkConnectionLost, delay: 0.2)
        items.append(delayed)
        let mock = NetworkMock(TestScenario(items))
        let session = URLSession(configuration: mock.configuration())
        for (i, code) in codes.enumerated() {
            let outcome = await Client.get("https://api.example.com/fail/\(i)", session)
            #expect(outcome.urlErrorCode == code)
            #expect(outcome.response == nil)
            #expect((outcome.error as? URLError)?.failingURL?.absoluteString == "https://api.example.com/fail/\(i)")
        }
        let start = Date()
        let slow = await Client.get("https://api.example.com/slow-failure", session)
        #expect(slow.urlErrorCode == .networkConnectionLost)
        #expect(Date().timeIntervalSince(start) >= 0.2)
        #expect(mock.calls.last?.response?.failure == .networkConnectionLost)
    }

    /// A response cut short (a recorded `_error` after the head) delivers its head and what
    /// arrived of its body, then fails, through URLSession (a delegate sees each step, with and
    /// without a bandwidth limit) and through ScenarioTransport.
    @Test func aResponseCutShortDeliversWhatArrivedThenFails() async throws {
        var cut = queued("https://api.example.com/cut", status: 206, body: "partial")
        cut.response.interruption = .networkConnectionLost
        var slow = queued("https://api.example.com/slow-cut", body: "partial")
        slow.response.interruption = .timedOut
        slow.response.bytesPerSecond = 70
        let mock = NetworkMock(TestScenario([cut, slow]))
        for (url, code) in [("https://api.example.com/cut", URLError.Code.networkConnectionLost),
                            ("https://api.example.com/slow-cut", .timedOut)] {
            let steps = StepRecorder()
            let session = URLSession(configuration: mock.configuration(), delegate: steps, delegateQueue: nil)
            let error = await steps.run(session.dataTask(with: URL(string: url)!))
            #expect((error as? URLError)?.code == code, "\(url)")
            #expect(steps.status == (url.hasSuffix("/cut") ? 206 : 200), "the head arrived")
            #expect(String(decoding: steps.data, as: UTF8.self) == "partial", "then what arrived of the body")
            session.invalidateAndCancel()
        }
        let transport = ScenarioTransport(TestScenario([cut]))
        await #expect(throws: URLError.self) {
            _ = try await transport.send(URLRequest(url: URL(string: "https://api.example.com/cut")!))
        }
    }

    @Test func aDelayLongerThanTheTimeoutTimesOut() async {
        let mock = NetworkMock(TestScenario([
            queued("http://h.test/slow", body: "late", delay: 30),
            queued("http://h.test/quick", body: "in time", delay: 0.2),
        ]))
        let configuration = mock.configuration()
        configuration.timeoutIntervalForRequest = 0.5
        let session = URLSession(configuration: configuration)
        var start = Date()
        let slow = await Client.get("http://h.test/slow", session)
        #expect(slow.urlErrorCode == .timedOut)
        #expect(slow.data == nil || slow.data?.isEmpty == true)
        let waited = Date().timeIntervalSince(start)
        // At the timeout, not after the 30 s delay.
        #expect(waited >= 0.5 && waited < 20)
        start = Date()
        #expect(await Client.get("http://h.test/quick", session).text == "in time")
        #expect(Date().timeIntervalSince(start) >= 0.2)

        // The request's own timeout wins when the app sets one.
        var request = URLRequest(url: URL(string: "http://h.test/quick")!)
        request.timeoutInterval = 0.05
        #expect(await Client.send(request, URLSession(configuration: mock.configuration())).urlErrorCode == .timedOut)
    }

    @Test func unusedItemsReportsEndpointsNeverCalled() async {
        let mock = NetworkMock(TestScenario([
            queued("POST", "https://api.example.com/login", .always, label: "#1 POST /login"),
            queued("https://api.example.com/feed", body: "1", .once, label: "#2 GET /feed"),
            queued("https://api.example.com/feed", body: "2", .always, label: "#3 GET /feed"),
            queued("https://api.example.com/ping", .times(2), label: "#4 GET /ping"),
        ]))
        let session = URLSession(configuration: mock.configuration())
        #expect(mock.unusedItems().map(\.label) == ["#1 POST /login", "#2 GET /feed", "#3 GET /feed", "#4 GET /ping"])
        _ = await Client.get("https://api.example.com/feed", session)
        _ = await Client.get("https://api.example.com/ping", session)
        // Login never happened: reported although `.always`. /feed's last item was never reached.
        #expect(mock.unusedItems().map(\.label) == ["#1 POST /login", "#3 GET /feed", "#4 GET /ping"])
        _ = await Client.get("https://api.example.com/feed", session)
        _ = await Client.get("https://api.example.com/ping", session)
        #expect(mock.unusedItems().map(\.label) == ["#1 POST /login"])

        // reset: queues start over; what was served is remembered.
        mock.reset()
        #expect(mock.unusedItems().map(\.label) == ["#1 POST /login", "#2 GET /feed", "#4 GET /ping"])
        #expect(await Client.get("https://api.example.com/feed", session).text == "1")
        #expect(mock.calls.count == 5)
    }

    @Test func remapServesALocalServerOrAStagingHost() async {
        let mock = NetworkMock(TestScenario([
            queued("https://api.example.com/v1/me", body: "me"),
            queued("https://cdn.example.com/v1/me", body: "cdn"),
        ]))
        mock.remap(host: "api.example.com", to: URL(string: "http://127.0.0.1:8080")!)
        mock.remap(host: "api.example.com", to: URL(string: "https://staging.example.net/api")!)
        let session = URLSession(configuration: mock.configuration())
        #expect(await Client.get("http://127.0.0.1:8080/v1/me", session).text == "me")
        #expect(await Client.get("https://staging.example.net/api/v1/me", session).text == "me")
        #expect(await Client.get("https://api.example.com/v1/me", session).text == "me")
        #expect(await Client.get("https://cdn.example.com/v1/me", session).text == "cdn")
        // Another port, or outside the path prefix, is not remapped.
        #expect(await Client.get("http://127.0.0.1:8081/v1/me", session).error is UnmatchedRequestError)
        #expect(await Client.get("https://staging.example.net/v1/me", session).error is UnmatchedRequestError)
        // Calls keep the URL the app used.
        #expect(mock.calls.first?.url?.absoluteString == "http://127.0.0.1:8080/v1/me")
    }

    @Test func callsKeepTheWholeRequestStreamedBodiesIncluded() async throws {
        let mock = NetworkMock(TestScenario([queued("PUT", "https://api.example.com/v1/upload?v=2", status: 204)]))
        let session = URLSession(configuration: mock.configuration())
        let payload = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/upload?v=2")!)
        request.httpMethod = "PUT"
        request.setValue("2", forHTTPHeaderField: "X-Api-Version")
        request.httpBodyStream = InputStream(data: payload)
        #expect(await Client.send(request, session).status == 204)
        var unmatched = URLRequest(url: URL(string: "https://api.example.com/v1/other")!)
        unmatched.httpBody = Data("x=1".utf8)
        unmatched.httpMethod = "POST"
        _ = await Client.send(unmatched, session)

        let calls = mock.calls
        try #require(calls.count == 2)
        #expect(calls[0].method == "PUT")
        #expect(calls[0].url?.absoluteString == "https://api.example.com/v1/upload?v=2")
        #expect(calls[0].header("x-api-version") == "2")
        #expect(calls[0].body == payload)
        #expect(calls[0].itemIndex == 0 && calls[0].item?.condition.path == "/v1/upload")
        #expect(calls[0].response?.status == 204)
        #expect(calls[1].itemIndex == nil && calls[1].response == nil && calls[1].body == Data("x=1".utf8))
    }
}

/// A data delegate that keeps what a task delivered, step by step.
final class StepRecorder: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _status: Int?
    private var _data = Data()
    private var finished: CheckedContinuation<Error?, Never>?
    var status: Int? { lock.withLock { _status } }
    var data: Data { lock.withLock { _data } }

    /// Runs `task` to its end; returns its error.
    func run(_ task: URLSessionDataTask) async -> Error? {
        await withCheckedContinuation { continuation in
            lock.withLock { finished = continuation }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        lock.withLock { _status = (response as? HTTPURLResponse)?.statusCode }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { _data.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let continuation = lock.withLock { () -> CheckedContinuation<Error?, Never>? in
            defer { finished = nil }
            return finished
        }
        continuation?.resume(returning: error)
    }
}
