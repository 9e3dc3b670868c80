// The `.mocking(...)` Swift Testing trait: one NetworkMock per test, as `NetworkMock.current`.

import HARMocking
import Testing

/// Gives each test (each case of a parameterized test) a fresh `NetworkMock` serving `scenario`,
/// as `NetworkMock.current`:
///
/// ```swift
/// @Test(.mocking(OrderFlowHttpScenario()))
/// func placesAnOrder() async throws {
///     let session = URLSession(configuration: NetworkMock.current!.configuration())
///     ...
/// }
/// ```
///
/// On a suite it applies to every test in it. After the test, requests that an item answered
/// without meeting its `expectations` are recorded as issues, and so are unused items when
/// `requireAllItemsServed` is set.
public struct MockingTrait: TestTrait, SuiteTrait, TestScoping {
    let scenario: any Scenario
    let requireAllItemsServed: Bool

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> MockingTrait? {
        // One mock per test case, never one for a whole suite.
        test.isSuite ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        let mock = NetworkMock(scenario)
        try await NetworkMock.withCurrent(mock) { try await function() }
        for failure in mock.expectationFailures {
            Issue.record(Comment(rawValue: failure))
        }
        if requireAllItemsServed, let report = UnusedItemsReport(mock) {
            Issue.record(Comment(rawValue: report.text))
        }
    }
}

extension Trait where Self == MockingTrait {
    /// A fresh `NetworkMock` serving `scenario` for each test, as `NetworkMock.current`. With
    /// `requireAllItemsServed`, an item the test never used fails it.
    public static func mocking(_ scenario: any Scenario, requireAllItemsServed: Bool = false) -> MockingTrait {
        MockingTrait(scenario: scenario, requireAllItemsServed: requireAllItemsServed)
    }
}
