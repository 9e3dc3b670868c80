/// Decides what a tunnel carries from its first client bytes, without consuming them.
public enum TunnelSniffer {
    public enum Verdict: Equatable, Sendable {
        case needMoreData
        /// An HTTP/1.x request line: parse and record it.
        case http
        /// The HTTP/2 connection preface: cleartext h2 with prior knowledge (RFC 9113 §3.3).
        case http2PriorKnowledge
        /// Anything else (a TLS ClientHello, SSH, a binary protocol): relay opaquely.
        case other
    }

    /// The longest method token looked at before deciding "not HTTP". Registered methods are at
    /// most 17 characters (`VERSION-CONTROL`, `UPDATEREDIRECTREF`); 24 leaves room.
    static let maxMethodLength = 24

    /// The client connection preface of HTTP/2 (RFC 9113 §3.4).
    public static let http2Preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    public static func classify(_ bytes: [UInt8]) -> Verdict {
        guard let first = bytes.first else { return .needMoreData }
        if bytes.count >= http2Preface.count {
            if bytes[..<http2Preface.count].elementsEqual(http2Preface) { return .http2PriorKnowledge }
        } else if http2Preface.starts(with: bytes) {
            return .needMoreData
        }
        // A TLS record starts with 0x16 (handshake); methods start with a letter.
        guard isMethodByte(first) else { return .other }
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: " ") { return index > 0 ? .http : .other }
            if !isMethodByte(byte) || index >= maxMethodLength { return .other }
        }
        return .needMoreData
    }

    private static func isMethodByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
