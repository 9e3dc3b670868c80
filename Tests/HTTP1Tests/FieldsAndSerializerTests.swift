import HTTP1
import TestSupport
import XCTest

final class FieldsTests: XCTestCase {
    func testLookupIsCaseInsensitiveAndOrdered() {
        var f: HTTPFields = ["Host": "a", "Set-Cookie": "1", "set-cookie": "2"]
        XCTAssertEqual(f["HOST"], "a")
        XCTAssertEqual(f["set-COOKIE"], "1")
        XCTAssertEqual(f.values("Set-Cookie"), ["1", "2"])
        XCTAssertTrue(f.contains("host"))
        XCTAssertFalse(f.contains("hostx"))
        XCTAssertNil(f["missing"])
        XCTAssertEqual(f.count, 3)
        f.append(name: "X", value: "y")
        XCTAssertEqual(f.fields.last, HTTPField(name: "X", value: "y"))
        f.removeAll(named: "SET-cookie")
        XCTAssertEqual(f.map(\.name), ["Host", "X"])
        XCTAssertEqual(HTTPFields([HTTPField(name: "A", value: "b")]), ["A": "b"])
    }

    func testConnectionTokens() {
        let f: HTTPFields = ["Connection": " Keep-Alive ,, X-Foo", "connection": "Upgrade"]
        XCTAssertEqual(f.connectionTokens, ["keep-alive", "x-foo", "upgrade"])
    }

    func testRemovingHopByHop() {
        let f: HTTPFields = [
            "Host": "a", "Connection": "X-Foo, upgrade, content-length, host", "X-Foo": "1", "x-foo": "2",
            "Keep-Alive": "timeout=5", "Proxy-Connection": "keep-alive", "TE": "trailers", "Trailer": "X",
            "Transfer-Encoding": "chunked", "Upgrade": "websocket", "Proxy-Authorization": "Basic x",
            "Proxy-Authenticate": "Basic", "Content-Length": "3", "Accept": "*/*",
        ]
        XCTAssertEqual(f.removingHopByHop().map(\.name), ["Host", "Content-Length", "Accept"])
        XCTAssertEqual(f.removingHopByHop(keepUpgrade: true).map(\.name), ["Host", "Upgrade", "Content-Length", "Accept"])
    }

    func testConnectionNamesAnyLengthAndCase() {
        let long = "X-" + String(repeating: "Long", count: 20)  // 82 bytes: past the length bitmask
        let f = HTTPFields([
            HTTPField(name: "Host", value: "a"),
            HTTPField(name: "Connection", value: "\tX-FOO\t, \(long.uppercased()) ,close"),
            HTTPField(name: "x-Foo", value: "1"),
            HTTPField(name: long.lowercased(), value: "2"),
            HTTPField(name: long + "X", value: "kept: one byte longer"),
            HTTPField(name: "X-Fo", value: "kept: a prefix"),
            HTTPField(name: "Close", value: "3"),
            HTTPField(name: "Accept", value: "*/*"),
        ])
        XCTAssertEqual(f.connectionTokens, ["x-foo", long.lowercased(), "close"])
        XCTAssertEqual(f.removingHopByHop().map(\.name), ["Host", long + "X", "X-Fo", "Accept"])
    }

    func testRemovingHopByHopWithoutConnectionHeader() {
        // Nothing to remove: the same fields, in order, duplicates kept.
        let plain: HTTPFields = ["Host": "a", "X-Very-Long-Custom-Header-Name": "1", "Accept": "*/*", "accept": "x"]
        XCTAssertEqual(plain.removingHopByHop().map(\.name), ["Host", "X-Very-Long-Custom-Header-Name", "Accept", "accept"])
        // Hop-by-hop names in any case and position, with no Connection header to name others.
        let mixed: HTTPFields = ["TRANSFER-ENCODING": "chunked", "Host": "a", "keep-alive": "1", "User-Agent": "u",
                                 "upgrade": "h2c", "Te": "trailers"]
        XCTAssertEqual(mixed.removingHopByHop().map(\.name), ["Host", "User-Agent"])
        XCTAssertEqual(mixed.removingHopByHop(keepUpgrade: true).map(\.name), ["Host", "User-Agent", "upgrade"])
    }
}

final class SerializerTests: XCTestCase {
    func parseRequest(_ b: [UInt8]) throws -> HTTPRequestHead {
        var d = HTTP1RequestDecoder()
        d.feed(b)
        guard case .head(let h, _)? = try d.next() else { throw HTTP1ParseError(kind: .malformedStartLine, message: "test input produced no head") }
        return h
    }

