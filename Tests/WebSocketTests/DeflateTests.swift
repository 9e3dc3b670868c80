import Foundation
import XCTest
@testable import WebSocket

final class PerMessageDeflateNegotiationTests: XCTestCase {
    func testAgreedParameters() throws {
        XCTAssertEqual(try PerMessageDeflate(extensionHeader: "permessage-deflate"), PerMessageDeflate())
        let all = try PerMessageDeflate(extensionHeader:
            "permessage-deflate; client_no_context_takeover; server_no_context_takeover; client_max_window_bits=10; server_max_window_bits=\"12\"")
        XCTAssertEqual(all, PerMessageDeflate(clientNoContextTakeover: true, serverNoContextTakeover: true,
                                              clientMaxWindowBits: 10, serverMaxWindowBits: 12))
        XCTAssertEqual(all?.noContextTakeover(for: .clientToServer), true)
        XCTAssertEqual(all?.inflateWindowBits(for: .clientToServer), 10)
        XCTAssertEqual(all?.inflateWindowBits(for: .serverToClient), 12)
        // Case-insensitive names, whitespace, other extensions around it, empty elements.
        let mixed = try PerMessageDeflate(extensionHeader: " x-foo; a=1 ,, Permessage-Deflate ;\tSERVER_MAX_WINDOW_BITS = 8 , x-bar")
        XCTAssertEqual(mixed?.serverMaxWindowBits, 8)
        XCTAssertEqual(mixed?.inflateWindowBits(for: .serverToClient), 9, "8 is inflated with a 9-bit window")
        // client_max_window_bits without a value (offer syntax) is taken as 15.
        XCTAssertEqual(try PerMessageDeflate(extensionHeader: "permessage-deflate; client_max_window_bits")?.clientMaxWindowBits, 15)
    }

    func testNotAgreed() throws {
        XCTAssertNil(try PerMessageDeflate(extensionHeader: ""))
        XCTAssertNil(try PerMessageDeflate(extensionHeader: "x-webkit-deflate-frame"))
        XCTAssertNil(try PerMessageDeflate(extensionHeader: "permessage-deflate-x; server_max_window_bits=10"))
    }

    func testMalformed() {
        let cases: [(String, String)] = [
            ("permessage-deflate; server_max_window_bits=16", "permessage-deflate: server_max_window_bits must be 8...15 (got \"16\")"),
            ("permessage-deflate; server_max_window_bits=7", "permessage-deflate: server_max_window_bits must be 8...15 (got \"7\")"),
            ("permessage-deflate; client_max_window_bits=010", "permessage-deflate: client_max_window_bits must be 8...15 (got \"010\")"),
            ("permessage-deflate; server_max_window_bits", "permessage-deflate: server_max_window_bits needs a value"),
            ("permessage-deflate; server_no_context_takeover=1", "permessage-deflate: server_no_context_takeover takes no value (got \"1\")"),
            ("permessage-deflate; server_no_context_takeover; server_no_context_takeover",
             "permessage-deflate: parameter server_no_context_takeover appears twice"),
            ("permessage-deflate; foo", "permessage-deflate: unknown parameter foo"),
            ("permessage-deflate, permessage-deflate", "permessage-deflate: accepted 2 times in one response"),
            ("permessage-deflate; server_max_window_bits=\"10", "Sec-WebSocket-Extensions: unterminated quoted-string"),
            ("permessage-deflate; ", "Sec-WebSocket-Extensions: expected a parameter name at offset 20, found end of value"),
            ("permessage-deflate x", "Sec-WebSocket-Extensions: unexpected \"x\" at offset 19"),
            ("permessage-deflate; a=\u{1}", "Sec-WebSocket-Extensions: expected a parameter value at offset 22, found \"\\x01\""),
        ]
        for (header, message) in cases {
            XCTAssertThrowsError(try PerMessageDeflate(extensionHeader: header), header) { error in
                XCTAssertEqual((error as? PerMessageDeflateError)?.message, message, header)
            }
        }
    }
}

final class DeflateTests: XCTestCase {
    let messages: [[UInt8]] = [
        Array("hello hello hello hello".utf8),
        [],
        Array((0..<300).map { "row \($0 % 37): status=ok value=\($0 * 7 % 101)\n" }.joined().utf8),
        Array("hello hello hello hello".utf8),
        (0..<1024).map { UInt8($0 & 0xFF) },
    ]

