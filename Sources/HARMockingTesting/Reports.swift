// Readable failure texts and the XCTest assertions that use them.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HARMocking
import XCTest

/// The text shown when a mock has items the test never used: which items, and what the app did
/// request instead. Items are numbered as every HARMocking message numbers them: `#n` is the
/// item's place in the mock's queue, counting from 1 (stubs first, then the scenario's items).
///
/// ```
/// NetworkMock: 1 item of 3 was not used (#n: place in the queue, from 1):
///   #3 GET https://api.example.com/v1/projects/42 (.once)
/// Requests made (2):
///   GET https://api.example.com/v1/feed — answered by #1 GET /v1/feed
///   GET https://api.example.com/v1/feed — answered by #2 GET /v1/feed
/// ```
struct UnusedItemsReport {
    let text: String

    /// nil when every item was served.
    init?(_ mock: NetworkMock) {
        self.init(owner: "NetworkMock", itemCount: mock.itemCount, unused: mock.unusedEntries(), calls: mock.calls)
    }

    /// nil when `unused` is empty. `unused`: 0-based queue indices with their items, in queue order.
    init?(owner: String, itemCount: Int, unused: [(index: Int, item: ResponseQueueItem)], calls: [MockCall]) {
        guard !unused.isEmpty else { return nil }
        let what = unused.count == 1 ? "1 item of \(itemCount) was" : "\(unused.count) items of \(itemCount) were"
        var lines = ["\(owner): \(what) not used (#n: place in the queue, from 1):"]
        for (index, item) in unused.prefix(20) {
            lines.append("  " + UnusedItemsReport.describe(item, number: index + 1))
        }
        if unused.count > 20 { lines.append("  … and \(unused.count - 20) more") }
        lines.append(calls.isEmpty ? "The app made no requests." : "Requests made (\(calls.count)):")
        for call in calls.prefix(20) {
            var answer = "unmatched"
            if let item = call.item, let number = call.itemNumber {
                answer = "answered by " + UnusedItemsReport.name(item, number: number)
            }
            lines.append("  \(call.method) \(call.url?.absoluteString ?? "?") — \(answer)")
        }
        if calls.count > 20 { lines.append("  … and \(calls.count - 20) more") }
        text = lines.joined(separator: "\n")
    }

    /// `#3 GET https://api.example.com/v1/projects/42 (.once)`, with the item's label when it says
    /// more than its number, method and path (a stub's, or a recorded number that stubs moved).
    static func describe(_ item: ResponseQueueItem, number: Int) -> String {
        let c = item.condition
        var text = "#\(number) \(c.method) \(url(of: c))"
        switch item.repeatability {
        case .once: text += " (.once)"
        case .always: text += " (.always, never requested)"
        case .times(let n): text += " (.times(\(n)))"
        }
        if let label = customLabel(item, number: number) { text += ", labelled \"\(label)\"" }
        return text
    }

    /// `#2 GET /v1/feed`, with the item's label when it says more.
    static func name(_ item: ResponseQueueItem, number: Int) -> String {
        var text = "#\(number) \(item.condition.method) \(path(of: item.condition))"
        if let label = customLabel(item, number: number) { text += " (\"\(label)\")" }
        return text
    }

    /// The item's label, unless it is `#<number> <METHOD> <path>` (what the report shows anyway).
    private static func customLabel(_ item: ResponseQueueItem, number: Int) -> String? {
        guard let label = item.label, label != "#\(number) \(item.condition.method) \(path(of: item.condition))" else {
            return nil
        }
        return label
    }

    /// The path as conditions write it: the path, a template, or `regex <pattern>`.
    private static func path(of condition: RequestCondition) -> String {
        switch condition.pathPattern {
        case .template(let template)?: return template
        case .regex(let pattern)?: return "regex " + pattern
        case nil: return condition.path
        }
    }

    /// The URL a condition matches: scheme, host, port, path and query items (`*` for any scheme
    /// or host, `name=*` for an item of any value).
    static func url(of condition: RequestCondition) -> String {
        var text = "\(condition.scheme)://\(condition.host)"
        if let port = condition.port { text += ":\(port)" }
        switch condition.pathPattern {
        case .template(let template)?: text += template
        case .regex(let pattern)?: text += " (path matching \(pattern))"
        case nil: text += condition.path
        }
        let items = condition.query.map { match -> String in
            switch match {
            case .equals(let name, let value?): return name + "=" + value
            case .equals(let name, nil): return name
            case .present(let name): return name + "=*"
            }
        }
        if !items.isEmpty { text += "?" + items.joined(separator: "&") }
        return text
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
