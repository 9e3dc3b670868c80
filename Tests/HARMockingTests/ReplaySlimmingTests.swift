import XCTest
import HAR
@testable import HARMocking

/// `harrec replay` slims every entry as it loads (`HARReplayEntries.slimmed`): what it drops must
/// be what no part of a replay reads, whatever the HAR holds.
final class ReplaySlimmingTests: XCTestCase {
    /// Entries of every kind a replay treats apart, each carrying what slimming drops.
    func mixedLog() throws -> HARLog {
        var log = try TestFixtures.mitmproxyLog()
        let cookies = [HARCookie(name: "session", value: "abc")]
        let headers = [HARHeader(name: "Accept", value: "application/json"), HARHeader(name: "X-Trace", value: "1")]
        var plain = HARFixture.entry("GET", "https://api.example.test/v1/items?page=2&page=3", requestHeaders: headers)
        plain.request.cookies = cookies
        plain.request.queryString = [HARQueryParam(name: "page", value: "2"), HARQueryParam(name: "page", value: "3")]
        plain.response.cookies = cookies
        plain.response.headers.append(HARHeader(name: "Set-Cookie", value: "session=abc"))
        plain.serverIPAddress = "192.0.2.1"
        plain.connection = "7"
        plain.comment = "note"
        plain.custom = [(key: "_resourceType", value: .string("fetch"))]
        let ownAnswer = HARFixture.entry("GET", "https://down.example.test/", status: 502, requestHeaders: headers,
                                         responseText: "harrec: cannot connect to down.example.test:443: refused\n",
                                         custom: [(key: "_error", value: .string("cannot connect to down.example.test:443: refused"))])
        let refused = HARFixture.entry("CONNECT", "https://closed.example.test:443/", status: 0, requestHeaders: headers,
                                       custom: [(key: "_refused", value: .bool(true)),
                                                (key: "_error", value: .string("cannot connect to closed.example.test:443: refused"))])
        var socket = HARFixture.entry("GET", "wss://rt.example.test/live?v=1", status: 101, requestHeaders: headers,
                                      responseHeaders: [HARHeader(name: "Sec-WebSocket-Protocol", value: "chat")],
                                      custom: [(key: "_webSocketMessages", value: .array([
                                          .object([("type", .string("send")), ("time", .number("1796104686.4")),
                                                   ("opcode", .number("1")), ("data", .string("hi"))]),
                                      ])), (key: "_webSocketOpen", value: .bool(true))])
        socket.request.cookies = cookies
        let cutShort = HARFixture.entry("GET", "https://api.example.test/v1/stream", requestHeaders: headers,
                                        custom: [(key: "_error", value: .string("client closed the connection after 2.0 s"))])
        log.entries += [plain, ownAnswer, refused, socket, cutShort]
        return log
    }

    func testASlimmedLogReplaysAsTheWholeOne() throws {
        let whole = try mixedLog()
        var slim = whole
        slim.entries = whole.entries.map(HARReplayEntries.slimmed)
        XCTAssertTrue(slim.entries.allSatisfy { $0.request.headers.isEmpty && $0.request.cookies.isEmpty }, "it slims")

        for options in [HARReplayOptions(), HARReplayOptions(droppedQueryItems: ["v"], queryMatching: .subset),
                        HARReplayOptions(scenario: HARScenarioOptions(latency: .recorded))] {
            for proxy in [false, true] {
                let a = HARReplayEntries.make(from: whole, options: options, proxyAnswersAsFailures: proxy)
                let b = HARReplayEntries.make(from: slim, options: options, proxyAnswersAsFailures: proxy)
                XCTAssertEqual(a.map(\.item), b.map(\.item))
                XCTAssertEqual(a.map(\.headers), b.map(\.headers))
                XCTAssertEqual(a.map(\.recordedError), b.map(\.recordedError))
                XCTAssertEqual(a.map(\.entryIndex), b.map(\.entryIndex))
                XCTAssertEqual(a.count, 10, "the 7 of the sample, the plain answer, harrec's 502 and the response cut short")
            }
            let a = HARReplayConversations.make(from: whole, options: options)
            let b = HARReplayConversations.make(from: slim, options: options)
            XCTAssertEqual(a.entries.map(\.item), b.entries.map(\.item))
            XCTAssertEqual(a.conversations.count, 2)
            XCTAssertEqual(a.conversations.map(\.messages), b.conversations.map(\.messages))
            XCTAssertEqual(a.conversations.map(\.subprotocol), b.conversations.map(\.subprotocol))
            XCTAssertEqual(a.conversations.map(\.subprotocol), ["chat", nil])
            XCTAssertEqual(a.conversations.map(\.leftOpen), b.conversations.map(\.leftOpen))
            XCTAssertEqual(a.conversations.map(\.openedAt), b.conversations.map(\.openedAt))
        }
        XCTAssertEqual(HARReplayRefusedTunnels.make(from: whole), HARReplayRefusedTunnels.make(from: slim))
        XCTAssertFalse(HARReplayRefusedTunnels.make(from: whole).isEmpty)
    }

    func testMatchingOnRequestHeadersWouldNeedThem() throws {
        // The reason `harrec replay` may slim: it matches no request headers. Were it to, the
        // slimmed entries would lose their header conditions.
        let whole = try mixedLog()
        var slim = whole
        slim.entries = whole.entries.map(HARReplayEntries.slimmed)
        let options = HARReplayOptions(headers: .named(["X-Trace"]))
        XCTAssertNotEqual(HARReplayEntries.make(from: whole, options: options).map(\.headers),
                          HARReplayEntries.make(from: slim, options: options).map(\.headers))
    }
}
