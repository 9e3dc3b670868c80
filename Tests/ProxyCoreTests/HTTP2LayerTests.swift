@testable import HARReplay
import HTTP1
import HTTP2
@testable import ProxyCore
import Recording
import XCTest

/// A real nghttp2 client and origin on either side of an `HTTP2Layer`, in memory. Bytes move in
/// `chunk`-sized pieces until all three are quiet; the test plays the client's and the origin's
/// applications between runs.
final class HTTP2LayerHarness {
    let pool = UpstreamPool(sessionID: 9)
    let layer: HTTP2Layer
    let client: HTTP2Connection
    /// The origin side; in a replay it exists only between `connectOrigin()` and `loseOrigin`.
    var origin: HTTP2Connection
    private var originConnected: Bool
    var clientEvents: [HTTP2Event] = []
    var originEvents: [HTTP2Event] = []
    var flows: [Flow] = []
    var parts: [RecordedBodyPart] = []
    var logs: [LiveEvent.Kind] = []
    /// Instants the layer asked to be woken at (a replay's recorded latency).
    var wakes: [Double] = []
    /// How often the layer asked for a (replay passthrough) upstream connection.
    var upstreamOpenings = 0
    /// Streams whose received bytes the client application does not acknowledge (a slow reader).
    var clientStalls: Set<Int32> = []
    var now: Double = 1_800_000_000
    let chunk: Int

    /// Marks and resets asked on a reverse listener's streams (`HTTP2Layer+Reverse`).
    var reserved: [ReservedHost.Answer] = []

    init(chunk: Int = .max, limits: HTTP2Limits = HTTP2Limits(), replay: ReplayService? = nil,
         reverse: HTTP2Layer.ReverseRoute? = nil, bodyPartSize: Int = 0) throws {
        self.chunk = chunk
        let command = pool.open(to: ProxyTarget(host: "api.test", port: 443), at: now)
        guard case .openUpstream(let id, _, _) = command else { fatalError("open gives openUpstream") }
        _ = pool.connected(id, UpstreamConnection(remoteIP: "127.0.0.1", dnsStart: nil, dnsEnd: nil,
                                                  connectStart: now, connectEnd: now))
        let context = HTTP2Layer.Context(clientAddress: "127.0.0.1:50000", scheme: "https", fallbackAuthority: "api.test",
                                         maxRecordedBodyBytes: 64 << 20, bodyPartSize: bodyPartSize, liveLog: true, replay: replay,
                                         reverse: reverse)
        layer = try HTTP2Layer(context: context, pool: pool, flowIDs: IDSource(), limits: limits, at: now)
        client = try HTTP2Connection(role: .client, limits: limits)
        origin = try HTTP2Connection(role: .server, limits: limits)
        originConnected = replay == nil
    }

    /// A replay's passthrough connection comes up: a new origin connection, and the layer told.
    func connectOrigin() throws {
        origin = try HTTP2Connection(role: .server, limits: layer.limits)
        originEvents.removeAll()
        originConnected = true
        layer.replayUpstreamReady(at: now)
    }

    /// The origin connection is gone (failed to connect, or closed).
    func loseOrigin(_ reason: String) {
        originConnected = false
        originHTTP1 = nil
        layer.upstreamLost(reason, at: now)
    }

    /// A replay's passthrough connection whose ALPN chose HTTP/1.1: what the layer sends it
    /// collects here, and the test answers with `fromHTTP1Origin`.
    var originHTTP1: [UInt8]?

    func connectHTTP1Origin() {
        originHTTP1 = []
        originConnected = true
        layer.replayUpstreamReady(at: now, speaksHTTP1: true)
    }

    /// Raw HTTP/1.1 bytes from that origin, in `chunk`-sized pieces.
    func fromHTTP1Origin(_ text: String) throws {
        pieces(Array(text.utf8)) { layer.upstreamReceived($0, at: now) }
        try run()
    }

