import TestSupport
import XCTest
@testable import WebSocket

final class FramingTests: XCTestCase {
    let both: [WebSocketDirection] = [.clientToServer, .serverToClient]

    func testHeaderParseAndEncodeRoundTrip() {
        for length: UInt64 in [0, 1, 125, 126, 127, 65535, 65536, 1 << 40] {
            for maskKey: UInt32? in [nil, 0x0102_0304] {
                for encoding: WebSocketFrameEncoder.LengthEncoding in [.minimal, .sixteenBit, .sixtyFourBit] {
                    if encoding == .sixteenBit && length > 0xFFFF { continue }
                    let h = WebSocketFrameHeader(fin: length % 2 == 0, rsv1: true, opcode: 2, maskKey: maskKey, payloadLength: length)
                    let bytes = WebSocketFrameEncoder.header(h, lengthEncoding: encoding)
                    let parsed = bytes.withUnsafeBytes { WebSocketFrameHeader.parse($0) }
                    XCTAssertEqual(parsed, .header(h, size: bytes.count))
                    let short = Array(bytes.dropLast())
                    if case .needMore(let needed) = short.withUnsafeBytes({ WebSocketFrameHeader.parse($0) }) {
                        XCTAssertEqual(needed, short.count < 2 ? 2 : bytes.count)
                    } else {
                        XCTFail("a header missing its last byte parsed")
                    }
                }
            }
        }
        let msb: [UInt8] = [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1]
        XCTAssertEqual(msb.withUnsafeBytes { WebSocketFrameHeader.parse($0) }, .invalidLength)
    }

    func testTextAndBinaryBothDirections() {
        for d in both {
            let input = wire(d, opcode: 1, Array("Hello, WebSocket".utf8)) + wire(d, opcode: 2, [0, 1, 2, 0xFF, 0xFE], seed: 7)
            verify(input, direction: d, expected: [text("Hello, WebSocket"), binary([0, 1, 2, 0xFF, 0xFE])])
        }
    }

    func testEmptyMessagesAndEmptyFragments() {
        for d in both {
            var input = wire(d, opcode: 1, []) + wire(d, opcode: 2, [])
            // An empty message in three empty frames.
            input += WebSocketFrameEncoder.frame(opcode: 1, payload: [], fin: false, maskKey: d == .clientToServer ? 1 : nil)
            input += WebSocketFrameEncoder.frame(opcode: 0, payload: [], fin: false, maskKey: d == .clientToServer ? 2 : nil)
            input += WebSocketFrameEncoder.frame(opcode: 0, payload: [], fin: true, maskKey: d == .clientToServer ? 3 : nil)
            verify(input, direction: d, expected: [text(""), binary([]), text("")])
        }
    }

    func testLengthBoundaries() {
        for d in both {
            for n in [1, 124, 125, 126, 127, 65535, 65536, 65537] {
                let payload = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                verify(wire(d, opcode: 2, payload, seed: n), direction: d, expected: [binary(payload)], copies: 2)
            }
        }
    }

    func testNonMinimalLengthEncodingIsAccepted() {
        let payload = Array("short".utf8)
        let input = WebSocketFrameEncoder.frame(opcode: 1, payload: payload, lengthEncoding: .sixteenBit)
            + WebSocketFrameEncoder.frame(opcode: 1, payload: payload, lengthEncoding: .sixtyFourBit)
            + WebSocketFrameEncoder.frame(opcode: 9, payload: [1], lengthEncoding: .sixtyFourBit)
        verify(input, direction: .serverToClient, expected: [text("short"), text("short"), .ping([1])])
    }

    func testOneMebibyteMessage() {
        var rng = SplitMix64(seed: 42)
        let payload = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        verify(wire(.clientToServer, opcode: 2, payload), direction: .clientToServer, expected: [binary(payload)], copies: 2)
        verify(wire(.serverToClient, opcode: 2, payload, fragmentSize: 70_000), direction: .serverToClient,
               expected: [binary(payload)], copies: 1)
    }

    func testHundredFragmentsWithPingsInterleaved() {
        for d in both {
            let message = (0..<100).map { "fragment \($0);" }.joined()
            let bytes = Array(message.utf8)
            var input: [UInt8] = []
            var expected: [WebSocketEvent] = []
            var offset = 0
            for i in 0..<100 {
                let piece = Array("fragment \(i);".utf8)
                input += WebSocketFrameEncoder.frame(opcode: i == 0 ? 1 : 0, payload: piece, fin: i == 99,
                                                     maskKey: d == .clientToServer ? key(i) : nil)
                offset += piece.count
                if i % 10 == 4 {
                    input += controlFrame(d, opcode: 9, Array("p\(i)".utf8), seed: i)
                    expected.append(.ping(Array("p\(i)".utf8)))
                }
                if i == 50 {
                    input += controlFrame(d, opcode: 10, [], seed: i)
                    expected.append(.pong([]))
                }
            }
            XCTAssertEqual(offset, bytes.count)
            expected.append(text(message))
            verify(input, direction: d, expected: expected)
        }
    }

