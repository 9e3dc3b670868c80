@testable import HARReplay
import HARScenarios
import HTTP1
@testable import ProxyCore
import Recording
import Synchronization
import XCTest

/// `harrec replay` inside one session: requests answered from a ReplayService, never connected.
final class ReplaySessionTests: XCTestCase {
    private func item(_ method: String, _ path: String, query: [QueryItemMatch] = [], body: BodyMatch? = nil,
                      status: Int = 200, text: String, _ repeatability: Repeatability = .always,
                      delay: Double? = nil, host: String = "api.test") -> QueueEntry {
        var response = MockResponse(status: status, headers: [HTTPHeader("Content-Type", "text/plain")],
                                    body: text.isEmpty ? .empty : .text(text), delay: delay)
        response.delay = delay
        return QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: method, scheme: "http", host: host, path: path, query: query, body: body),
            response: response, repeatability: repeatability))
    }

    private func playbook(_ entries: [QueueEntry], resetOn: [ReplayResetTrigger] = []) -> (Playbook, ReplayService) {
        let service = ReplayService(entries: entries, source: "HAR file t.har", resetOn: resetOn)
        var configuration = ProxyConfiguration()
        configuration.replay = service
        return (Playbook(configuration: configuration), service)
    }

    private func nothingConnected(_ commands: [ProxyCommand], file: StaticString = #filePath, line: UInt = #line) {
        for command in commands {
            if case .openUpstream = command { XCTFail("replay opened an upstream connection", file: file, line: line) }
        }
    }

    func testRepeatsAreServedInRecordedOrderAndTheLastRepeats() {
        let (p, service) = playbook([item("GET", "/n", text: "one", .once), item("GET", "/n", text: "two", .once),
                                     item("GET", "/n", text: "three")])
        var all: [ProxyCommand] = []
        for _ in 0..<4 {
            let commands = p.client("GET http://api.test/n HTTP/1.1\r\nHost: api.test\r\n\r\n")
            all += commands
        }
        let bodies = text(clientBytes(all)).components(separatedBy: "\r\n\r\n").dropFirst().map { $0.prefix(5) }
        XCTAssertEqual(bodies.map(String.init), ["oneHT", "twoHT", "three", "three"])
        XCTAssertTrue(text(clientBytes(all)).hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\none"))
        XCTAssertFalse(all.contains(.closeClient), "keep-alive: the connection stays open")
        nothingConnected(all)
        XCTAssertEqual(service.summary().servedCount, 4)
        XCTAssertEqual(service.summary().neverServed, [])
    }

    /// A response left in the HAR file (its headers and body) is read when its item is served,
    /// each time, and decoded as a kept one is; one that cannot be read again is a 502 that names
    /// the item.
    func testAResponseLeftInTheFileIsReadWhenServed() {
        var large = item("GET", "/video", text: "")
        large.item.response.headers = []
        large.bodySource = 7
        var gone = item("GET", "/gone", text: "")
        gone.bodySource = 9
        let reads = Mutex<[Int]>([])
        let service = ReplayService(entries: [large, gone, item("GET", "/small", text: "kept")], source: "HAR file t.har",
                                    bodies: { index in
                                        reads.withLock { $0.append(index) }
                                        let headers = [HTTPHeader("Content-Type", "text/plain"), HTTPHeader("X-Stored", "1")]
                                        return index == 7 ? StoredResponse(headers: headers, body: .base64("AAECAw==")) : nil
                                    })
        var configuration = ProxyConfiguration()
        configuration.replay = service
        let p = Playbook(configuration: configuration)
        for _ in 0..<2 {
            let answer = clientBytes(p.client("GET http://api.test/video HTTP/1.1\r\nHost: api.test\r\n\r\n"))
            XCTAssertTrue(text(answer).hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Stored: 1\r\nContent-Length: 4\r\n\r\n"),
                          text(answer))
            XCTAssertEqual(Array(answer.suffix(4)), [0, 1, 2, 3])
        }
        let small = text(clientBytes(p.client("GET http://api.test/small HTTP/1.1\r\nHost: api.test\r\n\r\n")))
        XCTAssertTrue(small.hasSuffix("\r\n\r\nkept"), small)
        let failed = text(clientBytes(p.client("GET http://api.test/gone HTTP/1.1\r\nHost: api.test\r\n\r\n")))
        XCTAssertTrue(failed.hasPrefix("HTTP/1.1 502 "), failed)
        XCTAssertTrue(failed.contains("could not be read again from the HAR (entry 10)"), failed)
        XCTAssertEqual(reads.withLock { $0 }, [7, 7, 9], "read on each serve, never at load, never for a kept body")
    }

    /// A body held in memory, handed out as a streamed one: the reads are counted, and the body
    /// can be made to end early (a file changed in place).
    final class MemorySource: ReplayBodySource, @unchecked Sendable {
        let bytes: [UInt8]
        var position = 0
        var reads = 0
        var lostAfter: Int?
        var count: Int { bytes.count }
        init(_ bytes: [UInt8], lostAfter: Int? = nil) { self.bytes = bytes; self.lostAfter = lostAfter }
        func read(upTo maximum: Int) -> [UInt8]? {
            reads += 1
            if let lostAfter, position >= lostAfter { return nil }
            let end = min(bytes.count, position + maximum)
            defer { position = end }
            return Array(bytes[position..<end])
        }
    }

    private func streamingPlaybook(_ source: @escaping @Sendable () -> MemorySource) -> Playbook {
        var large = item("GET", "/video", text: "")
        large.bodySource = 3
        let service = ReplayService(entries: [large, item("GET", "/small", text: "kept")], source: "HAR file t.har",
                                    bodies: { _ in nil }, streams: { $0 == 3 ? source() : nil })
        var configuration = ProxyConfiguration()
        configuration.replay = service
        return Playbook(configuration: configuration)
    }

    /// A body left in the file goes out a piece at a time, each when the client took the last
    /// one: the head announces its length, nothing more is read before the runtime says the
    /// client drained, one piece is read each time, and a request pipelined behind it is
    /// answered after its last byte.
    func testAStreamedBodyGoesOutAPieceAtATimeAsTheClientTakesIt() {
        let body = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let source = MemorySource(body)
        let p = streamingPlaybook { source }
        let first = p.client("GET http://api.test/video HTTP/1.1\r\nHost: api.test\r\n\r\n"
                             + "GET http://api.test/small HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(text(clientBytes(first)), "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 700000\r\n\r\n")
        XCTAssertEqual(source.reads, 0, "nothing is read before the client takes the head")
        XCTAssertTrue(p.session.wantsClientDrained)
        var received: [UInt8] = []
        var rest: [UInt8] = []
        var pieces = 0
        while p.session.wantsClientDrained && pieces < 10 {
            pieces += 1
            let out = clientBytes(p.clientDrained())
            let wanted = min(out.count, body.count - received.count)
            XCTAssertLessThanOrEqual(wanted, ReplayWire.streamedPiece)
            received += out[..<wanted]
            rest += out[wanted...]
        }
        XCTAssertEqual(pieces, 3, "700,000 bytes in pieces of 256 KiB")
        XCTAssertEqual(received, body)
        XCTAssertTrue(text(rest).hasPrefix("HTTP/1.1 200 OK") && text(rest).hasSuffix("\r\n\r\nkept"), String(text(rest).prefix(600)).replacingOccurrences(of: "\r\n", with: " / "))
        XCTAssertFalse(p.session.wantsClientDrained)
        XCTAssertTrue(p.clientDrained().isEmpty, "a drained client with nothing to stream gets nothing")

        XCTAssertEqual(source.reads, 3, "one read a piece")

        // An empty body (a large text that decodes to nothing) is answered at once.
        let empty = MemorySource([])
        let e = streamingPlaybook { empty }
        XCTAssertTrue(text(clientBytes(e.client("GET http://api.test/video HTTP/1.1\r\nHost: api.test\r\n\r\n")))
            .hasSuffix("Content-Length: 0\r\n\r\n"))
        XCTAssertFalse(e.session.wantsClientDrained)
        XCTAssertEqual(empty.reads, 0)
    }

    /// A body the file no longer holds ends the connection short of its length (the client sees
    /// the answer cut) with a live-log line; a client that stops taking the body is let go after
    /// the idle limit.
    func testAStreamedBodyThatCannotBeReadCutsTheConnection() {
        let p = streamingPlaybook { MemorySource([UInt8](repeating: 7, count: 600_000), lostAfter: 200_000) }
        p.client("GET http://api.test/video HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(clientBytes(p.clientDrained()).count, ReplayWire.streamedPiece)
        let lost = p.clientDrained()
        XCTAssertTrue(lost.contains(.closeClient))
        guard case .replayBodyLost(let url, let label, let sent, let count)? = liveEvents(lost).last else {
            return XCTFail("no live event for the lost body")
        }
        XCTAssertEqual([url, label], ["http://api.test/video", "#1"])
        XCTAssertEqual([sent, count], [ReplayWire.streamedPiece, 600_000])

        let stalled = streamingPlaybook { MemorySource([UInt8](repeating: 1, count: 600_000)) }
        stalled.client("GET http://api.test/video HTTP/1.1\r\nHost: api.test\r\n\r\n")
        stalled.clientDrained()
        stalled.advance(ProxyConfiguration().timeouts.clientIdle / 2)
        XCTAssertFalse(stalled.tick().contains(.closeClient))
        stalled.advance(ProxyConfiguration().timeouts.clientIdle)
        XCTAssertTrue(stalled.tick().contains(.closeClient), "a client that stopped reading is let go")
    }

    func testPipelinedRequestsAndABodyArrivingByteByByte() {
        let (p, _) = playbook([item("POST", "/q", body: .json("{\"a\":1}"), text: "matched a=1"),
                               item("POST", "/q", body: .json("{\"a\":2}"), text: "matched a=2")])
        let request = { (body: String) in
            "POST http://api.test/q HTTP/1.1\r\nHost: api.test\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }
        // JSON by value: whitespace and key order do not matter.
        let commands = p.clientBytewise(request("{ \"a\" : 2 }") + request("{\"a\":1}"))
        let answer = text(clientBytes(commands))
        XCTAssertEqual(answer.components(separatedBy: "matched a=").count, 3)
        XCTAssertLessThan(answer.range(of: "matched a=2")!.lowerBound, answer.range(of: "matched a=1")!.lowerBound)
        nothingConnected(commands)
    }

    func testAnUnmatchedRequestGets599WithTheDiagnosisAndTheConnectionStaysOpen() {
        let (p, service) = playbook([item("GET", "/v1/projects", query: [.equals("page", "1")], text: "p1")])
        let commands = p.client("GET http://api.test/v1/projects?page=2 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        let answer = text(clientBytes(commands))
        XCTAssertTrue(answer.hasPrefix("HTTP/1.1 599 No Recorded Response\r\n"), answer)
        XCTAssertTrue(answer.contains("no response for GET http://api.test/v1/projects?page=2 in HAR file t.har"), answer)
        XCTAssertTrue(answer.contains("query item \"page\": expected \"1\", got \"2\""), answer)
        XCTAssertFalse(commands.contains(.closeClient))
        guard case .replayUnmatched(let method, let url, _)? = liveEvents(commands).first else {
            return XCTFail("no live event for the unmatched request")
        }
        XCTAssertEqual(method + " " + url, "GET http://api.test/v1/projects?page=2")
        XCTAssertEqual(service.summary().unmatched, ["GET http://api.test/v1/projects?page=2"])
        XCTAssertEqual(service.summary().neverServed, ["#1 GET /v1/projects"])
        // The next request on the same connection is still served.
        let next = p.client("GET http://api.test/v1/projects?page=1 HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(text(clientBytes(next)).hasSuffix("p1"))
    }

    func testARecordedFailureClosesTheClientConnectionWithoutAResponse() {
        var failing = item("GET", "/down", text: "")
        failing.item.response = .failure(code: .networkConnectionLost)
        let (p, _) = playbook([failing])
        let commands = p.client("GET http://api.test/down HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(clientBytes(commands), [])
        XCTAssertTrue(commands.contains(.closeClient))
    }

    /// A response cut short goes out as the client got it: the head, chunked, and what arrived
    /// of the body without the last chunk; then a broken connection closes, and a client's own
    /// give-up stays silent until the client leaves again. An HTTP/1.0 client gets the body up to
    /// the close; a HEAD only the head.
    func testAResponseCutShortIsReplayedAsTheClientSawIt() {
        var cut = item("GET", "/cut", status: 206, text: "part")
        cut.item.response.interruptionCode = .networkConnectionLost
        cut.recordedError = "upstream closed the connection mid-body"
        var gaveUp = item("GET", "/gave-up", text: "some")
        gaveUp.item.response.interruptionCode = .timedOut
        gaveUp.recordedError = "client closed the connection after 2.0 s"
        let (p, _) = playbook([cut, gaveUp])
        let broken = p.client("GET http://api.test/cut HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(text(clientBytes(broken)), "HTTP/1.1 206 Partial Content\r\nContent-Type: text/plain\r\n"
                       + "Transfer-Encoding: chunked\r\n\r\n4\r\npart\r\n", "no last chunk")
        XCTAssertTrue(broken.contains(.closeClient), "\(broken)")

        let (q, _) = playbook([cut, gaveUp])
        let silent = q.client("GET http://api.test/gave-up HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(text(clientBytes(silent)).hasSuffix("chunked\r\n\r\n4\r\nsome\r\n"))
        XCTAssertFalse(silent.contains(.closeClient), "silence, as the recorded client waited")
        q.advance(5)
        XCTAssertEqual(clientBytes(q.tick()), [])
        XCTAssertTrue(q.clientEOF().contains(.closeClient), "the client leaves again")

        for (request, expected) in [("GET http://api.test/cut HTTP/1.0\r\nHost: api.test\r\n\r\n",
                                     "HTTP/1.1 206 Partial Content\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\npart"),
                                    ("HEAD http://api.test/cut HTTP/1.1\r\nHost: api.test\r\n\r\n",
                                     "HTTP/1.1 206 Partial Content\r\nContent-Type: text/plain\r\n\r\n")] {
            var head = cut
            head.item.condition.method = "HEAD"
            let (r, _) = playbook([cut, head])
            let commands = r.client(request)
            XCTAssertEqual(text(clientBytes(commands)), expected)
            XCTAssertTrue(commands.contains(.closeClient))
        }
    }

    /// ALPN follows the recording: a host reached over h2 speaks h2 to a client that offers it,
    /// one reached over HTTP/1.1 does not, and an unrecorded host does; a host map serves the
    /// recorded host's protocol at its target.
    func testTheReplaySpeaksHTTP2WhereTheRecordingDid() {
        let hosts = ReplayService.http2Hosts([("https://h2.test/a", "HTTP/2.0"), ("https://h2.test/b", "http/1.1"),
                                              ("https://h1.test:8443/", "HTTP/1.1"), ("https://alpn.test/", "h2"),
                                              ("http://plain.test/", "HTTP/2.0")])
        XCTAssertEqual(hosts, ["h2.test:443": true, "h1.test:8443": false, "alpn.test:443": true])
        let service = ReplayService(entries: [], source: "t", remaps: [HostRemap(recordedHost: "h1.test", target: "https://127.0.0.1:9443")!],
                                    http2Hosts: hosts)
        XCTAssertTrue(service.speaksHTTP2(to: ProxyTarget(host: "H2.test", port: 443)))
        XCTAssertFalse(service.speaksHTTP2(to: ProxyTarget(host: "h1.test", port: 8443)))
        XCTAssertTrue(service.speaksHTTP2(to: ProxyTarget(host: "elsewhere.test", port: 443)))
        XCTAssertTrue(service.speaksHTTP2(to: ProxyTarget(host: "127.0.0.1", port: 9443)), "h1.test:443 was never recorded")
        let mapped = ReplayService(entries: [], source: "t", remaps: [HostRemap(recordedHost: "h1.test", target: "https://127.0.0.1:9443")!],
                                   http2Hosts: ["h1.test:443": false])
        XCTAssertFalse(mapped.speaksHTTP2(to: ProxyTarget(host: "127.0.0.1", port: 9443)), "as recorded for h1.test")
    }

    func testRecordedLatencyWaitsForItsWakeUp() {
        let (p, _) = playbook([item("GET", "/slow", text: "late", delay: 0.25)])
        let first = p.client("GET http://api.test/slow HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertEqual(clientBytes(first), [], "nothing before the recorded latency")
        XCTAssertTrue(first.contains(.wake(at: p.now + 0.25)), "\(first)")
        p.advance(0.1)
        XCTAssertEqual(clientBytes(p.tick()), [], "a tick before the instant sends nothing")
        p.advance(0.15)
        XCTAssertTrue(text(clientBytes(p.tick())).hasSuffix("late"))
    }

    func testTunnelsAreAnsweredWithoutConnecting() {
        let (p, _) = playbook([item("GET", "/in-tunnel", text: "from the tunnel", host: "api.test")])
        let established = p.client("CONNECT api.test:80 HTTP/1.1\r\nHost: api.test:80\r\n\r\n")
        XCTAssertTrue(text(clientBytes(established)).hasPrefix("HTTP/1.1 200"))
        let commands = p.client("GET /in-tunnel HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(text(clientBytes(commands)).hasSuffix("from the tunnel"))
        nothingConnected(established + commands)
    }

    func testResetThroughTheReservedHostAndResetOn() {
        let (p, _) = playbook([item("GET", "/n", text: "first", .once), item("GET", "/n", text: "again"),
                               item("GET", "/logout", text: "bye")],
                              resetOn: [ReplayResetTrigger("GET /logout")!])
        func get(_ path: String) -> String {
            text(clientBytes(p.client("GET http://api.test\(path) HTTP/1.1\r\nHost: api.test\r\n\r\n")))
        }
        XCTAssertTrue(get("/n").hasSuffix("first"))
        XCTAssertTrue(get("/n").hasSuffix("again"))
        let reset = p.client("GET http://harrec/reset HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(text(clientBytes(reset)).contains("replay queues restarted"))
        XCTAssertTrue(liveEvents(reset).contains(.replayReset(trigger: "http://harrec/reset")))
        XCTAssertTrue(get("/n").hasSuffix("first"))
        XCTAssertTrue(get("/logout").hasSuffix("bye"))
        XCTAssertTrue(get("/n").hasSuffix("first"), "--reset-on restarted the queues after the logout")
        // Marks belong to recording.
        let mark = p.client("GET http://harrec/mark?name=x HTTP/1.1\r\nHost: harrec\r\n\r\n")
        XCTAssertTrue(text(clientBytes(mark)).hasPrefix("HTTP/1.1 404"))
    }

    func testHeadAndCloseAndHTTP10() {
        let (p, _) = playbook([item("GET", "/doc", text: "body bytes"), item("HEAD", "/doc", text: "")])
        let head = p.client("HEAD http://api.test/doc HTTP/1.1\r\nHost: api.test\r\n\r\n")
        XCTAssertTrue(text(clientBytes(head)).hasSuffix("\r\n\r\n"), "a HEAD answer has no body")
        let closing = p.client("GET http://api.test/doc HTTP/1.0\r\nHost: api.test\r\n\r\n")
        let answer = text(clientBytes(closing))
        XCTAssertTrue(answer.contains("Connection: close\r\n") && answer.hasSuffix("body bytes"), answer)
        XCTAssertTrue(closing.contains(.closeClient))
    }

    func testATunnelTheRecordingCouldNotOpenIsRefusedAgain() {
        let service = ReplayService(entries: [], source: "t",
                                    refusedTunnels: ["down.test:443": "cannot connect to down.test:443: connection refused"])
        var configuration = ProxyConfiguration()
        configuration.replay = service
        configuration.recordRefusals = false
        let p = Playbook(configuration: configuration)
        let commands = p.client("CONNECT down.test:443 HTTP/1.1\r\nHost: down.test:443\r\n\r\n")
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 502 "), text(clientBytes(commands)))
        XCTAssertTrue(commands.contains(.closeClient))
        XCTAssertEqual(service.summary().refusedCount, 1)
        // Through SOCKS5 the reply says "connection refused" (5).
        let socks = Playbook(configuration: configuration)
        _ = socks.client([5, 1, 0])
        let reply = clientBytes(socks.client([5, 1, 0, 3, 9] + Array("down.test".utf8) + [1, 187]))
        XCTAssertEqual(Array(reply.prefix(2)), [5, 5])
        // Other targets are served.
        let open = Playbook(configuration: configuration)
        XCTAssertTrue(text(clientBytes(open.client("CONNECT up.test:443 HTTP/1.1\r\nHost: up.test:443\r\n\r\n"))).hasPrefix("HTTP/1.1 200"))
    }

    func testABodyTooLargeToMatchGets413AndTheConnectionCloses() {
        let (p, service) = playbook([item("POST", "/upload", text: "ok")])
        let size = ReplayWire.maximumRequestBody + 1
        var commands = p.client("POST http://api.test/upload HTTP/1.1\r\nHost: api.test\r\nContent-Length: \(size)\r\n\r\n")
        let chunk = [UInt8](repeating: 0x61, count: 1 << 20)
        var sent = 0
        while sent < size && !commands.contains(.closeClient) {
            let piece = min(chunk.count, size - sent)
            commands = p.client(Array(chunk.prefix(piece)))
            sent += piece
        }
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 413 "), text(clientBytes(commands)))
        XCTAssertTrue(commands.contains(.closeClient))
        XCTAssertEqual(service.summary().servedCount, 0)
    }

    func testResetTriggerParsing() {
        XCTAssertEqual(ReplayResetTrigger("get /v1/logout")?.method, "GET")
        XCTAssertEqual(ReplayResetTrigger("/v1/logout")?.method, nil)
        XCTAssertNil(ReplayResetTrigger("GET"))
        XCTAssertNil(ReplayResetTrigger("GET v1/logout"))
        XCTAssertNil(ReplayResetTrigger("GET /a /b"))
    }
}
