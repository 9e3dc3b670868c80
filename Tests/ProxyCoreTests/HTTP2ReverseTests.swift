import HTTP1
import HTTP2
@testable import ProxyCore
import Recording
import XCTest

/// HTTP/2 on a reverse listener: streams go to the one upstream under its authority and scheme,
/// are recorded under its URLs, responses point back at the listener, harrec's own paths are
/// answered on the stream, and a session on a plain listener takes h2c with prior knowledge.
final class HTTP2ReverseTests: XCTestCase {
    private func route(_ upstreams: String...) throws -> HTTP2Layer.ReverseRoute {
        HTTP2Layer.ReverseRoute(proxy: ReverseProxy(upstreams: try upstreams.map { try ReverseProxy.Upstream(parsing: $0) }),
                                caDownloads: nil)
    }

    func testAStreamGoesToTheUpstreamAndItsAnswerPointsBackAtTheListener() throws {
        for chunk in [Int.max, 1, 9] {
            let h = try HTTP2LayerHarness(chunk: chunk, reverse: try route("https://api.example.com"))
            let sid = try h.request("/v1/items?page=2", fields: [HTTPField(name: "accept", value: "*/*")],
                                    scheme: "http", authority: "127.0.0.1:8080")
            try h.run()
            let oid = try XCTUnwrap(h.originStream("/v1/items?page=2"), "chunk \(chunk)")
            let sent = h.originEvents.compactMap { event -> [HTTPField]? in
                if case .headers(oid, let fields, _) = event { return fields }
                return nil
            }.first ?? []
            XCTAssertTrue(sent.contains(HTTPField(name: ":authority", value: "api.example.com")), "\(sent)")
            XCTAssertTrue(sent.contains(HTTPField(name: ":scheme", value: "https")), "\(sent)")
            XCTAssertTrue(sent.contains(HTTPField(name: "accept", value: "*/*")))
            try h.respond(oid, status: 302, fields: [HTTPField(name: "location", value: "https://api.example.com/v1/items?page=3"),
                                                     HTTPField(name: "set-cookie", value: "s=1; Domain=example.com; Secure")])
            try h.run()
            let head = try XCTUnwrap(h.responseHead(sid))
            XCTAssertTrue(head.contains(HTTPField(name: "location", value: "http://127.0.0.1:8080/v1/items?page=3")), "\(head)")
            XCTAssertTrue(head.contains(HTTPField(name: "set-cookie", value: "s=1")), "host-only, and not Secure on plain http: \(head)")
            let flow = try XCTUnwrap(h.flows.first)
            XCTAssertEqual(flow.request.url, "https://api.example.com/v1/items?page=2")
            XCTAssertEqual(flow.response?.fields.first { $0.name == "location" }?.value, "https://api.example.com/v1/items?page=3",
                           "the entry keeps what the upstream sent")
        }
    }

    func testHarrecsOwnPathsAreAnsweredOnTheStream() throws {
        let h = try HTTP2LayerHarness(reverse: try route("https://api.example.com"))
        let sid = try h.request("/harrec/mark?name=checkout", scheme: "http", authority: "localhost:8080")
        try h.run()
        XCTAssertEqual(h.status(sid), "200")
        XCTAssertTrue(String(decoding: streamData(h.clientEvents, sid), as: UTF8.self).contains("checkout"))
        XCTAssertEqual(h.reserved.map(\.mark), ["checkout"])
        XCTAssertTrue(h.originEvents.isEmpty && h.flows.isEmpty, "answered here, not forwarded, no entry")
        XCTAssertTrue(h.layer.streams.isEmpty)
    }

    func testUnroutedPathsAndListenersWithSeveralUpstreamsAreAnsweredWithWhy() throws {
        let narrow = try HTTP2LayerHarness(reverse: try route("/api=https://api.example.com"))
        let unrouted = try narrow.request("/elsewhere", scheme: "http", authority: "localhost:8080")
        try narrow.run()
        XCTAssertEqual(narrow.status(unrouted), "404")
        XCTAssertEqual(narrow.flows.first?.response?.status, 404, "the refusal is an entry")

        let several = try HTTP2LayerHarness(reverse: try route("https://api.example.com", "/auth=https://auth.example.com"))
        let refused = try several.request("/auth/login", scheme: "http", authority: "localhost:8080")
        try several.run()
        XCTAssertEqual(several.status(refused), "505")
        XCTAssertTrue(String(decoding: streamData(several.clientEvents, refused), as: UTF8.self).contains("--reverse PORT=URL"))
        XCTAssertTrue(several.originEvents.isEmpty)
        XCTAssertEqual(several.flows.first?.error?.contains("several upstreams"), true)
    }

    /// An h2c client speaks before the upstream connection exists: its streams wait, and go
    /// out once the upstream can take them.
    func testUpstreamBytesWaitUntilTheConnectionIsReady() throws {
        let h = try HTTP2LayerHarness(reverse: try route("http://api.example.com"))
        h.layer.upstreamReady = false
        let sid = try h.request("/early", scheme: "http", authority: "localhost:8080")
        try h.run()
        XCTAssertTrue(h.originEvents.isEmpty, "nothing for a connection that is not there")
        h.layer.upstreamReady = true
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/early"))
        try h.respond(oid, body: Array("ok".utf8))
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, sid), Array("ok".utf8))
        XCTAssertEqual(h.flows.first?.request.url, "http://api.example.com/early")
    }

    /// The session: an h2c preface on a plain reverse listener starts HTTP/2 and opens the
    /// upstream; a plain upstream then gets the connection preface (prior knowledge), a TLS one
    /// a handshake offering h2.
    func testASessionTakesH2CAndOpensTheUpstream() throws {
        let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [0, 0, 0, 4, 0, 0, 0, 0, 0]
        let plain = Playbook(reverse: ReverseProxy(upstreams: [try ReverseProxy.Upstream(parsing: "http://api.test:9000")]))
        let opened = plain.client(preface)
        XCTAssertTrue(opened.contains(.openUpstream(1, host: "api.test", port: 9000)), "\(transcript(opened))")
        XCTAssertEqual(upstreamBytes(opened, 1), [], "nothing upstream before it is connected")
        XCTAssertTrue(clientBytes(opened).count >= 9, "the client gets harrec's SETTINGS at once")
        let connected = plain.connected(1)
        XCTAssertTrue(upstreamBytes(connected, 1).starts(with: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)), "\(transcript(connected))")

        let several = Playbook(reverse: ReverseProxy(upstreams: [try ReverseProxy.Upstream(parsing: "http://a.test"),
                                                                 try ReverseProxy.Upstream(parsing: "/b=http://b.test")]))
        let refusedOnly = several.client(preface)
        XCTAssertFalse(refusedOnly.contains { if case .openUpstream = $0 { return true }; return false },
                       "a listener with several upstreams connects nothing for h2c")
    }
}
