import HTTP1
@testable import HTTP2
import XCTest

/// A client and a server connection talking in memory: every frame type the proxy relies on,
/// whole and byte by byte.
final class HTTP2ConnectionTests: XCTestCase {
    /// Moves output between the two until both are quiet, delivering `chunk` bytes at a time.
    /// Returns the events each side saw.
    @discardableResult
    private func pump(_ client: HTTP2Connection, _ server: HTTP2Connection, chunk: Int = .max,
                      consume: Bool = true) throws -> (client: [HTTP2Event], server: [HTTP2Event]) {
        var clientEvents: [HTTP2Event] = [], serverEvents: [HTTP2Event] = []
        for _ in 0..<10_000 {
            let toServer = client.takeOutput(), toClient = server.takeOutput()
            if toServer.isEmpty && toClient.isEmpty { break }
            try deliver(toServer, to: server, chunk: chunk)
            try deliver(toClient, to: client, chunk: chunk)
            while let event = server.nextEvent() {
                serverEvents.append(event)
                if consume, case .data(let id, let bytes) = event { server.consumed(bytes.count, on: id) }
            }
            while let event = client.nextEvent() {
                clientEvents.append(event)
                if consume, case .data(let id, let bytes) = event { client.consumed(bytes.count, on: id) }
            }
        }
        return (clientEvents, serverEvents)
    }

