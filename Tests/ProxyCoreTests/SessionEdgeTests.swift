import HTTP1
@testable import ProxyCore
import Recording
import XCTest

/// Transcripts of the session's paths that only end-to-end tests used to reach: timeouts of
/// every phase, early responses, unexpected upgrades, idle upstreams and broken clients.
final class SessionEdgeTests: XCTestCase {
    let get = "GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n"

    private func ready(_ request: String? = nil) -> Playbook {
        let p = Playbook()
        p.client(request ?? get)
        _ = p.connected(1)
        return p
    }

    /// An upstream that accepts the request and says nothing gets 504 after `upstreamResponse`,
    /// not before, and the failure is recorded with the limit.
    func testSilentUpstreamGets504AfterItsLimit() {
        let p = ready()
        let limit = ProxyTimeouts().upstreamResponse
        p.advance(limit - 1)
        assertTranscript(p.tick(), [])
        p.advance(2)
        let commands = p.tick()
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"), text(clientBytes(commands)))
        XCTAssertEqual(transcript(commands).filter { $0.hasPrefix("record") || $0.hasPrefix("close") },
                       ["record GET http://example.test/a error: upstream sent nothing for 120 s", "close upstream 1", "close client"])
        XCTAssertTrue(p.session.isFinished)
    }

    /// Response bytes that keep trickling reset the silence clock: a slow download is not cut.
    func testTricklingResponseIsNotCut() {
        let p = ready()
        let limit = ProxyTimeouts().upstreamResponse
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
        for byte in ["a", "b"] {
            p.advance(limit - 1)
            XCTAssertEqual(clientBytes(p.tick()), [])
            p.upstream(1, byte)
        }
        p.advance(limit - 1)
        p.upstream(1, "c")
        XCTAssertEqual(p.sink.flows.first?.response?.body.bytes, Array("abc".utf8))
        XCTAssertFalse(p.session.isFinished)
    }

