// Swift Testing: the `.mocking(...)` trait's scopes and `requireAllItemsServed`, and the unused
// items report it records.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import HARMocking
@testable import HARMockingTesting

/// A login (`.once`) and a feed page (`.always`), labelled as `harrec generate` labels them.
private let loginAndFeed = TestScenario([
    queued("POST", "https://api.example.com/v1/login", body: "token", .once, label: "#1 POST /v1/login"),
    queued("https://api.example.com/v1/feed?page=2", body: "feed", label: "#2 GET /v1/feed"),
], id: "loginAndFeed")

private let feedURL = "https://api.example.com/v1/feed?page=2"

private func login(_ session: URLSession) async -> Outcome {
    var request = URLRequest(url: URL(string: "https://api.example.com/v1/login")!)
    request.httpMethod = "POST"
    return await Client.send(request, session)
}

/// Something a `@Sendable` scope closure hands back to the test.
private final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); defer { lock.unlock() }; stored = newValue }
    }
}

@Suite struct MockingTraitTests {
    // MARK: The trait on real tests (an issue the trait records fails these tests)

    /// A test that uses every item passes. (The trait used to provide a second scope around the
    /// whole test function, whose mock saw no requests and failed every such test.)
    @Test(.mocking(loginAndFeed, requireAllItemsServed: true))
    func requireAllItemsServedPassesWhenEveryItemIsServed() async throws {
        let mock = try #require(NetworkMock.current)
        let session = URLSession(configuration: mock.configuration())
        #expect(await login(session).text == "token")
        #expect(await Client.get(feedURL, session).text == "feed")
        #expect(mock.unusedItems().isEmpty)
    }