    private func expectedEvents(_ messages: [[UInt8]], opcode: UInt8 = 1) -> [WebSocketEvent] {
        messages.map {
            .message(opcode: opcode, data: $0, compressed: true,
                     textValid: opcode != 1 || String(validating: $0, as: UTF8.self) != nil, truncated: false, note: nil)
        }
    }

    /// Our own deflater, every window size, every takeover mode, both directions, fragmented too.
    func testRoundTripAllWindowBitsAndTakeoverModes() throws {
        for bits in 8...15 {
            for takeover in [true, false] {
                for d in [WebSocketDirection.clientToServer, .serverToClient] {
                    let deflater = try XCTUnwrap(WebSocketDeflater(windowBits: bits, contextTakeover: takeover))
                    let params = d == .clientToServer
                        ? PerMessageDeflate(clientNoContextTakeover: !takeover, clientMaxWindowBits: bits)
                        : PerMessageDeflate(serverNoContextTakeover: !takeover, serverMaxWindowBits: bits)
                    var input: [UInt8] = []
                    for (i, m) in messages.enumerated() {
                        input += wire(d, opcode: 1, m, deflater: deflater, fragmentSize: i == 2 ? 50 : nil, seed: i)
                        if i == 2 { input += controlFrame(d, opcode: 9, [7]) }
                    }
                    var expected = expectedEvents(messages)
                    expected.insert(.ping([7]), at: 3)
                    // Copies in one buffer only make sense without context takeover.
                    verify(input, direction: d, deflate: params, expected: expected, repeatable: !takeover, seed: UInt64(bits))
                }
            }
        }
    }

    /// An independent peer: Python's zlib (Fixtures/websocket/zlib_peer.py).
    func testPythonZlibPeer() throws {
        let fixture = try loadFixtureJSON("python-zlib.json")
        let messages = try XCTUnwrap(fixture["messages"] as? [String]).map(base64Bytes)
        let cases = try XCTUnwrap(fixture["cases"] as? [[String: Any]])
        XCTAssertEqual(cases.count, 14)
        for c in cases {
            let bits = try XCTUnwrap(c["windowBits"] as? Int)
            let takeover = try XCTUnwrap(c["contextTakeover"] as? Bool)
            let payloads = try XCTUnwrap(c["payloads"] as? [String]).map(base64Bytes)
            for d in [WebSocketDirection.clientToServer, .serverToClient] {
                let params = d == .clientToServer
                    ? PerMessageDeflate(clientNoContextTakeover: !takeover, clientMaxWindowBits: bits)
                    : PerMessageDeflate(serverNoContextTakeover: !takeover, serverMaxWindowBits: bits)
                var input: [UInt8] = []
                for (i, p) in payloads.enumerated() {
                    input += WebSocketFrameEncoder.frame(opcode: 2, payload: p, rsv1: true, maskKey: d == .clientToServer ? key(i) : nil)
                }
                verify(input, direction: d, deflate: params, expected: expectedEvents(messages, opcode: 2),
                       repeatable: !takeover, seed: UInt64(bits))
            }
        }
    }

    func testUncompressedMessagesMixWithCompressedOnes() throws {
        let deflater = try XCTUnwrap(WebSocketDeflater())
        let d = WebSocketDirection.serverToClient
        let input = wire(d, opcode: 1, Array("plain".utf8)) + wire(d, opcode: 1, Array("squeezed squeezed".utf8), deflater: deflater)
            + wire(d, opcode: 2, [1, 2, 3])
        verify(input, direction: d, deflate: PerMessageDeflate(),
               expected: [text("plain"), text("squeezed squeezed", compressed: true), binary([1, 2, 3])])
    }

    func testFinalBlockInsideAMessage() throws {
        // BFINAL = 1 ends the DEFLATE stream; the appended 00 00 FF FF is then ignored and the next
        // message starts a new stream.
        let deflater = try XCTUnwrap(WebSocketDeflater())
        let first = Array("final block final block".utf8)
        deflater.compressPart(first.withUnsafeBytes { UnsafeRawBufferPointer($0) })
        let p1 = deflater.finishMessage(finalBlock: true)
        let p2 = deflater.compress(first)
        let d = WebSocketDirection.serverToClient
        var input = WebSocketFrameEncoder.frame(opcode: 1, payload: p1, rsv1: true)
        input += WebSocketFrameEncoder.frame(opcode: 1, payload: p2, rsv1: true)
        // Trailing garbage after a final block is reported, not fatal.
        input += WebSocketFrameEncoder.frame(opcode: 1, payload: p1 + [1, 2, 3], rsv1: true)
        verify(input, direction: d, deflate: PerMessageDeflate(), expected: [
            text("final block final block", compressed: true), text("final block final block", compressed: true),
            .message(opcode: 1, data: first, compressed: true, textValid: true, truncated: false,
                     note: "3 bytes after the end of the DEFLATE stream ignored"),
        ], repeatable: false)
    }

