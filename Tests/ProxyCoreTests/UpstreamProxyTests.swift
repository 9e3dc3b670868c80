@testable import ProxyCore
import XCTest

/// `--upstream-proxy`: parsing, NO_PROXY-style exclusions, and the CONNECT and SOCKS5 handshakes
/// fed whole, byte by byte, and with the upstream's first bytes in the same read.
final class UpstreamProxyTests: XCTestCase {
    func testParsing() throws {
        let http = try UpstreamProxy(parsing: "http://proxy.corp:3128")
        XCTAssertEqual(http.kind, .http)
        XCTAssertEqual(http.target, ProxyTarget(host: "proxy.corp", port: 3128))
        XCTAssertNil(http.credentials)
        XCTAssertEqual(try UpstreamProxy(parsing: "http://proxy.corp/").target.port, 8080)
        let socks = try UpstreamProxy(parsing: "socks5://al%40corp:p%3Ass@[::1]:1080")
        XCTAssertEqual(socks.kind, .socks5)
        XCTAssertEqual(socks.credentials, ProxyCredentials(username: "al@corp", password: "p:ss"))
        XCTAssertEqual(socks.description, "socks5://[::1]:1080", "no credentials in the description")
        for bad in ["https://proxy:443", "proxy:3128", "http://proxy:3128/path", "http://user@proxy:3128", "ftp://x"] {
            XCTAssertThrowsError(try UpstreamProxy(parsing: bad), bad)
        }
        for leaky in ["user:secret@proxy.corp:3128", "gopher://user:secret@proxy.corp:3128", "http://user:secret@proxy.corp:3128/x"] {
            XCTAssertThrowsError(try UpstreamProxy(parsing: leaky)) { error in
                XCTAssertFalse("\(error)".contains("secret"), "\(error)")
            }
        }
    }

    func testExclusions() throws {
        let proxy = try UpstreamProxy(parsing: "http://p:1", exclusions: ["example.com", ".Internal", "10.0.0.1"])
        XCTAssertFalse(proxy.applies(to: "example.com"))
        XCTAssertFalse(proxy.applies(to: "api.example.com"))
        XCTAssertTrue(proxy.applies(to: "notexample.com"))
        XCTAssertFalse(proxy.applies(to: "db.internal"))
        XCTAssertFalse(proxy.applies(to: "10.0.0.1"))
        XCTAssertTrue(proxy.applies(to: "10.0.0.10"))
        XCTAssertFalse(try UpstreamProxy(parsing: "http://p:1", exclusions: ["*"]).applies(to: "anything"))
    }

    /// Feeds `reply` whole, then split at every position; every way ends in the same step.
    private func finalStep(_ handshake: UpstreamProxyHandshake, _ reply: [UInt8], sent: inout [[UInt8]]) -> [UpstreamProxyHandshake.Step] {
        var results: [UpstreamProxyHandshake.Step] = []
        for split in 0...reply.count {
            var h = handshake
            var local: [[UInt8]] = []
            var last = UpstreamProxyHandshake.Step.needMoreData
            for part in [Array(reply[..<split]), Array(reply[split...])] where !part.isEmpty {
                // Once the tunnel is open, later bytes are the upstream's (the runtime stops
                // feeding the handshake).
                if case .established(let leftover) = last {
                    last = .established(leftover: leftover + part)
                    continue
                }
                last = h.receive(part)
                if case .send(let bytes) = last { local.append(bytes) }
            }
            if split == 0 { sent = local }
            results.append(last)
        }
        return results
    }

    func testHTTPConnect() throws {
        let proxy = try UpstreamProxy(parsing: "http://u:p@proxy:3128")
        let handshake = UpstreamProxyHandshake(proxy: proxy, host: "api.example.com", port: 443)
        XCTAssertEqual(String(decoding: handshake.start(), as: UTF8.self),
                       "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n")
        var sent: [[UInt8]] = []
        let ok = Array("HTTP/1.1 200 Connection established\r\nVia: squid\r\n\r\n\u{16}\u{03}".utf8)
        for step in finalStep(handshake, ok, sent: &sent) { XCTAssertEqual(step, .established(leftover: [0x16, 0x03])) }
        // Byte by byte.
        var h = handshake
        var steps: [UpstreamProxyHandshake.Step] = []
        for byte in Array("HTTP/1.0 200 OK\r\n\r\n".utf8) { steps.append(h.receive([byte])) }
        XCTAssertEqual(steps.last, .established(leftover: []))
        XCTAssertTrue(steps.dropLast().allSatisfy { $0 == .needMoreData })

        for (reply, words) in [("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", "407 Proxy Authentication Required; it refused the credentials"),
                               ("HTTP/1.1 403 Forbidden\r\nX: y\r\n\r\n", "refused the CONNECT: 403 Forbidden (to api.example.com:443)"),
                               ("SSH-2.0-OpenSSH\r\n\r\n", "sent no HTTP reply to CONNECT")] {
            var h = handshake
            guard case .failed(let failure) = h.receive(Array(reply.utf8)) else { return XCTFail(reply) }
            XCTAssertTrue(failure.message.contains(words), failure.message)
            XCTAssertTrue(failure.message.hasPrefix("upstream proxy http://proxy:3128 "), failure.message)
            XCTAssertFalse(failure.message.contains("u:p"))
        }
        var endless = handshake
        XCTAssertEqual(endless.receive([UInt8](repeating: 0x41, count: 16 * 1024)), .needMoreData)
        guard case .failed = endless.receive([0x41]) else { return XCTFail("an endless head must fail") }
        XCTAssertTrue(handshake.closedEarly().message.contains("closed the connection before the tunnel was open"))
    }

