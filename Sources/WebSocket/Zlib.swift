// permessage-deflate (RFC 7692 §7.2) over Codecs' zlib wrapper.

import Codecs

/// The 4 bytes a sender strips from each compressed message (an empty stored block, the end of
/// a Z_SYNC_FLUSH) and a receiver appends before inflating (RFC 7692 §7.2.2).
let deflateMessageTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

/// A raw DEFLATE compressor producing permessage-deflate payloads (RFC 7692 §7.2.1), for tests
/// and fixtures: each message is compressed, flushed with Z_SYNC_FLUSH, and the trailing
/// `00 00 FF FF` removed.
public final class WebSocketDeflater {
    private let stream: RawDeflater
    /// Whether the LZ77 window carries over between messages.
    public let contextTakeover: Bool

    /// `windowBits` 8...15 (8 is raised to 9: zlib's raw deflate rejects 8), `level` 0...9.
    /// `runLengthOnly` selects zlib's Z_RLE strategy (matches at distance 1 only): fast, and the
    /// best ratio for runs such as a zip bomb's zeros. Returns nil if zlib refuses the parameters.
    public init?(windowBits: Int = 15, level: Int = 6, contextTakeover: Bool = true, runLengthOnly: Bool = false) {
        guard let stream = RawDeflater(windowBits: min(15, max(9, windowBits)), level: level, runLengthOnly: runLengthOnly) else {
            return nil
        }
        self.stream = stream
        self.contextTakeover = contextTakeover
    }

    /// Compresses one whole message and returns its payload.
    public func compress(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { compressPart($0) }
        return finishMessage()
    }

    /// Streams part of a message into the compressor (for payloads too large to hold at once).
    /// Output accumulates until ``finishMessage()``.
    public func compressPart(_ bytes: UnsafeRawBufferPointer) {
        stream.compress(bytes, flush: .none)
    }

    /// Ends the current message: returns its compressed payload (without `00 00 FF FF`) and
    /// resets the context when ``contextTakeover`` is false. `finalBlock` ends the DEFLATE
    /// stream instead (BFINAL = 1, which RFC 7692 §7.2.3.4 allows), after which the context is
    /// always reset.
    public func finishMessage(finalBlock: Bool = false) -> [UInt8] {
        stream.compress(UnsafeRawBufferPointer(start: nil, count: 0), flush: finalBlock ? .finish : .sync)
        var out = stream.takeOutput()
        if !finalBlock && out.count >= 4 && Array(out.suffix(4)) == deflateMessageTail { out.removeLast(4) }
        if finalBlock || !contextTakeover { stream.reset() }
        return out
    }
}