    func testCorruptDataAndLostContext() throws {
        let d = WebSocketDirection.serverToClient
        let deflater = try XCTUnwrap(WebSocketDeflater())
        let a = Array("alpha beta gamma delta alpha beta gamma delta".utf8)
        let p1 = deflater.compress(a)
        let p2 = deflater.compress(a)  // refers back into message 1
        var input = WebSocketFrameEncoder.frame(opcode: 1, payload: [0xFF, 0xFF, 0xFF], rsv1: true)  // invalid block type
        input += WebSocketFrameEncoder.frame(opcode: 1, payload: p1, rsv1: true)
        input += WebSocketFrameEncoder.frame(opcode: 1, payload: p2, rsv1: true)
        verify(input, direction: d, deflate: PerMessageDeflate(), expected: [
            .message(opcode: 1, data: [], compressed: true, textValid: true, truncated: false, note: "inflate failed: invalid block type"),
            text(String(decoding: a, as: UTF8.self), compressed: true),
            text(String(decoding: a, as: UTF8.self), compressed: true),
        ], repeatable: false)

        // The parser told "no context takeover" while the sender keeps its context: the second
        // message reaches into history the parser dropped, and zlib says so.
        let wrong = PerMessageDeflate(serverNoContextTakeover: true)
        let input2 = WebSocketFrameEncoder.frame(opcode: 1, payload: p1, rsv1: true) + WebSocketFrameEncoder.frame(opcode: 1, payload: p2, rsv1: true)
        verify(input2, direction: d, deflate: wrong, expected: [
            text(String(decoding: a, as: UTF8.self), compressed: true),
            .message(opcode: 1, data: [], compressed: true, textValid: true, truncated: false, note: "inflate failed: invalid distance too far back"),
        ], repeatable: false)
    }

    /// 1 GiB of zeros, compressed at test time (~1 MB), capped at the default 64 MiB inflate limit
    /// and the 16 MiB recorded limit, fed in 64 KiB chunks with bounded buffering. With context
    /// takeover, the next message refers to the lost history and is marked; later messages that
    /// do not are decoded.
    func testCompressionBomb() throws {
        let deflater = try XCTUnwrap(WebSocketDeflater(windowBits: 15, level: 1, runLengthOnly: true))
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        zeros.withUnsafeBytes { chunk in
            for _ in 0..<1024 { deflater.compressPart(chunk) }
        }
        let bomb = deflater.finishMessage()
        XCTAssertLessThan(bomb.count, 2 << 20)
        let after = deflater.compress([UInt8](repeating: 0, count: 1000))
        let hello = deflater.compress(Array("hello".utf8))

        for takeover in [true, false] {
            var input = WebSocketFrameEncoder.frame(opcode: 2, payload: bomb, rsv1: true)
            input += WebSocketFrameEncoder.frame(opcode: 2, payload: after, rsv1: true)
            input += WebSocketFrameEncoder.frame(opcode: 1, payload: hello, rsv1: true)
            let peakBefore = peakResidentBytes()
            var parser = WebSocketParser(direction: .serverToClient, deflate: PerMessageDeflate(serverNoContextTakeover: !takeover))
            var events: [WebSocketEvent] = []
            var offset = 0
            while offset < input.count {
                let end = min(input.count, offset + 65536)
                parser.feed(Array(input[offset..<end]))
                offset = end
                while let e = parser.next() { events.append(e) }
                XCTAssertLessThanOrEqual(parser.bufferedByteCount, 14)
            }
            XCTAssertNil(parser.finish())
            // The recorded copy (16 MiB) plus zlib's window and a chunk: far from 1 GiB.
            if let before = peakBefore, let after = peakResidentBytes() {
                XCTAssertLessThan(after - before, 128 << 20, "peak RSS grew by \(after - before) bytes")
            }
            XCTAssertEqual(events.count, 3)
            guard events.count == 3 else { continue }
            let limits = WebSocketLimits.default
            XCTAssertEqual(events[0], .message(opcode: 2, data: [UInt8](repeating: 0, count: limits.maxRecordedMessageBytes), compressed: true,
                                               textValid: true, truncated: true, note: "inflated size exceeds 67108864 bytes"))
            if takeover {
                XCTAssertEqual(describe(events[1]), describe(.message(opcode: 2, data: [], compressed: true, textValid: true, truncated: false,
                                                                      note: "cannot inflate: earlier message failed (invalid distance too far back)")))
            } else {
                // The parser was told the sender resets, so only the wording differs: the sender
                // did keep its context, and zlib notices the reference into it.
                XCTAssertEqual(describe(events[1]), describe(.message(opcode: 2, data: [], compressed: true, textValid: true, truncated: false,
                                                                      note: "inflate failed: invalid distance too far back")))
            }
            XCTAssertEqual(events[2], text("hello", compressed: true))
        }
    }

