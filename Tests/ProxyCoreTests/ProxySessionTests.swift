import HTTP1
@testable import ProxyCore
import Recording
import SOCKS5
import XCTest

final class ProxySessionTests: XCTestCase {
    let simpleGet = "GET http://example.test:9000/a?x=1 HTTP/1.1\r\nHost: example.test:9000\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n"
    let okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nhi"

    func testAbsoluteFormGetIsForwardedInOriginFormAndRecorded() {
        let p = Playbook()
        assertTranscript(p.client(simpleGet), ["open 1 example.test:9000"])
        assertTranscript(p.connected(1), ["upstream 1 <- GET /a?x=1 HTTP/1.1\\r\\nHost: example.test:9000\\r\\nAccept: */*\\r\\n\\r\\n"])
        p.advance(0.25)
        let commands = p.upstream(1, okResponse)
        // Recording is a command, in order with the bytes: the response goes out, then the flow is
        // recorded, then the live line.
        assertTranscript(commands, ["client <- HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nContent-Type: text/plain\\r\\n\\r\\n",
                                    "client <- hi",
                                    "record GET http://example.test:9000/a?x=1 200", "log"])
        XCTAssertEqual(text(clientBytes(commands)), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nhi")
        XCTAssertEqual(p.sink.flows.count, 1)
        let flow = p.sink.flows[0]
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.url, "http://example.test:9000/a?x=1")
        XCTAssertEqual(flow.request.headSize, simpleGet.utf8.count)
        XCTAssertEqual(flow.response?.status, 200)
        XCTAssertEqual(flow.response?.body.bytes, Array("hi".utf8))
        XCTAssertEqual(flow.connectionID, "7-1")
        XCTAssertEqual(flow.serverIPAddress, "127.0.0.1")
        XCTAssertNil(flow.error)
        // Time is the events': the request started at the first event, the response at the last.
        XCTAssertEqual(flow.instants.requestStart, 1_800_000_000)
        XCTAssertEqual(flow.instants.end, 1_800_000_000.25)
        XCTAssertFalse(p.session.isFinished, "keep-alive client stays open")
    }

    func testByteByByteClientInputForwardsTheSameHead() {
        let whole = Playbook()
        whole.client(simpleGet)
        let expected = upstreamBytes(whole.connected(1), 1)

        let split = Playbook()
        assertTranscript(split.clientBytewise(simpleGet), ["open 1 example.test:9000"])
        XCTAssertEqual(upstreamBytes(split.connected(1), 1), expected)
    }

