import XCTest
import HAR
@testable import HARMocking

/// Builds HAR entries in code for builder and replay tests.
enum HARFixture {
    static func entry(_ method: String = "GET", _ url: String, status: Int = 200,
                      started: String = "2026-11-30T10:00:00.000Z", time: Double = 0,
                      requestHeaders: [HARHeader] = [],
                      requestBody: String? = nil, requestMime: String = "application/json",
                      responseHeaders: [HARHeader] = [HARHeader(name: "Content-Type", value: "application/json")],
                      responseText: String? = "{}", responseEncoding: String? = nil,
                      custom: JSONFields = []) -> HAREntry {
        HAREntry(startedDateTime: started, time: time,
                 request: HARRequest(method: method, url: url, httpVersion: "HTTP/1.1", headers: requestHeaders,
                                     postData: requestBody.map { HARPostData(mimeType: requestMime, text: $0) }),
                 response: HARResponse(status: status, statusText: "", httpVersion: "HTTP/1.1",
                                       headers: responseHeaders,
                                       content: HARContent(size: responseText?.utf8.count ?? 0, mimeType: "application/json",
                                                           text: responseText, encoding: responseEncoding)),
                 timings: HARTimings(send: 0, wait: time, receive: 0), custom: custom)
    }

    static func log(_ entries: [HAREntry]) -> HARLog {
        HARLog(creator: HARCreator(name: "test", version: "1"), entries: entries)
    }
}