    /// The upstream answers while the request body is still coming: the response is forwarded
    /// with `Connection: close`, the exchange ends with it, and the client connection closes
    /// (the rest of the body cannot be told apart from a next request).
    func testEarlyResponseClosesTheClientAfterIt() {
        let p = ready("POST http://example.test/upload HTTP/1.1\r\nHost: example.test\r\nContent-Length: 10\r\n\r\n12345")
        let commands = p.upstream(1, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n")
        XCTAssertEqual(text(clientBytes(commands)), "HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(p.sink.flows.map { $0.response?.status }, [413])
        XCTAssertEqual(p.sink.flows.first?.request.body.bytes, Array("12345".utf8), "what was sent is recorded")
        XCTAssertTrue(p.session.isFinished)
        XCTAssertEqual(transcript(commands).suffix(2), ["close upstream 1", "close client"])
    }

    /// A 101 to a request that asked for no upgrade is a bad upstream: 502, nothing relayed.
    func testSwitchingProtocolsWithoutAnUpgradeRequestGets502() {
        let p = ready()
        let commands = p.upstream(1, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        XCTAssertEqual(p.sink.flows.first?.error, "upstream switched protocols without an Upgrade request")
        XCTAssertTrue(p.session.isFinished)
    }

    /// Bytes from a kept-alive upstream between exchanges answer nothing: that connection is
    /// dropped, and the next request opens a fresh one.
    func testBytesFromAnIdleUpstreamDropIt() {
        let p = ready()
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        assertTranscript(p.upstream(1, "HTTP/1.1 200 OK\r\n"), ["close upstream 1"])
        assertTranscript(p.client(get), ["open 2 example.test:80"])
        XCTAssertFalse(p.session.isFinished)
    }

    /// An upstream EOF between exchanges only drops that connection.
    func testIdleUpstreamEOFDropsIt() {
        let p = ready()
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        assertTranscript(p.upstreamEOF(1), ["close upstream 1"])
        XCTAssertFalse(p.session.isFinished)
    }

    /// Nothing from a new client within `handshake` seconds: the connection ends, logged.
    func testSilentClientIsDroppedAfterTheHandshakeLimit() {
        let p = Playbook()
        p.advance(ProxyTimeouts().handshake - 1)
        assertTranscript(p.tick(), [])
        p.advance(2)
        let commands = p.tick()
        XCTAssertEqual(liveEvents(commands), [.handshakeTimeout(seconds: ProxyTimeouts().handshake)])
        XCTAssertTrue(p.session.isFinished)
    }

    /// An idle keep-alive client is closed after `clientIdle`, without a log line or an entry.
    func testIdleKeepAliveClientIsClosed() {
        let p = ready()
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        p.advance(ProxyTimeouts().clientIdle + 1)
        let commands = p.tick()
        XCTAssertEqual(transcript(commands), ["close upstream 1", "close client"])
        XCTAssertEqual(p.sink.flows.count, 1)
    }

    /// An opaque tunnel silent both ways for `tunnelIdle` ends, logged.
    func testIdleTunnelEnds() {
        let p = Playbook()
        p.client("CONNECT db.test:5432 HTTP/1.1\r\nHost: db.test:5432\r\n\r\n")
        _ = p.connected(1)
        _ = p.client([0x00, 0x01, 0x02])
        p.advance(ProxyTimeouts().tunnelIdle + 1)
        let commands = p.tick()
        XCTAssertEqual(liveEvents(commands), [.tunnelIdle(seconds: ProxyTimeouts().tunnelIdle)])
        XCTAssertTrue(p.session.isFinished)
    }

    /// The client connection breaks mid-exchange: the exchange is recorded with the reason,
    /// nothing is sent to the dead client, and the upstream is closed.
    func testClientFailureMidExchangeIsRecorded() {
        for (reason, recorded) in [(ClientFailure.reset, "client reset the connection after 2.5 s"),
                                   (.other("Broken pipe"), "client connection failed: Broken pipe after 2.5 s")] {
            let p = ready()
            p.advance(2.5)
            let commands = p.clientFailed(reason)
            XCTAssertEqual(clientBytes(commands), [])
            XCTAssertEqual(p.sink.flows.first?.error, recorded)
            XCTAssertEqual(transcript(commands).filter { $0.hasPrefix("close") }, ["close upstream 1", "close client"])
        }
    }

    /// The client hangs up (or half-closes, as nginx reads it) after its whole request, while the
    /// upstream is silent or still sending: it gave up. The exchange is recorded at once with when,
    /// with what was delivered, and the upstream is closed (it was held until its timeout, and
    /// the failure blamed it). A client that ends its side mid-request is a cut request instead.
    func testAClientThatGivesUpIsRecordedAndItsUpstreamClosed() {
        let silent = ready()
        silent.advance(2)
        var commands = silent.clientEOF()
        XCTAssertEqual(silent.sink.flows.count, 1)
        XCTAssertEqual(silent.sink.flows[0].error, "client closed the connection after 2.0 s")
        XCTAssertNil(silent.sink.flows[0].response)
        XCTAssertEqual(transcript(commands).filter { $0.hasPrefix("close") }, ["close upstream 1", "close client"])
        XCTAssertTrue(silent.session.isFinished)

        let streaming = ready()
        _ = streaming.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        streaming.advance(1.25)
        commands = streaming.clientEOF()
        XCTAssertEqual(streaming.sink.flows.first?.error, "client closed the connection after 1.3 s")
        XCTAssertEqual(streaming.sink.flows.first?.response?.status, 200)
        XCTAssertEqual(streaming.sink.flows.first?.response?.body.bytes, Array("0123456789".utf8))
        XCTAssertEqual(transcript(commands).filter { $0.hasPrefix("close") }, ["close upstream 1", "close client"])

        let uploading = ready("POST http://a.test/up HTTP/1.1\r\nHost: a.test\r\nContent-Length: 10\r\n\r\n01234")
        uploading.clientEOF()
        XCTAssertEqual(uploading.sink.flows.first?.error?.hasPrefix("client closed the connection mid-request"), true,
                       uploading.sink.flows.first?.error ?? "no entry")
    }

    /// An upstream that breaks after the head went out and before any response byte: 502.
    func testUpstreamFailureBeforeTheResponseGets502() {
        let p = ready()
        let commands = p.upstreamFailed(1, "Connection reset by peer")
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        XCTAssertEqual(p.sink.flows.first?.error, "upstream connection failed: Connection reset by peer")
    }

    /// Events for an upstream the session no longer uses change nothing.
    func testStaleUpstreamEventsAreIgnored() {
        let p = ready()
        p.client("GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n") // pipelined, waits
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")       // second request opens upstream 2
        assertTranscript(p.upstream(1, "junk"), [])
        assertTranscript(p.upstreamEOF(1), [])
        assertTranscript(p.upstreamFailed(1, "reset"), [])
        assertTranscript(p.connected(1), [])
        XCTAssertFalse(p.session.isFinished)
    }

    // MARK: - Refusals are entries (nothing a client sent is missing from the HAR)

    /// A 407 is recorded with the request as parsed (credentials never) and the 407 sent.
    func testProxyAuthenticationRequiredIsRecorded() {
        var configuration = ProxyConfiguration()
        configuration.credentials = ProxyCredentials(username: "user", password: "pass")
        let p = Playbook(configuration: configuration)
        let commands = p.client("GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: Basic dXNlcjp3cm9uZw==\r\n\r\n")
        let flow = p.sink.flows.first
        XCTAssertEqual(flow?.refused, true)
        XCTAssertEqual(flow?.request.url, "http://a.test/x")
        XCTAssertEqual(flow?.request.fields.map(\.name), ["Host"], "the proxy credentials are not recorded")
        XCTAssertEqual(flow?.response?.status, 407)
        XCTAssertEqual(flow?.error, "proxy authentication required")
        XCTAssertEqual(flow.map { $0.response!.headSize + $0.response!.body.bytes.count }, clientBytes(commands).count)
        XCTAssertFalse(p.session.isFinished, "a bodiless keep-alive request may retry with credentials")
    }

    /// A CONNECT whose target cannot be reached: the 502 sent, as a CONNECT entry.
    func testFailedConnectTunnelIsRecorded() {
        let p = Playbook()
        p.client("CONNECT db.test:5432 HTTP/1.1\r\nHost: db.test:5432\r\n\r\n")
        p.advance(0.5)
        let commands = p.connectFailed(1, UpstreamFailure(.dns, "name does not resolve"))
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        guard let flow = p.sink.flows.first else { return XCTFail("no entry for the failed tunnel") }
        XCTAssertEqual(flow.request.method, "CONNECT")
        XCTAssertEqual(flow.request.url, "http://db.test:5432/")
        XCTAssertEqual(flow.response?.status, 502)
        XCTAssertEqual(flow.error, "cannot connect to db.test:5432: name does not resolve")
        XCTAssertEqual(flow.instants.end! - flow.instants.requestStart, 0.5, "from the CONNECT to the failure")
        XCTAssertTrue(flow.refused)
    }

    /// A SOCKS5 CONNECT that fails: no HTTP response (status 0 in the HAR), the reply code in
    /// the error.
    func testFailedSOCKS5TunnelIsRecorded() {
        let p = Playbook()
        p.client([5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 1, 187])
        p.connectFailed(1, UpstreamFailure(.refused, "connection refused"))
        guard let flow = p.sink.flows.first else { return XCTFail("no entry for the failed tunnel") }
        XCTAssertEqual(flow.request.url, "https://127.0.0.1:443/")
        XCTAssertEqual(flow.request.httpVersion, "SOCKS5")
        XCTAssertNil(flow.response)
        XCTAssertEqual(flow.error, "cannot connect to 127.0.0.1:443: connection refused (SOCKS5 reply 5)")
    }

    /// URLs of refused requests: as absolute as the request allows, never invalid.
    func testRefusalURLs() {
        let tunnel = HTTP1Forwarding.Tunnel(target: ProxyTarget(host: "api.test", port: 8443), scheme: "https")
        XCTAssertEqual(Refusals.url(target: "http://a.test/p?q#f", host: nil, tunnel: nil), "http://a.test/p?q")
        XCTAssertEqual(Refusals.url(target: "wss://a.test/p", host: nil, tunnel: nil), "wss://a.test/p")
        XCTAssertEqual(Refusals.url(target: "/p#f", host: "b.test:8080", tunnel: nil), "http://b.test:8080/p")
        XCTAssertEqual(Refusals.url(target: "/p", host: nil, tunnel: tunnel), "https://api.test:8443/p")
        XCTAssertEqual(Refusals.url(target: "/p", host: "bad host", tunnel: nil), "http://unknown.invalid/p")
        XCTAssertEqual(Refusals.url(target: "*", host: nil, tunnel: nil), "http://unknown.invalid/")
        let unparsed = Refusals.request(unparsed: Array("G\u{1}T /x HTTP/1.1\r\nHost: a\r\n".utf8), tunnel: nil)
        XCTAssertEqual(unparsed.method, "-", "a method that is no token is not recorded as one")
        XCTAssertEqual(unparsed.url, "http://unknown.invalid/")
        let garbage = Refusals.request(unparsed: [0x16, 0x03, 0x01, 0x00], tunnel: nil)
        XCTAssertEqual(garbage.method, "-")
    }
}

/// http://harrec/ through the proxy: answered by harrec, never forwarded, never an entry.
final class ReservedHostTests: XCTestCase {
    func testMarkIsAnsweredLocallyAndRecordedAsAPageMark() {
        var configuration = ProxyConfiguration()
        configuration.caDownloads = CADownloads(pem: Array("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n".utf8), der: [0x30, 0x00], mobileConfig: Array("<plist/>".utf8))
        let p = Playbook(configuration: configuration)
        let commands = p.client("GET http://harrec/mark?name=send+an%20attachment HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertFalse(commands.contains { if case .openUpstream = $0 { return true }; return false }, "never forwarded")
        XCTAssertTrue(commands.contains(.record(.pageMark(PageMark(name: "send an attachment", time: p.now)))))
        XCTAssertTrue(liveEvents(commands).contains(.pageMark(name: "send an attachment")))
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 200 OK\r\n"))
        XCTAssertTrue(text(clientBytes(commands)).hasSuffix("harrec: scenario \"send an attachment\" starts now\n"))
        XCTAssertTrue(p.sink.flows.isEmpty, "not an entry")
        // The connection stays: the CA, then an ordinary request on the same connection.
        let ca = p.client("GET http://harrec/ca.pem HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(text(clientBytes(ca)).hasSuffix("-----END CERTIFICATE-----\n"))
        XCTAssertTrue(text(clientBytes(ca)).contains("Content-Type: application/x-pem-file\r\n"))
        let next = p.client("GET http://origin.test/x HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        XCTAssertTrue(next.contains(.openUpstream(1, host: "origin.test", port: 80)))
    }

    func testBadMarksAndOtherPaths() {
        func status(_ target: String, method: String = "GET", pem: [UInt8]? = nil) -> Int {
            ReservedHost.answer(method: method, originForm: target, ca: pem.map { CADownloads(pem: $0, der: [], mobileConfig: []) }).status
        }
        XCTAssertEqual(status("/mark"), 400, "a name is required")
        XCTAssertEqual(status("/mark?name=%20%20"), 400, "blank")
        XCTAssertEqual(status("/mark?name=a%0Ab"), 400, "control characters")
        XCTAssertEqual(status("/mark?name=" + String(repeating: "x", count: 201)), 400)
        XCTAssertEqual(status("/mark?name=ok", method: "POST"), 405)
        XCTAssertEqual(status("/ca.pem"), 404, "no CA without interception")
        XCTAssertEqual(status("/"), 200)
        XCTAssertEqual(status("/other"), 404)
        XCTAssertNil(ReservedHost.answer(method: "GET", originForm: "/mark", ca: nil).mark)
        XCTAssertTrue(ReservedHost.isReserved(ProxyTarget(host: "HARREC", port: 80)))
        XCTAssertFalse(ReservedHost.isReserved(ProxyTarget(host: "harrec", port: 8080)))
        XCTAssertFalse(ReservedHost.isReserved(ProxyTarget(host: "harrec.example", port: 80)))
    }

    /// Proxy credentials apply to the reserved host too: a mark is a request to the proxy.
    func testMarkNeedsTheProxyCredentials() {
        var configuration = ProxyConfiguration()
        configuration.credentials = ProxyCredentials(username: "u", password: "p")
        let p = Playbook(configuration: configuration)
        let commands = p.client("GET http://harrec/mark?name=x HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 407 "))
        XCTAssertFalse(commands.contains { if case .record(.pageMark) = $0 { return true }; return false })
    }

    /// Asked directly (a phone's first visit to http://<lan-ip>:<port>/harrec/), the setup page and
    /// the CA need no credentials, with links under /harrec; a mark still does.
    func testTheSetupPageIsServedDirectlyAndOnlyItWithoutCredentials() {
        var configuration = ProxyConfiguration()
        configuration.credentials = ProxyCredentials(username: "u", password: "p")
        configuration.caDownloads = CADownloads(pem: Array("PEM".utf8), der: [0x30, 0x03], mobileConfig: Array("<plist/>".utf8))
        let p = Playbook(configuration: configuration)
        let page = text(clientBytes(p.client("GET /harrec/ HTTP/1.1\r\nHost: 192.168.1.20:8888\r\n\r\n")))
        XCTAssertTrue(page.hasPrefix("HTTP/1.1 200 OK\r\n"), page)
        XCTAssertTrue(page.contains("Content-Type: text/html; charset=utf-8\r\n"))
        XCTAssertTrue(page.contains("href=\"/harrec/ca.mobileconfig\""), page)
        let profile = p.client("GET /harrec/ca.mobileconfig HTTP/1.1\r\nHost: 192.168.1.20:8888\r\n\r\n")
        XCTAssertTrue(text(clientBytes(profile)).contains("Content-Type: application/x-apple-aspen-config\r\n"))
        XCTAssertTrue(text(clientBytes(profile)).hasSuffix("<plist/>"))
        let der = clientBytes(p.client("GET /harrec/ca.crt HTTP/1.1\r\nHost: 192.168.1.20:8888\r\n\r\n"))
        XCTAssertEqual(Array(der.suffix(2)), [0x30, 0x03])
        let mark = p.client("GET /harrec/mark?name=x HTTP/1.1\r\nHost: 192.168.1.20:8888\r\n\r\n")
        XCTAssertTrue(text(clientBytes(mark)).hasPrefix("HTTP/1.1 407 "))
        XCTAssertFalse(mark.contains { if case .record(.pageMark) = $0 { return true }; return false })
        // On http://harrec/ the links have no prefix.
        XCTAssertTrue(String(decoding: ReservedHost.answer(method: "GET", originForm: "/", ca: configuration.caDownloads).body,
                             as: UTF8.self).contains("href=\"/ca.mobileconfig\""))
    }

    /// A request with a body is answered, then the connection closes (the body is not read).
    func testABodyClosesTheConnection() {
        let p = Playbook()
        let commands = p.client("GET http://harrec/ HTTP/1.1\r\nHost: harrec\r\nContent-Length: 3\r\n\r\nabc")
        XCTAssertTrue(text(clientBytes(commands)).contains("Connection: close\r\n"))
        XCTAssertTrue(commands.contains(.closeClient))
    }

    /// A SOCKS5 client (or a CONNECT) reaches harrec:80 as a tunnel: nothing is connected, and
    /// the requests inside are answered here.
    func testMarksThroughSOCKS5AndCONNECTTunnels() {
        let socks = Playbook()
        socks.client([5, 1, 0])
        let name = Array("harrec".utf8)
        let reply = socks.client([5, 1, 0, 3, UInt8(name.count)] + name + [0, 80])
        XCTAssertEqual(clientBytes(reply).prefix(2), [5, 0], "SOCKS5 success")
        let marked = socks.client("GET /mark?name=via%20socks HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(marked.contains(.record(.pageMark(PageMark(name: "via socks", time: socks.now)))))
        XCTAssertFalse((reply + marked).contains { if case .openUpstream = $0 { return true }; return false })

        let connect = Playbook()
        let established = connect.client("CONNECT harrec:80 HTTP/1.1\r\nHost: harrec:80\r\n\r\nGET /mark?name=tunnel HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(text(clientBytes(established)).hasPrefix("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK\r\n"))
        XCTAssertTrue(established.contains(.record(.pageMark(PageMark(name: "tunnel", time: connect.now)))))
        XCTAssertFalse(established.contains { if case .openUpstream = $0 { return true }; return false })
    }
}

/// Malformed heads are answered with a reason that says what went wrong without echoing what may
/// be a credential (found by the proxy-session fuzz target: a header glued onto the request line
/// put its value into the 400's reason, the live log and the entry's `_error`).
final class MalformedHeadEchoTests: XCTestCase {
    func testReasonsDoNotEchoCredentials() {
        let secret = "c2VjcmV0LXRva2VuLXZhbHVl"
        let heads = [
            "GET http://a.test/ HTTP/1.1Proxy-Authorization: Basic \(secret)\r\n\r\n",
            "GET http://a.test/ HTTP/1.1 Authorization: Bearer \(secret)\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nAuthorization Bearer \(secret)\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nX-A: 1\r\n Bearer \(secret)\r\n\r\n",
            "GET http://a.test/ HTTP/1.1\r\nAuthorization\(secret)\r\n\r\n",
            "GET\u{E0}http://a.test/ HTTP/1.1 Authorization: Bearer \(secret)\r\n\r\n",
            "\u{1}GET / HTTP/1.1 Authorization: Bearer \(secret)\r\n\r\n",
            "GET /a\u{7F}b HTTP/1.1 Authorization: Bearer \(secret)\r\n\r\n",
        ]
        for head in heads {
            let p = Playbook()
            let commands = p.client(head)
            let response = text(clientBytes(commands))
            XCTAssertTrue(response.hasPrefix("HTTP/1.1 400 "), response)
            let logged = liveEvents(commands).map { "\($0)" }.joined()
            XCTAssertFalse(logged.contains(secret), logged)
            XCTAssertFalse(response.contains(secret), response)
            XCTAssertFalse(p.sink.flows.contains { $0.error?.contains(secret) == true }, "\(p.sink.flows.map(\.error))")
        }
    }
}
