@testable import HTTP1
import XCTest

final class DecoderTests: XCTestCase {
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func drain(_ d: inout HTTP1RequestDecoder) throws -> [HTTP1RequestEvent] {
        var out: [HTTP1RequestEvent] = []
        while let e = try d.next() { out.append(e) }
        return out
    }

    func drain(_ d: inout HTTP1ResponseDecoder) throws -> [HTTP1ResponseEvent] {
        var out: [HTTP1ResponseEvent] = []
        while let e = try d.next() { out.append(e) }
        return out
    }

    func testHeadSizeCountsExactHeadBytesWithoutLeadingEmptyLines() throws {
        let head = "GET /x HTTP/1.1\r\nHost: a\r\nX: y \r\n\r\n"
        var d = HTTP1RequestDecoder()
        d.feed(bytes("\r\n" + head + "body"))
        guard case .head(let h, .none)? = try d.next() else { return XCTFail() }
        XCTAssertEqual(h.headSize, head.utf8.count)
        XCTAssertEqual(h.fields["x"], "y")
        XCTAssertEqual(d.bufferedByteCount, 4)

        var r = HTTP1ResponseDecoder()
        let rhead = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
        r.feed(bytes(rhead))
        guard case .head(let rh, .contentLength(0))? = try r.next() else { return XCTFail() }
        XCTAssertEqual(rh.headSize, rhead.utf8.count)
        XCTAssertEqual(try r.next(), .end(trailers: HTTPFields()))
        XCTAssertNil(try r.next())
    }

    func testKeepAliveOfHeadsBuiltInCode() {
        XCTAssertTrue(HTTPRequestHead(method: "GET", target: "/", version: .http11, fields: ["Host": "a"]).keepAlive)
        XCTAssertFalse(HTTPRequestHead(method: "GET", target: "/", version: .http11,
                                       fields: ["Host": "a", "Connection": "foo, Close"]).keepAlive)
        XCTAssertFalse(HTTPRequestHead(method: "GET", target: "/", version: .http10, fields: [:]).keepAlive)
        XCTAssertTrue(HTTPRequestHead(method: "GET", target: "/", version: .http10,
                                      fields: ["connection": "keep-alive"]).keepAlive)
        XCTAssertFalse(HTTPResponseHead(version: .http10, status: 200, reason: "OK", fields: [:]).keepAlive)
        XCTAssertTrue(HTTPResponseHead(version: .http11, status: 200, reason: "OK", fields: [:]).keepAlive)
        XCTAssertEqual(HTTPVersion.http11.description, "HTTP/1.1")
        XCTAssertEqual(HTTPVersion.http10.description, "HTTP/1.0")
    }

    func testKeepAliveSurvivesHopByHopRemoval() throws {
        var d = HTTP1RequestDecoder()
        d.feed(bytes("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"))
        guard case .head(var h, _)? = try d.next() else { return XCTFail() }
        h.fields = h.fields.removingHopByHop()
        XCTAssertFalse(h.keepAlive)
        XCTAssertFalse(h.fields.contains("connection"))
    }

    func testIdleAndCleanEOF() throws {
        var d = HTTP1RequestDecoder()
        XCTAssertTrue(d.isIdle)
        XCTAssertFalse(d.isAtCleanEOF)
        d.feed(bytes("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n"))
        _ = try d.next()
        XCTAssertFalse(d.isIdle)
        d.feed(bytes("hi"))
        XCTAssertEqual(try d.next(), .body(bytes("hi")))
        XCTAssertFalse(d.isIdle)
        XCTAssertEqual(try d.next(), .end(trailers: HTTPFields()))
        XCTAssertTrue(d.isIdle)
        d.finish()
        XCTAssertTrue(d.isAtCleanEOF)
        XCTAssertNil(try d.next())
        XCTAssertNil(try d.next())
    }

    func testBytesStayBufferedUntilPulled() throws {
        var d = HTTP1RequestDecoder()
        let one = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
        let two = "GET /2 HTTP/1.1\r\nHost: a\r\n\r\n"
        d.feed(bytes(one + two))
        _ = try d.next()
        _ = try d.next()
        XCTAssertTrue(d.isIdle)
        XCTAssertEqual(d.bufferedByteCount, two.utf8.count)
        guard case .head(let h, _)? = try d.next() else { return XCTFail() }
        XCTAssertEqual(h.target, "/2")
    }

