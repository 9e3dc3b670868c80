// Swift Testing: matching beyond exact values, hand-written stubs, request expectations, the
// `.mocking` trait and ScenarioTransport.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HARMocking
@testable import HARMockingTesting

@Suite struct MockStubTests {
    @Test func pathTemplatesAndRegexes() {
        #expect(PathPattern.template("/v1/orders/{id}").matches("/v1/orders/42"))
        #expect(!PathPattern.template("/v1/orders/{id}").matches("/v1/orders/"))
        #expect(!PathPattern.template("/v1/orders/{id}").matches("/v1/orders/42/items"))
        #expect(!PathPattern.template("/v1/orders/{id}").matches("/v2/orders/42"))
        #expect(PathPattern.template("/v1/{kind}/{id}/items").matches("/v1/orders/42/items"))
        #expect(PathPattern.template("/files/{path...}").matches("/files/a/b/c.txt"))
        #expect(!PathPattern.template("/files/{path...}").matches("/files"))
        #expect(PathPattern.regex(#"/v1/orders/\d+"#).matches("/v1/orders/42"))
        #expect(!PathPattern.regex(#"/v1/orders/\d+"#).matches("/v1/orders/42x"), "the whole path must match")
        #expect(!PathPattern.regex("(").matches("/"), "an invalid regex matches nothing")
    }

