import HTTP1
@testable import ProxyCore
import Recording
import XCTest

/// A reverse listener: routing by path prefix, the upstream's URL and Host, the rewrite of
/// redirects and cookies back toward the listener, and harrec's own paths.
final class ReverseProxyTests: XCTestCase {
    private func upstream(_ text: String) throws -> ReverseProxy.Upstream { try ReverseProxy.Upstream(parsing: text) }

    func testUpstreamsParseAndBadOnesSayWhy() throws {
        let api = try upstream("https://API.example.com")
        XCTAssertEqual(api, ReverseProxy.Upstream(pathPrefix: "/", scheme: "https", target: ProxyTarget(host: "api.example.com", port: 443)))
        XCTAssertEqual(api.origin, "https://api.example.com")
        XCTAssertEqual(try upstream("/auth=http://127.0.0.1:9000/").description, "/auth=http://127.0.0.1:9000")
        XCTAssertEqual(try upstream("http://[::1]:8080").target, ProxyTarget(host: "::1", port: 8080))
        for bad in ["ftp://x", "api.example.com", "https://api.example.com/v1", "https://u:p@api.example.com",
                    "https://api.example.com?x", "https://", "/p=https://a b"] {
            XCTAssertThrowsError(try upstream(bad), bad)
        }
    }

    func testLongestWholeSegmentPrefixWins() throws {
        let reverse = ReverseProxy(upstreams: [try upstream("https://api.example.com"), try upstream("/auth=https://auth.example.com"),
                                               try upstream("/auth/v2=https://auth2.example.com")])
        func host(_ path: String) -> String? { reverse.upstream(forPath: path)?.target.host }
        XCTAssertEqual(host("/auth"), "auth.example.com")
        XCTAssertEqual(host("/auth?next=/"), "auth.example.com")
        XCTAssertEqual(host("/auth/login"), "auth.example.com")
        XCTAssertEqual(host("/auth/v2/token"), "auth2.example.com")
        XCTAssertEqual(host("/authors"), "api.example.com", "a prefix matches whole segments")
        XCTAssertEqual(host("/"), "api.example.com")
        let prefixOnly = ReverseProxy(upstreams: [try upstream("/auth=https://auth.example.com")])
        XCTAssertNil(prefixOnly.upstream(forPath: "/other"))
    }

    func testLocationAndCookiesPointBackAtTheListener() throws {
        let reverse = ReverseProxy(upstreams: [try upstream("https://api.example.com"), try upstream("/auth=https://auth.example.com")])
        let origin = "http://127.0.0.1:8080"
        XCTAssertEqual(reverse.location("https://api.example.com/v1/x?y=1", listenerOrigin: origin), "http://127.0.0.1:8080/v1/x?y=1")
        XCTAssertEqual(reverse.location("https://API.example.com:443/", listenerOrigin: origin), "http://127.0.0.1:8080/")
        XCTAssertEqual(reverse.location("https://auth.example.com/auth/done", listenerOrigin: origin), "http://127.0.0.1:8080/auth/done")
        // Elsewhere, or a path the listener would send to another upstream: unchanged.
        XCTAssertEqual(reverse.location("https://auth.example.com/login", listenerOrigin: origin), "https://auth.example.com/login")
        XCTAssertEqual(reverse.location("http://api.example.com/v1", listenerOrigin: origin), "http://api.example.com/v1", "another scheme")
        XCTAssertEqual(reverse.location("https://cdn.example.com/a.png", listenerOrigin: origin), "https://cdn.example.com/a.png")
        XCTAssertEqual(reverse.location("/relative", listenerOrigin: origin), "/relative")

        XCTAssertEqual(reverse.setCookie("sid=1; Domain=.example.com; Path=/; Secure; HttpOnly", listenerIsTLS: false), "sid=1; Path=/; HttpOnly")
        XCTAssertEqual(reverse.setCookie("sid=1; domain=api.example.com; secure", listenerIsTLS: true), "sid=1; secure")
        XCTAssertEqual(reverse.setCookie("sid=1; Domain=other.org; Path=/", listenerIsTLS: false), "sid=1; Domain=other.org; Path=/")
        XCTAssertEqual(reverse.setCookie("sid=1", listenerIsTLS: false), "sid=1")
        XCTAssertEqual(reverse.setCookie("sid=1; Secure; SameSite=None; HttpOnly", listenerIsTLS: false), "sid=1; HttpOnly")
        XCTAssertEqual(reverse.setCookie("sid=1; Secure; SameSite=None", listenerIsTLS: true), "sid=1; Secure; SameSite=None")
        XCTAssertEqual(reverse.setCookie("sid=1; SameSite=Lax", listenerIsTLS: false), "sid=1; SameSite=Lax")

        var fields = HTTPFields()
        fields.append(name: "Location", value: "https://api.example.com/next")
        fields.append(name: "Set-Cookie", value: "a=b; Domain=example.com")
        let back = reverse.responseFields(fields, listenerOrigin: origin)
        XCTAssertEqual(back["Location"], "http://127.0.0.1:8080/next")
        XCTAssertEqual(back["Set-Cookie"], "a=b")
        let off = ReverseProxy(upstreams: reverse.upstreams, rewritesBack: false)
        XCTAssertEqual(off.responseFields(fields, listenerOrigin: origin), fields)
    }

