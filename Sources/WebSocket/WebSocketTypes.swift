// WebSocket (RFC 6455) framing types shared by the parser and the encoder.

/// Which way a byte stream flows. RFC 6455 §5.1: a client masks every frame it sends and a
/// server masks none, so the parser needs to know.
public enum WebSocketDirection: Sendable, Equatable {
    /// Client to server ("send" in Chrome's `_webSocketMessages`). Frames must be masked.
    case clientToServer
    /// Server to client ("receive"). Frames must not be masked.
    case serverToClient
}

/// Opcode values (RFC 6455 §5.2, §11.8).
public enum WebSocketOpcode {
    /// Continuation of a fragmented data message.
    public static let continuation: UInt8 = 0x0
    /// UTF-8 text message.
    public static let text: UInt8 = 0x1
    /// Binary message.
    public static let binary: UInt8 = 0x2
    /// Connection close (control).
    public static let close: UInt8 = 0x8
    /// Ping (control).
    public static let ping: UInt8 = 0x9
    /// Pong (control).
    public static let pong: UInt8 = 0xA

    /// True for opcodes 8...15 (RFC 6455 §5.5: the most significant opcode bit marks control).
    @inlinable public static func isControl(_ opcode: UInt8) -> Bool { opcode & 0x8 != 0 }

    /// True for the six opcodes RFC 6455 defines; 3-7 and 11-15 are reserved.
    @inlinable public static func isKnown(_ opcode: UInt8) -> Bool {
        opcode <= 0x2 || (opcode >= 0x8 && opcode <= 0xA)
    }
}

/// A decoded frame header (RFC 6455 §5.2).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// ```
public struct WebSocketFrameHeader: Equatable, Sendable {
    /// Final fragment of a message.
    public var fin: Bool
    /// RSV1: "compressed" on the first frame of a permessage-deflate message (RFC 7692 §6).
    public var rsv1: Bool
    /// RSV2: no extension harrec knows uses it.
    public var rsv2: Bool
    /// RSV3: no extension harrec knows uses it.
    public var rsv3: Bool
    /// The 4-bit opcode (see ``WebSocketOpcode``).
    public var opcode: UInt8
    /// The MASK bit.
    public var masked: Bool
    /// The masking key's four bytes in wire order, packed big-endian (`0x11223344` is the key
    /// `11 22 33 44`). Nil when the frame is not masked.
    public var maskKey: UInt32?
    /// The payload length in bytes.
    public var payloadLength: UInt64

    /// Creates a header; `masked` follows `maskKey`.
    public init(fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false,
                opcode: UInt8, maskKey: UInt32? = nil, payloadLength: UInt64) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode & 0x0F
        self.masked = maskKey != nil
        self.maskKey = maskKey
        self.payloadLength = payloadLength
    }

    /// The outcome of ``parse(_:)``.
    public enum ParseResult: Equatable, Sendable {
        /// More bytes are needed; `needed` is the full header size once known (at least 2).
        case needMore(needed: Int)
        /// A header of `size` bytes.
        case header(WebSocketFrameHeader, size: Int)
        /// The 64-bit length has its most significant bit set (RFC 6455 §5.2 requires 0).
        case invalidLength
    }

    /// Size of a header given its first two bytes.
    @inlinable static func headerSize(secondByte b1: UInt8) -> Int {
        let len7 = b1 & 0x7F
        return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (b1 & 0x80 != 0 ? 4 : 0)
    }

    /// Parses a header at the start of `bytes`.
    ///
    /// Leniency (named): RFC 6455 §5.2 says "the minimal number of bytes MUST be used to encode
    /// the length"; a 16- or 64-bit length that would have fitted a shorter form is accepted,
    /// since nothing is ambiguous about it and the proxy relays it anyway.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> ParseResult {
        guard bytes.count >= 2 else { return .needMore(needed: 2) }
        let b0 = bytes[0], b1 = bytes[1]
        let size = headerSize(secondByte: b1)
        guard bytes.count >= size else { return .needMore(needed: size) }
        var length = UInt64(b1 & 0x7F)
        var pos = 2
        if length == 126 {
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            pos = 4
        } else if length == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(bytes[i]) }
            guard length >> 63 == 0 else { return .invalidLength }
            pos = 10
        }
        var key: UInt32?
        if b1 & 0x80 != 0 {
            key = UInt32(bytes[pos]) << 24 | UInt32(bytes[pos + 1]) << 16
                | UInt32(bytes[pos + 2]) << 8 | UInt32(bytes[pos + 3])
        }
        let header = WebSocketFrameHeader(
            fin: b0 & 0x80 != 0, rsv1: b0 & 0x40 != 0, rsv2: b0 & 0x20 != 0, rsv3: b0 & 0x10 != 0,
            opcode: b0 & 0x0F, maskKey: key, payloadLength: length)
        return .header(header, size: size)
    }
}