    /// Moves bytes until nothing moves.
    func run() throws {
        for _ in 0..<100_000 {
            var moved = false
            let fromClient = client.takeOutput()
            if !fromClient.isEmpty { moved = true; pieces(fromClient) { layer.clientReceived($0, at: now) } }
            let fromOrigin = originConnected && originHTTP1 == nil ? origin.takeOutput() : []
            if !fromOrigin.isEmpty { moved = true; pieces(fromOrigin) { layer.upstreamReceived($0, at: now) } }
            let (toClient, toOrigin, outputs) = layer.pump(at: now)
            for output in outputs {
                switch output {
                case .record(let flow): flows.append(flow)
                case .recordPart(let part): parts.append(part)
                case .log(let kind): logs.append(kind)
                case .wake(let instant): wakes.append(instant)
                case .openUpstream: upstreamOpenings += 1
                case .reserved(let answer): reserved.append(answer)
                }
            }
            if !toClient.isEmpty { moved = true; try deliver(toClient, to: client) }
            if !toOrigin.isEmpty {
                XCTAssertTrue(originConnected, "bytes for an origin that is not connected")
                moved = true
                if originHTTP1 != nil { originHTTP1! += toOrigin } else { try deliver(toOrigin, to: origin) }
            }
            while let event = client.nextEvent() {
                clientEvents.append(event)
                if case .data(let id, let bytes) = event, !clientStalls.contains(id) { client.consumed(bytes.count, on: id) }
            }
            while let event = origin.nextEvent() {
                originEvents.append(event)
                if case .data(let id, let bytes) = event { origin.consumed(bytes.count, on: id) }
            }
            if !moved { return }
        }
        XCTFail("the connections never went quiet")
    }

    private func pieces(_ bytes: [UInt8], _ body: ([UInt8]) -> Void) {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            body(Array(bytes[start..<end]))
            start = end
        }
    }

    private func deliver(_ bytes: [UInt8], to connection: HTTP2Connection) throws {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            try Array(bytes[start..<end]).withUnsafeBytes { try connection.receive($0) }
            start = end
        }
    }

    func request(_ path: String, method: String = "GET", fields: [HTTPField] = [], body: [UInt8]? = nil,
                 trailers: [HTTPField]? = nil, scheme: String = "https", authority: String = "api.test") throws -> Int32 {
        let head = [HTTPField(name: ":method", value: method), HTTPField(name: ":scheme", value: scheme),
                    HTTPField(name: ":authority", value: authority), HTTPField(name: ":path", value: path)] + fields
        let id = try client.sendRequest(head, endStream: body == nil)
        if let body { client.sendData(body, on: id, end: true, trailers: trailers) }
        return id
    }

    /// The first head the client got on `stream` (nil before one came).
    func responseHead(_ stream: Int32) -> [HTTPField]? {
        for case .headers(stream, let fields, _) in clientEvents { return fields }
        return nil
    }

    /// The `:status` of that head.
    func status(_ stream: Int32) -> String? {
        responseHead(stream)?.first { $0.name == ":status" }?.value
    }

    /// The origin's stream for the request whose path is `path`.
    func originStream(_ path: String) -> Int32? {
        for case .headers(let id, let fields, _) in originEvents where fields.contains(HTTPField(name: ":path", value: path)) {
            return id
        }
        return nil
    }

    func respond(_ stream: Int32, status: Int = 200, fields: [HTTPField] = [], body: [UInt8] = [],
                 trailers: [HTTPField]? = nil) throws {
        let head = [HTTPField(name: ":status", value: "\(status)")] + fields
        try origin.sendResponse(head, on: stream, endStream: false)
        origin.sendData(body, on: stream, end: true, trailers: trailers)
    }
}

func streamData(_ events: [HTTP2Event], _ stream: Int32) -> [UInt8] {
    events.flatMap { event -> [UInt8] in
        if case .data(stream, let bytes) = event { return bytes }
        return []
    }
}

