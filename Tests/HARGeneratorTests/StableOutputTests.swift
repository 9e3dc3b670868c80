import Foundation
import HAR
@testable import HARGenerator
import HARMocking
import XCTest

/// Regeneration stays quiet: two recordings of one flow that differ only in volatile values give
/// identical files; recorded latency, failures and repeat changes are emitted.
final class StableOutputTests: XCTestCase {
    /// One recording of a small flow; `run` changes every volatile value.
    private func recording(run: Int, conditional: Bool = false) -> HARLog {
        let volatile: [(String, String)] = [
            ("Date", "Mon, 30 Nov 2026 10:00:0\(run) GMT"), ("Server", "nginx/1.2\(run)"), ("Age", "\(run)"),
            ("Via", "1.1 edge-\(run)"), ("X-Request-Id", "req-\(run)"), ("X-Correlation-Id", "corr-\(run)"),
            ("CF-Ray", "ray-\(run)"), ("X-Amz-Cf-Id", "cf-\(run)"), ("X-Amzn-Trace-Id", "Root=\(run)"),
            ("traceparent", "00-\(run)-01"), ("ETag", "\"v\(run)\""), ("Last-Modified", "Mon, 30 Nov 2026 0\(run):00:00 GMT"),
            ("Cache-Control", "no-store"),
        ]
        var me = HARFactory.entry("GET", "https://api.example.com/v1/me", mimeType: "application/json",
                                  text: #"{"id":7}"#, headers: volatile)
        if conditional { me.request.headers.append(HARHeader(name: "If-None-Match", value: "\"v0\"")) }
        return HARFactory.log([me])
    }

    private func scenarioSource(_ log: HARLog, _ configure: (inout GeneratorOptions) -> Void = { _ in }) throws -> String {
        var options = GeneratorOptions(scenarioName: "flow", inlineLimit: 4096, jsonBodiesInFixtures: false)
        configure(&options)
        let files = try SwiftMockGenerator.generate(log, options: options)
        return String(decoding: files.first { $0.role == .scenario }!.bytes, as: UTF8.self)
    }

    func testTwoRecordingsThatDifferOnlyInVolatileHeadersGiveIdenticalFiles() throws {
        let first = try scenarioSource(recording(run: 1)), second = try scenarioSource(recording(run: 2))
        XCTAssertEqual(first, second)
        for name in ["Date", "Server", "\"Age\"", "Via", "X-Request-Id", "X-Correlation-Id", "CF-Ray", "X-Amz-Cf-Id",
                     "X-Amzn-Trace-Id", "traceparent", "ETag", "Last-Modified"] {
            XCTAssertFalse(first.contains("HTTPHeader(\(name.hasPrefix("\"") ? name : "\"\(name)\"")"), name)
        }
        XCTAssertTrue(first.contains(#"HTTPHeader("Cache-Control", "no-store")"#))
    }

    func testValidatorsStayWhenARequestWasConditionalAndKeepHeaderKeepsOne() throws {
        let conditional = try scenarioSource(recording(run: 1, conditional: true))
        XCTAssertTrue(conditional.contains(#"HTTPHeader("ETag", "\"v1\"")"#))
        XCTAssertFalse(conditional.contains(#"HTTPHeader("Last-Modified""#))
        let kept = try scenarioSource(recording(run: 1)) { $0.scenario.droppedResponseHeaders.remove("server") }
        XCTAssertTrue(kept.contains(#"HTTPHeader("Server", "nginx/1.21")"#))
    }

    func testRecordedLatencyIsWaitPlusReceive() throws {
        var slow = HARFactory.entry("GET", "https://api.example.com/v1/slow", text: "ok")
        slow.timings = HARTimings(connect: 40, send: 1, wait: 1500, receive: 250)
        slow.time = 1791
        var failed = HARFactory.entry("GET", "https://api.example.com/v1/down", status: 0,
                                      custom: [(key: "_error", value: .string("upstream connection failed: connect timed out after 10 s"))])
        failed.time = 10_000
        let log = HARFactory.log([slow, failed])
        let none = try scenarioSource(log)
        XCTAssertFalse(none.contains("delay:"))
        let recorded = try scenarioSource(log) { $0.scenario.latency = .recorded }
        XCTAssertTrue(recorded.contains("delay: 1.75"), recorded)
        // A failure waits as long as the recording did before it failed.
        XCTAssertTrue(recorded.contains("// Recorded failure: upstream connection failed: connect timed out after 10 s"))
        XCTAssertTrue(recorded.contains("response: .failure(.timedOut, delay: 10.0)"), recorded)
    }

    /// Recorded times are milliseconds; their sum divided by 1000 is not a short decimal
    /// (0.3 + 0.043 ms gives 0.00034300000000000004 s). Generated delays are whole milliseconds.
    func testRecordedDelaysAreRoundedToTheMillisecond() throws {
        var entries: [HAREntry] = []
        for (i, (wait, receive)) in [(342.6, 0.7), (0.3, 0.043), (1000.1, 0.2), (0.2, 0.4)].enumerated() {
            var entry = HARFactory.entry("GET", "https://api.example.com/v1/t\(i)", text: "ok", second: i)
            entry.timings = HARTimings(send: 0, wait: wait, receive: receive)
            entries.append(entry)
        }
        var failed = HARFactory.entry("GET", "https://api.example.com/v1/down", status: 0, second: 9,
                                      custom: [(key: "_error", value: .string("upstream connection failed: connection refused"))])
        failed.time = 1234.5678
        entries.append(failed)
        let source = try scenarioSource(HARFactory.log(entries)) { $0.scenario.latency = .recorded }
        XCTAssertTrue(source.contains("delay: 0.343\n"), source)
        XCTAssertTrue(source.contains("delay: 1.0\n"), "1000.3 ms: " + source)
        XCTAssertTrue(source.contains("delay: 0.001\n"), "0.6 ms rounds up: " + source)
        XCTAssertTrue(source.contains("response: .failure(.cannotConnectToHost, delay: 1.235)"), source)
        XCTAssertFalse(source.contains("0.00034"), "0.343 ms rounds to no delay at all")
        let delays = source.components(separatedBy: "delay: ").dropFirst().map { $0.prefix { $0 != "\n" && $0 != ")" } }
        XCTAssertEqual(delays, ["0.343", "1.0", "0.001", "1.235"])
        XCTAssertEqual(SwiftSource.secondsLiteral(0.00034300000000000004), nil)
        XCTAssertEqual(SwiftSource.secondsLiteral(0.34300000000000004), "0.343")
        XCTAssertEqual(SwiftSource.secondsLiteral(12.0), "12.0")
        XCTAssertEqual(SwiftSource.secondsLiteral(-1), nil)
        XCTAssertEqual(SwiftSource.secondsLiteral(.infinity), nil)
        XCTAssertEqual(SwiftSource.secondsLiteral(.nan), nil)
    }

    /// Fixture names come from paths and queue order only: a recording that differs in volatile
    /// values (cache busters, dates) names its fixtures the same, and one with an extra request
    /// at the end keeps the names of the others.
    func testFixtureNamesAreStable() throws {
        func recording(run: Int, extra: Bool = false) -> HARLog {
            var entries = [
                HARFactory.entry("GET", "https://api.example.com/v1/orders?_=\(run)", mimeType: "application/json",
                                 text: #"{"orders":[]}"#, headers: [("Date", "Mon, 30 Nov 2026 10:00:0\(run) GMT")]),
                HARFactory.entry("GET", "https://api.example.com/v1/orders/42", mimeType: "application/json",
                                 text: #"{"id":42}"#, second: 1),
                HARFactory.entry("GET", "https://api.example.com/v1/orders/42", mimeType: "application/json",
                                 text: #"{"id":42,"state":"done"}"#, second: 2),
            ]
            if extra {
                entries.append(HARFactory.entry("GET", "https://api.example.com/v1/orders/42", mimeType: "application/json",
                                                text: #"{"id":42,"state":"archived"}"#, second: 3))
            }
            return HARFactory.log(entries)
        }
        let options = GeneratorOptions(scenarioName: "browse")
        let first = try SwiftMockGenerator.generate(recording(run: 1), options: options)
        let second = try SwiftMockGenerator.generate(recording(run: 2), options: options)
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.filter { $0.role == .fixture }.map(\.relativePath),
                       ["browse/v1-orders.json", "browse/v1-orders-42.json", "browse/v1-orders-42-2.json"])
        let longer = try SwiftMockGenerator.generate(recording(run: 1, extra: true), options: options)
        XCTAssertEqual(Array(longer.filter { $0.role == .fixture }.prefix(3)), first.filter { $0.role == .fixture })
        XCTAssertEqual(longer.last?.relativePath, "browse/v1-orders-42-3.json")
    }

    func testRepeatsNameWhatChanged() throws {
        let log = HARFactory.log([
            HARFactory.entry("GET", "https://api.example.com/v1/order", mimeType: "application/json",
                             text: #"{"status":"pending","items":[{"count":1}],"id":"o-1"}"#, second: 0),
            HARFactory.entry("GET", "https://api.example.com/v1/order", mimeType: "application/json",
                             text: #"{"status":"done","items":[{"count":2}],"id":"o-1","eta":null}"#, second: 1),
            HARFactory.entry("GET", "https://api.example.com/v1/order", mimeType: "application/json",
                             text: #"{"status":"done","items":[{"count":2}],"id":"o-1","eta":null}"#, second: 2),
        ])
        let source = try scenarioSource(log)
        XCTAssertTrue(source.contains(#"// Changed since #1 GET /v1/order: status: "pending" -> "done"; items[0].count: 1 -> 2; eta: (none) -> null"#),
                      source)
        XCTAssertEqual(source.components(separatedBy: "// Changed since").count, 2, "an identical repeat gets no comment")
        XCTAssertNil(RepeatNotes.changes(from: .text("not json"), to: .text("{}")))
        let many = RepeatNotes.changes(from: .text(#"{"a":1,"b":1,"c":1,"d":1,"e":1}"#), to: .text(#"{"a":2,"b":2,"c":2,"d":2,"e":2}"#))
        XCTAssertEqual(many, "a: 1 -> 2; b: 1 -> 2; c: 1 -> 2; and 2 more")
    }
}
