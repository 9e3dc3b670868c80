@testable import HARReplay
import HARScenarios
import HTTP1
import HTTP2
@testable import ProxyCore
import Recording
import XCTest

/// `harrec replay` over HTTP/2: a real nghttp2 client's streams answered from a ReplayService by
/// HTTP2Layer, with nothing sent to an origin and nothing recorded.
final class HTTP2ReplayTests: XCTestCase {
    private func service() -> ReplayService {
        func entry(_ method: String, _ path: String, _ text: String, _ r: Repeatability = .always,
                   body: BodyMatch? = nil, delay: Double? = nil, failure: MockFailureCode? = nil,
                   interruption: MockFailureCode? = nil, error: String? = nil) -> QueueEntry {
            var response = MockResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain"),
                                                               HTTPHeader("Connection", "keep-alive")],
                                        body: .text(text), delay: delay, interruption: interruption)
            if let failure { response = .failure(code: failure) }
            return QueueEntry(item: ResponseQueueItem(
                condition: RequestCondition(method: method, scheme: "https", host: "api.test", path: path, body: body),
                response: response, repeatability: r), recordedError: error)
        }
        return ReplayService(entries: [entry("GET", "/n", "first", .once), entry("GET", "/n", "again"),
                                       entry("POST", "/q", "matched", body: .json(#"{"a":1}"#)),
                                       entry("GET", "/slow", "late", delay: 0.5),
                                       entry("GET", "/down", "", failure: .networkConnectionLost),
                                       entry("GET", "/calm", "", failure: .networkConnectionLost,
                                             error: "upstream reset the stream (ENHANCE_YOUR_CALM)"),
                                       entry("GET", "/gave-up", "", failure: .timedOut,
                                             error: "client reset the stream (CANCEL) after 2.0 s"),
                                       entry("GET", "/cut", "part", interruption: .networkConnectionLost,
                                             error: "upstream reset the stream (CANCEL)"),
                                       entry("GET", "/cut-gave-up", "some", interruption: .timedOut,
                                             error: "client reset the stream (CANCEL) after 1.0 s")],
                             source: "HAR file t.har")
    }

    func testStreamsAreAnsweredFromTheRecordingInOrder() throws {
        for chunk in [Int.max, 1, 5] {
            let h = try HTTP2LayerHarness(chunk: chunk, replay: service())
            let a = try h.request("/n"), b = try h.request("/n"), c = try h.request("/n")
            let post = try h.request("/q", method: "POST", body: Array(#"{ "a" : 1 }"#.utf8))
            let missing = try h.request("/nothing")
            try h.run()
            XCTAssertEqual([a, b, c].map { text(streamData(h.clientEvents, $0)) }, ["first", "again", "again"], "chunk \(chunk)")
            XCTAssertEqual(text(streamData(h.clientEvents, post)), "matched")
            XCTAssertEqual(h.status(a), "200")
            XCTAssertTrue(h.clientEvents.contains { event in
                if case .headers(a, let fields, _) = event {
                    return fields.contains(HTTPField(name: "content-length", value: "5"))
                        && !fields.contains { $0.name == "connection" }
                }
                return false
            }, "content-length added, connection-specific fields dropped")
            XCTAssertEqual(h.status(missing), "599")
            XCTAssertTrue(text(streamData(h.clientEvents, missing)).contains("no response for GET https://api.test/nothing"))
            XCTAssertTrue(h.originEvents.isEmpty, "nothing reaches an origin")
            XCTAssertTrue(h.flows.isEmpty, "a replay records nothing")
        }
    }

    func testRecordedLatencyAndFailures() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let slow = try h.request("/slow")
        let down = try h.request("/down")
        try h.run()
        XCTAssertEqual(h.wakes, [h.now + 0.5])
        XCTAssertNil(h.status(slow), "not before the recorded latency")
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: down, errorCode: 0x2)),
                      "a recorded failure resets its stream (INTERNAL_ERROR)")
        h.now += 0.5
        h.layer.answerDueStreams(at: h.now)
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, slow)), "late")
    }

    /// What the recording's client saw, again: a reset harrec passed on comes with its code, and
    /// a stream the client gave up on gets nothing until the client resets it again.
    func testARecordedResetKeepsItsCodeAndAGiveUpStaysSilent() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let calm = try h.request("/calm")
        let gaveUp = try h.request("/gave-up")
        try h.run()
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: calm, errorCode: 0xb)), "\(h.clientEvents)")
        XCTAssertFalse(h.clientEvents.contains { event in
            switch event {
            case .headers(gaveUp, _, _), .reset(gaveUp, _), .data(gaveUp, _): return true
            default: return false
            }
        }, "\(h.clientEvents)")
        h.client.reset(gaveUp, errorCode: 0x8)
        try h.run()
        XCTAssertTrue(h.layer.streams.isEmpty, "the silent stream is gone once the client left")
        XCTAssertEqual(HTTP2ErrorCode.passedOnReset("upstream reset the stream (error 0x1f)"), 0x1f)
        XCTAssertNil(HTTP2ErrorCode.passedOnReset("upstream closed the stream (CANCEL)"))
    }

    /// A response cut short: its head (no content-length) and what arrived of its body, without
    /// END_STREAM; then the recorded reset, after the data, or silence for a client's give-up.
    func testAResponseCutShortIsReplayedAsTheClientSawIt() throws {
        for chunk in [Int.max, 7] {
            let h = try HTTP2LayerHarness(chunk: chunk, replay: service())
            let cut = try h.request("/cut"), gaveUp = try h.request("/cut-gave-up")
            try h.run()
            XCTAssertEqual(h.status(cut), "200")
            XCTAssertEqual(text(streamData(h.clientEvents, cut)), "part", "chunk \(chunk)")
            XCTAssertEqual(text(streamData(h.clientEvents, gaveUp)), "some")
            let order = h.clientEvents.compactMap { event -> String? in
                switch event {
                case .data(cut, _): return "data"
                case .reset(cut, let code): return "reset \(code)"
                case .headers(cut, let fields, let end):
                    return fields.contains { $0.name == "content-length" } || end ? "bad head" : "head"
                default: return nil
                }
            }
            XCTAssertEqual(order.first, "head")
            XCTAssertEqual(order.last, "reset 8", "the recorded CANCEL, after the data: \(order)")
            XCTAssertFalse(h.clientEvents.contains { event in
                if case .reset(gaveUp, _) = event { return true }
                if case .endStream(gaveUp) = event { return true }
                return false
            }, "silence after what the client had")
        }
    }

    /// A body left in the file streams on its stream a piece at a time: the next piece is read
    /// only when the stream's queue has room (the client's window took the last one), so a client
    /// that stops reading holds at most two pieces; the body arrives whole, after its declared
    /// length, while another stream is answered beside it.
    func testAStreamedBodyFollowsTheStreamsWindow() throws {
        let body = (0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        // Each serve reads a source of its own, as the HAR file's reader gives.
        final class Sources: @unchecked Sendable { var made: [ReplaySessionTests.MemorySource] = [] }
        let sources = Sources()
        var large = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "https", host: "api.test", path: "/video"),
            response: MockResponse(status: 200, headers: [HTTPHeader("Content-Type", "video/mp4")], body: .empty),
            repeatability: .always))
        large.bodySource = 0
        let small = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "https", host: "api.test", path: "/small"),
            response: MockResponse(status: 200, headers: [], body: .text("kept")), repeatability: .always))
        let service = ReplayService(entries: [large, small], source: "t", bodies: { _ in nil }, streams: { _ in
            let source = ReplaySessionTests.MemorySource(body)
            sources.made.append(source)
            return source
        })
        let h = try HTTP2LayerHarness(replay: service)
        let video = try h.request("/video")
        h.clientStalls.insert(video)
        try h.run()
        XCTAssertTrue(h.responseHead(video)?.contains(HTTPField(name: "content-length", value: "900000")) ?? false)
        for _ in 0..<5 where h.layer.wantsStreamedBodyPieces {
            h.layer.continueStreamedBodies(at: h.now)
            try h.run()
        }
        XCTAssertFalse(h.layer.wantsStreamedBodyPieces, "a stalled stream's queue is full")
        XCTAssertLessThanOrEqual(sources.made[0].position, 2 * ReplayWire.streamedPiece, "at most two pieces read ahead of the window")
        let other = try h.request("/small")
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, other)), "kept", "another stream is answered meanwhile")

        // The client reads again: the rest follows, as the window opens.
        h.clientStalls.remove(video)
        h.client.consumed(streamData(h.clientEvents, video).count, on: video)
        for _ in 0..<40 {
            try h.run()
            guard h.layer.wantsStreamedBodyPieces else { continue }
            h.layer.continueStreamedBodies(at: h.now)
        }
        XCTAssertEqual(streamData(h.clientEvents, video), body)
        XCTAssertTrue(h.clientEvents.contains(.endStream(streamID: video)), "the last piece ends the stream")
        XCTAssertTrue(h.layer.streamingIDs.isEmpty)

        // A client that stops taking a streamed body has its stream reset after the idle limit,
        // and only then.
        let stalled = try h.request("/video")
        h.clientStalls.insert(stalled)
        try h.run()
        for _ in 0..<5 where h.layer.wantsStreamedBodyPieces {
            h.layer.continueStreamedBodies(at: h.now)
            try h.run()
        }
        h.now += 60
        h.layer.expireStalledBodies(at: h.now, limit: 120)
        try h.run()
        XCTAssertFalse(h.clientEvents.contains(.reset(streamID: stalled, errorCode: HTTP2ErrorCode.cancel)))
        h.now += 61
        h.layer.expireStalledBodies(at: h.now, limit: 120)
        try h.run()
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: stalled, errorCode: HTTP2ErrorCode.cancel)))
        XCTAssertTrue(h.layer.streamingIDs.isEmpty)
    }
}