    func testSOCKS5WithAndWithoutCredentials() throws {
        let open = UpstreamProxyHandshake(proxy: try UpstreamProxy(parsing: "socks5://proxy:1080"), host: "127.0.0.1", port: 8080)
        XCTAssertEqual(open.start(), [5, 1, 0])
        var h = open
        XCTAssertEqual(h.receive([5, 0]), .send([5, 1, 0, 1, 127, 0, 0, 1, 0x1F, 0x90]))
        XCTAssertEqual(h.receive([5, 0, 0, 1, 10, 0, 0, 1, 0x1F]), .needMoreData)
        XCTAssertEqual(h.receive([0x90, 0x48]), .established(leftover: [0x48]))

        let authed = UpstreamProxyHandshake(proxy: try UpstreamProxy(parsing: "socks5://ann:pw@proxy:1080"), host: "api.test", port: 443)
        XCTAssertEqual(authed.start(), [5, 2, 0, 2])
        var a = authed
        XCTAssertEqual(a.receive([5, 2]), .send([1, 3] + Array("ann".utf8) + [2] + Array("pw".utf8)))
        XCTAssertEqual(a.receive([1, 0]), .send([5, 1, 0, 3, 8] + Array("api.test".utf8) + [1, 0xBB]))
        XCTAssertEqual(a.receive([5, 0, 0, 3, 4] + Array("host".utf8) + [0, 80]), .established(leftover: []))

        var refused = authed
        _ = refused.receive([5, 2])
        guard case .failed(let bad) = refused.receive([1, 1]) else { return XCTFail() }
        XCTAssertTrue(bad.message.contains("refused the credentials"), bad.message)
        var noMethod = open
        guard case .failed(let none) = noMethod.receive([5, 0xFF]) else { return XCTFail() }
        XCTAssertTrue(none.message.contains("needs credentials"), none.message)
        var denied = open
        _ = denied.receive([5, 0])
        guard case .failed(let rule) = denied.receive([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]) else { return XCTFail() }
        XCTAssertTrue(rule.message.contains("connection not allowed by ruleset"), rule.message)
    }

    /// Plain HTTP goes to an HTTP proxy in absolute form with its credentials (many proxies allow
    /// CONNECT only to 443); the proxy's own 407 becomes a 502 naming it, not a request for
    /// harrec's credentials.
    func testPlainHTTPGoesToTheProxyInAbsoluteForm() throws {
        var configuration = ProxyConfiguration()
        configuration.upstreamProxy = try UpstreamProxy(parsing: "http://u:p@proxy.corp:3128", exclusions: ["local.test"])
        let p = Playbook(configuration: configuration)
        assertTranscript(p.client("GET http://origin.test/x?y=1 HTTP/1.1\r\nHost: origin.test\r\n\r\n"), ["open 1 proxy.corp:3128"])
        XCTAssertEqual(text(upstreamBytes(p.connected(1), 1)),
                       "GET http://origin.test/x?y=1 HTTP/1.1\r\nHost: origin.test\r\nProxy-Authorization: Basic dTpw\r\n\r\n")
        let refused = p.upstream(1, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
        XCTAssertTrue(text(clientBytes(refused)).hasPrefix("HTTP/1.1 502 "), text(clientBytes(refused)))
        XCTAssertEqual(p.sink.flows.first?.request.url, "http://origin.test/x?y=1")
        XCTAssertTrue(p.sink.flows.first?.error?.contains("upstream proxy http://proxy.corp:3128 refused the request: 407") == true,
                      p.sink.flows.first?.error ?? "")

        // An excluded host, an upgrade and a socks5 proxy are not forwarded in absolute form.
        let direct = Playbook(configuration: configuration)
        assertTranscript(direct.client("GET http://local.test/ HTTP/1.1\r\nHost: local.test\r\n\r\n"), ["open 1 local.test:80"])
        let upgrade = Playbook(configuration: configuration)
        assertTranscript(upgrade.client("GET http://origin.test/ws HTTP/1.1\r\nHost: origin.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"),
                         ["open 1 origin.test:80"])
        var socks = ProxyConfiguration()
        socks.upstreamProxy = try UpstreamProxy(parsing: "socks5://proxy.corp:1080")
        assertTranscript(Playbook(configuration: socks).client("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n"),
                         ["open 1 origin.test:80"])
    }

    /// Fuzz finding: a SOCKS5 proxy that sends its method choice and its reply in one read. The
    /// reply waits until the connect request is out, then opens the tunnel.
    func testASOCKS5ProxyThatAnswersAhead() throws {
        var h = UpstreamProxyHandshake(proxy: try UpstreamProxy(parsing: "socks5://proxy:1080"), host: "127.0.0.1", port: 80)
        XCTAssertEqual(h.receive([5, 0, 5, 0, 0, 1, 10, 0, 0, 1, 0, 80, 0x47]), .send([5, 1, 0, 1, 127, 0, 0, 1, 0, 80]))
        XCTAssertTrue(h.hasPendingInput)
        XCTAssertEqual(h.receive([UInt8]()), .established(leftover: [0x47]))
        XCTAssertFalse(h.hasPendingInput)
    }

    /// Fuzz finding: text before `@` in something that is not a scheme is never echoed.
    func testAnUnknownSchemeIsEchoedOnlyWhenItIsOne() {
        XCTAssertThrowsError(try UpstreamProxy(parsing: "al:ice@secret://proxy:3128")) { error in
            XCTAssertFalse("\(error)".contains("ice"), "\(error)")
        }
        XCTAssertThrowsError(try UpstreamProxy(parsing: "https://proxy:443")) { error in
            XCTAssertTrue("\(error)".hasSuffix("not https://"), "\(error)")
        }
    }
}