    func testKeepAliveReusesTheUpstreamForTheSameTarget() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, okResponse)
        assertTranscript(p.client(simpleGet), ["upstream 1 <- GET /a?x=1 HTTP/1.1\\r\\nHost: example.test:9000\\r\\nAccept: */*\\r\\n\\r\\n"])
        p.upstream(1, okResponse)
        XCTAssertEqual(p.sink.flows.count, 2)
        XCTAssertEqual(p.sink.flows[0].connectionID, p.sink.flows[1].connectionID)
    }

    func testANewTargetClosesTheOldUpstream() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, okResponse)
        assertTranscript(p.client("GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n"),
                         ["close upstream 1", "open 2 other.test:80"])
    }

    func testPipelinedRequestsAreAnsweredInOrder() {
        let p = Playbook()
        let two = "GET http://a.test/1 HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://a.test/2 HTTP/1.1\r\nHost: a.test\r\n\r\n"
        assertTranscript(p.client(two), ["open 1 a.test:80"])
        assertTranscript(p.connected(1), ["upstream 1 <- GET /1 HTTP/1.1\\r\\nHost: a.test\\r\\n\\r\\n"])
        let commands = p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1")
        XCTAssertEqual(text(upstreamBytes(commands, 1)), "GET /2 HTTP/1.1\r\nHost: a.test\r\n\r\n",
                       "the second request goes out only after the first response")
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n2")
        XCTAssertEqual(p.sink.flows.map(\.request.url), ["http://a.test/1", "http://a.test/2"])
    }

    func testChunkedRequestBodyIsStreamedAndRecordedDechunked() {
        let p = Playbook()
        p.client("POST http://a.test/up HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(text(upstreamBytes(p.connected(1), 1)),
                       "POST /up HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(text(upstreamBytes(p.client("5\r\nhello\r\n"), 1)), "5\r\nhello\r\n")
        XCTAssertEqual(text(upstreamBytes(p.client("0\r\n\r\n"), 1)), "0\r\n\r\n")
        p.upstream(1, "HTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertEqual(p.sink.flows.first?.request.body.bytes, Array("hello".utf8))
        XCTAssertEqual(p.sink.flows.first?.response?.status, 204)
    }

    func testContentLengthBodyIsForwardedAsIs() {
        let p = Playbook()
        p.client("PUT http://a.test/x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nab")
        XCTAssertEqual(text(upstreamBytes(p.connected(1), 1)), "PUT /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nab")
        XCTAssertEqual(text(upstreamBytes(p.client("cd"), 1)), "cd")
    }

    func testChunkedResponseIsRechunkedForTheClient() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        let commands = p.upstream(1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        XCTAssertEqual(text(clientBytes(commands)), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        XCTAssertEqual(p.sink.flows.first?.response?.body.bytes, Array("abc".utf8))
    }

    func testMalformedRequestGets400AndClose() {
        let p = Playbook()
        let commands = p.client("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
        let reply = text(clientBytes(commands))
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), reply)
        XCTAssertTrue(transcript(commands).contains("close client"))
        XCTAssertTrue(p.session.isFinished)
        // The refusal is an entry: the request as far as it parsed, the 400 the client got.
        XCTAssertEqual(p.sink.flows.count, 1)
        let flow = p.sink.flows[0]
        XCTAssertTrue(flow.refused)
        XCTAssertEqual(flow.request.method, "GET")
        XCTAssertEqual(flow.request.url, "http://a.test/")
        XCTAssertEqual(flow.response?.status, 400)
        XCTAssertEqual(flow.response.map { $0.headSize + $0.body.bytes.count }, clientBytes(commands).count, "what the client received")
        XCTAssertTrue(flow.error?.hasPrefix("bad request: ") == true, flow.error ?? "")

        var quiet = ProxyConfiguration()
        quiet.recordRefusals = false
        let off = Playbook(configuration: quiet)
        off.client("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertTrue(off.session.isFinished)
        XCTAssertTrue(off.sink.flows.isEmpty, "--no-record-errors")
    }

    func testOriginFormToTheProxyIsRejected() {
        let p = Playbook()
        let reply = text(clientBytes(p.client("GET /x HTTP/1.1\r\nHost: a.test\r\n\r\n")))
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 400 "), reply)
    }

    func testConnectFailureGives502AndARecordedError() {
        let p = Playbook()
        p.client(simpleGet)
        let commands = p.connectFailed(1, UpstreamFailure(.refused, "connection refused"))
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertEqual(p.sink.flows[0].error, "cannot connect to example.test:9000: connection refused")
        // The recorded response is the one the client got: harrec's own 502 and its body.
        let response = p.sink.flows[0].response
        XCTAssertEqual(response?.status, 502)
        XCTAssertEqual(response.map { String(decoding: $0.body.bytes, as: UTF8.self) },
                       "harrec: cannot connect to example.test:9000: connection refused\n")
        XCTAssertEqual(text(clientBytes(commands)).hasSuffix("\r\n\r\n" + (response.map { String(decoding: $0.body.bytes, as: UTF8.self) } ?? "")), true)
    }

    func testConnectTimeoutGives504() {
        let p = Playbook()
        p.client(simpleGet)
        p.advance(ProxyTimeouts().upstreamConnect + 1)
        let commands = p.tick()
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"), text(clientBytes(commands)))
        XCTAssertTrue(p.sink.flows[0].error?.contains("timed out") == true)
    }

    /// Slowloris: a head that trickles in a byte a second gets 408 once `requestHead` has passed
    /// since its first byte, however recent the last byte was; an idle keep-alive client with no
    /// head begun is not cut by that limit.
    func testATricklingRequestHeadGets408() {
        let p = Playbook()
        let limit = ProxyTimeouts().requestHead
        var commands: [ProxyCommand] = []
        for (second, byte) in "GET http://example.test/ HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".utf8.enumerated() {
            p.client([byte])
            commands = p.tick()
            if !commands.isEmpty || Double(second) > limit + 2 { break }
            p.advance(1)
        }
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), text(clientBytes(commands)))
        XCTAssertTrue(p.session.isFinished)
        XCTAssertEqual(p.sink.flows.count, 1, "the refused head is recorded")
        XCTAssertEqual(p.sink.flows.first?.request.url, "http://example.test/", "from the request line that did arrive")
        XCTAssertEqual(p.sink.flows.first?.response?.status, 408)
        XCTAssertEqual(p.sink.flows.first?.refused, true)

        let idle = Playbook()
        idle.client(simpleGet)
        idle.connected(1)
        idle.upstream(1, okResponse)
        idle.advance(limit + 5)
        idle.tick()
        XCTAssertFalse(idle.session.isFinished, "no head has begun: the idle limit applies, not the head's")
    }

    func testBadUpstreamResponseGives502() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        let commands = p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
        XCTAssertTrue(p.sink.flows[0].error?.hasPrefix("bad response from upstream") == true, p.sink.flows[0].error ?? "")
    }

    func testUpstreamClosingMidBodyCutsTheClient() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        let commands = p.upstreamEOF(1)
        XCTAssertTrue(clientBytes(commands).isEmpty, "no 502 once the response has started")
        XCTAssertTrue(transcript(commands).contains("close client"))
        XCTAssertEqual(p.sink.flows[0].error, "upstream closed the connection mid-body")
        XCTAssertEqual(p.sink.flows[0].response?.body.bytes, Array("abc".utf8))
    }

    func testUpstreamClosingBeforeRespondingGives502() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        let commands = p.upstreamEOF(1)
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 "))
        XCTAssertEqual(p.sink.flows[0].error, "upstream closed the connection before responding")
    }

    func testCloseDelimitedResponseEndsAtEOF() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        let head = p.upstream(1, "HTTP/1.1 200 OK\r\n\r\nabc")
        XCTAssertEqual(text(clientBytes(head)), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc")
        let end = p.upstreamEOF(1)
        XCTAssertTrue(transcript(end).contains("close client"))
        XCTAssertNil(p.sink.flows[0].error)
        XCTAssertEqual(p.sink.flows[0].response?.body.bytes, Array("abc".utf8))
    }

    func testHeadResponseHasNoBody() {
        let p = Playbook()
        p.client("HEAD http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n")
        p.connected(1)
        let commands = p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        XCTAssertEqual(text(clientBytes(commands)), "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        XCTAssertEqual(p.sink.flows.count, 1)
    }

    func testExpectContinueInterimResponseIsRelayed() {
        let p = Playbook()
        p.client("POST http://a.test/e HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        XCTAssertTrue(text(upstreamBytes(p.connected(1), 1)).contains("Expect: 100-continue\r\n"))
        XCTAssertEqual(text(clientBytes(p.upstream(1, "HTTP/1.1 100 Continue\r\n\r\n"))), "HTTP/1.1 100 Continue\r\n\r\n")
        XCTAssertEqual(text(upstreamBytes(p.client("ok"), 1)), "ok")
        p.upstream(1, okResponse)
        XCTAssertEqual(p.sink.flows[0].response?.status, 200)
        XCTAssertEqual(p.sink.flows[0].request.body.bytes, Array("ok".utf8))
    }

    /// An interim response is not the response: an upstream that closes after 100 Continue still
    /// leaves room for a 502, and the flow says it closed before responding.
    func testUpstreamClosingAfterAnInterimResponseGets502() {
        let p = Playbook()
        p.client("POST http://a.test/e HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        p.connected(1)
        p.upstream(1, "HTTP/1.1 100 Continue\r\n\r\n")
        p.client("ok")
        let commands = p.upstreamEOF(1)
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), text(clientBytes(commands)))
        XCTAssertEqual(p.sink.flows.first?.error, "upstream closed the connection before responding")
    }

    /// Once the final head went out, a failure can only cut the response: no second status line.
    func testUpstreamClosingMidBodyCutsTheResponse() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        let commands = p.upstreamEOF(1)
        XCTAssertFalse(text(clientBytes(commands)).contains("HTTP/1.1 502"), text(clientBytes(commands)))
        XCTAssertEqual(p.sink.flows.first?.error, "upstream closed the connection mid-body")
        XCTAssertEqual(p.sink.flows.first?.response?.body.bytes, Array("abc".utf8))
        XCTAssertTrue(p.session.isFinished)
    }

    func testHTTP10ClientGetsCloseDelimitedInsteadOfChunked() {
        let p = Playbook()
        p.client("GET http://a.test/ HTTP/1.0\r\n\r\n")
        p.connected(1)
        let commands = p.upstream(1, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
        XCTAssertEqual(text(clientBytes(commands)), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhi")
        XCTAssertTrue(transcript(commands).contains("close client"))
    }

    func testConnectTunnelWithPlainHTTPInsideIsRecorded() {
        let p = Playbook()
        assertTranscript(p.client("CONNECT a.test:8080 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n"), ["open 1 a.test:8080"])
        assertTranscript(p.connected(1), ["client <- HTTP/1.1 200 Connection established\\r\\n\\r\\n"])
        assertTranscript(p.client("GET /in HTTP/1.1\r\nHost: a.test:8080\r\n\r\n"),
                         ["upstream 1 <- GET /in HTTP/1.1\\r\\nHost: a.test:8080\\r\\n\\r\\n"])
        p.upstream(1, okResponse)
        XCTAssertEqual(p.sink.flows.map(\.request.url), ["http://a.test:8080/in"])
    }

    func testConnectTunnelWithTLSIsRelayedOpaquely() {
        let p = Playbook()
        p.client("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        p.connected(1)
        let hello: [UInt8] = [0x16, 0x03, 0x01, 0x00, 0x05, 1, 2, 3, 4, 5]
        let commands = p.client(hello)
        XCTAssertEqual(upstreamBytes(commands, 1), hello)
        XCTAssertEqual(clientBytes(p.upstream(1, [0x16, 0x03, 0x03])), [0x16, 0x03, 0x03])
        assertTranscript(p.clientEOF(), ["shutdown upstream 1 write"])
        assertTranscript(p.upstreamEOF(1), ["close upstream 1", "close client"])
        XCTAssertTrue(p.sink.flows.isEmpty)
    }

    func testSOCKS5ConnectThenHTTP() {
        let p = Playbook()
        assertTranscript(p.client([5, 1, 0]), ["client <- \\x05\\x00"])
        let request: [UInt8] = [5, 1, 0, 3, 6] + Array("a.test".utf8) + [0x1F, 0x90]
        assertTranscript(p.client(request), ["open 1 a.test:8080"])
        XCTAssertEqual(clientBytes(p.connected(1)), SOCKS5ServerHandshake.reply(.succeeded))
        p.client("GET /s HTTP/1.1\r\nHost: a.test:8080\r\n\r\n")
        p.upstream(1, okResponse)
        XCTAssertEqual(p.sink.flows.map(\.request.url), ["http://a.test:8080/s"])
    }

    func testSOCKS5RefusedConnectRepliesCode5() {
        let p = Playbook()
        p.client([5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80])
        let commands = p.connectFailed(1, UpstreamFailure(.refused, "connection refused"))
        XCTAssertEqual(clientBytes(commands), SOCKS5ServerHandshake.reply(.connectionRefused))
        XCTAssertTrue(p.session.isFinished)
    }

    func testProxyAuthenticationRequiredAndAccepted() {
        var configuration = ProxyConfiguration()
        configuration.credentials = ProxyCredentials(username: "user", password: "pass")
        let denied = Playbook(configuration: configuration)
        let reply = text(clientBytes(denied.client(simpleGet)))
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\n"), reply)
        XCTAssertTrue(reply.contains("Proxy-Authenticate: Basic realm=\"harrec\"\r\n"))

        let wrong = Playbook(configuration: configuration)
        let wrongReply = wrong.client("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: Basic dXNlcjp3cm9uZw==\r\n\r\n")
        XCTAssertTrue(text(clientBytes(wrongReply)).hasPrefix("HTTP/1.1 407 "))

        let allowed = Playbook(configuration: configuration)
        assertTranscript(allowed.client("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: Basic dXNlcjpwYXNz\r\n\r\n"),
                         ["open 1 a.test:80"])
        let forwarded = text(upstreamBytes(allowed.connected(1), 1))
        XCTAssertFalse(forwarded.contains("Proxy-Authorization"), forwarded)
        allowed.upstream(1, okResponse)
        XCTAssertFalse(allowed.sink.flows[0].request.fields.contains { $0.name.lowercased() == "proxy-authorization" })
    }

    func testUpgradeSwitchesToARawRelay() {
        let p = Playbook()
        p.client("GET http://a.test/ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: x\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let forwarded = text(upstreamBytes(p.connected(1), 1))
        XCTAssertTrue(forwarded.contains("Upgrade: websocket\r\n"), forwarded)
        XCTAssertTrue(forwarded.contains("Connection: Upgrade\r\n"), forwarded)
        let commands = p.upstream(1, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\u{81}\u{0}")
        let toClient = text(clientBytes(commands))
        XCTAssertTrue(toClient.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), toClient)
        XCTAssertTrue(p.sink.flows.isEmpty, "a WebSocket entry is written when the conversation ends")
        XCTAssertEqual(upstreamBytes(p.client([0x81, 0x80, 1, 2, 3, 4]), 1), [0x81, 0x80, 1, 2, 3, 4])
        p.clientEOF()
        p.upstreamEOF(1)
        XCTAssertEqual(p.sink.flows.first?.response?.status, 101)
        // The bytes after the 101 above are "\u{81}\u{0}" as UTF-8 (C2 81 00): relayed, but not a
        // valid frame, so the server direction records a problem; the client's empty text frame is a message.
        XCTAssertEqual(p.sink.flows.first?.webSocket?.messages.map(\.direction), [.send])
        XCTAssertEqual(p.sink.flows.first?.webSocket?.problems.count, 1)
    }

    func testAbortRecordsTheExchangeInFlight() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.beginShutdown()
        XCTAssertFalse(p.session.isFinished, "in-flight exchange may finish")
        p.abort("aborted: harrec stopped")
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertEqual(p.sink.flows[0].error, "aborted: harrec stopped")
        XCTAssertTrue(p.session.isFinished)
    }

    func testGracefulShutdownLetsTheResponseFinishThenCloses() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.beginShutdown()
        let commands = p.upstream(1, okResponse)
        XCTAssertTrue(text(clientBytes(commands)).contains("Connection: close\r\n"))
        XCTAssertTrue(transcript(commands).contains("close client"))
        XCTAssertNil(p.sink.flows[0].error)
    }

    func testStaleKeepAliveConnectionIsRetriedOnce() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, okResponse)
        p.client(simpleGet)
        assertTranscript(p.upstreamEOF(1), ["close upstream 1", "open 2 example.test:9000"])
        XCTAssertTrue(text(upstreamBytes(p.connected(2), 2)).hasPrefix("GET /a?x=1 HTTP/1.1\r\n"))
        p.upstream(2, okResponse)
        XCTAssertEqual(p.sink.flows.count, 2)
        XCTAssertNil(p.sink.flows[1].error)
    }

    func testClientEOFWhileIdleFinishesTheSession() {
        let p = Playbook()
        p.client(simpleGet)
        p.connected(1)
        p.upstream(1, okResponse)
        assertTranscript(p.clientEOF(), ["close upstream 1", "close client"])
    }

    func testGarbageFirstBytesGet400() {
        let p = Playbook()
        let reply = text(clientBytes(p.client("\u{1}\u{2}\u{3}garbage\r\n\r\n")))
        XCTAssertTrue(reply.hasPrefix("HTTP/1.1 400 "), reply)
        XCTAssertTrue(p.session.isFinished)
    }

    func testSOCKS4IsRefusedWithAClearReason() {
        let p = Playbook()
        let commands = p.client([4, 1, 0, 80, 127, 0, 0, 1, 0])
        XCTAssertTrue(p.session.isFinished)
        XCTAssertTrue(liveEvents(commands).contains {
            if case .socksRefused(let reason) = $0 { return reason.contains("SOCKS4") } else { return false }
        })
    }

    func testTunnelSniffer() {
        XCTAssertEqual(TunnelSniffer.classify([]), .needMoreData)
        XCTAssertEqual(TunnelSniffer.classify(Array("GE".utf8)), .needMoreData)
        XCTAssertEqual(TunnelSniffer.classify(Array("GET ".utf8)), .http)
        XCTAssertEqual(TunnelSniffer.classify([0x16, 0x03, 0x01]), .other)
        XCTAssertEqual(TunnelSniffer.classify(Array("SSH-2.0".utf8)), .other)
        XCTAssertEqual(TunnelSniffer.classify(Array(" GET".utf8)), .other)
        XCTAssertEqual(TunnelSniffer.classify(Array(String(repeating: "A", count: 30).utf8)), .other)
    }

    func testTargetParsing() throws {
        let absolute = try parseAbsoluteTarget("HTTP://Example.TEST:8080/p?q=1#frag")
        XCTAssertEqual(absolute.target, ProxyTarget(host: "example.test", port: 8080))
        XCTAssertEqual(absolute.originForm, "/p?q=1")
        XCTAssertEqual(absolute.url, "http://example.test:8080/p?q=1")
        XCTAssertEqual(try parseAbsoluteTarget("http://a.test").originForm, "/")
        XCTAssertEqual(try parseAbsoluteTarget("http://a.test?x").originForm, "/?x")
        XCTAssertEqual(try parseAbsoluteTarget("http://[::1]:9/x").target, ProxyTarget(host: "::1", port: 9))
        XCTAssertEqual(try parseAbsoluteTarget("http://u:p@a.test/").url, "http://a.test/")
        XCTAssertThrowsError(try parseAbsoluteTarget("https://a.test/"))
        XCTAssertThrowsError(try parseAbsoluteTarget("http://a.test:0/"))
        XCTAssertThrowsError(try parseAbsoluteTarget("http://a.test:99999/"))
        XCTAssertThrowsError(try parseAbsoluteTarget("http://a b/"))
        XCTAssertThrowsError(try parseAuthority("a.test", defaultPort: nil))
        XCTAssertEqual(try parseAuthority("a.test:443", defaultPort: nil), ProxyTarget(host: "a.test", port: 443))
    }
}