    /// An origin-form request to the listener goes to the upstream with its Host, is recorded
    /// under the upstream's URL, and a redirect comes back pointing at the listener; the
    /// recorded response keeps what the upstream sent.
    func testARequestIsForwardedAndRecordedAsTheUpstreams() throws {
        let p = Playbook(reverse: ReverseProxy(upstreams: [try upstream("http://api.example.com:9000")]))
        let opened = p.client("GET /v1/items?page=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\n\r\n")
        assertTranscript(opened, ["open 1 api.example.com:9000"])
        let sent = p.connected(1)
        XCTAssertEqual(text(upstreamBytes(sent, 1)), "GET /v1/items?page=2 HTTP/1.1\r\nHost: api.example.com:9000\r\nAccept: */*\r\n\r\n")
        let answered = p.upstream(1, "HTTP/1.1 302 Found\r\nLocation: http://api.example.com:9000/v1/items?page=3\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(text(clientBytes(answered)), "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:8080/v1/items?page=3\r\nContent-Length: 0\r\n\r\n")
        let flow = try XCTUnwrap(p.sink.flows.first)
        XCTAssertEqual(flow.request.url, "http://api.example.com:9000/v1/items?page=2")
        XCTAssertEqual(flow.request.fields.first { $0.name == "Host" }?.value, "api.example.com:9000")
        XCTAssertEqual(flow.response?.fields.first { $0.name == "Location" }?.value, "http://api.example.com:9000/v1/items?page=3")
        // The next request on the connection reuses the upstream.
        let again = p.client("GET /v1/next HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
        XCTAssertEqual(text(upstreamBytes(again, 1)), "GET /v1/next HTTP/1.1\r\nHost: api.example.com:9000\r\n\r\n")
    }

    func testPrefixRoutesSwitchUpstreamsAndUnroutedPathsGet404() throws {
        let p = Playbook(reverse: ReverseProxy(upstreams: [try upstream("/auth=http://auth.test"), try upstream("/api=http://api.test")]))
        assertTranscript(p.client("GET /auth/login HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"), ["open 1 auth.test:80"])
        p.connected(1)
        p.upstream(1, "HTTP/1.1 204 No Content\r\n\r\n")
        let second = p.client("GET /api/me HTTP/1.1\r\nHost: localhost:8080\r\n\r\n")
        XCTAssertTrue(second.contains(.openUpstream(2, host: "api.test", port: 80)), "\(transcript(second))")
        XCTAssertEqual(p.sink.flows.map(\.request.url), ["http://auth.test/auth/login"])

        let lost = Playbook(reverse: ReverseProxy(upstreams: [try upstream("/auth=http://auth.test")]))
        let refused = lost.client("GET /elsewhere HTTP/1.1\r\nHost: localhost:8080\r\n\r\n")
        XCTAssertTrue(text(clientBytes(refused)).hasPrefix("HTTP/1.1 404 "))
        XCTAssertTrue(text(clientBytes(refused)).contains("no --reverse upstream takes /elsewhere"))
        XCTAssertEqual(lost.sink.flows.first?.response?.status, 404, "the refusal is an entry")
    }

    func testHarrecsOwnPathsAreAnsweredOnTheListener() throws {
        let p = Playbook(reverse: ReverseProxy(upstreams: [try upstream("https://api.example.com")]))
        let marked = p.client("GET /harrec/mark?name=checkout HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n")
        XCTAssertTrue(marked.contains(.record(.pageMark(PageMark(name: "checkout", time: p.now)))))
        XCTAssertFalse(marked.contains { if case .openUpstream = $0 { return true }; return false })
        XCTAssertEqual(ReservedHost.reversePath("/harrec"), "/")
        XCTAssertEqual(ReservedHost.reversePath("/harrec?x"), "/?x")
        XCTAssertNil(ReservedHost.reversePath("/harrecs/x"))
    }

    /// A reverse listener is a server: a SOCKS5 greeting is not answered as SOCKS5.
    func testNoSOCKS5OnAReverseListener() throws {
        let p = Playbook(reverse: ReverseProxy(upstreams: [try upstream("http://api.test")]))
        let commands = p.client([5, 1, 0])
        XCTAssertFalse(clientBytes(commands).starts(with: [5, 0]), "\(transcript(commands))")
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true }; return false })
    }
}
