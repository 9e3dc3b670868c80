// Builds WebSocket frames, for tests and fixtures (the proxy itself never re-frames).

/// Builds frames and messages (RFC 6455 §5.2), optionally masked, fragmented or compressed.
public enum WebSocketFrameEncoder {
    /// How the payload length is written.
    public enum LengthEncoding: Sendable {
        /// The shortest form (what RFC 6455 requires).
        case minimal
        /// Always the 16-bit form (payloads up to 65535 bytes).
        case sixteenBit
        /// Always the 64-bit form.
        case sixtyFourBit
    }

    /// Encodes a frame header.
    public static func header(_ header: WebSocketFrameHeader, lengthEncoding: LengthEncoding = .minimal) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(14)
        var b0 = header.opcode & 0x0F
        if header.fin { b0 |= 0x80 }
        if header.rsv1 { b0 |= 0x40 }
        if header.rsv2 { b0 |= 0x20 }
        if header.rsv3 { b0 |= 0x10 }
        out.append(b0)
        let maskBit: UInt8 = header.maskKey != nil ? 0x80 : 0
        let length = header.payloadLength
        var encoding = lengthEncoding
        if encoding == .minimal { encoding = length < 126 ? .minimal : length <= 0xFFFF ? .sixteenBit : .sixtyFourBit }
        if encoding == .sixteenBit && length > 0xFFFF { encoding = .sixtyFourBit }
        switch encoding {
        case .minimal:
            out.append(maskBit | UInt8(length))
        case .sixteenBit:
            out.append(maskBit | 126)
            out += [UInt8(length >> 8), UInt8(length & 0xFF)]
        case .sixtyFourBit:
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((length >> UInt64(shift)) & 0xFF)) }
        }
        if let key = header.maskKey {
            out += [UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF)]
        }
        return out
    }

    /// Encodes one frame; the payload is masked with `maskKey` when given.
    public static func frame(opcode: UInt8, payload: [UInt8], fin: Bool = true, rsv1: Bool = false,
                             rsv2: Bool = false, rsv3: Bool = false, maskKey: UInt32? = nil,
                             lengthEncoding: LengthEncoding = .minimal) -> [UInt8] {
        let h = WebSocketFrameHeader(fin: fin, rsv1: rsv1, rsv2: rsv2, rsv3: rsv3, opcode: opcode,
                                     maskKey: maskKey, payloadLength: UInt64(payload.count))
        var out = header(h, lengthEncoding: lengthEncoding)
        let start = out.count
        out += payload
        if let maskKey {
            out.withUnsafeMutableBytes { unmask(UnsafeMutableRawBufferPointer(rebasing: $0[start...]), key: maskKey, offset: 0) }
        }
        return out
    }

    /// Encodes a data message. With a `deflater` the payload is compressed and RSV1 set on the
    /// first frame. `fragmentSize` splits the (compressed) payload into frames of at most that
    /// many bytes (at least one frame, even for an empty payload). `maskKey(i)` gives frame i's
    /// key (nil: unmasked).
    public static func message(opcode: UInt8, payload: [UInt8], deflater: WebSocketDeflater? = nil,
                               fragmentSize: Int? = nil, maskKey: (Int) -> UInt32? = { _ in nil }) -> [UInt8] {
        let body = deflater?.compress(payload) ?? payload
        let size = max(1, fragmentSize ?? max(1, body.count))
        var out: [UInt8] = []
        var offset = 0
        var index = 0
        repeat {
            let end = min(body.count, offset + size)
            out += frame(opcode: index == 0 ? opcode : WebSocketOpcode.continuation, payload: Array(body[offset..<end]),
                         fin: end == body.count, rsv1: index == 0 && deflater != nil, maskKey: maskKey(index))
            offset = end
            index += 1
        } while offset < body.count
        return out
    }

    /// A close frame payload: the code big-endian, then the reason's UTF-8.
    public static func closePayload(code: UInt16, reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }
}