    /// A smaller bomb through the full verifier (byte by byte, splits).
    func testSmallBombThroughVerifier() throws {
        let deflater = try XCTUnwrap(WebSocketDeflater(contextTakeover: false))
        let payload = deflater.compress([UInt8](repeating: 0x41, count: 4 << 20))
        let limits = WebSocketLimits(maxRecordedMessageBytes: 1000, maxInflatedMessageBytes: 1 << 20)
        for d in [WebSocketDirection.clientToServer, .serverToClient] {
            let params = PerMessageDeflate(clientNoContextTakeover: true, serverNoContextTakeover: true)
            let input = WebSocketFrameEncoder.message(opcode: 1, payload: [UInt8](repeating: 0x41, count: 4 << 20), deflater: deflater,
                                                      fragmentSize: 333, maskKey: { d == .clientToServer ? key($0) : nil })
            XCTAssertEqual(input.count > payload.count, true)
            verify(input, direction: d, deflate: params, limits: limits, expected: [
                .message(opcode: 1, data: [UInt8](repeating: 0x41, count: 1000), compressed: true, textValid: true, truncated: true,
                         note: "inflated size exceeds 1048576 bytes"),
            ])
        }
    }
}

/// VmHWM from /proc/self/status (Linux), in bytes.
func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.filter(\.isNumber)
        return Int(digits).map { $0 * 1024 }
    }
    return nil
}

/// Fuzz findings of the websocket target, replayed: whole or split feeding must give the same
/// events.
final class DeflateFuzzRegressionTests: XCTestCase {
    private func events(_ bytes: [UInt8], chunk: Int) -> [WebSocketEvent] {
        let deflate = PerMessageDeflate(clientNoContextTakeover: false, serverNoContextTakeover: false,
                                        clientMaxWindowBits: 8, serverMaxWindowBits: 8)
        var parser = WebSocketParser(direction: .serverToClient, deflate: deflate)
        var out: [WebSocketEvent] = []
        var start = 0
        while start < bytes.count {
            parser.feed(Array(bytes[start..<min(bytes.count, start + chunk)]))
            while let event = parser.next() { out.append(event) }
            start += chunk
        }
        if let last = parser.finish() { out.append(last) }
        return out
    }

    /// A compressed message whose back-references reach beyond the agreed 8-bit window: zlib
    /// checks distances against its window plus the current call's output, so with the agreed
    /// window it decoded when fed whole and failed ("invalid distance too far back") when fed two
    /// bytes at a time. The inflater now always uses a 15-bit window.
    func testDistanceBeyondTheAgreedWindowDecodesTheSameWholeOrSplit() throws {
        let input = Array(Data(base64Encoded: "AhHBQQtKTBwFo2BfFAwOYcELSkwcBaNgFGAUDiHBC0qGAgAA/QWjBQ7BCwAAAAAAAAA8bAAAAAAAAABKTBwFC81i4BgIfGTBEIE=")!)
        let frames = Array(input.dropFirst(2)) // the fuzz target's flag and seed bytes
        let whole = events(frames, chunk: frames.count)
        XCTAssertEqual(whole.count, 2)
        for chunk in [1, 2, 3, 7] {
            XCTAssertEqual(events(frames, chunk: chunk), whole, "chunk \(chunk)")
        }
        guard case .message(_, let data, _, _, _, let note) = whole[0] else { return XCTFail("\(whole[0])") }
        XCTAssertGreaterThan(data.count, 1000)
        XCTAssertEqual(note, "33 bytes after the end of the DEFLATE stream ignored")
    }
}
