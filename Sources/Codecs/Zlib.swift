// The one wrapper over zlib's streams: inflate for content decoding (gzip, zlib, raw DEFLATE) and
// for WebSocket permessage-deflate, deflate for permessage-deflate payloads.

import CCompressionShims

/// `avail_in` is a 32-bit `uInt`: at most this much input is handed to zlib at once.
private let maxZlibSlice = 1 << 30
/// Output chunk handed to zlib per call.
private let zlibChunkSize = 64 << 10

/// A streaming inflater. Input comes in pieces; output goes to a sink, never past a budget, so a
/// caller can keep the prefix of a decompression bomb. The `z_stream` lives at a fixed heap
/// address because zlib keeps a pointer back to it (`inflateStateCheck` rejects a moved stream).
public final class ZlibInflater {
    /// How one call ended.
    public enum Outcome: Equatable, Sendable {
        /// All input was consumed and no output is pending.
        case needsInput
        /// The compressed stream ended after `consumed` bytes of this input.
        case streamEnd(consumed: Int)
        /// The output passed the budget; the sink got exactly the budget.
        case budgetExceeded
        case failed(ZlibFailure)
    }

    private let strm: UnsafeMutablePointer<z_stream>
    private let chunk: UnsafeMutablePointer<UInt8>
    private var usable: Bool

    /// `windowBits` as for zlib's `inflateInit2`: 8...15 zlib, -8...-15 raw DEFLATE, 16+ gzip.
    /// Nil when zlib cannot set the stream up.
    public init?(windowBits: Int32) {
        strm = .allocate(capacity: 1)
        strm.initialize(to: z_stream())
        chunk = .allocate(capacity: zlibChunkSize)
        usable = harrec_inflateInit2(strm, windowBits) == Z_OK
        guard usable else {
            strm.deinitialize(count: 1)
            strm.deallocate()
            chunk.deallocate()
            return nil
        }
    }

    deinit {
        if usable { inflateEnd(strm) }
        strm.deinitialize(count: 1)
        strm.deallocate()
        chunk.deallocate()
    }

    /// Drops the window and any partial state, ready for a new stream. False when zlib failed
    /// (every later call then fails).
    @discardableResult
    public func reset() -> Bool {
        if usable { usable = inflateReset(strm) == Z_OK }
        return usable
    }

    /// Inflates `input`, handing output to `sink` in chunks, until the input is used up with no
    /// output pending, the stream ends, or the output passes `budget` bytes.
    public func inflate(_ input: UnsafeRawBufferPointer, budget: Int,
                        sink: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Outcome {
        guard usable else { return .failed(.setup) }
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count > 0 else { return .needsInput }
        defer {
            // Never leave pointers into caller memory behind.
            strm.pointee.next_in = nil
            strm.pointee.avail_in = 0
            strm.pointee.next_out = nil
            strm.pointee.avail_out = 0
        }
        var offset = 0
        var left = max(0, budget)
        strm.pointee.avail_in = 0
        while true {
            if strm.pointee.avail_in == 0 && offset < input.count {
                let n = min(input.count - offset, maxZlibSlice)
                strm.pointee.next_in = UnsafeMutablePointer(mutating: base + offset)
                strm.pointee.avail_in = UInt32(n)
                offset += n
            }
            // One byte over the budget tells "exactly the budget" from "more".
            let room = left < zlibChunkSize ? left + 1 : zlibChunkSize
            strm.pointee.next_out = chunk
            strm.pointee.avail_out = UInt32(room)
            let rc = CCompressionShims.inflate(strm, Z_NO_FLUSH)
            let produced = room - Int(strm.pointee.avail_out)
            if produced > left {
                if left > 0 { try sink(UnsafeRawBufferPointer(start: chunk, count: left)) }
                return .budgetExceeded
            }
            if produced > 0 { try sink(UnsafeRawBufferPointer(start: chunk, count: produced)) }
            left -= produced
            switch rc {
            case Z_STREAM_END:
                return .streamEnd(consumed: offset - Int(strm.pointee.avail_in))
            case Z_OK, Z_BUF_ERROR:
                // A full output chunk may have more behind it.
                if strm.pointee.avail_out == 0 { continue }
                if strm.pointee.avail_in > 0 {
                    if rc == Z_BUF_ERROR { return .failed(.noProgress) }
                    continue
                }
                if offset < input.count { continue }
                return .needsInput
            case Z_NEED_DICT:
                return .failed(.needsDictionary)
            case Z_MEM_ERROR:
                return .failed(.outOfMemory)
            case Z_DATA_ERROR:
                return .failed(.corrupt(sanitizedCString(strm.pointee.msg)))
            default:
                return .failed(.corrupt("zlib error \(rc)"))
            }
        }
    }
}

/// Why zlib failed, with a reason a person can read.
public enum ZlibFailure: Equatable, Sendable, CustomStringConvertible {
    case setup
    case outOfMemory
    /// The stream asks for a preset dictionary, which no HTTP or WebSocket peer sends.
    case needsDictionary
    /// Input is left and zlib can make no progress with it.
    case noProgress
    /// zlib's own message for corrupt data.
    case corrupt(String)

    public var description: String {
        switch self {
        case .setup: return "zlib could not be initialised"
        case .outOfMemory: return "out of memory"
        case .needsDictionary: return "stream needs a preset dictionary"
        case .noProgress: return "inflate made no progress"
        case .corrupt(let message): return message
        }
    }
}

/// A streaming raw DEFLATE compressor (RFC 1951). Output accumulates until it is taken.
public final class RawDeflater {
    private let strm: UnsafeMutablePointer<z_stream>
    private var pending: [UInt8] = []

    /// How a piece of input ends: not at all, with a sync flush (a byte boundary and an empty
    /// stored block, `00 00 FF FF`), or with the final block.
    public enum Flush: Sendable { case none, sync, finish }

    /// `windowBits` 9...15, `level` 0...9; `runLengthOnly` selects zlib's Z_RLE strategy. Nil when
    /// zlib refuses the parameters.
    public init?(windowBits: Int, level: Int, runLengthOnly: Bool) {
        strm = .allocate(capacity: 1)
        strm.initialize(to: z_stream())
        guard harrec_deflateInit2(strm, Int32(level), Z_DEFLATED, -Int32(windowBits), 8,
                                  runLengthOnly ? Z_RLE : Z_DEFAULT_STRATEGY) == Z_OK else {
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

    /// Compresses `input`, then flushes as `flush` says.
    public func compress(_ input: UnsafeRawBufferPointer, flush: Flush) {
        let mode: Int32 = switch flush { case .none: Z_NO_FLUSH; case .sync: Z_SYNC_FLUSH; case .finish: Z_FINISH }
        var buffer = [UInt8](repeating: 0, count: zlibChunkSize)
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
                    _ = deflate(strm, offset == input.count ? mode : Z_NO_FLUSH)
                    return out.count - Int(strm.pointee.avail_out)
                }
                pending.append(contentsOf: buffer[0..<produced])
            } while strm.pointee.avail_out == 0
        } while offset < input.count
        strm.pointee.next_in = nil
        strm.pointee.next_out = nil
    }

    /// The output so far, handed over.
    public func takeOutput() -> [UInt8] {
        defer { pending = [] }
        return pending
    }

    /// Forgets the window, ready for a new stream.
    public func reset() { deflateReset(strm) }
}
