import HTTP1
@testable import ProxyCore
import XCTest

/// The proxy rules of one exchange, without a session: routes and URLs, the forwarded heads.
final class HTTP1ForwardingTests: XCTestCase {
    private func request(_ target: String, _ fields: KeyValuePairs<String, String> = [:], version: HTTPVersion = .http11) -> HTTPRequestHead {
        var all = HTTPFields()
        for (name, value) in fields { all.append(name: name, value: value) }
        return HTTPRequestHead(method: "GET", target: target, version: version, fields: all)
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testRoutesOutsideATunnelNeedAbsoluteForm() throws {
        let route = try HTTP1Forwarding.route(request("http://API.test:8080/v1/items?q=1#frag"), in: nil)
        XCTAssertEqual(route.target, ProxyTarget(host: "api.test", port: 8080))
        XCTAssertEqual(route.originForm, "/v1/items?q=1")
        XCTAssertEqual(route.url, "http://api.test:8080/v1/items?q=1")
        XCTAssertThrowsError(try HTTP1Forwarding.route(request("/v1/items"), in: nil), "origin-form needs a tunnel")
        let ws = try HTTP1Forwarding.route(request("ws://api.test/chat"), in: nil)
        XCTAssertEqual(ws.url, "ws://api.test/chat", "ws:// in absolute form goes upstream like http://, recorded as sent")
        XCTAssertEqual(ws.target, ProxyTarget(host: "api.test", port: 80))
        for secure in ["https://api.test/", "wss://api.test/"] {
            XCTAssertThrowsError(try HTTP1Forwarding.route(request(secure), in: nil), "\(secure) needs CONNECT") { error in
                XCTAssertTrue(describe(error).contains("use CONNECT"), describe(error))
            }
        }
    }

    func testRoutesInsideATunnelGoToItsTargetWithTheURLFromHost() throws {
        let tunnel = HTTP1Forwarding.Tunnel(target: ProxyTarget(host: "10.0.0.1", port: 443), scheme: "https", serverName: "api.test")
        var route = try HTTP1Forwarding.route(request("/a#x", ["Host": "api.test"]), in: tunnel)
        XCTAssertEqual(route.target, tunnel.target, "a tunnel's requests all go to its target")
        XCTAssertEqual(route.url, "https://api.test/a", "default port omitted, fragment dropped")
        route = try HTTP1Forwarding.route(request("/a", ["Host": "api.test:8443"]), in: tunnel)
        XCTAssertEqual(route.url, "https://api.test:8443/a")
        route = try HTTP1Forwarding.route(request("/a"), in: tunnel)
        XCTAssertEqual(route.url, "https://api.test/a", "without Host: the SNI name and the tunnel's port")
        route = try HTTP1Forwarding.route(request("*", ["Host": "api.test"]), in: tunnel)
        XCTAssertEqual(route.originForm, "*")
        XCTAssertEqual(route.url, "https://api.test/")
        route = try HTTP1Forwarding.route(request("https://api.test/b?x", ["Host": "api.test"]), in: tunnel)
        XCTAssertEqual(route.originForm, "/b?x", "absolute-form inside a tunnel is sent as origin-form")
        XCTAssertThrowsError(try HTTP1Forwarding.route(request("api.test:443", ["Host": "api.test"]), in: tunnel))
    }

    func testRequestHeadDropsHopByHopAndSetsHost() throws {
        let head = request("http://api.test/x", ["Host": "wrong.test", "Proxy-Connection": "keep-alive", "Connection": "X-Drop, keep-alive",
                                                  "X-Drop": "1", "Proxy-Authorization": "Basic dTpw", "Accept": "*/*"])
        let route = try HTTP1Forwarding.route(head, in: nil)
        let sent = text(try HTTP1Forwarding.requestHead(head, framing: .none, route: route, inTunnel: false))
        XCTAssertEqual(sent, "GET /x HTTP/1.1\r\nHost: api.test\r\nAccept: */*\r\n\r\n")
        XCTAssertEqual(HTTP1Forwarding.recordedFields(head.fields).map(\.name),
                       ["Host", "Proxy-Connection", "Connection", "X-Drop", "Accept"], "recorded as received, without the proxy's credentials")

        let tunnel = HTTP1Forwarding.Tunnel(target: ProxyTarget(host: "api.test", port: 80), scheme: "http")
        let inTunnel = request("/x", ["Host": "alias.test"])
        let kept = text(try HTTP1Forwarding.requestHead(inTunnel, framing: .chunked, route: try HTTP1Forwarding.route(inTunnel, in: tunnel), inTunnel: true))
        XCTAssertEqual(kept, "GET /x HTTP/1.1\r\nHost: alias.test\r\nTransfer-Encoding: chunked\r\n\r\n",
                       "a tunnel's Host stands; a chunked body is forwarded chunked")
    }

    func testUpgradeKeepsUpgradeFields() throws {
        let head = request("http://api.test/ws", ["Host": "api.test", "Connection": "Upgrade", "Upgrade": "websocket"])
        XCTAssertTrue(HTTP1Forwarding.isUpgrade(head))
        XCTAssertFalse(HTTP1Forwarding.isUpgrade(request("http://api.test/", ["Upgrade": "websocket"])), "Upgrade without Connection: upgrade")
        let sent = text(try HTTP1Forwarding.requestHead(head, framing: .none, route: try HTTP1Forwarding.route(head, in: nil), inTunnel: false))
        XCTAssertEqual(sent, "GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    }

    /// An h2c upgrade is not passed on: the request goes upstream as plain HTTP/1.1, without
    /// Upgrade, HTTP2-Settings or their Connection tokens; a WebSocket upgrade listed beside h2c is.
    func testH2CUpgradeIsAnsweredInHTTP1() throws {
        let head = request("http://api.test/x", ["Host": "api.test", "Connection": "Upgrade, HTTP2-Settings", "Upgrade": "h2c",
                                                  "HTTP2-Settings": "AAMAAABkAARAAAAAAAIAAAAA"])
        XCTAssertFalse(HTTP1Forwarding.isUpgrade(head))
        let sent = text(try HTTP1Forwarding.requestHead(head, framing: .none, route: try HTTP1Forwarding.route(head, in: nil), inTunnel: false))
        XCTAssertEqual(sent, "GET /x HTTP/1.1\r\nHost: api.test\r\n\r\n")
        let unlisted = request("http://api.test/x", ["Host": "api.test", "Connection": "Upgrade", "Upgrade": "h2c", "HTTP2-Settings": "AAMA"])
        XCTAssertEqual(text(try HTTP1Forwarding.requestHead(unlisted, framing: .none, route: try HTTP1Forwarding.route(unlisted, in: nil), inTunnel: false)),
                       "GET /x HTTP/1.1\r\nHost: api.test\r\n\r\n", "HTTP2-Settings goes even when Connection does not list it")
        XCTAssertTrue(HTTP1Forwarding.isUpgrade(request("http://api.test/", ["Connection": "Upgrade", "Upgrade": "h2c, websocket"])))
    }

    func testResponseHeadFramingAndConnection() throws {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: "text/plain")
        fields.append(name: "Transfer-Encoding", value: "chunked")
        fields.append(name: "Keep-Alive", value: "timeout=5")
        let head = HTTPResponseHead(version: .http11, status: 200, reason: "OK", fields: fields)
        let open = HTTP1Forwarding.ClientState(version: .http11, keepAlive: true, requestDone: true, shuttingDown: false)

        var plan = try HTTP1Forwarding.responseHead(head, framing: .chunked, client: open)
        XCTAssertEqual(text(plan.head), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertTrue(plan.chunkedToClient)
        XCTAssertFalse(plan.closeClient)

        var old = open
        old.version = .http10
        plan = try HTTP1Forwarding.responseHead(head, framing: .chunked, client: old)
        XCTAssertFalse(plan.chunkedToClient, "an HTTP/1.0 client gets the body delimited by close")
        XCTAssertTrue(plan.closeClient)
        XCTAssertTrue(text(plan.head).hasSuffix("Connection: close\r\n\r\n"))

        plan = try HTTP1Forwarding.responseHead(HTTPResponseHead(version: .http10, status: 204, reason: "No Content", fields: HTTPFields()),
                                                framing: .none, client: old)
        XCTAssertEqual(text(plan.head), "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n", "a keep-alive 1.0 client is told so")

        for (state, why) in [(HTTP1Forwarding.ClientState(version: .http11, keepAlive: true, requestDone: false, shuttingDown: false), "unfinished request body"),
                             (HTTP1Forwarding.ClientState(version: .http11, keepAlive: true, requestDone: true, shuttingDown: true), "harrec stopping"),
                             (HTTP1Forwarding.ClientState(version: .http11, keepAlive: false, requestDone: true, shuttingDown: false), "client asked to close")] {
            plan = try HTTP1Forwarding.responseHead(HTTPResponseHead(version: .http11, status: 200, reason: "OK", fields: ["Content-Length": "0"]),
                                                    framing: .contentLength(0), client: state)
            XCTAssertTrue(text(plan.head).hasSuffix("Connection: close\r\n\r\n"), why)
            XCTAssertEqual(plan.closeClient, state.keepAlive ? true : false, why)
        }
        plan = try HTTP1Forwarding.responseHead(HTTPResponseHead(version: .http11, status: 200, reason: "OK", fields: HTTPFields()),
                                                framing: .untilClose, client: open)
        XCTAssertTrue(plan.closeClient, "a body read until close ends the client connection too")
    }

    func testInterimAndSwitchingProtocolsHeads() throws {
        let early = HTTPResponseHead(version: .http11, status: 103, reason: "Early Hints", fields: ["Link": "</a.css>; rel=preload"])
        XCTAssertEqual(HTTP1Forwarding.interimHead(early, clientVersion: .http11).map(text),
                       "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n")
        XCTAssertNil(HTTP1Forwarding.interimHead(early, clientVersion: .http10), "no 1xx for an HTTP/1.0 client")
        var fields = HTTPFields()
        fields.append(name: "Upgrade", value: "websocket")
        fields.append(name: "Connection", value: "Upgrade")
        fields.append(name: "Sec-WebSocket-Accept", value: "abc")
        XCTAssertEqual(text(try HTTP1Forwarding.switchingProtocolsHead(HTTPResponseHead(version: .http11, status: 101, reason: "Switching Protocols", fields: fields))),
                       "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: abc\r\nConnection: Upgrade\r\n\r\n")
    }

    /// An HTTP/1 request as an h2 header list: pseudo-headers first, Host as :authority, no
    /// connection-specific fields, TE only as "trailers".
    func testHTTP2RequestFields() {
        var fields = HTTPFields()
        fields.append(name: "Host", value: "api.test:8443")
        fields.append(name: "Connection", value: "keep-alive, X-Hop")
        fields.append(name: "X-Hop", value: "1")
        fields.append(name: "Keep-Alive", value: "timeout=5")
        fields.append(name: "TE", value: "trailers, deflate")
        fields.append(name: "Transfer-Encoding", value: "chunked")
        fields.append(name: "Proxy-Authorization", value: "Basic eDp5")
        fields.append(name: "Accept", value: "*/*")
        let head = HTTPRequestHead(method: "POST", target: "/v1/x?y=1", version: .http11, fields: fields)
        XCTAssertEqual(HTTP1Forwarding.http2RequestFields(head, originForm: "/v1/x?y=1", scheme: "https", authority: "fallback.test"), [
            HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
            HTTPField(name: ":authority", value: "api.test:8443"), HTTPField(name: ":path", value: "/v1/x?y=1"),
            HTTPField(name: "Accept", value: "*/*"), HTTPField(name: "te", value: "trailers"),
        ])
        let bare = HTTPRequestHead(method: "GET", target: "/", version: .http10, fields: HTTPFields())
        XCTAssertEqual(HTTP1Forwarding.http2RequestFields(bare, originForm: "/", scheme: "http", authority: "fallback.test")[2],
                       HTTPField(name: ":authority", value: "fallback.test"))
    }

    /// An h2 response head for an HTTP/1.1 client: framing from Content-Length, chunked without
    /// one, and an explicit zero length when the stream ended with the head.
    func testHTTP1ResponseHeadFromHTTP2() {
        let (withLength, framing) = ProxySession.http1ResponseHead(
            [HTTPField(name: ":status", value: "200"), HTTPField(name: "content-length", value: "5")], endStream: false)
        XCTAssertEqual(withLength.status, 200)
        XCTAssertEqual(withLength.reason, "OK")
        XCTAssertEqual(withLength.fields.fields, [HTTPField(name: "content-length", value: "5")])
        XCTAssertEqual(framing, .contentLength(5))
        XCTAssertEqual(ProxySession.http1ResponseHead([HTTPField(name: ":status", value: "404")], endStream: false).1, .chunked)
        let (empty, emptyFraming) = ProxySession.http1ResponseHead([HTTPField(name: ":status", value: "201")], endStream: true)
        XCTAssertEqual(emptyFraming, .contentLength(0))
        XCTAssertEqual(empty.fields["content-length"], "0", "an HTTP/1.1 client needs a length")
        let (notModified, _) = ProxySession.http1ResponseHead([HTTPField(name: ":status", value: "304")], endStream: true)
        XCTAssertNil(notModified.fields["content-length"])
        XCTAssertEqual(ProxySession.http1ResponseHead([HTTPField(name: ":status", value: "599")], endStream: true).0.reason, "Status 599")
    }

    func testHTTP2ServerFramesAreToldFromHTTP1Responses() {
        XCTAssertTrue(NextLayer.isHTTP2ServerFrame([0, 0, 18, 4, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 18)))
        XCTAssertTrue(NextLayer.isHTTP2ServerFrame([0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), "GOAWAY")
        XCTAssertFalse(NextLayer.isHTTP2ServerFrame(Array("HTTP/1.1 200 OK\r\n".utf8)))
        XCTAssertFalse(NextLayer.isHTTP2ServerFrame([0, 0, 4, 1, 4, 0, 0, 0, 1]), "HEADERS on a stream is no first frame")
        XCTAssertFalse(NextLayer.isHTTP2ServerFrame([0, 0, 0, 4]), "too short")
    }

    func testHTTP2OnlyUpstreamsAreSharedAndBounded() {
        let known = HTTP2OnlyUpstreams()
        let target = ProxyTarget(host: "grpc.test", port: 443)
        XCTAssertFalse(known.contains(target))
        known.insert(target)
        XCTAssertTrue(known.contains(target))
        XCTAssertFalse(known.contains(ProxyTarget(host: "grpc.test", port: 8443)))
        for index in 0..<(HTTP2OnlyUpstreams.capacity + 10) { known.insert(ProxyTarget(host: "h\(index).test", port: 443)) }
        XCTAssertFalse(known.contains(ProxyTarget(host: "h\(HTTP2OnlyUpstreams.capacity + 5).test", port: 443)), "the set stops growing")
    }
}
