// Streaming raw DEFLATE for permessage-deflate (RFC 7692 §7.2).
//
// Codecs.Inflater is one-shot per call and throws away the output of a call that passes its
// limit; a recorder needs the prefix of a bomb and a streaming feed per frame chunk, so this
// module has its own thin zlib wrapper.

import CCompressionShims

/// Output chunk handed to zlib per inflate call.
private let inflateChunkSize = 64 << 10
/// `avail_in` is a 32-bit `uInt`; feed at most this much at once.
private let maxZlibSlice = 1 << 30

/// The 4 bytes a sender strips from each compressed message (an empty stored block, the end of
/// a Z_SYNC_FLUSH) and a receiver appends before inflating (RFC 7692 §7.2.2).
let deflateMessageTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

/// One direction's raw DEFLATE inflater. The `z_stream` lives at a fixed heap address because
/// zlib keeps a pointer back to it.
final class MessageInflater {
    enum Outcome: Equatable {
        /// All input consumed.
        case ok
        /// A final block ended the DEFLATE stream after `consumed` bytes of this input.
        case streamEnd(consumed: Int)
        /// The output passed the budget; the sink got exactly the budget.
        case budgetExceeded
        /// zlib failed; printable reason.
        case failed(String)
    }

    private let strm: UnsafeMutablePointer<z_stream>
    private let chunk: UnsafeMutablePointer<UInt8>
    private var usable: Bool

    /// `windowBits` 9...15 (raw DEFLATE).
    init(windowBits: Int) {
        strm = .allocate(capacity: 1)
        strm.initialize(to: z_stream())
        chunk = .allocate(capacity: inflateChunkSize)
        usable = harrec_inflateInit2(strm, -Int32(min(15, max(9, windowBits)))) == Z_OK
    }

    deinit {
        if usable { inflateEnd(strm) }
        strm.deinitialize(count: 1)
        strm.deallocate()
        chunk.deallocate()
    }

    /// Drops the window and any partial state.
    func reset() {
        if usable { usable = inflateReset(strm) == Z_OK }
    }

    /// Inflates `input`, passing output to `sink`. Stops after `budget` output bytes if more
    /// would follow (`.budgetExceeded`).
    func inflate(_ input: UnsafeRawBufferPointer, budget: Int, sink: (UnsafeRawBufferPointer) -> Void) -> Outcome {
        guard usable else { return .failed("zlib could not be initialised") }
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else { return .ok }
        defer {
            strm.pointee.next_in = nil
            strm.pointee.avail_in = 0
            strm.pointee.next_out = nil
            strm.pointee.avail_out = 0
        }
        var offset = 0
        var left = budget
        strm.pointee.avail_in = 0
        while true {
            if strm.pointee.avail_in == 0 && offset < input.count {
                let n = min(input.count - offset, maxZlibSlice)
                strm.pointee.next_in = UnsafeMutablePointer(mutating: base + offset)
                strm.pointee.avail_in = UInt32(n)
                offset += n
            }
            // One byte over the budget tells "exactly the budget" from "more".
            let room = min(inflateChunkSize, left + 1)
            strm.pointee.next_out = chunk
            strm.pointee.avail_out = UInt32(room)
            let rc = CCompressionShims.inflate(strm, Z_NO_FLUSH)
            let produced = room - Int(strm.pointee.avail_out)
            if produced > left {
                if left > 0 { sink(UnsafeRawBufferPointer(start: chunk, count: left)) }
                return .budgetExceeded
            }
            if produced > 0 { sink(UnsafeRawBufferPointer(start: chunk, count: produced)) }
            left -= produced
            switch rc {
            case Z_STREAM_END:
                return .streamEnd(consumed: offset - Int(strm.pointee.avail_in))
            case Z_OK, Z_BUF_ERROR:
                let inputLeft = strm.pointee.avail_in > 0 || offset < input.count
                if strm.pointee.avail_out == 0 { continue }  // output may be pending
                if !inputLeft { return .ok }
                if rc == Z_BUF_ERROR { return .failed("inflate made no progress") }
            case Z_NEED_DICT:
                return .failed("stream needs a preset dictionary")
            case Z_MEM_ERROR:
                return .failed("out of memory")
            default:
                let reason = strm.pointee.msg.map { printable(Array(String(cString: $0).utf8), limit: 80) } ?? "zlib error \(rc)"
                return .failed(reason)
            }
        }
    }
}