/// `harrec replay --passthrough` over HTTP/2: unmatched streams go to the real upstream on a
/// connection opened for them, are recorded, and never disturb the replayed streams.
final class HTTP2PassthroughTests: XCTestCase {
    private func service() -> ReplayService {
        let response = MockResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain")], body: .text("recorded"))
        let entry = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "https", host: "api.test", path: "/known"),
            response: response, repeatability: .always))
        return ReplayService(entries: [entry], source: "HAR file t.har", passthrough: true)
    }

    func testUnmatchedStreamsGoUpstreamOnceItIsReadyAndAreRecorded() throws {
        for chunk in [Int.max, 1, 7] {
            let h = try HTTP2LayerHarness(chunk: chunk, replay: service())
            let known = try h.request("/known")
            let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let missing = try h.request("/missing", method: "POST", body: body, trailers: [HTTPField(name: "x-sum", value: "1")])
            let other = try h.request("/other")
            try h.run()
            XCTAssertEqual(h.upstreamOpenings, 1, "one connection for both unmatched streams (chunk \(chunk))")
            XCTAssertEqual(text(streamData(h.clientEvents, known)), "recorded", "replayed without waiting")
            XCTAssertTrue(h.originEvents.isEmpty, "nothing goes out before the connection is ready")
            try h.connectOrigin()
            try h.run()
            let oid = try XCTUnwrap(h.originStream("/missing"))
            let received = streamData(h.originEvents, oid)
            XCTAssertTrue(received == body, "the gathered body goes out whole: \(received.count) of \(body.count) bytes")
            XCTAssertTrue(h.originEvents.contains(.trailers(streamID: oid, fields: [HTTPField(name: "x-sum", value: "1")])))
            try h.respond(oid, status: 201, body: Array("live".utf8))
            try h.respond(try XCTUnwrap(h.originStream("/other")), body: Array("other".utf8))
            try h.run()
            XCTAssertEqual(h.status(missing), "201")
            XCTAssertEqual(text(streamData(h.clientEvents, missing)), "live")
            XCTAssertEqual(text(streamData(h.clientEvents, other)), "other")
            XCTAssertEqual(h.flows.map(\.request.url).sorted(), ["https://api.test/missing", "https://api.test/other"],
                           "forwarded streams are recorded; replayed ones are not")
            let flow = try XCTUnwrap(h.flows.first { $0.request.url.hasSuffix("/missing") })
            XCTAssertTrue(flow.request.body.bytes == body)
            XCTAssertEqual(flow.response?.status, 201)
            XCTAssertEqual(flow.response?.body.bytes, Array("live".utf8))
            XCTAssertEqual(h.logs.filter { if case .replayForwarded = $0 { return true }; return false }.count, 2)
            // The connection is reused for the next one.
            let later = try h.request("/later")
            try h.run()
            XCTAssertEqual(h.upstreamOpenings, 1)
            try h.respond(try XCTUnwrap(h.originStream("/later")), body: Array("later".utf8))
            try h.run()
            XCTAssertEqual(text(streamData(h.clientEvents, later)), "later")
        }
    }

    func testAFailedConnectionGives502ToItsStreamsOnlyAndTheNextStreamTriesAgain() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let missing = try h.request("/missing")
        try h.run()
        h.loseOrigin("cannot connect to api.test:443: connection refused")
        try h.run()
        XCTAssertEqual(h.status(missing), "502")
        XCTAssertTrue(text(streamData(h.clientEvents, missing)).contains("connection refused"))
        XCTAssertEqual(h.flows.first?.error, "cannot connect to api.test:443: connection refused", "recorded with the reason")
        XCTAssertEqual(h.layer.state, .open, "the replay goes on")
        let known = try h.request("/known")
        let again = try h.request("/again")
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, known)), "recorded")
        XCTAssertEqual(h.upstreamOpenings, 2, "a new connection is asked for")
        try h.connectOrigin()
        try h.run()
        try h.respond(try XCTUnwrap(h.originStream("/again")), body: Array("up".utf8))
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, again)), "up")
    }

    func testAConnectTimeoutGives504() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let missing = try h.request("/missing")
        try h.run()
        h.layer.upstreamLost("cannot connect to api.test:443: connect timed out after 10 s", status: 504, at: h.now)
        try h.run()
        XCTAssertEqual(h.status(missing), "504")
        XCTAssertEqual(h.layer.replayUpstream, .none, "the next unmatched stream connects again")
    }

    func testALostConnectionFailsOnlyTheStreamsOnIt() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let missing = try h.request("/missing")
        try h.run()
        try h.connectOrigin()
        try h.run()
        XCTAssertNotNil(h.originStream("/missing"))
        h.loseOrigin("upstream closed the connection")
        let known = try h.request("/known")
        try h.run()
        XCTAssertEqual(h.status(missing), "502")
        XCTAssertEqual(text(streamData(h.clientEvents, known)), "recorded")
        XCTAssertEqual(h.layer.state, .open)
    }

    func testAGoneAwayConnectionIsReplacedForTheNextStream() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let first = try h.request("/first")
        try h.run()
        try h.connectOrigin()
        try h.run()
        try h.respond(try XCTUnwrap(h.originStream("/first")), body: Array("1".utf8))
        h.origin.goAway()
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, first)), "1")
        XCTAssertFalse(h.clientEvents.contains { if case .goAway = $0 { return true }; return false },
                       "the client keeps its connection: the upstream's GOAWAY is not its business")
        let second = try h.request("/second")
        try h.run()
        XCTAssertEqual(h.upstreamOpenings, 2, "a new connection, not a stream on the one going away")
        XCTAssertNil(h.status(second))
        try h.connectOrigin()
        try h.run()
        XCTAssertEqual(h.layer.replayUpstream, .ready)
        try h.respond(try XCTUnwrap(h.originStream("/second")), body: Array("2".utf8))
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, second)), "2", "served on the new connection")
    }

    func testWithoutPassthroughAnUnmatchedStreamGets599AndNoConnection() throws {
        let response = MockResponse(status: 200, headers: [], body: .text("x"))
        let entry = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "https", host: "api.test", path: "/known"),
            response: response, repeatability: .always))
        let h = try HTTP2LayerHarness(replay: ReplayService(entries: [entry], source: "t"))
        let missing = try h.request("/missing")
        try h.run()
        XCTAssertEqual(h.status(missing), "599")
        XCTAssertEqual(h.upstreamOpenings, 0)
        XCTAssertTrue(h.flows.isEmpty)
    }
}

