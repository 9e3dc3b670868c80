import HARScenarios
import HTTP1
import HTTP2
@testable import ProxyCore
import Recording
import XCTest

/// `harrec replay` over HTTP/2: a real nghttp2 client's streams answered from a ReplayService by
/// HTTP2Layer, with nothing sent to an origin and nothing recorded.
final class HTTP2ReplayTests: XCTestCase {
    private func service() -> ReplayService {
        func entry(_ method: String, _ path: String, _ text: String, _ r: Repeatability = .always,
                   body: BodyMatch? = nil, delay: Double? = nil, failure: Bool = false) -> QueueEntry {
            var response = MockResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain"),
                                                               HTTPHeader("Connection", "keep-alive")],
                                        body: .text(text), delay: delay)
            if failure { response = .failure(code: .networkConnectionLost) }
            return QueueEntry(item: ResponseQueueItem(
                condition: RequestCondition(method: method, scheme: "https", host: "api.test", path: path, body: body),
                response: response, repeatability: r))
        }
        return ReplayService(entries: [entry("GET", "/n", "first", .once), entry("GET", "/n", "again"),
                                       entry("POST", "/q", "matched", body: .json(#"{"a":1}"#)),
                                       entry("GET", "/slow", "late", delay: 0.5),
                                       entry("GET", "/down", "", failure: true)],
                             source: "HAR file t.har")
    }

    private func status(_ h: HTTP2LayerHarness, _ stream: Int32) -> String? {
        for case .headers(stream, let fields, _) in h.clientEvents {
            return fields.first { $0.name == ":status" }?.value
        }
        return nil
    }

    func testStreamsAreAnsweredFromTheRecordingInOrder() throws {
        for chunk in [Int.max, 1, 5] {
            let h = try HTTP2LayerHarness(chunk: chunk, replay: service())
            let a = try h.request("/n"), b = try h.request("/n"), c = try h.request("/n")
            let post = try h.request("/q", method: "POST", body: Array(#"{ "a" : 1 }"#.utf8))
            let missing = try h.request("/nothing")
            try h.run()
            XCTAssertEqual([a, b, c].map { text(streamData(h.clientEvents, $0)) }, ["first", "again", "again"], "chunk \(chunk)")
            XCTAssertEqual(text(streamData(h.clientEvents, post)), "matched")
            XCTAssertEqual(status(h, a), "200")
            XCTAssertTrue(h.clientEvents.contains { event in
                if case .headers(a, let fields, _) = event {
                    return fields.contains(HTTPField(name: "content-length", value: "5"))
                        && !fields.contains { $0.name == "connection" }
                }
                return false
            }, "content-length added, connection-specific fields dropped")
            XCTAssertEqual(status(h, missing), "599")
            XCTAssertTrue(text(streamData(h.clientEvents, missing)).contains("no response for GET https://api.test/nothing"))
            XCTAssertTrue(h.originEvents.isEmpty, "nothing reaches an origin")
            XCTAssertTrue(h.flows.isEmpty, "a replay records nothing")
        }
    }

    func testRecordedLatencyAndFailures() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let slow = try h.request("/slow")
        let down = try h.request("/down")
        try h.run()
        XCTAssertEqual(h.wakes, [h.now + 0.5])
        XCTAssertNil(status(h, slow), "not before the recorded latency")
        XCTAssertTrue(h.clientEvents.contains { if case .reset(down, _) = $0 { return true }; return false },
                      "a recorded failure resets its stream")
        h.now += 0.5
        h.layer.answerDueStreams(at: h.now)
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, slow)), "late")
    }
}