/// Size limits for one direction's parser.
public struct WebSocketLimits: Equatable, Sendable {
    /// Default cap on the recorded copy of one message: 16 MiB. Far above any chat or live-update
    /// message (Chrome DevTools shows at most a few MiB usefully) and small enough that a few
    /// hundred open sockets cannot exhaust memory. Bytes beyond it are still relayed and parsed.
    public static let defaultMaxRecordedMessageBytes = 16 << 20
    /// Default cap on the inflated size of one compressed message: 64 MiB (the zip-bomb guard).
    /// Larger than the recorded cap so that a message between the two still keeps the DEFLATE
    /// context in sync for the messages after it; DEFLATE's ratio is at most about 1032:1, so
    /// 64 MiB of output needs only ~64 KiB of input, which bounds the CPU spent on a bomb.
    public static let defaultMaxInflatedMessageBytes = 64 << 20
    /// RFC 6455 §5.5: "All control frames MUST have a payload length of 125 bytes or less".
    public static let rfcMaxControlPayload = 125

    /// Cap on the bytes kept for one message (after inflation); the rest is dropped and the
    /// message is reported with `truncated: true`.
    public var maxRecordedMessageBytes: Int
    /// Cap on the bytes inflated for one compressed message. Beyond it, inflation stops, the
    /// message gets a note, and the DEFLATE context is treated as lost.
    public var maxInflatedMessageBytes: Int
    /// Largest control frame payload accepted (RFC 6455 fixes it at 125).
    public var maxControlPayload: Int

    /// Creates limits; negative values are treated as 0.
    public init(maxRecordedMessageBytes: Int = WebSocketLimits.defaultMaxRecordedMessageBytes,
                maxInflatedMessageBytes: Int = WebSocketLimits.defaultMaxInflatedMessageBytes,
                maxControlPayload: Int = WebSocketLimits.rfcMaxControlPayload) {
        self.maxRecordedMessageBytes = max(0, maxRecordedMessageBytes)
        self.maxInflatedMessageBytes = max(0, maxInflatedMessageBytes)
        self.maxControlPayload = max(0, maxControlPayload)
    }

    /// The defaults above.
    public static let `default` = WebSocketLimits()
}

/// What the parser reports, in wire order.
public enum WebSocketEvent: Equatable, Sendable {
    /// A complete data message (all fragments, inflated if compressed).
    /// - opcode: 1 text, 2 binary.
    /// - data: the message bytes, at most `maxRecordedMessageBytes`. For a message that failed to
    ///   inflate, the bytes inflated before the failure.
    /// - compressed: RSV1 was set (permessage-deflate).
    /// - textValid: for text, whether the bytes seen are valid UTF-8 (always true for binary).
    ///   RFC 6455 §8.1 says to fail the connection; a recorder reports it instead.
    /// - truncated: `data` is shorter than the message.
    /// - note: why the message is incomplete or suspect, e.g. `inflate failed: ...`.
    case message(opcode: UInt8, data: [UInt8], compressed: Bool, textValid: Bool, truncated: Bool, note: String?)
    /// A close frame: the status code (nil for an empty payload) and the reason, decoded as
    /// UTF-8 with invalid bytes replaced (leniency: RFC 6455 §8.1 would fail the connection).
    case close(code: UInt16?, reason: String)
    /// A ping frame's payload.
    case ping([UInt8])
    /// A pong frame's payload.
    case pong([UInt8])
    /// A protocol violation, one printable line. The parser stops parsing this direction
    /// afterwards (the proxy keeps relaying the bytes).
    case protocolError(String)
}

/// Renders bytes from the wire for an error message: printable ASCII as is, anything else as
/// `\xNN`, at most `limit` bytes.
func printable<S: Sequence>(_ bytes: S, limit: Int = 40) -> String where S.Element == UInt8 {
    var out = ""
    var n = 0
    for b in bytes {
        if n == limit { out += "..."; break }
        n += 1
        if b >= 0x20 && b < 0x7F && b != 0x5C {
            out.unicodeScalars.append(Unicode.Scalar(b))
        } else {
            let hex = Array("0123456789abcdef")
            out += "\\x" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
        }
    }
    return out
}