    private func deliver(_ bytes: [UInt8], to connection: HTTP2Connection, chunk: Int) throws {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            try Array(bytes[start..<end]).withUnsafeBytes { try connection.receive($0) }
            start = end
        }
    }

    private let request: [HTTPField] = [
        HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
        HTTPField(name: ":authority", value: "api.test"), HTTPField(name: ":path", value: "/v1/items?x=1"),
        HTTPField(name: "Content-Type", value: "application/json"),
    ]

    private func joinedData(_ events: [HTTP2Event], _ stream: Int32) -> [UInt8] {
        events.flatMap { event -> [UInt8] in
            if case .data(stream, let bytes) = event { return bytes }
            return []
        }
    }

    /// RFC 9113 §8.1: a server answers before the request body ended, then asks the client to
    /// stop with RST_STREAM(NO_ERROR). `reset(afterQueued:)` sends the reset after the whole
    /// response, even when the response waits for the client's window (100 KB on a 64 KiB
    /// window) and when the response carries trailers; a plain reset would drop it.
    func testAResetAfterTheEndFollowsTheWholeResponse() throws {
        for (chunk, trailers) in [(Int.max, false), (1, false), (7, true)] {
            let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
            let stream = try client.sendRequest(request, endStream: false)
            client.sendData(Array(repeating: 1, count: 1000), on: stream)
            try pump(client, server, chunk: chunk)
            try server.sendResponse([HTTPField(name: ":status", value: "413")], on: stream, endStream: false)
            server.sendData(Array(repeating: 9, count: 100_000), on: stream, end: true,
                            trailers: trailers ? [HTTPField(name: "x-why", value: "too big")] : nil)
            XCTAssertFalse(server.sentEnd(on: stream))
            server.reset(stream, errorCode: 0, afterQueued: true)
            let (got, _) = try pump(client, server, chunk: chunk)
            XCTAssertEqual(joinedData(got, stream).count, 100_000, "chunk \(chunk)")
            let order = got.compactMap { event -> String? in
                switch event {
                case .headers: return "head"
                case .trailers: return "trailers"
                case .endStream: return "end"
                case .reset(_, let code): return "reset \(code)"
                default: return nil
                }
            }
            XCTAssertEqual(order, ["head"] + (trailers ? ["trailers"] : []) + ["end", "reset 0"], "chunk \(chunk)")
            XCTAssertTrue(server.sentEnd(on: stream), "the server knows its answer went out")
            server.forgetEnd(of: stream)
            XCTAssertFalse(server.sentEnd(on: stream))
        }
    }

    func testRequestAndResponseWithBodiesAndTrailers() throws {
        for chunk in [Int.max, 1, 13] {
            let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
            let stream = try client.sendRequest(request, endStream: false)
            client.sendData(Array("{\"a\":1}".utf8), on: stream, end: true)
            var (_, seen) = try pump(client, server, chunk: chunk)
            XCTAssertEqual(seen.first, .headers(streamID: stream, fields: [
                HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
                HTTPField(name: ":authority", value: "api.test"), HTTPField(name: ":path", value: "/v1/items?x=1"),
                HTTPField(name: "content-type", value: "application/json"),
            ], endStream: false), "names go out lowercased (chunk \(chunk))")
            XCTAssertEqual(joinedData(seen, stream), Array("{\"a\":1}".utf8))
            XCTAssertEqual(seen.last, .endStream(streamID: stream))

            try server.sendResponse([HTTPField(name: ":status", value: "200"), HTTPField(name: "content-type", value: "application/grpc")],
                                    on: stream, endStream: false)
            server.sendData(Array(repeating: 7, count: 100_000), on: stream)
            server.sendData([1, 2, 3], on: stream, end: true, trailers: [HTTPField(name: "grpc-status", value: "0")])
            let (got, serverSide) = try pump(client, server, chunk: chunk)
            XCTAssertEqual(got.first, .headers(streamID: stream, fields: [HTTPField(name: ":status", value: "200"),
                                                                          HTTPField(name: "content-type", value: "application/grpc")], endStream: false))
            XCTAssertEqual(joinedData(got, stream), Array(repeating: 7, count: 100_000) + [1, 2, 3])
            XCTAssertTrue(got.contains(.trailers(streamID: stream, fields: [HTTPField(name: "grpc-status", value: "0")])), "\(got.suffix(3))")
            XCTAssertTrue(got.contains(.endStream(streamID: stream)))
            XCTAssertTrue(got.contains(.closed(streamID: stream, errorCode: 0)))
            XCTAssertTrue(serverSide.contains(.closed(streamID: stream, errorCode: 0)))
            seen = []
        }
    }

    /// Many streams at once on one connection, each answered out of order, each intact.
    func testConcurrentStreams() throws {
        let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
        var streams: [Int32] = []
        for i in 0..<50 {
            var fields = request
            fields[0] = HTTPField(name: ":method", value: "GET")
            fields[3] = HTTPField(name: ":path", value: "/item/\(i)")
            streams.append(try client.sendRequest(Array(fields.prefix(4)), endStream: true))
        }
        let (_, seen) = try pump(client, server)
        let heads = seen.compactMap { event -> Int32? in if case .headers(let id, _, true) = event { return id }; return nil }
        XCTAssertEqual(Set(heads), Set(streams))
        for (i, stream) in streams.enumerated().reversed() {
            try server.sendResponse([HTTPField(name: ":status", value: "200")], on: stream, endStream: false)
            server.sendData(Array("body \(i)".utf8), on: stream, end: true)
        }
        let (got, _) = try pump(client, server)
        for (i, stream) in streams.enumerated() {
            XCTAssertEqual(joinedData(got, stream), Array("body \(i)".utf8))
        }
    }

    /// A receiver that does not pass bytes on stops the sender at the stream window: memory on
    /// both sides stays bounded, and consuming lets the rest through.
    func testFlowControlFollowsTheConsumer() throws {
        let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
        let stream = try client.sendRequest(Array(request.prefix(4)), endStream: true)
        try pump(client, server)
        try server.sendResponse([HTTPField(name: ":status", value: "200")], on: stream, endStream: false)
        let total = 1 << 20
        server.sendData(Array(repeating: 1, count: total), on: stream, end: true)
        let (got, _) = try pump(client, server, consume: false)
        let delivered = joinedData(got, stream).count
        XCTAssertEqual(delivered, Int(client.limits.streamWindow), "no more than the stream window without consuming")
        XCTAssertEqual(server.bufferedOutgoingBytes(on: stream), total - delivered, "the rest waits at the sender")
        client.consumed(delivered, on: stream)
        var received = delivered
        for _ in 0..<100 where received < total {
            let (more, _) = try pump(client, server)
            received += joinedData(more, stream).count
        }
        XCTAssertEqual(received, total)
    }

    func testResetAndGoAway() throws {
        let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
        let first = try client.sendRequest(Array(request.prefix(4)), endStream: false)
        try pump(client, server)
        client.reset(first, errorCode: 8)
        var (_, seen) = try pump(client, server)
        XCTAssertTrue(seen.contains(.reset(streamID: first, errorCode: 8)), "\(seen)")
        XCTAssertTrue(seen.contains(.closed(streamID: first, errorCode: 8)))

        // A graceful GOAWAY: the stream already open still gets its response; a new one is not
        // delivered to the server.
        let second = try client.sendRequest(Array(request.prefix(4)), endStream: true)
        try pump(client, server)
        server.goAway()
        try server.sendResponse([HTTPField(name: ":status", value: "204")], on: second, endStream: true)
        let (got, _) = try pump(client, server)
        XCTAssertTrue(got.contains { if case .goAway(_, 0) = $0 { return true }; return false }, "\(got)")
        XCTAssertTrue(got.contains(.headers(streamID: second, fields: [HTTPField(name: ":status", value: "204")], endStream: true)),
                      "the response to a stream opened before the GOAWAY arrives: \(got)")
        seen = []
    }

    /// Garbage instead of a client preface is a connection error, not a crash; bad request
    /// fields (an uppercase name, a missing :path) reset the stream only.
    func testProtocolErrors() throws {
        let server = try HTTP2Connection(role: .server)
        let garbage = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        XCTAssertThrowsError(try garbage.withUnsafeBytes { try server.receive($0) })
        XCTAssertThrowsError(try [0].withUnsafeBytes { try server.receive($0) }, "a failed connection stays failed")
        XCTAssertNotNil(server.failure)

        let client = try HTTP2Connection(role: .client), good = try HTTP2Connection(role: .server)
        let stream = try client.sendRequest([HTTPField(name: ":method", value: "GET"), HTTPField(name: ":scheme", value: "https"),
                                             HTTPField(name: ":authority", value: "a.test")], endStream: true)
        let (_, seen) = try pump(client, good)
        XCTAssertFalse(seen.contains { if case .headers = $0 { return true }; return false }, "a request without :path is not delivered")
        XCTAssertTrue(seen.contains { if case .closed(stream, let code) = $0 { return code != 0 }; return false }, "\(seen)")
        XCTAssertTrue(good.isActive, "the connection goes on")
    }

    /// Empty field lists and empty names go to nghttp2 as such (it refuses what is invalid):
    /// no crash on an empty array.
    func testEmptyFieldLists() throws {
        let client = try HTTP2Connection(role: .client), server = try HTTP2Connection(role: .server)
        let stream = try client.sendRequest(Array(request.prefix(4)), endStream: true)
        try pump(client, server)
        try? server.sendInformational([], on: stream)
        _ = try? client.sendRequest([HTTPField(name: "", value: "")], endStream: true)
        try pump(client, server)
    }

    /// A header list over the limit resets that stream (the peer learns the limit from SETTINGS,
    /// so a well-behaved one never sends it; a hostile one gets the reset).
    func testOversizedHeaderListIsRefused() throws {
        let client = try HTTP2Connection(role: .client)
        var fields = Array(request.prefix(4))
        fields.append(HTTPField(name: "x-big", value: String(repeating: "a", count: 70_000)))
        XCTAssertThrowsError(try client.sendRequest(fields, endStream: true)) { error in
            XCTAssertTrue("\(error)".contains("limit"), "\(error)")
        }
    }
}