    func testTenThousandSmallMessagesInOneBuffer() {
        for d in both {
            var input: [UInt8] = []
            var expected: [WebSocketEvent] = []
            for i in 0..<10_000 {
                let s = "message #\(i)"
                input += wire(d, opcode: i % 7 == 0 ? 2 : 1, Array(s.utf8), seed: i)
                expected.append(i % 7 == 0 ? binary(Array(s.utf8)) : text(s))
            }
            verify(input, direction: d, expected: expected, copies: 1)
        }
    }

    func testUTF8Validity() {
        let cases: [([UInt8], Bool)] = [
            (Array("héllo ✓ 🎉".utf8), true),
            ([0xC0, 0xAF], false),              // overlong '/'
            ([0xE0, 0x80, 0xAF], false),        // overlong
            ([0xED, 0xA0, 0x80], false),        // surrogate U+D800
            ([0xF4, 0x90, 0x80, 0x80], false),  // above U+10FFFF
            ([0xF8, 0x88, 0x80, 0x80, 0x80], false),
            ([0x41, 0xE2, 0x82], false),        // cut short at the end
            ([0xFF], false),
            ([0xEF, 0xBF, 0xBF], true),         // U+FFFF is well-formed
            ([0xF4, 0x8F, 0xBF, 0xBF], true),   // U+10FFFF
            (Array(repeating: 0x61, count: 1000) + [0xC3], false),
        ]
        for (bytes, valid) in cases {
            for fragmentSize in [nil, 1, 2] as [Int?] {
                let input = wire(.clientToServer, opcode: 1, bytes, fragmentSize: fragmentSize)
                let event = WebSocketEvent.message(opcode: 1, data: bytes, compressed: false, textValid: valid, truncated: false, note: nil)
                verify(input, direction: .clientToServer, expected: [event])
            }
        }
        // Binary is never judged.
        verify(wire(.serverToClient, opcode: 2, [0xFF]), direction: .serverToClient, expected: [binary([0xFF])])
    }

    func testCloseCodesAndReasons() {
        for d in both {
            for (code, reason) in [(UInt16(1000), "normal closure"), (1001, "going away"), (4000, "app-defined ✓"), (1000, "")] {
                let input = controlFrame(d, opcode: 8, WebSocketFrameEncoder.closePayload(code: code, reason: reason))
                verify(input, direction: d, expected: [.close(code: code, reason: reason)], repeatable: false)
            }
            verify(controlFrame(d, opcode: 8, []), direction: d, expected: [.close(code: nil, reason: "")], repeatable: false)
            // Invalid UTF-8 in the reason is decoded lossily (leniency).
            verify(controlFrame(d, opcode: 8, [0x03, 0xE8, 0x61, 0xFF]), direction: d,
                   expected: [.close(code: 1000, reason: "a\u{FFFD}")], repeatable: false)
            // A close inside a fragmented message, then EOF.
            let input = WebSocketFrameEncoder.frame(opcode: 1, payload: [0x61], fin: false, maskKey: d == .clientToServer ? 5 : nil)
                + controlFrame(d, opcode: 8, WebSocketFrameEncoder.closePayload(code: 1001))
            verify(input, direction: d, expected: [.close(code: 1001, reason: "")],
                   finish: .protocolError("connection closed inside a fragmented message"), repeatable: false)
        }
    }

    func testEOFMidFrame() {
        let d = WebSocketDirection.clientToServer
        let whole = wire(d, opcode: 1, Array("hello world".utf8)) + controlFrame(d, opcode: 9, [1, 2, 3])
        let firstLength = wire(d, opcode: 1, Array("hello world".utf8)).count
        // Cut inside the first header, inside the payload, inside the second header, inside the ping payload.
        for cut in [1, 3, 7, firstLength - 1, firstLength + 1, whole.count - 1] {
            let expected: [WebSocketEvent] = cut > firstLength - 1 ? [text("hello world")] : []
            verify(Array(whole[0..<cut]), direction: d, expected: expected,
                   finish: .protocolError("connection closed mid-frame"), repeatable: false)
        }
        verify(whole, direction: d, expected: [text("hello world"), .ping([1, 2, 3])])
        // EOF between the fragments of a message.
        let open = WebSocketFrameEncoder.frame(opcode: 2, payload: [1], fin: false, maskKey: 9)
        verify(open, direction: d, expected: [], finish: .protocolError("connection closed inside a fragmented message"), repeatable: false)
        // EOF on a clean boundary, and on nothing at all.
        verify([], direction: d, expected: [])
    }

