@testable import Recording
import Synchronization
import XCTest

/// `--record-hosts`, `--skip-hosts`, `--skip-url` and `--skip-content-type`: what the filter keeps,
/// and that the sink wrapper passes on exactly that (WebSocket conversations included).
final class RecordingFilterTests: XCTestCase {
    private func flow(_ id: UInt64, _ url: String, contentType: String? = nil) -> Flow {
        var flow = Flow(id: id, clientAddress: "127.0.0.1:1",
                        request: RecordedRequest(method: "GET", url: url, httpVersion: "HTTP/1.1", fields: [], headSize: 20),
                        instants: FlowInstants(requestStart: Double(id)))
        if let contentType {
            flow.response = RecordedResponse(status: 200, reason: "OK", httpVersion: "HTTP/1.1",
                                             fields: [RecordedField(name: "Content-Type", value: contentType)], headSize: 40)
        }
        return flow
    }

    private func regex(_ text: String) -> Regex<AnyRegexOutput> { try! Regex(text).ignoresCase() }

    func testHostAndPortFillsTheSchemesPort() {
        XCTAssertEqual(RecordingFilter.hostAndPort("https://API.example.com/v1?x"), "api.example.com:443")
        XCTAssertEqual(RecordingFilter.hostAndPort("http://a.test:8080/"), "a.test:8080")
        XCTAssertEqual(RecordingFilter.hostAndPort("wss://u:p@ws.test/chat"), "ws.test:443")
        XCTAssertEqual(RecordingFilter.hostAndPort("http://[::1]:9000/x"), "[::1]:9000")
        XCTAssertEqual(RecordingFilter.hostAndPort("http://[::1]/x"), "[::1]:80")
    }

    func testHostsURLsAndContentTypes() {
        let filter = RecordingFilter(recordHosts: [regex(#"(^|\.)example\.com:"#)], skipHosts: [regex(#"^analytics\."#)],
                                     skipURLs: [regex(#"/healthz$"#)], skipContentTypes: ["image/*", "Font/WOFF2"])
        XCTAssertTrue(filter.keeps(flow(1, "https://api.example.com/v1/orders", contentType: "application/json; charset=utf-8")))
        XCTAssertFalse(filter.keeps(flow(2, "https://cdn.other.net/a.js")), "not a recorded host")
        XCTAssertFalse(filter.keeps(flow(3, "https://analytics.example.com/collect")), "a skipped host wins")
        XCTAssertFalse(filter.keeps(flow(4, "https://api.example.com/healthz")))
        XCTAssertTrue(filter.keeps(flow(5, "https://api.example.com/healthz?deep=1")), "patterns are the caller's: $ ends the URL")
        XCTAssertFalse(filter.keeps(flow(6, "https://api.example.com/logo", contentType: "IMAGE/PNG")))
        XCTAssertFalse(filter.keeps(flow(7, "https://api.example.com/f", contentType: "font/woff2")))
        XCTAssertTrue(filter.keeps(flow(8, "https://api.example.com/f", contentType: "font/woff")))
        XCTAssertTrue(filter.keeps(flow(9, "https://api.example.com/pending")), "no response yet: the URL decides")
        XCTAssertTrue(RecordingFilter().isEmpty)
        XCTAssertTrue(RecordingFilter().keeps(flow(10, "http://anything.test/")))
    }

    final class Collecting: FlowSink, @unchecked Sendable {
        var flows: [UInt64] = []
        var starts: [UInt64] = []
        var messages: [UInt64] = []
        var marks: [String] = []
        var streamsWebSocketMessages: Bool { true }
        func record(_ flow: Flow) { flows.append(flow.id) }
        func recordPageMark(_ mark: PageMark) { marks.append(mark.name) }
        func recordWebSocketStart(_ flow: Flow) { starts.append(flow.id) }
        func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64) { messages.append(flowID) }
    }

    func testTheSinkPassesOnWhatTheFilterKeepsAndEveryPageMark() {
        let inner = Collecting()
        let sink = FilteringSink(inner, filter: RecordingFilter(skipHosts: [regex("^ads\\.")]))
        XCTAssertTrue(sink.streamsWebSocketMessages)
        sink.record(flow(1, "https://api.test/a"))
        sink.record(flow(2, "https://ads.test/b"))
        sink.recordPageMark(PageMark(name: "checkout", time: 3))
        // A WebSocket conversation skipped at its start stays skipped to its end.
        let message = RecordedWebSocketMessage(direction: .send, time: 4, opcode: 1, data: Array("hi".utf8))
        sink.recordWebSocketStart(flow(3, "wss://ads.test/live"))
        sink.recordWebSocketMessage(message, flowID: 3)
        sink.record(flow(3, "wss://ads.test/live"))
        sink.recordWebSocketStart(flow(4, "wss://api.test/live"))
        sink.recordWebSocketMessage(message, flowID: 4)
        sink.record(flow(4, "wss://api.test/live"))
        XCTAssertEqual(inner.flows, [1, 4])
        XCTAssertEqual(inner.starts, [4])
        XCTAssertEqual(inner.messages, [4])
        XCTAssertEqual(inner.marks, ["checkout"])
        XCTAssertEqual(sink.skippedCount, 2)
    }
}