    @Test func jsonSubsets() {
        let body = Array(#"{"user":{"id":7,"name":"A","tags":["x","y"]},"n":1.0,"extra":true}"#.utf8)
        #expect(MockJSON.contains(bytes: body, expected: #"{"user":{"id":7}}"#))
        #expect(MockJSON.contains(bytes: body, expected: #"{"n":1,"user":{"tags":["x","y"]}}"#))
        #expect(!MockJSON.contains(bytes: body, expected: #"{"user":{"id":8}}"#))
        #expect(!MockJSON.contains(bytes: body, expected: #"{"user":{"tags":["x"]}}"#), "arrays keep their length")
        #expect(!MockJSON.contains(bytes: body, expected: #"{"missing":null}"#))
        #expect(!MockJSON.contains(bytes: Array("not json".utf8), expected: "{}"))
    }

    @Test func stubsWithConditionsAndResponses() async {
        let mock = NetworkMock(TestScenario([queued("https://api.example.com/v1/me", body: "recorded")]))
        mock.stub(.get("/v1/orders/{id}")) { .json(["id": 7, "state": "open"]) }
        mock.stub(.post("/v1/orders").jsonBody(containing: #"{"item":{"sku":"A1"}}"#), .once) { .status(201) }
        // The latest stub is tried first: the specific one goes last.
        mock.stub(.get("/v1/flags").header("X-Api-Version")) { .text("any version") }
        mock.stub(.get("/v1/flags").header("X-Api-Version", "2")) { .text("v2") }
        mock.stub(.path(regex: #"/v1/search/\w+"#).query("q")) { .status(500) }
        mock.stub(.get("/v1/cart").matching("has a cart id") { $0.header("X-Cart") != nil }) { .text("cart") }
        mock.stub(.get("/v1/echo")) { request in .text(request.url?.query ?? "") }
        let session = URLSession(configuration: mock.configuration())

        let order = await Client.get("http://any.host.test:8080/v1/orders/99", session)
        #expect(order.status == 200)
        #expect(order.text == #"{"id":7,"state":"open"}"#)
        #expect(order.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")

        var post = URLRequest(url: URL(string: "https://api.example.com/v1/orders")!)
        post.httpMethod = "POST"
        post.httpBody = Data(#"{"item":{"sku":"A1","qty":2},"note":"x"}"#.utf8)
        #expect(await Client.send(post, session).status == 201)
        let second = await Client.send(post, session)
        #expect((second.error as? UnmatchedRequestError)?.description.contains("already served once") == true)

        var flags = URLRequest(url: URL(string: "https://api.example.com/v1/flags")!)
        flags.setValue("2", forHTTPHeaderField: "X-Api-Version")
        #expect(await Client.send(flags, session).text == "v2")
        flags.setValue("3", forHTTPHeaderField: "X-Api-Version")
        #expect(await Client.send(flags, session).text == "any version")
        let noHeader = await Client.get("https://api.example.com/v1/flags", session)
        #expect((noHeader.error as? UnmatchedRequestError)?.description.contains("header X-Api-Version: expected present, got none") == true)

        #expect(await Client.get("https://api.example.com/v1/search/shoes?q=red", session).status == 500)
        #expect(await Client.get("https://api.example.com/v1/search/shoes", session).error is UnmatchedRequestError)

        var cart = URLRequest(url: URL(string: "https://api.example.com/v1/cart")!)
        let noCart = await Client.send(cart, session)
        #expect((noCart.error as? UnmatchedRequestError)?.description.contains("has a cart id: false for this request") == true)
        cart.setValue("c-1", forHTTPHeaderField: "X-Cart")
        #expect(await Client.send(cart, session).text == "cart")

        #expect(await Client.get("https://api.example.com/v1/echo?a=1&b=2", session).text == "a=1&b=2")
        #expect(mock.calls.last?.response?.body == .text("a=1&b=2"), "calls keep what the stub made")
        // Recorded items still answer what no stub covers.
        #expect(await Client.get("https://api.example.com/v1/me", session).text == "recorded")
    }

    @Test func stubsOverrideRecordedItemsLatestFirst() async {
        let mock = NetworkMock(TestScenario([queued("https://api.example.com/v1/me", body: "recorded", label: "#1 GET /v1/me")]))
        let session = URLSession(configuration: mock.configuration())
        #expect(await Client.get("https://api.example.com/v1/me", session).text == "recorded")
        mock.stub(.get("/v1/me")) { .text("first stub") }
        #expect(await Client.get("https://api.example.com/v1/me", session).text == "first stub")
        mock.stub(.get("/v1/me", host: "api.example.com")) { .failure(.notConnectedToInternet) }
        #expect(await Client.get("https://api.example.com/v1/me", session).urlErrorCode == .notConnectedToInternet)
        // Indexes of earlier calls follow the items they name.
        #expect(mock.calls.map(\.item?.label) == ["#1 GET /v1/me", "stub GET /v1/me", "stub GET /v1/me"])
        #expect(mock.calls.map(\.itemIndex) == [2, 1, 0])
        #expect(mock.calls.map(\.itemNumber) == [3, 2, 1], "numbers count from 1")
    }

    @Test func delayAndBandwidth() async {
        let mock = NetworkMock()
        let body = String(repeating: "x", count: 3_000)
        mock.stub(.get("/slow")) { .text(body).bandwidth(bytesPerSecond: 10_000) }
        mock.stub(.get("/late")) { .text("late").delay(0.3) }
        let session = URLSession(configuration: mock.configuration())
        var start = Date()
        let slow = await Client.get("http://h.test/slow", session)
        #expect(slow.data?.count == body.utf8.count)
        #expect(slow.text == body)
        // 3,000 bytes at 10,000 B/s take 0.3 s (in 1,000-byte chunks on Apple platforms).
        #expect(Date().timeIntervalSince(start) >= 0.2)
        start = Date()
        #expect(await Client.get("http://h.test/late", session).text == "late")
        #expect(Date().timeIntervalSince(start) >= 0.3)
    }

    @Test func expectationsFailReadablyButStillAnswer() async {
        var item = queued("POST", "https://api.example.com/v1/orders", status: 201)
        item.expectations = [.header("X-Api-Version", "2"), .body(.json(#"{"sku":"A1"}"#)), .noHeader("X-Debug")]
        let mock = NetworkMock(TestScenario([item]))
        let session = URLSession(configuration: mock.configuration())
        var request = URLRequest(url: URL(string: "https://api.example.com/v1/orders")!)
        request.httpMethod = "POST"
        request.httpBody = Data(#"{"sku":"B2"}"#.utf8)
        request.setValue("1", forHTTPHeaderField: "X-Debug")
        #expect(await Client.send(request, session).status == 201)
        let failures = mock.expectationFailures
        try? #require(failures.count == 1)
        let text = failures.first ?? ""
        #expect(text.contains("#1 POST /v1/orders answered POST https://api.example.com/v1/orders"))
        #expect(text.contains(#"header X-Api-Version: expected "2", got none"#))
        #expect(text.contains(#"body: expected JSON {"sku":"A1"}, got "{"sku":"B2"}""#))
        #expect(text.contains(#"header X-Debug: expected none, got "1""#))

        request.setValue("2", forHTTPHeaderField: "X-Api-Version")
        request.setValue(nil, forHTTPHeaderField: "X-Debug")
        request.httpBody = Data(#"{ "sku" : "A1" }"#.utf8)
        #expect(await Client.send(request, session).status == 201)
        #expect(mock.expectationFailures.count == 1, "a request that meets them adds nothing")
    }

    @Test(.mocking(TestScenario([queued("https://api.example.com/v1/me", body: "from the trait")])))
    func theTraitGivesEachTestItsOwnMock() async throws {
        let mock = try #require(NetworkMock.current)
        let session = URLSession(configuration: mock.configuration())
        #expect(await Client.get("https://api.example.com/v1/me", session).text == "from the trait")
        // Child tasks see the same mock.
        let childCalls = await Task { NetworkMock.current?.calls.count }.value
        #expect(childCalls == 1)
    }

    @Test func noCurrentMockOutsideAScope() {
        #expect(NetworkMock.current == nil)
    }

    @Test func unusedItemsReportIsReadable() async {
        let mock = NetworkMock(TestScenario([
            queued("POST", "https://api.example.com/login", label: "#1 POST /login"),
            queued("https://api.example.com/feed", .once, label: "#2 GET /feed"),
        ]))
        let session = URLSession(configuration: mock.configuration())
        _ = await Client.get("https://api.example.com/feed", session)
        _ = await Client.get("https://api.example.com/other", session)
        let text = UnusedItemsReport(mock)?.text ?? ""
        #expect(text.hasPrefix("NetworkMock: 1 item of 2 was not used (#n: place in the queue, from 1):\n"
                               + "  #1 POST https://api.example.com/login (.always, never requested)\n"))
        #expect(text.contains("Requests made (2):\n  GET https://api.example.com/feed — answered by #2 GET /feed"))
        #expect(text.contains("GET https://api.example.com/other — unmatched"))
    }

    @Test func scenarioTransportServesWithoutURLSession() async throws {
        var slow = queued("https://api.example.com/v1/slow", body: "late", delay: 5)
        slow.label = "slow"
        var down = queued("https://api.example.com/v1/down")
        down.response = .failure(.cannotConnectToHost)
        let transport = ScenarioTransport(TestScenario([
            queued("https://api.example.com/v1/me", body: "first", .once),
            queued("https://api.example.com/v1/me", body: "then"),
            slow, down,
        ]))
        let me = URLRequest(url: URL(string: "https://api.example.com/v1/me")!)
        let (first, response) = try await transport.send(me)
        #expect(String(decoding: first, as: UTF8.self) == "first" && response.statusCode == 200)
        #expect(String(decoding: try await transport.send(me).0, as: UTF8.self) == "then")
        await #expect(throws: UnmatchedRequestError.self) {
            try await transport.send(URLRequest(url: URL(string: "https://api.example.com/v1/none")!))
        }
        do {
            _ = try await transport.send(URLRequest(url: URL(string: "https://api.example.com/v1/down")!))
            Issue.record("expected a failure")
        } catch let error as URLError {
            #expect(error.code == .cannotConnectToHost)
        }
        var timed = URLRequest(url: URL(string: "https://api.example.com/v1/slow")!)
        timed.timeoutInterval = 0.1
        do {
            _ = try await transport.send(timed)
            Issue.record("expected a timeout")
        } catch let error as URLError {
            #expect(error.code == .timedOut)
        }
        #expect(transport.calls.count == 5)
        transport.reset()
        #expect(String(decoding: try await transport.send(me).0, as: UTF8.self) == "first")
        #expect(transport.unusedItems().isEmpty)
    }
}

@Suite struct FixtureLookupTests {
    /// This test target has `.copy("Fixtures")`: SwiftPM puts `Fixtures/replay-small.har` in the
    /// target's resource bundle beside the test binary, and a bare name finds it there.
    @Test func swiftPMResourcesAreFoundWithoutConfiguration() throws {
        let data = try FixtureLocator.data(named: "replay-small.har")
        #expect(String(decoding: data, as: UTF8.self).contains("\"entries\""))
        #expect((try? FixtureLocator.data(named: "Fixtures/replay-small.har")) == data, "a path below the bundle works too")
    }

    @Test func aMissingFixtureListsTheResourceBundles() {
        do {
            _ = try FixtureLocator.data(named: "no-such-fixture.json")
            Issue.record("expected FixtureNotFoundError")
        } catch let error as FixtureNotFoundError {
            #expect(error.searched.contains { $0.hasSuffix("HARMockingTests.resources") || $0.hasSuffix("HARMockingTests.bundle") },
                    "\(error.searched)")
            #expect(error.description.contains("FixtureLocator.addBundle(.module)"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func addedBundlesAreSearchedBelowTheirRoot() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hm-bundle-\(UUID().uuidString)")
        let nested = root.appendingPathComponent("Fixtures/API/v1")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("orders".utf8).write(to: nested.appendingPathComponent("orders-\(UUID().uuidString).json"))
        let name = try FileManager.default.contentsOfDirectory(atPath: nested.path)[0]
        #expect((try? FixtureLocator.data(named: name)) == nil)
        FixtureLocator.addBundle(try #require(Bundle(path: root.path)))
        #expect(try FixtureLocator.data(named: name) == Data("orders".utf8))
    }

    /// `harrec generate` names fixtures `<scenario>/<file>`: found below a `.copy` tree, and by
    /// file name at the root of a flattened (`.process`) bundle.
    @Test func scenarioDirectoriesAreFoundInCopiedAndFlattenedBundles() throws {
        let id = UUID().uuidString
        let copied = FileManager.default.temporaryDirectory.appendingPathComponent("hm-copied-\(id)")
        let flat = FileManager.default.temporaryDirectory.appendingPathComponent("hm-flat-\(id)")
        let tree = copied.appendingPathComponent("Fixtures/API/v1/browse-\(id)")
        try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: flat, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copied); try? FileManager.default.removeItem(at: flat) }
        try Data("tree".utf8).write(to: tree.appendingPathComponent("v1-orders-\(id).json"))
        try Data("flat".utf8).write(to: flat.appendingPathComponent("v1-items-\(id).json"))
        FixtureLocator.addBundle(try #require(Bundle(path: copied.path)))
        FixtureLocator.addBundle(try #require(Bundle(path: flat.path)))
        #expect(try FixtureLocator.data(named: "browse-\(id)/v1-orders-\(id).json") == Data("tree".utf8))
        #expect(try FixtureLocator.data(named: "browse-\(id)/v1-items-\(id).json") == Data("flat".utf8))
        #expect((try? FixtureLocator.data(named: "other-\(id)/v1-orders-\(id).json")) == nil,
                "a copied tree only answers the name's own directory")
    }
}