/// HTTP2Layer as transcripts: streams mapped across, each recorded once, resets and GOAWAY carried
/// over, and the two sides' flow control tied together.
final class HTTP2LayerTests: XCTestCase {
    func testAnExchangeWithBodiesAndTrailersIsForwardedAndRecorded() throws {
        for chunk in [Int.max, 1, 7] {
            let h = try HTTP2LayerHarness(chunk: chunk)
            let requestBody = Array("{\"q\":\"item\"}".utf8)
            let sid = try h.request("/v1/items?x=1", method: "POST", fields: [HTTPField(name: "content-type", value: "application/json")],
                                    body: requestBody, trailers: [HTTPField(name: "x-checksum", value: "abc")])
            try h.run()
            let oid = try XCTUnwrap(h.originStream("/v1/items?x=1"), "chunk \(chunk)")
            XCTAssertEqual(streamData(h.originEvents, oid), requestBody)
            XCTAssertTrue(h.originEvents.contains(.trailers(streamID: oid, fields: [HTTPField(name: "x-checksum", value: "abc")])))
            let responseBody = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try h.respond(oid, fields: [HTTPField(name: "content-type", value: "application/grpc")], body: responseBody,
                          trailers: [HTTPField(name: "grpc-status", value: "0")])
            try h.run()

            XCTAssertTrue(h.clientEvents.contains(.headers(streamID: sid, fields: [
                HTTPField(name: ":status", value: "200"), HTTPField(name: "content-type", value: "application/grpc")], endStream: false)))
            XCTAssertEqual(streamData(h.clientEvents, sid), responseBody, "chunk \(chunk)")
            XCTAssertTrue(h.clientEvents.contains(.trailers(streamID: sid, fields: [HTTPField(name: "grpc-status", value: "0")])))
            XCTAssertEqual(h.flows.count, 1, "one entry per stream")
            let flow = h.flows[0]
            XCTAssertEqual(flow.request.method, "POST")
            XCTAssertEqual(flow.request.url, "https://api.test/v1/items?x=1")
            XCTAssertEqual(flow.request.httpVersion, "http/2.0")
            XCTAssertEqual(flow.request.headSize, -1, "HPACK makes header bytes meaningless")
            XCTAssertEqual(flow.request.fields, [RecordedField(name: "content-type", value: "application/json")],
                           "pseudo-headers are not recorded as headers")
            XCTAssertEqual(flow.request.body.bytes, requestBody)
            XCTAssertEqual(flow.request.trailers, [RecordedField(name: "x-checksum", value: "abc")])
            XCTAssertEqual(flow.response?.status, 200)
            XCTAssertEqual(flow.response?.httpVersion, "http/2.0")
            XCTAssertEqual(flow.response?.headSize, -1)
            XCTAssertEqual(flow.response?.body.bytes, responseBody)
            XCTAssertEqual(flow.response?.trailers, [RecordedField(name: "grpc-status", value: "0")])
            XCTAssertEqual(flow.connectionID, "9-1")
            XCTAssertNil(flow.error)
            XCTAssertTrue(h.layer.streams.isEmpty, "a finished stream is forgotten")
        }
    }

    /// Found by the proxy-session fuzz target: an h2 client's `proxy-authorization` was forwarded
    /// and recorded. It is harrec's credential, as with HTTP/1.
    func testAProxyCredentialOnAStreamIsNeitherForwardedNorRecorded() throws {
        let h = try HTTP2LayerHarness()
        _ = try h.request("/private", fields: [HTTPField(name: "proxy-authorization", value: "Basic dXNlcjpzM2NyZXQ="),
                                               HTTPField(name: "accept", value: "*/*")])
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/private"))
        for case .headers(oid, let fields, _) in h.originEvents {
            XCTAssertFalse(fields.contains { $0.name == "proxy-authorization" }, "forwarded: \(fields)")
            XCTAssertTrue(fields.contains(HTTPField(name: "accept", value: "*/*")))
        }
        try h.respond(oid, body: Array("ok".utf8))
        try h.run()
        let flow = try XCTUnwrap(h.flows.first)
        XCTAssertEqual(flow.request.fields.map(\.name), ["accept"])
    }