    func testRecordedCopyIsCapped() {
        let limits = WebSocketLimits(maxRecordedMessageBytes: 10)
        let s = "héllo wörld, this is longer than ten bytes ✓"
        let bytes = Array(s.utf8)
        for d in both {
            let input = wire(d, opcode: 1, bytes, fragmentSize: 3) + wire(d, opcode: 1, Array("0123456789".utf8))
            verify(input, direction: d, limits: limits, expected: [
                .message(opcode: 1, data: Array(bytes[0..<10]), compressed: false, textValid: true, truncated: true, note: nil),
                text("0123456789"),
            ])
        }
        // A huge frame is consumed incrementally: 200 MiB declared, fed in 1 MiB chunks.
        var parser = WebSocketParser(direction: .serverToClient, deflate: nil, limits: WebSocketLimits(maxRecordedMessageBytes: 1000))
        let total = 200 << 20
        parser.feed(WebSocketFrameEncoder.header(WebSocketFrameHeader(opcode: 2, payloadLength: UInt64(total))))
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        let chunks = total >> 20
        for i in 0..<chunks {
            parser.feed(chunk)
            let event = parser.next()
            XCTAssertEqual(parser.bufferedByteCount, 0)
            if i < chunks - 1 {
                XCTAssertNil(event)
            } else {
                XCTAssertEqual(event, .message(opcode: 2, data: Array(repeating: 0x5A, count: 1000), compressed: false,
                                               textValid: true, truncated: true, note: nil))
            }
        }
        XCTAssertNil(parser.finish())
    }

    func testProtocolErrors() {
        typealias Case = (String, WebSocketDirection, [UInt8], [WebSocketEvent])
        let c = WebSocketDirection.clientToServer, s = WebSocketDirection.serverToClient
        let hello = Array("hello".utf8)
        let cases: [Case] = [
            ("unmasked client-to-server frame (RFC 6455 §5.1)", c, WebSocketFrameEncoder.frame(opcode: 1, payload: hello), []),
            ("masked server-to-client frame (RFC 6455 §5.1)", s, WebSocketFrameEncoder.frame(opcode: 1, payload: hello, maskKey: 1), []),
            ("reserved bit RSV2 set (no extension negotiated uses it)", s, WebSocketFrameEncoder.frame(opcode: 1, payload: hello, rsv2: true), []),
            ("reserved bit RSV3 set (no extension negotiated uses it)", s, WebSocketFrameEncoder.frame(opcode: 1, payload: hello, rsv3: true), []),
            ("reserved opcode 3", s, WebSocketFrameEncoder.frame(opcode: 3, payload: hello), []),
            ("reserved opcode 11", s, WebSocketFrameEncoder.frame(opcode: 11, payload: []), []),
            ("fragmented control frame (opcode 9)", s, WebSocketFrameEncoder.frame(opcode: 9, payload: [], fin: false), []),
            ("control frame payload of 126 bytes exceeds 125", s,
             WebSocketFrameEncoder.frame(opcode: 9, payload: Array(repeating: 0, count: 126)), []),
            ("RSV1 set on a control frame (opcode 10)", s, WebSocketFrameEncoder.frame(opcode: 10, payload: [], rsv1: true), []),
            ("continuation frame without a message in progress", s, WebSocketFrameEncoder.frame(opcode: 0, payload: hello), []),
            ("new data frame (opcode 2) while a fragmented message is open", s,
             WebSocketFrameEncoder.frame(opcode: 1, payload: hello, fin: false) + WebSocketFrameEncoder.frame(opcode: 2, payload: hello), []),
            ("RSV1 set but permessage-deflate was not negotiated", s, WebSocketFrameEncoder.frame(opcode: 1, payload: hello, rsv1: true), []),
            ("close frame with a 1-byte payload (a status code needs 2)", s, WebSocketFrameEncoder.frame(opcode: 8, payload: [3]), []),
            ("data after the close frame", s, WebSocketFrameEncoder.frame(opcode: 8, payload: []) + WebSocketFrameEncoder.frame(opcode: 1, payload: hello),
             [.close(code: nil, reason: "")]),
            ("64-bit payload length with the most significant bit set", s, [0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3], []),
            ("unmasked client-to-server frame (RFC 6455 §5.1)", c,
             wire(c, opcode: 1, hello) + controlFrame(c, opcode: 9, [1]) + WebSocketFrameEncoder.frame(opcode: 2, payload: hello),
             [text("hello"), .ping([1])]),
        ]
        for (reason, d, bytes, before) in cases {
            // Whatever follows the violation is ignored (still relayed by the proxy).
            let input = bytes + wire(d, opcode: 1, hello)
            verify(input, direction: d, expected: before + [.protocolError(reason)], repeatable: false)
        }
        // RSV1 on a continuation frame (with permessage-deflate agreed).
        let input = WebSocketFrameEncoder.frame(opcode: 1, payload: hello, fin: false)
            + WebSocketFrameEncoder.frame(opcode: 0, payload: hello, rsv1: true)
        verify(input, direction: s, deflate: PerMessageDeflate(), expected: [.protocolError("RSV1 set on a continuation frame")], repeatable: false)
    }

    func testFeedAfterStopIsIgnoredAndUnbuffered() {
        var parser = WebSocketParser(direction: .clientToServer, deflate: nil)
        parser.feed(WebSocketFrameEncoder.frame(opcode: 1, payload: [0x61]))
        XCTAssertEqual(parser.next(), .protocolError("unmasked client-to-server frame (RFC 6455 §5.1)"))
        XCTAssertTrue(parser.isStopped)
        parser.feed([UInt8](repeating: 0, count: 100_000))
        XCTAssertEqual(parser.bufferedByteCount, 0)
        XCTAssertNil(parser.next())
        XCTAssertNil(parser.finish())
    }
}
