// Readable failure texts and the XCTest assertions that use them.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HARMocking
import XCTest

/// The text shown when a mock has items the test never used: which items, and what the app did
/// request instead.
struct UnusedItemsReport {
    let text: String

    /// nil when every item was served.
    init?(_ mock: NetworkMock) {
        let unused = mock.unusedItems()
        guard !unused.isEmpty else { return nil }
        var lines = ["NetworkMock: \(unused.count == 1 ? "1 item was" : "\(unused.count) items were") not used:"]
        for item in unused.prefix(20) {
            lines.append("  " + UnusedItemsReport.describe(item))
        }
        if unused.count > 20 { lines.append("  … and \(unused.count - 20) more") }
        let calls = mock.calls
        lines.append(calls.isEmpty ? "The app made no requests." : "Requests made (\(calls.count)):")
        for call in calls.prefix(20) {
            let answer = call.item.map { "answered by " + ($0.label ?? "\($0.condition.method) \($0.condition.path)") } ?? "unmatched"
            lines.append("  \(call.method) \(call.url?.absoluteString ?? "?") — \(answer)")
        }
        if calls.count > 20 { lines.append("  … and \(calls.count - 20) more") }
        text = lines.joined(separator: "\n")
    }

    static func describe(_ item: ResponseQueueItem) -> String {
        let name = item.label ?? "\(item.condition.method) \(item.condition.path)"
        switch item.repeatability {
        case .once: return name + " (.once)"
        case .always: return name + " (.always, never requested)"
        case .times(let n): return name + " (.times(\(n)))"
        }
    }
}

/// Fails when `mock` has an item the test never used (`.always` items included) or a request
/// that an item answered without meeting its expectations; the message lists them and the
/// requests the app made.
public func XCTAssertAllItemsServed(_ mock: NetworkMock, _ message: @autoclosure () -> String = "",
                                    file: StaticString = #filePath, line: UInt = #line) {
    let prefix = message().isEmpty ? "" : message() + "\n"
    if let report = UnusedItemsReport(mock) {
        XCTFail(prefix + report.text, file: file, line: line)
    }
    XCTAssertMetExpectations(mock, message(), file: file, line: line)
}

/// Fails once for each request that an item answered without meeting its `expectations`.
public func XCTAssertMetExpectations(_ mock: NetworkMock, _ message: @autoclosure () -> String = "",
                                     file: StaticString = #filePath, line: UInt = #line) {
    let prefix = message().isEmpty ? "" : message() + "\n"
    for failure in mock.expectationFailures {
        XCTFail(prefix + failure, file: file, line: line)
    }
}
