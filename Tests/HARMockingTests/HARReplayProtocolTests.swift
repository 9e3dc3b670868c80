import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
import HAR
@testable import HARMocking

final class HARReplayProtocolTests: XCTestCase {
    var session: URLSession!

    override func setUp() {
        session = HTTP.session(HARReplayProtocol.configuration())
    }

    override func tearDown() {
        HARReplayProtocol.unload()
        session.invalidateAndCancel()
    }

    func testReplaysTheMitmproxySample() throws {
        let url = try TestFixtures.url("mitmproxy-12.3.1-sample.har")
        try HARReplayProtocol.load(harFile: url)
        XCTAssertEqual(HARReplayProtocol.items.count, 7)

        let small = HTTP.fetch("GET", "http://127.0.0.1:18080/small.json", session: session)
        XCTAssertEqual(small.status, 200)
        XCTAssertTrue(small.text?.hasPrefix(#"{"id": 123, "name": "SomeUser""#) ?? false, small.text ?? "nil")
        // Volatile headers (ETag, Date, Server) are left out: no recorded request was conditional.
        XCTAssertNil(small.response?.value(forHTTPHeaderField: "ETag"))
        XCTAssertNil(small.response?.value(forHTTPHeaderField: "Date"))
        XCTAssertEqual(small.response?.value(forHTTPHeaderField: "Content-Type"), "application/json")
        XCTAssertNil(small.response?.value(forHTTPHeaderField: "Connection"))

        // Recorded gzip: served decoded, without Content-Encoding.
        let medium = HTTP.fetch("GET", "http://127.0.0.1:18080/medium.json", session: session)
        XCTAssertEqual(medium.status, 200)
        XCTAssertTrue(medium.text?.hasPrefix(#"[{"id": 0, "title": "item 0""#) ?? false)
        XCTAssertNil(medium.response?.value(forHTTPHeaderField: "Content-Encoding"))

        // Two POSTs to one path, told apart by body (JSON by value, the form byte-exact).
        let login = HTTP.fetch("POST", "http://127.0.0.1:18080/small.json",
                               body: #"{"password": "hunter2", "login": "sample.user@example.org"}"#, session: session)
        XCTAssertEqual(login.status, 405)
        let form = HTTP.fetch("POST", "http://127.0.0.1:18080/small.json", body: "a=1&token=abc123&b=two%20words", session: session)
        XCTAssertEqual(form.status, 405)
        let otherForm = HTTP.fetch("POST", "http://127.0.0.1:18080/small.json", body: "a=2", session: session)
        XCTAssertNil(otherForm.status)
        XCTAssertTrue(otherForm.errorText.contains("body: expected"), otherForm.errorText)

        let https = HTTP.fetch("GET", "https://localhost:18443/small.json?api_key=k-123&page=2", session: session)
        XCTAssertEqual(https.status, 200)
        let wrongKey = HTTP.fetch("GET", "https://localhost:18443/small.json?api_key=k-999&page=2", session: session)
        XCTAssertTrue(wrongKey.errorText.contains(#"query item "api_key": expected "k-123", got "k-999""#), wrongKey.errorText)
        XCTAssertTrue(wrongKey.errorText.contains(#"if "api_key" changes from run to run, add it to HARScenarioOptions.ignoredQueryItems"#),
                      wrongKey.errorText)

        // Base64 body, byte for byte.
        let log = try TestFixtures.mitmproxyLog()
        let recorded = try XCTUnwrap(log.entries.first { $0.request.url.hasSuffix("/small.bin") }?.response.content.text)
        let bin = HTTP.fetch("GET", "http://127.0.0.1:18080/small.bin", session: session)
        XCTAssertEqual(bin.data, Data(base64Encoded: recorded))
        XCTAssertGreaterThan(bin.data?.count ?? 0, 0)

        // The refused entry (its `_error` is inside `response`, as mitmproxy writes it) fails as
        // recorded; the WebSocket upgrade is not served.
        let refused = HTTP.fetch("GET", "http://127.0.0.1:1/refused", session: session)
        XCTAssertNil(refused.status)
        XCTAssertEqual((refused.error as? URLError)?.code, .cannotConnectToHost, refused.errorText)
        let never = HTTP.fetch("GET", "http://127.0.0.1:1/never", session: session)
        XCTAssertTrue(never.errorText.hasPrefix("HARReplayProtocol: no response for GET http://127.0.0.1:1/never"
                                                + " in HAR file mitmproxy-12.3.1-sample.har (7 items)."), never.errorText)
        XCTAssertTrue(never.errorText.contains("check that HARReplayProtocol.load(...) was called"), never.errorText)
        XCTAssertFalse(HARReplayProtocol.canInit(with: URLRequest(url: URL(string: "ws://127.0.0.1:18767/socket")!)))

        XCTAssertEqual(HARReplayProtocol.calls.map(\.itemIndex), [0, 1, 2, 3, nil, 4, nil, 6, 5, nil])
        XCTAssertEqual(HARReplayProtocol.unusedItems(), [])
    }

    func testOrderedRepeatsBodiesAndLatencyFromAHandWrittenHAR() throws {
        try HARReplayProtocol.load(harFile: TestFixtures.url("replay-small.har"), options: HARScenarioOptions(latency: .recorded))
        XCTAssertEqual(HARReplayProtocol.items.map(\.repeatability), [.once, .once, .always, .always, .always, .once, .always])
        // Nothing served yet: every item is unused, whatever its repeatability.
        XCTAssertEqual(HARReplayProtocol.unusedItems().count, 7)
        // The cache buster `_` changes each run and matches by presence; entries come in recorded order.
        var start = Date()
        let feeds = ["1", "2", "3", "4"].map { HTTP.fetch("GET", "https://api.example.com/v1/feed?_=\($0)&page=1", session: session).text }
        XCTAssertEqual(feeds, [#"{"feed":"first"}"#, #"{"feed":"second"}"#, #"{"feed":"last"}"#, #"{"feed":"last"}"#])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.12 * 2 + 0.005 * 2, "recorded latency is applied")
        let noBuster = HTTP.fetch("GET", "https://api.example.com/v1/feed?page=1", session: session)
        XCTAssertTrue(noBuster.errorText.contains(#"query item "_": expected present, missing in the request"#), noBuster.errorText)

        start = Date()
        XCTAssertEqual(HTTP.fetch("POST", "https://api.example.com/graphql", body: #"{"operationName":"Feed","query":"{ feed }"}"#,
                                  session: session).text, #"{"data":{"feed":[]}}"#)
        XCTAssertEqual(HTTP.fetch("POST", "https://api.example.com/graphql", body: #"{"operationName":"Me","query":"{ me }"}"#,
                                  session: session).text, #"{"data":{"me":1}}"#)
        // The report endpoint was never called: both of its items (the last one `.always`) are unused.
        XCTAssertEqual(HARReplayProtocol.unusedItems().map(\.label), ["#6 GET /v1/report", "#7 GET /v1/report"])
    }

    func testHeaderMatchingNamedAndAllExcept() throws {
        let url = try TestFixtures.url("replay-small.har")
        func report(_ accept: String, _ extra: [String: String] = [:]) -> Fetched {
            HTTP.fetch(HTTP.request("GET", "https://api.example.com/v1/report?session=abc",
                                    headers: extra.merging(["Accept": accept]) { a, _ in a }), session: session)
        }
        // Without header matching the two report entries are ordered repeats of one condition.
        try HARReplayProtocol.load(harFile: url)
        XCTAssertEqual(report("application/json").text, "a,b\n1,2\n")
        XCTAssertEqual(report("application/json").text, #"{"a":1}"#)

        try HARReplayProtocol.load(harFile: url, replayOptions: HARReplayOptions(headers: .named(["accept"])))
        XCTAssertEqual(HARReplayProtocol.items.suffix(2).map(\.repeatability), [.always, .always])
        XCTAssertEqual(report("application/json").text, #"{"a":1}"#)
        XCTAssertEqual(report("text/csv").text, "a,b\n1,2\n")
        XCTAssertEqual(report("text/csv").text, "a,b\n1,2\n")
        let xml = report("application/xml")
        XCTAssertTrue(xml.errorText.contains(#"header Accept: expected "text/csv", got "application/xml""#), xml.errorText)

        // allExcept: Accept and X-Token (a placeholder: presence only) count; User-Agent never does.
        try HARReplayProtocol.load(harFile: url, replayOptions: HARReplayOptions(headers: .allExcept([])))
        let noToken = report("text/csv")
        XCTAssertTrue(noToken.errorText.contains("header X-Token: expected present, got none"), noToken.errorText)
        XCTAssertEqual(report("text/csv", ["X-Token": "live-token", "User-Agent": "App/2"]).text, "a,b\n1,2\n")
        try HARReplayProtocol.load(harFile: url, replayOptions: HARReplayOptions(headers: .allExcept(["x-token"])))
        XCTAssertEqual(report("text/csv").text, "a,b\n1,2\n")
    }

    func testRedactedHeaderValuesMatchByPresence() {
        XCTAssertTrue(HARReplayProtocol.isRedactedHeaderValue("Bearer redacted-1"))
        XCTAssertTrue(HARReplayProtocol.isRedactedHeaderValue("redacted-2"))
        XCTAssertFalse(HARReplayProtocol.isRedactedHeaderValue("Bearer abc"))
        var entry = HARFixture.entry("GET", "https://api.example.com/me",
                                     requestHeaders: [HARHeader(name: "Authorization", value: "Bearer redacted-1")])
        entry.response.content.text = "me"
        HARReplayProtocol.load(log: HARFixture.log([entry]), replayOptions: HARReplayOptions(headers: .named(["Authorization"])))
        let live = HTTP.fetch(HTTP.request("GET", "https://api.example.com/me", headers: ["Authorization": "Bearer live"]),
                              session: session)
        XCTAssertEqual(live.text, "me")
        let anonymous = HTTP.fetch("GET", "https://api.example.com/me", session: session)
        XCTAssertTrue(anonymous.errorText.contains("header Authorization: expected present, got none"), anonymous.errorText)
    }

    func testDroppedQueryItemsAndHostFilter() throws {
        let data = try Data(contentsOf: TestFixtures.url("replay-small.har"))
        try HARReplayProtocol.load(harData: data, replayOptions: HARReplayOptions(droppedQueryItems: ["_", "SESSION"]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/v1/feed?page=1", session: session).text, #"{"feed":"first"}"#)
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/v1/report", session: session).text, "a,b\n1,2\n")
        // A dropped item may come or not; any other item the recording lacks fails the match...
        try HARReplayProtocol.load(harData: data, replayOptions: HARReplayOptions(droppedQueryItems: ["SESSION"]))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/v1/report?session=zzz", session: session).text, "a,b\n1,2\n")
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/v1/report", session: session).text, #"{"a":1}"#)
        let extra = HTTP.fetch("GET", "https://api.example.com/v1/report?utm=x", session: session)
        XCTAssertTrue(extra.errorText.contains(#"query item "utm=x": not in the recorded request"#), extra.errorText)
        XCTAssertTrue(extra.errorText.contains("add it to HARReplayOptions.droppedQueryItems, or load with queryMatching: .subset"),
                      extra.errorText)
        // ...unless the replay matches query items as a subset.
        try HARReplayProtocol.load(harData: data, replayOptions: HARReplayOptions(queryMatching: .subset))
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/v1/report?utm=x&session=abc", session: session).text, "a,b\n1,2\n")

        try HARReplayProtocol.load(harData: data, options: HARScenarioOptions(includeHost: { $0 == "other.example" }))
        XCTAssertEqual(HARReplayProtocol.items.count, 0)
        let r = HTTP.fetch("GET", "https://api.example.com/v1/feed?page=1&_=1", session: session)
        XCTAssertTrue(r.errorText.contains("The queue is empty."), r.errorText)
    }

    func testLoadErrorsAreClear() {
        XCTAssertThrowsError(try HARReplayProtocol.load(harData: Data("{not json".utf8))) { error in
            XCTAssertTrue("\(error)".contains("cannot load HAR data: invalid JSON"), "\(error)")
        }
        XCTAssertThrowsError(try HARReplayProtocol.load(harData: Data(#"{"entries":[]}"#.utf8))) { error in
            XCTAssertTrue("\(error)".contains("not a HAR file"), "\(error)")
        }
        XCTAssertThrowsError(try HARReplayProtocol.load(harFile: URL(fileURLWithPath: "/nonexistent/x.har"))) { error in
            XCTAssertTrue("\(error)".contains("cannot read /nonexistent/x.har"), "\(error)")
        }
        XCTAssertThrowsError(try HARReplayProtocol.load(harResource: "nope.har", bundle: .main)) { error in
            XCTAssertTrue(error.localizedDescription.contains("no resource \"nope.har\""), error.localizedDescription)
        }
    }

    func testReplayAndNetworkMockStateAreSeparate() throws {
        try HARReplayProtocol.load(harFile: TestFixtures.url("replay-small.har"))
        NetworkMock.activate(TestScenario([item("GET", "/only-in-mock", text: "mock")]))
        defer { NetworkMock.deactivate() }
        XCTAssertNil(HTTP.fetch("GET", "https://api.example.com/only-in-mock", session: session).status)
        let mockSession = HTTP.session()
        defer { mockSession.invalidateAndCancel() }
        XCTAssertEqual(HTTP.fetch("GET", "https://api.example.com/only-in-mock", session: mockSession).text, "mock")
        XCTAssertEqual(NetworkMock.calls.count, 1)
        XCTAssertEqual(HARReplayProtocol.calls.count, 1)
    }
}
