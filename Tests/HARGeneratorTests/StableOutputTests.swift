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
