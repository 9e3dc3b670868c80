import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import HARMocking

final class NetworkMockTests: XCTestCase {
    var session: URLSession!

    override func setUp() {
        session = HTTP.session()
    }

    override func tearDown() {
        NetworkMock.deactivate()
        session.invalidateAndCancel()
    }

    // MARK: Matching each part

    func testFullConditionMatchesAndEachPartCanDiffer() {
        let full = ResponseQueueItem(
            condition: RequestCondition(method: "POST", scheme: "https", host: "api.example.com", port: 8443,
                                        path: "/v1/items", query: [.equals("page", "1")], body: .text("hello")),
            response: MockResponse(status: 201, body: .text("created")), label: "#1 POST /v1/items")
        NetworkMock.activate(TestScenario([full]))

        let ok = HTTP.fetch("post", "HTTPS://API.example.com:8443/v1/items?page=1", body: "hello", session: session)
        XCTAssertNil(ok.error)
        XCTAssertEqual(ok.status, 201)
        XCTAssertEqual(ok.text, "created")

        let variants: [(method: String, url: String, body: String, differing: String)] = [
            ("GET", "https://api.example.com:8443/v1/items?page=1", "hello", "method: expected POST, got GET"),
            ("POST", "http://api.example.com:8443/v1/items?page=1", "hello", "scheme: expected https, got http"),
            ("POST", "https://other.example.com:8443/v1/items?page=1", "hello", "host: expected api.example.com, got other.example.com"),
            ("POST", "https://api.example.com:9443/v1/items?page=1", "hello", "port: expected 8443, got 9443"),
            ("POST", "https://api.example.com:8443/v1/item?page=1", "hello", "path: expected /v1/items, got /v1/item"),
            ("POST", "https://api.example.com:8443/v1/items?page=2", "hello", #"query item "page": expected "1", got "2""#),
            ("POST", "https://api.example.com:8443/v1/items", "hello", #"query item "page": expected "1", missing in the request"#),
            ("POST", "https://api.example.com:8443/v1/items?page=1", "hello!", #"body: expected text "hello", got "hello!""#),
        ]
        for v in variants {
            let r = HTTP.fetch(v.method, v.url, body: v.body, session: session)
            XCTAssertNil(r.status, v.url)
            XCTAssertTrue(r.error is UnmatchedRequestError, "\(v.url): \(String(describing: r.error))")
            XCTAssertTrue(r.errorText.contains("#1 POST /v1/items: " + v.differing), "\(v.differing)\n---\n\(r.errorText)")
        }
    }

    func testPortIsDefaultAware() {
        NetworkMock.activate(TestScenario([
            item("GET", "/a", port: nil, text: "a"), item("GET", "/b", port: 443, text: "b"),
            item("GET", "/c", scheme: "http", port: 8080, text: "c"),
        ]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com:443/a", session: session).text, "a")
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/b", session: session).text, "b")
        XCTAssertEqual(HTTP.fetch("GET", "http://api.example.com:8080/c", session: session).text, "c")
        XCTAssertNotNil(HTTP.fetch("GET", "http://api.example.com/c", session: session).error)
        XCTAssertNotNil(HTTP.fetch("GET", "https://api.example.com:8443/a", session: session).error)
    }

    func testQueryItemsAreAMultisetAndUnlistedOnesFailTheMatch() {
        NetworkMock.activate(TestScenario([
            item("GET", "/q", query: [.equals("tag", "a"), .equals("tag", "b"), .present("sig"), .equals("flag", nil)],
                 text: "matched"),
        ]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/q?flag&sig=xyz&tag=b&tag=a", session: session).text,
                       "matched", "order is ignored")
        let extra = HTTP.fetch("GET", "https://api.example.com/q?flag&sig=xyz&tag=b&extra=1&tag=a", session: session)
        XCTAssertNil(extra.status, "an item the condition does not list")
        XCTAssertTrue(extra.errorText.contains(#"query item "extra=1": not in the recorded request"#), extra.errorText)
        XCTAssertTrue(extra.errorText.contains(#"allow it with unlistedQueryItems: .rejected(except: ["extra"])"#), extra.errorText)
        let third = HTTP.fetch("GET", "https://api.example.com/q?flag&sig=xyz&tag=b&tag=a&tag=a", session: session)
        XCTAssertTrue(third.errorText.contains(#"query item "tag=a": not in the recorded request"#), "a multiset: \(third.errorText)")
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/q?tag=a%20&tag=b&sig=&flag", session: session).status, nil,
                       "values are compared exactly (decoded)")
        let missingSecond = HTTP.fetch("GET", "https://api.example.com/q?tag=a&sig=1&flag", session: session)
        XCTAssertTrue(missingSecond.errorText.contains(#"query item "tag": expected "b", got "a""#), missingSecond.errorText)
        let noSig = HTTP.fetch("GET", "https://api.example.com/q?tag=a&tag=b&flag", session: session)
        XCTAssertTrue(noSig.errorText.contains(#"query item "sig": expected present, missing in the request"#), noSig.errorText)
        let flagWithValue = HTTP.fetch("GET", "https://api.example.com/q?tag=a&tag=b&sig=1&flag=1", session: session)
        XCTAssertTrue(flagWithValue.errorText.contains(#"query item "flag": expected flag (no value), got "1""#),
                      flagWithValue.errorText)
    }

    func testUnlistedItemsMayComeWhereTheConditionAllowsThem() {
        NetworkMock.activate(TestScenario([
            item("GET", "/q", query: [.equals("v", "1")], unlisted: .rejected(except: ["_ts"]), text: "v1"),
            item("GET", "/s", query: [.equals("v", "1")], unlisted: .allowed, text: "s"),
        ]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/q?v=1&_TS=99", session: session).text, "v1")
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/q?v=1", session: session).text, "v1")
        XCTAssertNil(HTTP.fetch("GET", "https://api.example.com/q?v=1&w=2", session: session).status)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/s?w=2&v=1", session: session).text, "s")
    }

    func testPresentDoesNotStealTheItemAnEqualsNeeds() {
        NetworkMock.activate(TestScenario([item("GET", "/q", query: [.present("id"), .equals("id", "7")], text: "ok")]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/q?id=7&id=8", session: session).text, "ok")
        XCTAssertNil(HTTP.fetch("GET", "https://api.example.com/q?id=7", session: session).status)
    }

    func testJSONBodyMatchesByValueAndTextBodyByteExact() {
        NetworkMock.activate(TestScenario([
            item("POST", "/graphql", body: .json(#"{"op":"A","vars":{"x":1,"y":[1,2]}}"#), text: "A"),
            item("POST", "/graphql", body: .json(#"{"op":"B"}"#), text: "B"),
            item("POST", "/form", body: .text("a=1&b=2"), text: "form"),
        ]))
        XCTAssertEqual(HTTP.fetch("POST", "https://api.example.com/graphql",
                                  body: "{ \"vars\": {\"y\":[1, 2.0], \"x\": 1}, \"op\": \"A\" }", session: session).text, "A")
        XCTAssertEqual(HTTP.fetch("POST", "https://api.example.com/graphql", body: #"{"op":"B"}"#, session: session).text, "B")
        let wrongOrder = HTTP.fetch("POST", "https://api.example.com/graphql", body: #"{"op":"A","vars":{"x":1,"y":[2,1]}}"#,
                                    session: session)
        XCTAssertTrue(wrongOrder.errorText.contains("body: expected JSON"), wrongOrder.errorText)
        XCTAssertTrue(wrongOrder.errorText.contains("leave it out of matching (bodyMatching: .never)"), wrongOrder.errorText)
        XCTAssertEqual(HTTP.fetch("POST", "https://api.example.com/form", body: "a=1&b=2", session: session).text, "form")
        XCTAssertNil(HTTP.fetch("POST", "https://api.example.com/form", body: "b=2&a=1", session: session).status)
    }

    func testBodyIsReadFromHTTPBodyStream() {
        NetworkMock.activate(TestScenario([item("PUT", "/up", body: .json(#"{"k":"v"}"#), text: "streamed")]))
        var request = HTTP.request("PUT", "https://api.example.com/up")
        request.httpBodyStream = InputStream(data: Data(#"{"k": "v"}"#.utf8))
        XCTAssertEqual(HTTP.fetch(request, session: session).text, "streamed")
    }

    func testBodyReaderReadsStreamsAndPlainBodies() {
        var request = URLRequest(url: URL(string: "https://a.example/")!)
        let big = Data((0..<40_000).map { UInt8($0 % 251) })
        request.httpBodyStream = InputStream(data: big)
        XCTAssertEqual(RequestSnapshot.bodyBytes(of: request), [UInt8](big), "streams longer than one read buffer")
        request.httpBody = Data("x".utf8)
        XCTAssertEqual(RequestSnapshot.bodyBytes(of: request), [0x78])
    }

    // MARK: Repeats

    func testOrderedRepeatsOnceOnceThenAlways() {
        NetworkMock.activate(TestScenario([
            item("GET", "/p", text: "first", repeatability: .once),
            item("GET", "/p", text: "second", repeatability: .once),
            item("GET", "/p", text: "last", repeatability: .always),
        ]))
        let texts = (0..<5).map { _ in HTTP.fetch("GET", "https://api.example.com/p", session: session).text }
        XCTAssertEqual(texts, ["first", "second", "last", "last", "last"])
        XCTAssertEqual(NetworkMock.calls.map(\.itemIndex), [0, 1, 2, 2, 2])
        XCTAssertEqual(NetworkMock.calls.map(\.itemNumber), [1, 2, 3, 3, 3])
        XCTAssertEqual(NetworkMock.unusedItems(), [])
    }

    func testTimesAndUsedUpDiagnostics() {
        NetworkMock.activate(TestScenario([
            item("GET", "/t", text: "t", repeatability: .times(3), label: "#1 GET /t"),
            item("GET", "/once", text: "o", repeatability: .once, label: "#2 GET /once"),
        ]))
        XCTAssertEqual(NetworkMock.unusedItems().map(\.label), ["#1 GET /t", "#2 GET /once"])
        for _ in 0..<3 { XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/t", session: session).text, "t") }
        XCTAssertEqual(NetworkMock.unusedItems().map(\.label), ["#2 GET /once"])
        let fourth = HTTP.fetch("GET", "https://api.example.com/t", session: session)
        XCTAssertNil(fourth.status)
        XCTAssertTrue(fourth.errorText.contains("Matched but used up:\n  #1 GET /t: already served 3 times"), fourth.errorText)
        XCTAssertTrue(fourth.errorText.contains("more often than recorded"), fourth.errorText)

        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/once", session: session).text, "o")
        let again = HTTP.fetch("GET", "https://api.example.com/once", session: session)
        XCTAssertTrue(again.errorText.contains("#2 GET /once: already served once"), again.errorText)
        XCTAssertEqual(NetworkMock.unusedItems(), [])
    }

    func testActivateResetsCountsAndCalls() {
        let scenario = TestScenario([item("GET", "/x", text: "x", repeatability: .once)])
        NetworkMock.activate(scenario)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/x", session: session).text, "x")
        XCTAssertEqual(NetworkMock.calls.count, 1)
        NetworkMock.activate(scenario)
        XCTAssertEqual(NetworkMock.calls.count, 0)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/x", session: session).text, "x")
    }

    // MARK: Diagnostics

    func testUnmatchedErrorShowsRequestCandidatesAndAdvice() {
        NetworkMock.activate(TestScenario([
            item("GET", "/v1/projects", query: [.equals("page", "1")], label: "#1 GET /v1/projects"),
            item("POST", "/v1/projects", label: "#2 POST /v1/projects"),
            item("GET", "/v1/users", label: "#3 GET /v1/users"),
            item("DELETE", "/v2/other", host: "elsewhere.example", label: "#4 DELETE /v2/other"),
        ], id: "sendingAttachments"))
        let r = HTTP.fetch("GET", "https://api.example.com/v1/projects?page=3", session: session)
        XCTAssertNil(r.status)
        let text = r.errorText
        XCTAssertTrue(text.hasPrefix("NetworkMock: no response for GET https://api.example.com/v1/projects?page=3"
                                     + " in scenario \"sendingAttachments\" (4 items)."), text)
        XCTAssertTrue(text.contains(#"  1. #1 GET /v1/projects: query item "page": expected "1", got "3""#), text)
        XCTAssertTrue(text.contains("  2. #2 POST /v1/projects: method: expected POST, got GET"), text)
        XCTAssertTrue(text.contains("  3. #3 GET /v1/users: path: expected /v1/users, got /v1/projects"), text)
        XCTAssertFalse(text.contains("#4 DELETE"), "only the 3 nearest candidates are shown")
        XCTAssertTrue(text.contains(#"match it with .present("page")"#), text)
        XCTAssertTrue(text.contains("check that NetworkMock.activate(_:) was called"), text)
        // The same text reaches localizedDescription, which is what most apps log.
        XCTAssertEqual(r.error?.localizedDescription, text)
        XCTAssertEqual(NetworkMock.calls.last?.itemIndex, nil)
        XCTAssertEqual(NetworkMock.calls.last?.url, "https://api.example.com/v1/projects?page=3")
    }

    func testDeactivatedMockFailsWithActivationAdvice() {
        NetworkMock.activate(TestScenario([item("GET", "/x", text: "x")]))
        NetworkMock.deactivate()
        let r = HTTP.fetch("GET", "https://api.example.com/x", session: session)
        XCTAssertNil(r.status)
        XCTAssertTrue(r.errorText.contains("nothing is being served"), r.errorText)
        XCTAssertTrue(r.errorText.contains("call NetworkMock.activate(_:)"), r.errorText)
    }

    // MARK: Protocol registration

    func testWebSocketSchemesAreNotHandled() {
        XCTAssertFalse(NetworkMock.canInit(with: URLRequest(url: URL(string: "ws://api.example.com/socket")!)))
        XCTAssertFalse(NetworkMock.canInit(with: URLRequest(url: URL(string: "wss://api.example.com/socket")!)))
        XCTAssertFalse(NetworkMock.canInit(with: URLRequest(url: URL(string: "ftp://api.example.com/f")!)))
        XCTAssertTrue(NetworkMock.canInit(with: URLRequest(url: URL(string: "https://api.example.com/")!)))
        XCTAssertTrue(NetworkMock.canInit(with: URLRequest(url: URL(string: "HTTP://api.example.com/")!)))
        XCTAssertFalse(HARReplayProtocol.canInit(with: URLRequest(url: URL(string: "wss://api.example.com/socket")!)))
    }

    func testConfigurationPutsNetworkMockFirstOnce() {
        let config = NetworkMock.configuration(base: NetworkMock.configuration())
        let classes = config.protocolClasses ?? []
        // A class of its own that serves the process-wide scenario, and no second NetworkMock class.
        XCTAssertTrue(classes.first is NetworkMock.Type)
        XCTAssertEqual(classes.filter { $0 is NetworkMock.Type }.count, 1)
        XCTAssertEqual((classes.first as? NetworkMock.Type)?.route.server === NetworkMock.server, true)
    }

    // MARK: Responses

    func testResponseHeadersStatusAndRepeatedHeaders() {
        NetworkMock.activate(TestScenario([
            ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "https", host: "api.example.com", path: "/h"),
                              response: MockResponse(status: 418, headers: [HTTPHeader("X-Trace", "abc"),
                                                                            HTTPHeader("Vary", "Accept"),
                                                                            HTTPHeader("vary", "Origin")],
                                                     body: .text("teapot"))),
        ]))
        let r = HTTP.fetch("GET", "https://api.example.com/h", session: session)
        XCTAssertEqual(r.status, 418)
        XCTAssertEqual(r.text, "teapot")
        XCTAssertEqual(r.response?.value(forHTTPHeaderField: "x-trace"), "abc")
        XCTAssertEqual(r.response?.value(forHTTPHeaderField: "Vary"), "Accept, Origin")
        XCTAssertEqual(NetworkMock.calls.first?.status, 418)
    }

    func testBase64BodyIsServedByteExact() {
        let bytes = Data((0...255).map { UInt8($0) } + [0xFF, 0xFE, 0x00])
        NetworkMock.activate(TestScenario([
            ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "https", host: "api.example.com", path: "/bin"),
                              response: MockResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/octet-stream")],
                                                     body: .base64(bytes.base64EncodedString()))),
            ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "https", host: "api.example.com", path: "/bad"),
                              response: MockResponse(status: 200, body: .base64("!!!not base64"))),
            // URL-safe and unpadded, as other recorders write it: served as the generator reads it.
            ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "https", host: "api.example.com", path: "/urlsafe"),
                              response: MockResponse(status: 200, body: .base64("_-8"))),
        ]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/bin", session: session).data, bytes)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/urlsafe", session: session).data, Data([0xFF, 0xEF]))
        let bad = HTTP.fetch("GET", "https://api.example.com/bad", session: session)
        XCTAssertNil(bad.status)
        XCTAssertTrue(bad.errorText.contains("not valid base64"), bad.errorText)
    }

    func testDelayIsHonoured() {
        NetworkMock.activate(TestScenario([item("GET", "/slow", text: "slow", delay: 0.3), item("GET", "/fast", text: "fast")]))
        var start = Date()
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/slow", session: session).text, "slow")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.3)
        start = Date()
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/fast", session: session).text, "fast")
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.25)
    }

    func testCancelledDelayedTaskGetsCancelledError() {
        NetworkMock.activate(TestScenario([item("GET", "/slow", text: "slow", delay: 0.4)]))
        let done = expectation(description: "cancelled")
        final class Box: @unchecked Sendable { var error: Error?; var data: Data? }
        let box = Box()
        let task = session.dataTask(with: URL(string: "https://api.example.com/slow")!) { data, _, error in
            box.error = error; box.data = data; done.fulfill()
        }
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { task.cancel() }
        wait(for: [done], timeout: 5)
        XCTAssertEqual((box.error as? URLError)?.code, .cancelled)
        // Wait past the delay: the late delivery must not crash or call the client.
        Thread.sleep(forTimeInterval: 0.5)
    }

    // MARK: Concurrency

    func testConcurrentRequestsAreCountedExactlyOnce() {
        // 150 single-use items, then one that repeats: 200 requests from many threads must use each
        // single-use item exactly once and serve the remaining 50 from the last one.
        var items = (0..<150).map { i in item("GET", "/c", text: "once-\(i)", repeatability: .once) }
        items.append(item("GET", "/c", text: "always", repeatability: .always))
        NetworkMock.activate(TestScenario(items))
        let results = Locked<[String]>([])
        let group = DispatchGroup()
        let configuration = NetworkMock.configuration()
        configuration.httpMaximumConnectionsPerHost = 16
        let session = URLSession(configuration: configuration)
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            group.enter()
            session.dataTask(with: URL(string: "https://api.example.com/c")!) { data, _, _ in
                results.withLock { $0.append(data.map { String(decoding: $0, as: UTF8.self) } ?? "error") }
                group.leave()
            }.resume()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        let served = results.snapshot
        XCTAssertEqual(served.count, 200)
        XCTAssertEqual(Set(served.filter { $0.hasPrefix("once-") }).count, 150)
        XCTAssertEqual(served.filter { $0.hasPrefix("once-") }.count, 150)
        XCTAssertEqual(served.filter { $0 == "always" }.count, 50)
        XCTAssertEqual(NetworkMock.calls.count, 200)
        XCTAssertEqual(NetworkMock.unusedItems(), [])
        session.invalidateAndCancel()
    }

    // MARK: Fixtures

    func testFixtureBodiesFromDirectoriesAndEnvironment() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hm-fixtures-\(UUID().uuidString)")
        let first = root.appendingPathComponent("first"), second = root.appendingPathComponent("second")
        let env = root.appendingPathComponent("env")
        for d in [first, second, env, env.appendingPathComponent("nested")] {
            try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: root); FixtureLocator.setDirectories([]); unsetenv("HARMOCKING_FIXTURES") }
        let binary = Data([0, 1, 2, 0xFF, 0x80])
        try Data("from first".utf8).write(to: first.appendingPathComponent("a.json"))
        try Data("from second".utf8).write(to: second.appendingPathComponent("a.json"))
        try binary.write(to: second.appendingPathComponent("b.bin"))
        try Data("from env".utf8).write(to: env.appendingPathComponent("nested/c.txt"))

        func fixtureItem(_ path: String, _ name: String) -> ResponseQueueItem {
            ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "https", host: "api.example.com", path: path),
                              response: MockResponse(status: 200, body: .fixture(name)))
        }
        NetworkMock.activate(TestScenario([fixtureItem("/a", "a.json"), fixtureItem("/b", "b.bin"),
                                           fixtureItem("/c", "nested/c.txt"), fixtureItem("/missing", "missing.json")]))
        FixtureLocator.setDirectories([first, second])
        setenv("HARMOCKING_FIXTURES", "/nonexistent-dir:" + env.path, 1)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/a", session: session).text, "from first",
                       "directories are searched in order")
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/b", session: session).data, binary)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/c", session: session).text, "from env")
        let missing = HTTP.fetch("GET", "https://api.example.com/missing", session: session)
        XCTAssertNil(missing.status)
        XCTAssertTrue(missing.errorText.contains(#"fixture "missing.json" not found"#), missing.errorText)
        XCTAssertTrue(missing.errorText.contains(env.path), "lists the HARMOCKING_FIXTURES directories: \(missing.errorText)")
        XCTAssertThrowsError(try FixtureLocator.data(named: "missing.json")) { error in
            XCTAssertEqual((error as? FixtureNotFoundError)?.name, "missing.json")
            XCTAssertEqual(Array((error as? FixtureNotFoundError)?.searched.prefix(4) ?? []),
                           [first.path, second.path, "/nonexistent-dir", env.path])
        }
        unsetenv("HARMOCKING_FIXTURES")
        XCTAssertThrowsError(try FixtureLocator.data(named: "nested/c.txt"), "the environment is read on every lookup")
    }
}