/// A raw DEFLATE compressor producing permessage-deflate payloads (RFC 7692 §7.2.1), for tests
/// and fixtures: each message is compressed, flushed with Z_SYNC_FLUSH, and the trailing
/// `00 00 FF FF` removed.
public final class WebSocketDeflater {
    private let strm: UnsafeMutablePointer<z_stream>
    /// Whether the LZ77 window carries over between messages.
    public let contextTakeover: Bool
    private var pending: [UInt8] = []

    /// `windowBits` 8...15 (8 is raised to 9: zlib's raw deflate rejects 8), `level` 0...9.
    /// `runLengthOnly` selects zlib's Z_RLE strategy (matches at distance 1 only): fast, and the
    /// best ratio for runs such as a zip bomb's zeros. Returns nil if zlib refuses the parameters.
    public init?(windowBits: Int = 15, level: Int = 6, contextTakeover: Bool = true, runLengthOnly: Bool = false) {
        self.contextTakeover = contextTakeover
        strm = .allocate(capacity: 1)
        strm.initialize(to: z_stream())
        let bits = Int32(min(15, max(9, windowBits)))
        guard harrec_deflateInit2(strm, Int32(level), Z_DEFLATED, -bits, 8, runLengthOnly ? Z_RLE : Z_DEFAULT_STRATEGY) == Z_OK else {
            strm.deinitialize(count: 1)
            strm.deallocate()
            return nil
        }
    }

    deinit {
        deflateEnd(strm)
        strm.deinitialize(count: 1)
        strm.deallocate()
    }

    /// Compresses one whole message and returns its payload.
    public func compress(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { compressPart($0) }
        return finishMessage()
    }

    /// Streams part of a message into the compressor (for payloads too large to hold at once).
    /// Output accumulates until ``finishMessage()``.
    public func compressPart(_ bytes: UnsafeRawBufferPointer) {
        run(bytes, flush: Z_NO_FLUSH)
    }

    /// Ends the current message: returns its compressed payload (without `00 00 FF FF`) and
    /// resets the context when ``contextTakeover`` is false. `finalBlock` ends the DEFLATE
    /// stream instead (BFINAL = 1, which RFC 7692 §7.2.3.4 allows), after which the context is
    /// always reset.
    public func finishMessage(finalBlock: Bool = false) -> [UInt8] {
        run(UnsafeRawBufferPointer(start: nil, count: 0), flush: finalBlock ? Z_FINISH : Z_SYNC_FLUSH)
        var out = pending
        pending = []
        if !finalBlock && out.count >= 4 && Array(out.suffix(4)) == deflateMessageTail { out.removeLast(4) }
        if finalBlock || !contextTakeover { deflateReset(strm) }
        return out
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var offset = 0
        repeat {
            let n = min(input.count - offset, maxZlibSlice)
            strm.pointee.next_in = base.map { UnsafeMutablePointer(mutating: $0 + offset) }
            strm.pointee.avail_in = UInt32(n)
            offset += n
            repeat {
                let produced: Int = buffer.withUnsafeMutableBufferPointer { out in
                    strm.pointee.next_out = out.baseAddress
                    strm.pointee.avail_out = UInt32(out.count)
                    _ = deflate(strm, offset == input.count ? flush : Z_NO_FLUSH)
                    return out.count - Int(strm.pointee.avail_out)
                }
                pending.append(contentsOf: buffer[0..<produced])
            } while strm.pointee.avail_out == 0
        } while offset < input.count
        strm.pointee.next_in = nil
        strm.pointee.next_out = nil
    }
}
