// The `.mocking(...)` Swift Testing trait: one NetworkMock per test, as `NetworkMock.current`.

import HARMocking
import Testing

/// Gives each test (each case of a parameterized test) a fresh `NetworkMock` serving `scenario`,
/// as `NetworkMock.current`:
///
/// ```swift
/// @Test(.mocking(OrderFlowHTTPScenario()))
/// func placesAnOrder() async throws {
///     let session = URLSession(configuration: NetworkMock.current!.configuration())
///     ...
/// }
/// ```
///
/// On a suite it applies to every test in it. After the test, requests that an item answered
/// without meeting its `expectations` are recorded as issues, and so are unused items when
/// `requireAllItemsServed` is set (one issue listing them, numbered from 1 in queue order, with
/// method and URL, and the requests the test made).
public struct MockingTrait: TestTrait, SuiteTrait, TestScoping {
    let scenario: any Scenario
    let requireAllItemsServed: Bool

    public var isRecursive: Bool { true }

    /// A scope for each test case only. Swift Testing also asks for a scope around a whole test
    /// function and around a suite (`testCase` nil); a mock there would be installed outside the
    /// per-case one, serve nothing, and with `requireAllItemsServed` fail the test for items it
    /// was never meant to serve. A test function without arguments runs as one case.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> MockingTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let mock = NetworkMock(scenario)
        try await NetworkMock.withCurrent(mock) { try await function() }
        for issue in issues(after: mock) {
            Issue.record(Comment(rawValue: issue))
        }
    }

    /// What the trait records after a test that used `mock`: one text per request that did not
    /// meet its item's expectations, then, with `requireAllItemsServed`, the unused items report.
    func issues(after mock: NetworkMock) -> [String] {
        var issues = mock.expectationFailures
        if requireAllItemsServed, let report = UnusedItemsReport(mock) {
            issues.append(report.text)
        }
        return issues
    }
}

extension Trait where Self == MockingTrait {
    /// A fresh `NetworkMock` serving `scenario` for each test, as `NetworkMock.current`. With
    /// `requireAllItemsServed`, an item the test never used fails it.
    public static func mocking(_ scenario: any Scenario, requireAllItemsServed: Bool = false) -> MockingTrait {
        MockingTrait(scenario: scenario, requireAllItemsServed: requireAllItemsServed)
    }
}