/// `--passthrough` from an h2 client to an upstream whose ALPN chose HTTP/1.1: each forwarded
/// stream is one HTTP/1.1 exchange, one at a time, and its response goes back on the stream.
final class HTTP2PassthroughHTTP1Tests: XCTestCase {
    private func service() -> ReplayService {
        ReplayService(entries: [], source: "HAR file t.har", passthrough: true)
    }

    func testStreamsBecomeHTTP1ExchangesOneAtATime() throws {
        for chunk in [Int.max, 1, 7] {
            let h = try HTTP2LayerHarness(chunk: chunk, replay: service())
            let get = try h.request("/first")
            let post = try h.request("/items?x=1", method: "POST",
                                     fields: [HTTPField(name: "cookie", value: "a=1"), HTTPField(name: "cookie", value: "b=2"),
                                              HTTPField(name: "te", value: "trailers")],
                                     body: Array("hello".utf8))
            try h.run()
            h.connectHTTP1Origin()
            try h.run()
            XCTAssertEqual(String(decoding: h.originHTTP1!, as: UTF8.self), "GET /first HTTP/1.1\r\nhost: api.test\r\n\r\n",
                           "one request at a time (chunk \(chunk))")
            h.originHTTP1 = []
            try h.fromHTTP1Origin("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nGrpc-Status: 0\r\n\r\n")
            XCTAssertEqual(text(streamData(h.clientEvents, get)), "abc")
            XCTAssertTrue(h.clientEvents.contains(.trailers(streamID: get, fields: [HTTPField(name: "grpc-status", value: "0")])))
            XCTAssertEqual(String(decoding: h.originHTTP1!, as: UTF8.self),
                           "POST /items?x=1 HTTP/1.1\r\nhost: api.test\r\ncookie: a=1; b=2\r\ncontent-length: 5\r\n\r\nhello",
                           "the next request once the first response ended; cookies joined; te dropped")
            try h.fromHTTP1Origin("HTTP/1.1 201 Created\r\nContent-Length: 4\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-A: 1\r\n\r\nlive")
            XCTAssertEqual(h.responseHead(post), [HTTPField(name: ":status", value: "201"), HTTPField(name: "content-length", value: "4"),
                                           HTTPField(name: "x-a", value: "1")], "connection-specific fields dropped")
            XCTAssertEqual(text(streamData(h.clientEvents, post)), "live")
            XCTAssertEqual(h.flows.map(\.request.url), ["https://api.test/first", "https://api.test/items?x=1"])
            XCTAssertEqual(h.flows[1].request.body.bytes, Array("hello".utf8))
            XCTAssertEqual(h.flows[1].response?.body.bytes, Array("live".utf8))
            XCTAssertEqual(h.flows[0].response?.trailers, [RecordedField(name: "grpc-status", value: "0")])
            XCTAssertEqual(h.upstreamOpenings, 1)
        }
    }