    func testConnectThenTakeBufferedBytes() throws {
        var d = HTTP1RequestDecoder()
        d.feed(bytes("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n\u{16}\u{3}\u{1}"))
        guard case .head(let h, .none)? = try d.next() else { return XCTFail() }
        XCTAssertEqual(h.method, "CONNECT")
        XCTAssertEqual(try d.next(), .end(trailers: HTTPFields()))
        // The caller stops pulling; the tunnel bytes are handed over untouched.
        XCTAssertEqual(d.takeBufferedBytes(), [0x16, 0x03, 0x01])
        XCTAssertTrue(d.hasStopped)
        XCTAssertFalse(d.isIdle)
        d.feed([1, 2, 3])
        XCTAssertNil(try d.next())
        XCTAssertEqual(d.takeBufferedBytes(), [1, 2, 3])
    }

    func testErrorsAreStickyAndOneLine() {
        var d = HTTP1RequestDecoder()
        d.feed(bytes("GET / HTTP/1.1\r\nHost: a\r\nX-\u{1}Bad: v\r\n\r\n"))
        var first: HTTP1ParseError?
        do { _ = try d.next() } catch { first = error }
        XCTAssertEqual(first?.kind, .malformedField)
        XCTAssertTrue(first?.message.contains("\\x01") ?? false, first?.message ?? "")
        do { _ = try d.next(); XCTFail("not sticky") } catch { XCTAssertEqual(error, first) }
        d.feed(bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
        do { _ = try d.next(); XCTFail("not sticky") } catch { XCTAssertEqual(error, first) }
        XCTAssertFalse(d.isIdle)
        // Messages never carry raw control characters, whatever the caller passes.
        let e = HTTP1ParseError(kind: .malformedField, message: "a\r\nb\u{0}")
        XCTAssertEqual(e.message, "a\\x0d\\x0ab\\x00")
        XCTAssertEqual(e.description, e.message)
    }

    func testBodyIsStreamedAsItArrives() throws {
        var d = HTTP1RequestDecoder()
        d.feed(bytes("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabcd"))
        _ = try d.next()
        XCTAssertEqual(try d.next(), .body(bytes("abcd")))
        XCTAssertNil(try d.next())
        d.feed(bytes("efghijklmnop\r\n0\r\n\r\n"))
        XCTAssertEqual(try d.next(), .body(bytes("efghijklmnop")))
        XCTAssertEqual(try d.next(), .end(trailers: HTTPFields()))
    }

    func testLargeBodyAndManyMessagesKeepTheBufferSmall() throws {
        var d = HTTP1RequestDecoder()
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        d.feed(bytes("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: \(chunk.count * 64)\r\n\r\n"))
        _ = try d.next()
        var total = 0
        for _ in 0..<64 {
            chunk.withUnsafeBytes { d.feed($0) }
            while let e = try d.next() {
                if case .body(let b) = e { total += b.count }
            }
            XCTAssertLessThanOrEqual(d.core.buffer.count, chunk.count)
        }
        XCTAssertEqual(total, chunk.count * 64)
        XCTAssertTrue(d.isIdle)

        let request = bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        var heads = 0
        for i in 0..<5000 {
            d.feed(request + request)
            if i % 3 == 0 {  // lag behind, then catch up
                while let e = try d.next() { if case .head = e { heads += 1 } }
            }
        }
        while let e = try d.next() { if case .head = e { heads += 1 } }
        XCTAssertEqual(heads, 10000)
        XCTAssertEqual(d.bufferedByteCount, 0)
    }

    func testResponseQueueForPipelinedRequests() throws {
        var r = HTTP1ResponseDecoder()
        r.expectResponse(toMethod: "HEAD")
        r.expectResponse(toMethod: "GET")
        r.feed(bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"))
        let events = try drain(&r)
        let framings: [HTTPBodyFraming] = events.compactMap {
            if case .head(_, let f) = $0 { return f }
            return nil
        }
        XCTAssertEqual(framings, [.none, .none, .contentLength(3)])
        XCTAssertEqual(events.last, .end(trailers: HTTPFields()))
        XCTAssertTrue(r.isIdle)
        // Without a pending method, GET framing.
        r.feed(bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"))
        XCTAssertEqual(try drain(&r).count, 3)
    }

    func testUntilCloseEndsOnFinishAndIsNotKeepAlive() throws {
        var r = HTTP1ResponseDecoder()
        r.feed(bytes("HTTP/1.1 200 OK\r\n\r\nab"))
        guard case .head(let h, .untilClose)? = try r.next() else { return XCTFail() }
        XCTAssertFalse(h.keepAlive)
        XCTAssertEqual(try r.next(), .body(bytes("ab")))
        XCTAssertNil(try r.next())
        r.finish()
        XCTAssertEqual(try r.next(), .end(trailers: HTTPFields()))
        XCTAssertTrue(r.isAtCleanEOF)
        XCTAssertNil(try r.next())
    }

    func test101StopsAndHandsOverBytes() throws {
        var r = HTTP1ResponseDecoder()
        r.expectResponse(toMethod: "GET")
        r.feed(bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"))
        guard case .head(let h, .none)? = try r.next() else { return XCTFail() }
        XCTAssertEqual(h.status, 101)
        XCTAssertEqual(try r.next(), .end(trailers: HTTPFields()))
        XCTAssertTrue(r.hasStopped)
        XCTAssertNil(try r.next())
        XCTAssertEqual(r.takeBufferedBytes(), bytes("HTTP/1.1 200 OK\r\n\r\n"))
    }

    func testLatin1ReasonIsFlagged() throws {
        var r = HTTP1ResponseDecoder()
        r.feed([UInt8]("HTTP/1.1 200 ".utf8) + [0xC9, 0x74, 0xE9] + Array("\r\nContent-Length: 0\r\n\r\n".utf8))
        guard case .head(let h, _)? = try r.next() else { return XCTFail() }
        XCTAssertEqual(h.reason, "\u{C9}t\u{E9}")
        XCTAssertTrue(h.reasonIsLatin1)
        let out = try HTTP1Serializer.responseHead(version: h.version, status: h.status, reason: h.reason,
                                                   reasonIsLatin1: true, fields: h.fields)
        XCTAssertEqual(out.count, h.headSize)
    }

    func testTypedThrowsCarryKind() {
        var d = HTTP1RequestDecoder()
        d.feed(bytes("GET / HTTP/1.1\r\n\r\n"))
        do {
            _ = try d.next()
            XCTFail("expected missingHost")
        } catch {
            // `error` is statically an HTTP1ParseError.
            XCTAssertEqual(error.kind, .missingHost)
        }
    }

    func testCustomLimitsAreHonoured() throws {
        var limits = HTTP1Limits()
        limits.maxTrailerBytes = 12  // "A: 12345\r\n" + final CRLF
        var d = HTTP1RequestDecoder(limits: limits)
        d.feed(bytes("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 12345\r\n\r\n"))
        _ = try d.next()
        XCTAssertEqual(try d.next(), .end(trailers: ["A": "12345"]))
        var d2 = HTTP1RequestDecoder(limits: limits)
        d2.feed(bytes("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 123456\r\n\r\n"))
        _ = try d2.next()
        XCTAssertThrowsError(try d2.next()) { XCTAssertEqual(($0 as? HTTP1ParseError)?.kind, .trailersTooLarge) }
        XCTAssertEqual(HTTP1Limits.default.maxHeadBytes, 64 * 1024)
    }

    func testVerifierDetectsMismatches() {
        // The corpus runner is only as good as its comparison: a wrong expectation must fail.
        let input = bytes("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        let good = ["head GET / HTTP/1.1 framing=none", "field Host: a", "end"]
        XCTAssertEqual(DecoderVerifier.verify(HTTP1RequestDecoder.self, name: "ok", input: input, expected: good,
                                              options: .init(), seed: 1), [])
        XCTAssertFalse(DecoderVerifier.verify(HTTP1RequestDecoder.self, name: "bad", input: input,
                                              expected: Array(good.dropLast()), options: .init(), seed: 1).isEmpty)
        // Leftover bytes are reported.
        let partial = DecoderVerifier.transcript(HTTP1RequestDecoder.self, input + bytes("GET"), cuts: [],
                                                 options: .init(eof: false))
        XCTAssertEqual(partial.last, "leftover \"GET\"")
    }
}