final class HARScenarioBuilderTests: XCTestCase {
    func testConditionPartsFromURL() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("get", "HTTPS://API.Example.com:443/v1/a%20b?page=1&flag&empty=&q=caf%C3%A9#frag"),
            HARFixture.entry("GET", "http://localhost:8080"),
        ]))
        XCTAssertEqual(items.count, 2)
        let c = items[0].condition
        XCTAssertEqual(c.method, "GET")
        XCTAssertEqual(c.scheme, "https")
        XCTAssertEqual(c.host, "api.example.com")
        XCTAssertNil(c.port, "an explicit default port is stored as nil")
        XCTAssertEqual(c.path, "/v1/a%20b", "the path stays percent-encoded")
        XCTAssertEqual(c.query, [.equals("page", "1"), .equals("flag", nil), .equals("empty", ""), .equals("q", "café")])
        XCTAssertNil(c.body)
        XCTAssertEqual(items[1].condition.port, 8080)
        XCTAssertEqual(items[1].condition.path, "/")
        XCTAssertEqual(items[0].label, "#1 GET /v1/a%20b")
        XCTAssertEqual(items[1].label, "#2 GET /")
    }

    func testSkippedEntries() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "https://a.example/ok"),
            HARFixture.entry("GET", "https://a.example/refused", status: 0,
                             custom: [(key: "_error", value: .string("Connection refused"))]),
            HARFixture.entry("CONNECT", "https://a.example:443"),
            HARFixture.entry("GET", "https://a.example/socket", status: 101),
            HARFixture.entry("GET", "https://a.example/socket2",
                             custom: [(key: "_webSocketMessages", value: .array([]))]),
            HARFixture.entry("GET", "wss://a.example/socket3"),
            HARFixture.entry("GET", "https://tracker.example/pixel"),
            HARFixture.entry("GET", "not a url"),
        ]), options: HARScenarioOptions(includeHost: { $0 == "a.example" }))
        // The refused request is a recorded failure, served as one; the rest are skipped.
        XCTAssertEqual(items.map(\.condition.path), ["/ok", "/refused"])
        XCTAssertEqual(items[1].response.failure, .cannotConnectToHost)
    }

    func testAnErrorInsideTheResponseIsARecordedFailure() {
        // Chrome DevTools and mitmproxy write a failed request's `_error` in `response`.
        func failed(_ path: String, _ error: String) -> HAREntry {
            var entry = HARFixture.entry("GET", "https://a.example\(path)", status: 0, responseHeaders: [],
                                         responseText: nil)
            entry.response.custom = [(key: "_transferSize", value: .number("0")), (key: "_error", value: .string(error))]
            return entry
        }
        let log = HARFixture.log([failed("/dns", "net::ERR_NAME_NOT_RESOLVED"), failed("/refused", "net::ERR_CONNECTION_REFUSED"),
                                  failed("/empty", "")])
        let sourced = HARScenarioBuilder.sourcedItems(from: log)
        // An empty `_error` names no failure: that entry is skipped as a status 0 without one.
        XCTAssertEqual(sourced.map(\.item.condition.path), ["/dns", "/refused"])
        XCTAssertEqual(sourced.map(\.item.response.failure), [.cannotFindHost, .cannotConnectToHost])
        XCTAssertEqual(sourced.map(\.recordedError), ["net::ERR_NAME_NOT_RESOLVED", "net::ERR_CONNECTION_REFUSED"])
        // The entry's own `_error` (harrec's) comes first.
        var both = failed("/both", "net::ERR_TIMED_OUT")
        both.custom = [(key: "_error", value: .string("connection refused"))]
        XCTAssertEqual(HARScenarioBuilder.recordedError(both), "connection refused")
    }

    func testRecordedFailuresBecomeURLErrorCodes() {
        let cases: [(String, URLError.Code)] = [
            ("cannot connect to 127.0.0.1:1: connection refused", .cannotConnectToHost),
            ("[Errno 111] Connect call failed ('127.0.0.1', 1)", .cannotConnectToHost),
            ("net::ERR_CONNECTION_REFUSED", .cannotConnectToHost),
            ("upstream connection failed: DNS lookup for api.invalid failed: Name or service not known", .cannotFindHost),
            ("net::ERR_NAME_NOT_RESOLVED", .cannotFindHost),
            ("upstream connection failed: connect timed out after 10 s", .timedOut),
            ("upstream sent nothing for 60 s", .timedOut),
            ("net::ERR_CONNECTION_TIMED_OUT", .timedOut),
            ("upstream closed the connection before responding", .networkConnectionLost),
            ("net::ERR_CONNECTION_RESET", .networkConnectionLost),
            ("upstream TLS failed: certificate verify failed", .serverCertificateUntrusted),
            ("net::ERR_CERT_AUTHORITY_INVALID", .serverCertificateUntrusted),
            ("upstream TLS failed: wrong version number", .secureConnectionFailed),
            ("net::ERR_INTERNET_DISCONNECTED", .notConnectedToInternet),
            ("something odd", .unknown),
        ]
        for (text, code) in cases {
            XCTAssertEqual(HARScenarioBuilder.failureCode(forRecordedError: text).rawValue, code.rawValue, text)
        }
        // The Foundation-free codes are URLError's, name for name.
        let named: [(MockFailureCode, URLError.Code)] = [
            (.unknown, .unknown), (.timedOut, .timedOut), (.cannotFindHost, .cannotFindHost),
            (.cannotConnectToHost, .cannotConnectToHost), (.networkConnectionLost, .networkConnectionLost),
            (.notConnectedToInternet, .notConnectedToInternet), (.secureConnectionFailed, .secureConnectionFailed),
            (.serverCertificateUntrusted, .serverCertificateUntrusted),
        ]
        for (mine, foundation) in named {
            XCTAssertEqual(mine.rawValue, foundation.rawValue, mine.name ?? "?")
            XCTAssertEqual(MockResponse.failure(foundation).failure, foundation)
            XCTAssertEqual(MockResponse.failure(foundation).failureCode, mine)
        }
        // Latency applies to the failure too; an entry with status 0 and no `_error` is still skipped.
        let log = HARFixture.log([
            HARFixture.entry("GET", "https://a.example/down", status: 0,
                             custom: [(key: "_error", value: .string("upstream connection failed: connection refused"))]),
            HARFixture.entry("GET", "https://a.example/blocked", status: 0),
        ])
        let sourced = HARScenarioBuilder.sourcedItems(from: log, options: HARScenarioOptions(latency: .fixed(0.5)))
        XCTAssertEqual(sourced.map(\.item.condition.path), ["/down"])
        XCTAssertEqual(sourced.first?.item.response, .failure(.cannotConnectToHost, delay: 0.5))
        XCTAssertEqual(sourced.first?.recordedError, "upstream connection failed: connection refused")
    }

    /// A client that gave up (harrec's `client … after N s`) saw no whole response: a mock fails it
    /// with `.timedOut`, before the head, or after the head and what arrived of the body (a
    /// partial body is not served as a success). Other errors that merely start with "client"
    /// keep their own code.
    func testAClientGiveUpIsATimeoutInEveryRuntime() {
        for text in ["client closed the connection after 2.0 s", "client reset the connection after 0.4 s",
                     "client reset the stream (CANCEL) after 1.5 s"] {
            XCTAssertEqual(HARScenarioBuilder.failureCode(forRecordedError: text), .timedOut, text)
        }
        XCTAssertEqual(HARScenarioBuilder.failureCode(forRecordedError: "client closed the connection mid-request: unexpected end"),
                       .networkConnectionLost)
        let gaveUp: JSONFields = [(key: "_error", value: .string("client closed the connection after 2.0 s"))]
        let log = HARFixture.log([
            HARFixture.entry("GET", "https://a.example/head-stall", status: 0, custom: gaveUp),
            HARFixture.entry("GET", "https://a.example/body-stall", status: 200, responseHeaders: [], responseText: "par",
                             custom: gaveUp),
        ])
        for answersAsFailures in [true, false] {
            let items = HARScenarioBuilder.builtItems(from: log, options: HARScenarioOptions(latency: .fixed(2)),
                                                      proxyAnswersAsFailures: answersAsFailures).map(\.item)
            XCTAssertEqual(items.map(\.response), [.failure(.timedOut, delay: 2),
                                                   MockResponse(status: 200, body: .text("par"), delay: 2,
                                                                interruption: .timedOut)])
        }
        XCTAssertTrue(HARScenarioBuilder.clientGaveUp(log.entries[1]))
        XCTAssertFalse(HARScenarioBuilder.clientGaveUp(HARFixture.entry("GET", "https://a.example/ok")))
    }

    /// A response with an `_error` that is not harrec's own answer reached its client cut short:
    /// its head and partial body are kept, with the failure that ended it. harrec's own 502 is a
    /// failure for an app and the answer itself for a proxy client; status 0 is a failure in both.
    func testAResponseCutShortKeepsWhatArrivedAndHowItEnded() {
        func error(_ text: String) -> JSONFields { [(key: "_error", value: .string(text))] }
        let log = HARFixture.log([
            HARFixture.entry("GET", "https://a.example/cut", status: 200, responseHeaders: [], responseText: "half",
                             custom: error("upstream closed the connection mid-body")),
            HARFixture.entry("GET", "https://a.example/h2cut", status: 206, responseHeaders: [], responseText: "",
                             custom: error("upstream reset the stream (CANCEL)")),
            HARFixture.entry("GET", "https://a.example/own", status: 502, responseHeaders: [],
                             responseText: "harrec: upstream connection failed: connection refused\n",
                             custom: error("upstream connection failed: connection refused")),
            HARFixture.entry("GET", "https://a.example/none", status: 0, custom: error("upstream reset the stream (CANCEL)")),
        ])
        let app = HARScenarioBuilder.sourcedItems(from: log)
        XCTAssertEqual(app.map(\.item.response), [
            MockResponse(status: 200, body: .text("half"), interruption: .networkConnectionLost),
            MockResponse(status: 206, interruption: .networkConnectionLost),
            .failure(.cannotConnectToHost),
            .failure(.networkConnectionLost),
        ])
        XCTAssertEqual(app.map(\.recordedError), ["upstream closed the connection mid-body", "upstream reset the stream (CANCEL)",
                                                  "upstream connection failed: connection refused", "upstream reset the stream (CANCEL)"])
        let proxy = HARScenarioBuilder.builtItems(from: log, options: HARScenarioOptions(), proxyAnswersAsFailures: false)
        XCTAssertEqual(proxy[2].item.response.status, 502, "a proxy client got harrec's 502 whole")
        XCTAssertNil(proxy[2].item.response.interruptionCode)
        XCTAssertNil(proxy[2].item.response.failureCode)
        XCTAssertEqual(proxy[0].item.response.interruptionCode, .networkConnectionLost)
        var response = MockResponse(status: 200)
        response.interruption = .timedOut
        XCTAssertEqual(response.interruptionCode, .timedOut)
        XCTAssertEqual(response.interruption, .timedOut)
    }

    func testHostFilterGetsLowercasedHostWithoutPort() {
        final class Seen: @unchecked Sendable { var hosts: [String] = [] }
        let seen = Seen()
        _ = HARScenarioBuilder.items(from: HARFixture.log([HARFixture.entry("GET", "https://API.Example.com:8443/x")]),
                                     options: HARScenarioOptions(includeHost: { seen.hosts.append($0); return true }))
        XCTAssertEqual(seen.hosts, ["api.example.com"])
    }

    func testResponseHeadersDroppedAndBodies() {
        let headers = ["Content-Type", "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE",
                       "Trailer", "Upgrade", "content-encoding", "Content-Length", "ETag", ":status"]
            .map { HARHeader(name: $0, value: "v") }
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "https://a.example/1", responseHeaders: headers, responseText: "hello"),
            HARFixture.entry("GET", "https://a.example/2", responseText: "AAEC", responseEncoding: "base64"),
            HARFixture.entry("GET", "https://a.example/3", status: 204, responseText: nil),
            HARFixture.entry("GET", "https://a.example/4", responseText: ""),
        ]))
        // Hop-by-hop, encoding and length headers go, and so does the volatile ETag.
        XCTAssertEqual(items[0].response.headers, [HTTPHeader("Content-Type", "v")])
        XCTAssertEqual(items[0].response.body, .text("hello"))
        XCTAssertEqual(items[0].response.status, 200)
        XCTAssertEqual(items[1].response.body, .base64("AAEC"))
        XCTAssertEqual(items[2].response.body, .empty)
        XCTAssertEqual(items[2].response.status, 204)
        XCTAssertEqual(items[3].response.body, .empty)
    }

    func testPlaceholdersAndVolatileNamesBecomePresent() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "https://a.example/x?api_key=redacted-3&token=REDACTED&email=user12%40example.com"
                             + "&host=internal-2.example.invalid&_=123&TS=9&page=2&keep=redacted-x"),
        ]))
        XCTAssertEqual(items[0].condition.query, [
            .present("api_key"), .present("token"), .present("email"), .present("host"), .present("_"),
            .present("TS"), .equals("page", "2"), .equals("keep", "redacted-x"),
        ])
        let custom = HARScenarioBuilder.items(from: HARFixture.log([HARFixture.entry("GET", "https://a.example/x?_=1&sig=abc")]),
                                              options: HARScenarioOptions(ignoredQueryItems: ["SIG"]))
        XCTAssertEqual(custom[0].condition.query, [.equals("_", "1"), .present("sig")])
    }

    func testRedactionPlaceholderRecognition() {
        for yes in ["REDACTED", "redacted-1", "redacted-42", "user7@example.com", "internal-3.example.invalid",
                    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWRhY3RlZC0xIn0.cmVkYWN0ZWQ"] {
            XCTAssertTrue(HARScenarioBuilder.isRedactionPlaceholder(yes), yes)
        }
        for no in ["redacted", "redacted-", "redacted-a", "Redacted", "user@example.com", "userx@example.com",
                   "internal-.example.invalid", "internal-1.example.com", "", "1", ".x.cmVkYWN0ZWQ", "a.cmVkYWN0ZWQ"] {
            XCTAssertFalse(HARScenarioBuilder.isRedactionPlaceholder(no), no)
        }
        XCTAssertEqual(HARScenarioBuilder.volatileQueryItems.count, 12)
        XCTAssertTrue(HARScenarioBuilder.volatileQueryItems.contains("correlation_id"))
    }

    func testRepeatabilityForEqualConditions() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "https://a.example/p?x=1&y=2", started: "2026-11-30T10:00:01.000Z", responseText: "1"),
            HARFixture.entry("GET", "https://a.example/other", started: "2026-11-30T10:00:02.000Z"),
            HARFixture.entry("GET", "https://a.example/p?y=2&x=1", started: "2026-11-30T10:00:03.000Z", responseText: "2"),
            HARFixture.entry("GET", "https://a.example/p?x=1&y=2", started: "2026-11-30T10:00:04.000Z", responseText: "3"),
        ]))
        XCTAssertEqual(items.map(\.repeatability), [.once, .always, .once, .always],
                       "query order does not make conditions different")
        XCTAssertEqual(items.map(\.response.body), [.text("1"), .text("{}"), .text("2"), .text("3")])
    }

    func testEntriesSortedByStartedDateTimeStably() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "https://a.example/c", started: "2026-11-30T10:00:03.000Z"),
            HARFixture.entry("GET", "https://a.example/a", started: "2026-11-30T11:00:01.000+01:00"),
            HARFixture.entry("GET", "https://a.example/b", started: "2026-11-30T10:00:02.000Z"),
            HARFixture.entry("GET", "https://a.example/b2", started: "2026-11-30T10:00:02.000Z"),
            HARFixture.entry("GET", "https://a.example/after-b2", started: "garbage"),
        ]))
        XCTAssertEqual(items.map(\.condition.path), ["/a", "/b", "/b2", "/after-b2", "/c"])
        XCTAssertEqual(items.map(\.label), ["#1 GET /a", "#2 GET /b", "#3 GET /b2", "#4 GET /after-b2", "#5 GET /c"])
    }

    func testBodyMatchingWhenNeeded() {
        let log = HARFixture.log([
            HARFixture.entry("POST", "https://a.example/graphql", requestBody: #"{"op":"A","v":1}"#),
            HARFixture.entry("POST", "https://a.example/graphql", requestBody: #"{"op":"B"}"#),
            HARFixture.entry("POST", "https://a.example/graphql", requestBody: #"{ "v": 1, "op": "A" }"#),
            HARFixture.entry("POST", "https://a.example/graphql"),
            HARFixture.entry("POST", "https://a.example/form", requestBody: "a=1", requestMime: "application/x-www-form-urlencoded"),
            HARFixture.entry("POST", "https://a.example/form", requestBody: "a=2", requestMime: "application/x-www-form-urlencoded"),
            HARFixture.entry("POST", "https://a.example/single", requestBody: #"{"x":1}"#),
            HARFixture.entry("POST", "https://a.example/same", requestBody: #"{"x":1}"#),
            HARFixture.entry("POST", "https://a.example/same", requestBody: #"{"x": 1}"#),
        ])
        let items = HARScenarioBuilder.items(from: log)
        XCTAssertEqual(items.map(\.condition.body), [
            .json(#"{"op":"A","v":1}"#), .json(#"{"op":"B"}"#), .json(#"{ "v": 1, "op": "A" }"#), .text(""),
            .text("a=1"), .text("a=2"), nil, nil, nil,
        ])
        // Items 1 and 3 have equal JSON bodies, so they are repeats of one condition.
        XCTAssertEqual(items.map(\.repeatability), [.once, .always, .always, .always, .always, .always, .always, .once, .always])
    }

    func testBodyMatchingNeverAndAlways() {
        let log = HARFixture.log([
            HARFixture.entry("POST", "https://a.example/g", requestBody: #"{"op":"A"}"#),
            HARFixture.entry("POST", "https://a.example/g", requestBody: "plain", requestMime: "text/plain"),
            HARFixture.entry("GET", "https://a.example/g"),
        ])
        let never = HARScenarioBuilder.items(from: log, options: HARScenarioOptions(bodyMatching: .never))
        XCTAssertEqual(never.map(\.condition.body), [nil, nil, nil])
        XCTAssertEqual(never.map(\.repeatability), [.once, .always, .always])
        let always = HARScenarioBuilder.items(from: log, options: HARScenarioOptions(bodyMatching: .always))
        XCTAssertEqual(always.map(\.condition.body), [.json(#"{"op":"A"}"#), .text("plain"), nil])
        XCTAssertEqual(always.map(\.repeatability), [.always, .always, .always])
    }

    func testLatency() {
        let log = HARFixture.log([HARFixture.entry("GET", "https://a.example/1", time: 250),
                                  HARFixture.entry("GET", "https://a.example/2", time: 0)])
        XCTAssertEqual(HARScenarioBuilder.items(from: log).map(\.response.delay), [nil, nil])
        XCTAssertEqual(HARScenarioBuilder.items(from: log, options: HARScenarioOptions(latency: .recorded)).map(\.response.delay),
                       [0.25, nil])
        XCTAssertEqual(HARScenarioBuilder.items(from: log, options: HARScenarioOptions(latency: .fixed(0.1))).map(\.response.delay),
                       [0.1, 0.1])
    }

    func testIPv6HostAndUserInfo() {
        let items = HARScenarioBuilder.items(from: HARFixture.log([
            HARFixture.entry("GET", "http://[::1]:8080/x"), HARFixture.entry("GET", "https://u:p@h.example/y"),
        ]))
        XCTAssertEqual(items[0].condition.host, "::1")
        XCTAssertEqual(items[0].condition.port, 8080)
        XCTAssertEqual(items[1].condition.host, "h.example")
    }

    func testMitmproxySampleSurvives() throws {
        let log = try TestFixtures.mitmproxyLog()
        let items = HARScenarioBuilder.items(from: log)
        // 8 entries: the WebSocket (101) is skipped. The refused one (status 0) is a failure:
        // mitmproxy writes its `_error` inside the response.
        XCTAssertEqual(items.count, 7)
        XCTAssertEqual(items.map(\.condition.path), ["/small.json", "/medium.json", "/small.json", "/small.json",
                                                     "/small.json", "/refused", "/small.bin"])
        XCTAssertEqual(items[5].response.failure, .cannotConnectToHost)
        XCTAssertEqual(items[5].condition.port, 1)
        // The two POSTs to one path have different bodies: JSON and urlencoded.
        XCTAssertEqual(items[2].condition.body, .json(#"{"login":"sample.user@example.org","password":"hunter2"}"#))
        XCTAssertEqual(items[3].condition.body, .text("a=1&token=abc123&b=two%20words"))
        XCTAssertEqual(items[4].condition.query, [.equals("page", "2"), .equals("api_key", "k-123")])
        XCTAssertEqual(items[4].condition.port, 18443)
        guard case .base64 = items[6].response.body else { return XCTFail("binary body should be base64") }
        XCTAssertFalse(items[1].response.headers.contains { $0.name.lowercased() == "content-encoding" })
    }
}

enum TestFixtures {
    static func url(_ name: String) throws -> URL {
        try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
    }

    static func mitmproxyLog() throws -> HARLog {
        let data = try Data(contentsOf: url("mitmproxy-12.3.1-sample.har"))
        return try HARLog.parse([UInt8](data))
    }
}