    func testRequestRoundTripIsByteIdentical() throws {
        let heads = [
            "GET /a?b=c HTTP/1.1\r\nHost: example.com\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n",
            "POST http://x/y HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nX-Empty: \r\nX-Tab: a\tb\r\n\r\n",
            "OPTIONS * HTTP/1.0\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nX-UTF8: caf\u{E9} \u{1F600}\r\n\r\n",
        ]
        for text in heads {
            let wire = Array(text.utf8)
            let h = try parseRequest(wire)
            XCTAssertEqual(h.headSize, wire.count)
            let out = try HTTP1Serializer.requestHead(method: h.method, target: h.target, version: h.version, fields: h.fields)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), text)
        }
    }

    func testResponseRoundTripIsByteIdentical() throws {
        for text in ["HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", "HTTP/1.0 404 Not  Found\r\n\r\n",
                     "HTTP/1.1 204 \r\nDate: x\r\n\r\n"] {
            var d = HTTP1ResponseDecoder()
            d.feed(Array(text.utf8))
            guard case .head(let h, _)? = try d.next() else { return XCTFail() }
            let out = try HTTP1Serializer.responseHead(version: h.version, status: h.status, reason: h.reason, fields: h.fields)
            XCTAssertEqual(String(decoding: out, as: UTF8.self), text)
        }
    }

    func testLatin1ValueRoundTrip() throws {
        let wire: [UInt8] = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Name: ".utf8) + [0x72, 0xE9, 0x73, 0xFF]
            + Array("\r\n\r\n".utf8)
        let h = try parseRequest(wire)
        let field = h.fields.fields[1]
        XCTAssertTrue(field.valueIsLatin1)
        XCTAssertEqual(field.value, "r\u{E9}s\u{FF}")
        let out = try HTTP1Serializer.requestHead(method: h.method, target: h.target, version: h.version, fields: h.fields)
        XCTAssertEqual(out, wire)
        // A latin-1 flagged value with a scalar above U+00FF cannot be written byte-exactly.
        var bad = h.fields
        bad.fields[1] = HTTPField(name: "X", value: "\u{100}", valueIsLatin1: true)
        XCTAssertThrowsError(try HTTP1Serializer.requestHead(method: "GET", target: "/", version: .http11, fields: bad))
    }

    func testInvalidInputThrows() {
        func kind(_ body: () throws -> [UInt8]) -> HTTP1ParseError.Kind? {
            do { _ = try body(); return nil } catch { return (error as? HTTP1ParseError)?.kind }
        }
        for value in ["a\r\nX-Injected: 1", "a\nb", "a\rb", "a\u{0}b", "a\u{7F}", "a\u{1B}b", " lead", "trail\t"] {
            XCTAssertEqual(kind { try HTTP1Serializer.requestHead(method: "GET", target: "/", version: .http11,
                                                                  fields: ["X": value]) }, .invalidFieldValue, value)
            XCTAssertEqual(kind { try HTTP1Serializer.responseHead(version: .http11, status: 200, reason: "OK",
                                                                   fields: ["X": value]) }, .invalidFieldValue, value)
        }
        for name in ["", "A B", "A:", "A\r\n", "\u{E9}"] {
            XCTAssertEqual(kind { try HTTP1Serializer.requestHead(method: "GET", target: "/", version: .http11,
                                                                  fields: [name: "v"]) }, .malformedField, name)
        }
        XCTAssertEqual(kind { try HTTP1Serializer.requestHead(method: "G T", target: "/", version: .http11, fields: [:]) },
                       .malformedStartLine)
        XCTAssertEqual(kind { try HTTP1Serializer.requestHead(method: "GET", target: "/a b", version: .http11, fields: [:]) },
                       .malformedStartLine)
        XCTAssertEqual(kind { try HTTP1Serializer.requestHead(method: "GET", target: "/", version: .init(major: 10, minor: 0), fields: [:]) },
                       .malformedStartLine)
        XCTAssertEqual(kind { try HTTP1Serializer.responseHead(version: .http11, status: 42, reason: "", fields: [:]) },
                       .malformedStartLine)
        XCTAssertEqual(kind { try HTTP1Serializer.responseHead(version: .http11, status: 200, reason: "O\r\nK", fields: [:]) },
                       .malformedStartLine)
    }

    func testChunks() throws {
        var out: [UInt8] = []
        HTTP1Serializer.appendChunk([], to: &out)
        XCTAssertEqual(out, [])
        HTTP1Serializer.appendChunk(Array("hello".utf8), to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "5\r\nhello\r\n")
        for (n, hex) in [(1, "1"), (15, "f"), (16, "10"), (255, "ff"), (4096, "1000"), (70000, "11170")] {
            var b: [UInt8] = []
            let data = [UInt8](repeating: 0x41, count: n)
            data.withUnsafeBytes { HTTP1Serializer.appendChunk($0, to: &b) }
            XCTAssertEqual(String(decoding: b.prefix(hex.utf8.count + 2), as: UTF8.self), hex + "\r\n")
            XCTAssertEqual(b.count, hex.utf8.count + 4 + n)
        }
        XCTAssertEqual(String(decoding: HTTP1Serializer.lastChunk(trailers: [:]), as: UTF8.self), "0\r\n\r\n")
        XCTAssertEqual(String(decoding: HTTP1Serializer.lastChunk(trailers: ["A": "1", "Bad Name": "x", "C": "a\r\nb"]),
                              as: UTF8.self), "0\r\nA: 1\r\n\r\n")
    }

    func testChunkedRoundTripThroughDecoder() throws {
        var wire = try HTTP1Serializer.requestHead(method: "POST", target: "/", version: .http11,
                                                   fields: ["Host": "a", "Transfer-Encoding": "chunked"])
        var expected: [UInt8] = []
        var rng = SplitMix64(seed: 42)
        for _ in 0..<50 {
            let piece = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            expected += piece
            HTTP1Serializer.appendChunk(piece, to: &wire)
        }
        wire += HTTP1Serializer.lastChunk(trailers: ["X-Sum": "\(expected.count)"])
        var d = HTTP1RequestDecoder()
        d.feed(wire)
        var body: [UInt8] = []
        var trailers: HTTPFields?
        while let e = try d.next() {
            switch e {
            case .head(_, let f): XCTAssertEqual(f, .chunked)
            case .body(let b): body += b
            case .end(let t): trailers = t
            }
        }
        XCTAssertEqual(body, expected)
        XCTAssertEqual(trailers?["x-sum"], "\(expected.count)")
    }
}