    /// Each case of a parameterized test gets a fresh mock, and no mock around them all checks
    /// anything afterwards.
    @Test(.mocking(loginAndFeed, requireAllItemsServed: true), arguments: [1, 2, 3])
    func eachCaseHasItsOwnMock(_ feeds: Int) async throws {
        let mock = try #require(NetworkMock.current)
        #expect(mock.calls.isEmpty, "a case never sees another case's calls")
        let session = URLSession(configuration: mock.configuration())
        #expect(await login(session).status == 200, "the .once login is unused in this case's mock")
        for _ in 0..<feeds { #expect(await Client.get(feedURL, session).text == "feed") }
        #expect(mock.calls.map(\.itemNumber) == ([1] + Array(repeating: 2, count: feeds)).map { Optional($0) })
    }

    // MARK: The trait's parts, exercised directly

    /// Scopes are provided for test cases only: not around a whole test function nor a suite
    /// (for which Swift Testing always passes a nil test case).
    @Test func scopesAreProvidedForTestCasesOnly() throws {
        let trait = MockingTrait.mocking(loginAndFeed, requireAllItemsServed: true)
        let test = try #require(Test.current)
        let testCase = try #require(Test.Case.current)
        #expect(trait.scopeProvider(for: test, testCase: nil) == nil)
        #expect(trait.scopeProvider(for: test, testCase: testCase) != nil)
        #expect(trait.isRecursive, "on a suite, every test in it gets the trait")
    }

    /// The scope installs a fresh mock as `NetworkMock.current` and records nothing when every
    /// item was served.
    @Test func aScopeWhoseItemsWereAllServedRecordsNothing() async throws {
        let trait = MockingTrait.mocking(loginAndFeed, requireAllItemsServed: true)
        let test = try #require(Test.current)
        let testCase = try #require(Test.Case.current)
        #expect(NetworkMock.current == nil)
        // What the mock saw, read inside the scope: the mock is released when the scope ends.
        let seen = Box<(numbers: [Int?], issues: [String])?>(nil)
        // Any issue the scope records fails this test.
        try await trait.provideScope(for: test, testCase: testCase) {
            guard let mock = NetworkMock.current else { return }
            let session = URLSession(configuration: mock.configuration())
            _ = await login(session)
            _ = await Client.get(feedURL, session)
            seen.value = (mock.calls.map(\.itemNumber), trait.issues(after: mock))
        }
        let (numbers, issues) = try #require(seen.value, "the scope provides NetworkMock.current")
        #expect(numbers == [1, 2])
        #expect(issues.isEmpty)
        #expect(NetworkMock.current == nil, "the mock is current inside the scope only")
    }

    /// An item the test never used fails it: one issue naming the item (numbered from 1, with
    /// method and URL) and the requests made.
    @Test func anUnservedItemIsRecordedAsAnIssue() async throws {
        let trait = MockingTrait.mocking(loginAndFeed, requireAllItemsServed: true)
        let recorded = try await issues(recordedBy: trait, containing: "#1 POST https://api.example.com/v1/login (.once)")
        #expect(recorded == ["""
            NetworkMock: 1 item of 2 was not used (#n: place in the queue, from 1):
              #1 POST https://api.example.com/v1/login (.once)
            Requests made (1):
              GET https://api.example.com/v1/feed?page=2 — answered by #2 GET /v1/feed
            """])
    }

    /// Without `requireAllItemsServed` unused items are fine; unmet expectations are issues either way.
    @Test func expectationsAreCheckedWithoutRequireAllItemsServed() async throws {
        var feed = queued(feedURL, body: "feed", label: "#1 GET /v1/feed")
        feed.expectations = [.header("X-Api-Version", "2")]
        let scenario = TestScenario([feed, queued("https://api.example.com/v1/unused")])
        let trait = MockingTrait.mocking(scenario)
        let recorded = try await issues(recordedBy: trait, containing: "#1 GET /v1/feed answered GET \(feedURL)")
        #expect(recorded.count == 1, "\(recorded)")
        #expect(recorded.first?.contains(#"header X-Api-Version: expected "2", got none"#) == true)
    }

    /// The issues `trait` records around a test case that fetches `feedURL` once, each expected
    /// (under `withKnownIssue`) to contain `expected`.
    private func issues(recordedBy trait: MockingTrait, containing expected: String) async throws -> [String] {
        let test = try #require(Test.current)
        let testCase = try #require(Test.Case.current)
        let recorded = Box<[String]>([])
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: testCase) {
                guard let mock = NetworkMock.current else { return }
                _ = await Client.get(feedURL, URLSession(configuration: mock.configuration()))
            }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined(separator: "\n")
            recorded.value.append(text)
            return text.contains(expected)
        }
        return recorded.value
    }

    // MARK: The report

    /// Items are numbered by their place in the queue, from 1, stubs first; a label is shown
    /// when it says more than the number, method and path.
    @Test func theReportNumbersItemsFromOneInQueueOrder() async {
        let mock = NetworkMock(TestScenario([
            queued("https://api.example.com/v1/a", .once, label: "#1 GET /v1/a"),
            queued("https://api.example.com/v1/b?x=1", .times(2), label: "#2 GET /v1/b"),
            queued("http://localhost:8080/v1/c?flag"),
        ]))
        mock.stub(.get("/v1/orders/{id}")) { .status(204) }
        let session = URLSession(configuration: mock.configuration())
        #expect(await Client.get("https://api.example.com/v1/b?x=1", session).status == 200)
        #expect(await Client.get("http://localhost:8080/v1/c?flag", session).status == 200)
        #expect(await Client.get("https://api.example.com/v1/none", session).error is UnmatchedRequestError)
        #expect(mock.calls.map(\.itemIndex) == [2, 3, nil])
        #expect(mock.calls.map(\.itemNumber) == [3, 4, nil])
        let text = UnusedItemsReport(mock)?.text
        #expect(text == """
            NetworkMock: 3 items of 4 were not used (#n: place in the queue, from 1):
              #1 GET *://*/v1/orders/{id} (.always, never requested), labelled "stub GET template /v1/orders/{id}"
              #2 GET https://api.example.com/v1/a (.once), labelled "#1 GET /v1/a"
              #3 GET https://api.example.com/v1/b?x=1 (.times(2)), labelled "#2 GET /v1/b"
            Requests made (3):
              GET https://api.example.com/v1/b?x=1 — answered by #3 GET /v1/b ("#2 GET /v1/b")
              GET http://localhost:8080/v1/c?flag — answered by #4 GET /v1/c
              GET https://api.example.com/v1/none — unmatched
            """)
    }

    @Test func theReportSaysWhenNoRequestWasMade() {
        let mock = NetworkMock(TestScenario([queued("https://api.example.com/v1/a", label: "#1 GET /v1/a")]))
        #expect(UnusedItemsReport(mock)?.text == """
            NetworkMock: 1 item of 1 was not used (#n: place in the queue, from 1):
              #1 GET https://api.example.com/v1/a (.always, never requested)
            The app made no requests.
            """)
        let empty = NetworkMock(TestScenario([]))
        #expect(UnusedItemsReport(empty) == nil, "nothing to report")
    }
}