    /// Seen in CI under load: curl closed its connection once it had every byte its
    /// content-length announced, before nginx's END_STREAM reached harrec; the stream was recorded
    /// as failed although the client got it whole.
    func testAClientThatHadTheWholeResponseClosingFirstIsNotAFailure() throws {
        let h = try HTTP2LayerHarness()
        let whole = try h.request("/whole")
        let partial = try h.request("/partial")
        try h.run()
        for (path, sent) in [("/whole", 5), ("/partial", 3)] {
            let oid = try XCTUnwrap(h.originStream(path))
            try h.origin.sendResponse([HTTPField(name: ":status", value: "200"), HTTPField(name: "content-length", value: "5")],
                                      on: oid, endStream: false)
            h.origin.sendData(Array("hello".utf8.prefix(sent)), on: oid)
        }
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, whole), Array("hello".utf8))
        XCTAssertEqual(streamData(h.clientEvents, partial), Array("hel".utf8))
        h.layer.clientLost("client closed the connection", at: h.now)
        try h.run()
        let byPath = Dictionary(uniqueKeysWithValues: h.flows.map { ($0.request.url, $0) })
        XCTAssertNil(byPath["https://api.test/whole"]?.error)
        XCTAssertEqual(byPath["https://api.test/whole"]?.response?.body.bytes, Array("hello".utf8))
        XCTAssertEqual(byPath["https://api.test/partial"]?.error, "client closed the connection")
    }

    func testConcurrentStreamsAreSeparateEntriesSharingTheConnection() throws {
        let h = try HTTP2LayerHarness(chunk: 100)
        var clientStreams: [Int32] = []
        for index in 0..<20 { clientStreams.append(try h.request("/item/\(index)")) }
        try h.run()
        // Answered in reverse order, each with its own body.
        for index in (0..<20).reversed() {
            let oid = try XCTUnwrap(h.originStream("/item/\(index)"))
            try h.respond(oid, body: Array("body \(index) ".utf8) + [UInt8](repeating: UInt8(index), count: index * 1000))
        }
        try h.run()
        XCTAssertEqual(h.flows.count, 20)
        for (index, sid) in clientStreams.enumerated() {
            let expected = Array("body \(index) ".utf8) + [UInt8](repeating: UInt8(index), count: index * 1000)
            XCTAssertEqual(streamData(h.clientEvents, sid), expected)
            let flow = try XCTUnwrap(h.flows.first { $0.request.url == "https://api.test/item/\(index)" })
            XCTAssertEqual(flow.response?.body.bytes, expected)
            XCTAssertEqual(flow.connectionID, "9-1", "every stream shares the connection id")
        }
        // Only the first stream pays for the connection's setup.
        XCTAssertEqual(h.flows.filter { $0.instants.connectStart != nil }.count, 1)
        XCTAssertEqual(Set(h.flows.map(\.id)).count, 20)
    }

    func testUpstreamResetIsPassedOnAndRecorded() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.request("/reset")
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/reset"))
        h.origin.reset(oid, errorCode: 0xb) // ENHANCE_YOUR_CALM
        try h.run()
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: sid, errorCode: 0xb)), "\(h.clientEvents)")
        XCTAssertEqual(h.flows.count, 1)
        XCTAssertEqual(h.flows[0].error, "upstream reset the stream (ENHANCE_YOUR_CALM)")
        XCTAssertTrue(h.layer.streams.isEmpty)
    }

    /// RFC 9113 §8.1: the origin answers before the upload ended, then RST_STREAM(NO_ERROR).
    /// The client gets the whole answer and no reset while its upload stays within a window;
    /// the entry is the answer without an error, with the body that reached harrec. An upload
    /// that goes on past a stream window is stopped after the answer, with the same code.
    func testAnEarlyAnswerThenANoErrorResetReachesTheClientWhole() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.client.sendRequest([HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
                                            HTTPField(name: ":authority", value: "api.test"), HTTPField(name: ":path", value: "/static")],
                                           endStream: false)
        h.client.sendData(Array(repeating: 1, count: 1000), on: sid)
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/static"))
        try h.respond(oid, status: 405, body: Array("not here".utf8))
        h.origin.reset(oid, errorCode: 0, afterQueued: true)  // after its answer, as nginx does
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, sid), Array("not here".utf8))
        XCTAssertTrue(h.clientEvents.contains(.endStream(streamID: sid)))
        XCTAssertFalse(h.clientEvents.contains { if case .reset = $0 { return true }; return false }, "\(h.clientEvents)")
        XCTAssertEqual(h.flows.count, 1)
        XCTAssertNil(h.flows[0].error)
        XCTAssertEqual(h.flows[0].response?.status, 405)
        XCTAssertEqual(h.flows[0].request.body.bytes, Array(repeating: 1, count: 1000))

        // The client uploads on: read and dropped up to a window, then told to stop.
        for _ in 0..<40 {
            h.client.sendData(Array(repeating: 2, count: 16_384), on: sid)
            try h.run()
        }
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: sid, errorCode: 0)), "\(h.clientEvents.suffix(3))")
        XCTAssertEqual(h.flows.count, 1, "recorded once")
        XCTAssertTrue(h.layer.streams.isEmpty)
    }

    func testClientResetCancelsTheUpstreamStream() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.request("/upload", method: "POST", fields: [])
        _ = sid
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/upload"))
        h.client.reset(sid, errorCode: 0x8)
        try h.run()
        XCTAssertTrue(h.originEvents.contains(.reset(streamID: oid, errorCode: 0x8)), "\(h.originEvents)")
        XCTAssertEqual(h.flows.count, 1)
        XCTAssertEqual(h.flows[0].error, "client reset the stream (CANCEL) after 0.0 s")
        XCTAssertTrue(h.layer.streams.isEmpty)
    }

    func testUpstreamGoAwayDrainsAndRefusesStreamsAboveItsLastID() throws {
        let h = try HTTP2LayerHarness()
        let first = try h.request("/first")
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/first"))
        // The origin says it processes nothing after its first stream, while a second request
        // is already on its way.
        h.origin.goAway()
        let second = try h.request("/second")
        try h.run()
        XCTAssertTrue(h.clientEvents.contains { if case .goAway = $0 { return true }; return false },
                      "the client is told to open new streams elsewhere")
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: second, errorCode: 0x7)) ||
                      h.clientEvents.contains(.closed(streamID: second, errorCode: 0x7)),
                      "the refused stream may be retried: \(h.clientEvents)")
        try h.respond(oid, body: Array("done".utf8))
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, first), Array("done".utf8), "the stream in flight finishes")
        XCTAssertEqual(h.flows.filter { $0.error == nil }.count, 1)
        XCTAssertTrue(h.layer.isFinished)
    }

    func testUpstreamLossAnswersWaitingStreamsWith502AndResetsStartedOnes() throws {
        let h = try HTTP2LayerHarness()
        let waiting = try h.request("/waiting")
        let started = try h.request("/started")
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/started"))
        try h.origin.sendResponse([HTTPField(name: ":status", value: "200")], on: oid, endStream: false)
        h.origin.sendData(Array("part".utf8), on: oid)
        try h.run()
        h.layer.upstreamLost("upstream closed the connection", at: h.now)
        try h.run()
        XCTAssertTrue(h.clientEvents.contains(.headers(streamID: waiting, fields: [
            HTTPField(name: ":status", value: "502"), HTTPField(name: "content-type", value: "text/plain; charset=utf-8"),
            HTTPField(name: "x-harrec-error", value: "1")], endStream: false)), "\(h.clientEvents)")
        XCTAssertEqual(text(streamData(h.clientEvents, waiting)), "harrec: upstream closed the connection\n")
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: started, errorCode: 0x2)) ||
                      h.clientEvents.contains(.closed(streamID: started, errorCode: 0x2)), "\(h.clientEvents)")
        XCTAssertEqual(h.flows.count, 2)
        XCTAssertEqual(Set(h.flows.compactMap(\.error)), ["upstream closed the connection"])
        XCTAssertEqual(h.flows.first { $0.request.url.hasSuffix("/started") }?.response?.body.bytes, Array("part".utf8))
        XCTAssertTrue(h.layer.isFinished)
    }

    /// A client that stops reading one stream: the upstream's window for that stream closes, the
    /// layer holds at most about one window of it, and another stream still completes.
    func testSlowReaderOnOneStreamBoundsMemoryAndDoesNotStallOthers() throws {
        let h = try HTTP2LayerHarness(chunk: 16_384)
        let slow = try h.request("/slow")
        let fast = try h.request("/fast")
        h.clientStalls = [slow]
        try h.run()
        let slowOrigin = try XCTUnwrap(h.originStream("/slow"))
        let fastOrigin = try XCTUnwrap(h.originStream("/fast"))
        let big = [UInt8](repeating: 0x61, count: 4 << 20)
        try h.origin.sendResponse([HTTPField(name: ":status", value: "200")], on: slowOrigin, endStream: false)
        h.origin.sendData(big, on: slowOrigin, end: true)
        try h.run()
        try h.respond(fastOrigin, body: Array("quick".utf8))
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, fast), Array("quick".utf8), "the other stream is not stalled")
        let delivered = streamData(h.clientEvents, slow).count
        let heldByLayer = h.layer.client.bufferedOutgoingBytes(on: slow)
        let window = Int(HTTP2Limits().streamWindow)
        XCTAssertLessThanOrEqual(delivered, window, "the client's window for the slow stream stays closed")
        XCTAssertLessThanOrEqual(heldByLayer, window, "the layer holds at most one stream window")
        XCTAssertGreaterThan(h.origin.bufferedOutgoingBytes(on: slowOrigin), big.count - 3 * window,
                             "the rest waits at the origin, not in the proxy")
        // The reader catches up: everything arrives, byte for byte.
        h.clientStalls = []
        let owed = streamData(h.clientEvents, slow).count
        h.client.consumed(owed, on: slow)
        for _ in 0..<200 {
            try h.run()
            let now = streamData(h.clientEvents, slow).count
            if now == big.count { break }
            h.client.consumed(0, on: slow)
        }
        XCTAssertEqual(streamData(h.clientEvents, slow).count, big.count)
        XCTAssertEqual(h.flows.first { $0.request.url.hasSuffix("/slow") }?.response?.body.bytes.count, big.count)
    }

    /// Bytes of a reset stream that were never passed on still reopen the connection window, so
    /// later streams can use all of it.
    func testResetStreamsGiveBackTheConnectionWindow() throws {
        let h = try HTTP2LayerHarness(chunk: 16_384)
        let window = Int(HTTP2Limits().connectionWindow)
        // Each stream's upload stalls at the origin (it never acknowledges), then the client resets it.
        for round in 0..<6 {
            let sid = try h.request("/upload/\(round)", method: "POST", body: [UInt8](repeating: 0x62, count: 200_000))
            try h.run()
            h.client.reset(sid, errorCode: 0x8)
            try h.run()
        }
        XCTAssertEqual(h.flows.count, 6)
        // Over 1 MiB went through resets; a new stream still moves a full window's worth.
        let sid = try h.request("/after", method: "POST", body: [UInt8](repeating: 0x63, count: window))
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/after"))
        XCTAssertEqual(streamData(h.originEvents, oid).count, window)
        try h.respond(oid)
        try h.run()
        XCTAssertNil(h.flows.last?.error)
        _ = sid
    }

    func testConnectInsideHTTP2IsRefusedAndRecorded() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.client.sendRequest([HTTPField(name: ":method", value: "CONNECT"),
                                            HTTPField(name: ":authority", value: "inner.test:443")], endStream: false)
        try h.run()
        XCTAssertTrue(h.clientEvents.contains(.reset(streamID: sid, errorCode: 0xa)) ||
                      h.clientEvents.contains(.closed(streamID: sid, errorCode: 0xa)), "\(h.clientEvents)")
        XCTAssertEqual(h.flows.first?.error, "CONNECT inside an HTTP/2 connection is not supported")
        XCTAssertNil(h.originStream("inner.test:443"))
    }

    func testSilentUpstreamStreamGets504() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.request("/silent")
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/silent"))
        h.layer.expireSilentStreams(at: h.now + 5, limit: 10)
        try h.run()
        XCTAssertTrue(h.flows.isEmpty, "not yet")
        h.layer.expireSilentStreams(at: h.now + 11, limit: 10)
        try h.run()
        XCTAssertTrue(h.clientEvents.contains { if case .headers(sid, let f, _) = $0 { return f.first?.value == "504" }; return false })
        XCTAssertTrue(h.originEvents.contains(.reset(streamID: oid, errorCode: 0x8)))
        XCTAssertEqual(h.flows.first?.error, "upstream sent nothing for 10 s")
    }

    func testClientLossRecordsStreamsInFlight() throws {
        let h = try HTTP2LayerHarness()
        _ = try h.request("/one")
        _ = try h.request("/two")
        try h.run()
        h.layer.clientLost("client closed the connection", at: h.now)
        let (_, _, outputs) = h.layer.pump(at: h.now)
        let recorded = outputs.compactMap { output -> Flow? in if case .record(let f) = output { return f }; return nil }
        XCTAssertEqual(recorded.map(\.request.url), ["https://api.test/one", "https://api.test/two"])
        XCTAssertEqual(Set(recorded.compactMap(\.error)), ["client closed the connection"])
        XCTAssertTrue(h.layer.isFinished)
    }

    func testClientGarbageEndsTheConnectionWithGoAway() throws {
        let h = try HTTP2LayerHarness()
        h.layer.clientReceived(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), at: h.now)
        let (toClient, _, _) = h.layer.pump(at: h.now)
        XCTAssertTrue(h.layer.isFinished)
        // A GOAWAY frame (type 7) is in what goes back.
        XCTAssertTrue(toClient.count >= 9)
        var offset = 0, sawGoAway = false
        while offset + 9 <= toClient.count {
            let length = Int(toClient[offset]) << 16 | Int(toClient[offset + 1]) << 8 | Int(toClient[offset + 2])
            if toClient[offset + 3] == 7 { sawGoAway = true }
            offset += 9 + length
        }
        XCTAssertTrue(sawGoAway)
    }

    /// PING is answered by each side's own connection, never forwarded.
    func testPingIsAnsweredLocally() throws {
        let h = try HTTP2LayerHarness()
        try h.run()
        let before = h.originEvents.count
        // A PING frame from the client: type 6, 8 bytes of opaque data.
        let ping: [UInt8] = [0, 0, 8, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        h.layer.clientReceived(ping, at: h.now)
        let (toClient, toUpstream, _) = h.layer.pump(at: h.now)
        XCTAssertEqual(Array(toClient.prefix(17)), [0, 0, 8, 6, 1, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8], "a PING ACK with the same data")
        XCTAssertTrue(toUpstream.isEmpty, "nothing goes to the origin")
        XCTAssertEqual(h.originEvents.count, before)
    }

    /// A graceful stop (harrec shutting down): the stream in flight finishes, the client gets a
    /// GOAWAY after the bodies queued before it, and the layer is finished once it is done.
    func testDrainLetsTheStreamInFlightFinish() throws {
        let h = try HTTP2LayerHarness()
        let sid = try h.request("/slow")
        try h.run()
        let oid = try XCTUnwrap(h.originStream("/slow"))
        h.layer.drain()
        try h.run()
        XCTAssertTrue(h.clientEvents.contains { if case .goAway = $0 { return true }; return false })
        XCTAssertFalse(h.layer.isFinished, "a stream is still in flight")
        try h.respond(oid, body: Array("late but whole".utf8))
        try h.run()
        XCTAssertEqual(streamData(h.clientEvents, sid), Array("late but whole".utf8))
        XCTAssertEqual(h.flows.count, 1)
        XCTAssertNil(h.flows[0].error)
        XCTAssertTrue(h.layer.isFinished)
    }
}