    func testACloseDelimitedBodyEndsWithTheConnectionAndTheNextStreamGetsANewOne() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let first = try h.request("/first")
        try h.run()
        h.connectHTTP1Origin()
        try h.run()
        try h.fromHTTP1Origin("HTTP/1.1 200 OK\r\n\r\nuntil close")
        XCTAssertNil(h.flows.first, "not ended before the close")
        h.loseOrigin("upstream closed the connection")
        try h.run()
        XCTAssertEqual(text(streamData(h.clientEvents, first)), "until close")
        XCTAssertNil(h.flows.first?.error)
        _ = try h.request("/second")
        try h.run()
        XCTAssertEqual(h.upstreamOpenings, 2)
    }

    func testARequestMeetingTheCloseOfAReusedConnectionIsSentAgainOnce() throws {
        let h = try HTTP2LayerHarness(replay: service())
        _ = try h.request("/one")
        try h.run()
        h.connectHTTP1Origin()
        try h.run()
        try h.fromHTTP1Origin("HTTP/1.1 204 No Content\r\n\r\n")
        let two = try h.request("/two")
        try h.run()
        XCTAssertTrue(String(decoding: h.originHTTP1!, as: UTF8.self).hasSuffix("GET /two HTTP/1.1\r\nhost: api.test\r\n\r\n"))
        h.loseOrigin("upstream closed the connection")
        try h.run()
        XCTAssertEqual(h.upstreamOpenings, 2, "sent again on a new connection")
        XCTAssertNil(h.responseHead(two), "no 502 for a request the server never saw")
        h.connectHTTP1Origin()
        try h.run()
        XCTAssertEqual(String(decoding: h.originHTTP1!, as: UTF8.self), "GET /two HTTP/1.1\r\nhost: api.test\r\n\r\n")
        h.loseOrigin("upstream closed the connection")
        try h.run()
        XCTAssertEqual(h.responseHead(two)?.first?.value, "502", "only once")
    }

    func testABadResponseGives502AndTheReplayGoesOn() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let bad = try h.request("/bad")
        let next = try h.request("/next")
        try h.run()
        h.connectHTTP1Origin()
        try h.run()
        try h.fromHTTP1Origin("SSH-2.0-OpenSSH_9.6\r\n\r\n")
        XCTAssertEqual(h.responseHead(bad)?.first?.value, "502")
        XCTAssertTrue(text(streamData(h.clientEvents, bad)).contains("bad upstream response"))
        XCTAssertEqual(h.upstreamOpenings, 2, "the waiting stream gets a new connection")
        XCTAssertNil(h.responseHead(next))
        XCTAssertEqual(h.layer.state, .open)
    }

    func testASlowClientStopsTheUpstreamReads() throws {
        let h = try HTTP2LayerHarness(replay: service())
        let big = try h.request("/big")
        h.clientStalls.insert(big)
        try h.run()
        h.connectHTTP1Origin()
        try h.run()
        XCTAssertTrue(h.layer.wantsUpstreamBytes)
        try h.fromHTTP1Origin("HTTP/1.1 200 OK\r\nContent-Length: 3000000\r\n\r\n" + String(repeating: "x", count: 1_500_000))
        XCTAssertFalse(h.layer.wantsUpstreamBytes, "over a MiB waits for the client: the upstream is not read")
    }
}
