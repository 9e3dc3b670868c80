// gzip (RFC 1952), zlib (RFC 1950) and raw DEFLATE (RFC 1951) decoding over zlib.

/// A `ZlibInflater` that throws `ContentDecodingError`s and fills a `BoundedOutput`.
final class InflateStream {
    private let inflater: ZlibInflater
    private let label: String

    /// `windowBits` as for `inflateInit2`: 8...15 zlib, -8...-15 raw, 16+ gzip.
    init(windowBits: Int32, label: String) throws {
        guard let inflater = ZlibInflater(windowBits: windowBits) else {
            throw ContentDecodingError(.setup, "\(label): inflateInit2 failed")
        }
        self.inflater = inflater
        self.label = label
    }

    func reset() throws {
        guard inflater.reset() else { throw ContentDecodingError(.setup, "\(label): inflateReset failed") }
    }

    /// Inflates `input` into `output` until the stream ends or the input is used up with no
    /// output pending. Returns how many input bytes were consumed and whether the stream ended.
    func run(_ input: UnsafeBufferPointer<UInt8>, into output: inout BoundedOutput) throws -> (consumed: Int, ended: Bool) {
        let outcome = try inflater.inflate(UnsafeRawBufferPointer(input), budget: output.limit - output.bytes.count) {
            try output.append($0.assumingMemoryBound(to: UInt8.self))
        }
        switch outcome {
        case .needsInput: return (input.count, false)
        case .streamEnd(let consumed): return (consumed, true)
        case .budgetExceeded: throw ContentDecodingError.limit(output.limit)
        case .failed(let failure) where failure == .setup || failure == .outOfMemory:
            throw ContentDecodingError(.setup, "\(label): \(failure)")
        case .failed(.noProgress): throw ContentDecodingError(.corrupt, "\(label): decoder made no progress")
        case .failed(.needsDictionary): throw ContentDecodingError(.corrupt, "\(label): corrupt data (stream needs a preset dictionary)")
        case .failed(.corrupt(let message)): throw ContentDecodingError(.corrupt, "\(label): corrupt data (\(message))")
        case .failed(let failure): throw ContentDecodingError(.corrupt, "\(label): \(failure)")
        }
    }
}

enum ZlibDecoding {
    enum Format { case gzip, zlib, raw }

    private static func windowBits(_ f: Format) -> Int32 {
        switch f {
        case .gzip: return 16 + 15
        case .zlib: return 15
        case .raw: return -15
        }
    }

    /// Decodes one zlib or raw stream, or every member of a gzip file (RFC 1952 §2.2: a gzip file
    /// is a series of members). Trailing zero bytes after the last gzip member are ignored, as
    /// gzip(1) does; any other trailing data is an error.
    static func decode(_ data: [UInt8], format: Format, limit: Int) throws -> [UInt8] {
        let label = format == .gzip ? "gzip" : "deflate"
        if data.isEmpty { return [] }
        let stream = try InflateStream(windowBits: windowBits(format), label: label)
        var out = BoundedOutput(limit: limit)
        try data.withUnsafeBufferPointer { all in
            var pos = 0
            while true {
                let rest = UnsafeBufferPointer(rebasing: all[pos...])
                let (consumed, ended) = try stream.run(rest, into: &out)
                pos += consumed
                guard ended else {
                    throw ContentDecodingError(.truncated, "\(label): truncated input (data ends inside the compressed stream)")
                }
                if pos == all.count { return }
                let tail = all[pos...]
                if format == .gzip {
                    if tail.count >= 2 && tail[pos] == 0x1F && tail[pos + 1] == 0x8B {
                        try stream.reset()  // next member
                        continue
                    }
                    if tail.count == 1 && tail[pos] == 0x1F {
                        throw ContentDecodingError(.truncated, "gzip: truncated input (data ends inside a gzip member header)")
                    }
                    if tail.allSatisfy({ $0 == 0 }) { return }
                    throw ContentDecodingError(.corrupt, "gzip: \(tail.count) bytes of trailing garbage after the last gzip member")
                }
                throw ContentDecodingError(.corrupt, "deflate: \(tail.count) bytes of trailing data after the end of the stream")
            }
        }
        return out.bytes
    }

    /// `Content-Encoding: deflate` means zlib-wrapped DEFLATE (RFC 9110 §8.4.1.2), but some
    /// servers send raw DEFLATE. Data with a valid zlib header (RFC 1950 §2.2: CM 8, CINFO <= 7,
    /// FCHECK) is decoded as zlib; if that fails as corrupt, or the header is not zlib, it is
    /// decoded as raw DEFLATE. When both fail, the zlib error is reported for zlib-looking data.
    static func decodeDeflate(_ data: [UInt8], limit: Int) throws -> [UInt8] {
        if data.isEmpty { return [] }
        let looksZlib = data.count >= 2
            && data[0] & 0x0F == 8
            && data[0] >> 4 <= 7
            && (UInt16(data[0]) << 8 | UInt16(data[1])) % 31 == 0
        guard looksZlib else { return try decode(data, format: .raw, limit: limit) }
        do {
            return try decode(data, format: .zlib, limit: limit)
        } catch let zlibError as ContentDecodingError where zlibError.kind == .corrupt {
            do {
                return try decode(data, format: .raw, limit: limit)
            } catch let rawError as ContentDecodingError where rawError.kind == .corrupt {
                throw zlibError
            }
        }
    }
}

/// Streaming DEFLATE inflater for WebSocket permessage-deflate (RFC 7692) and similar uses.
///
/// Feed compressed chunks in order; each call returns the output they complete. The sliding
/// window carries over between calls (context takeover); call ``reset()`` to drop it. For
/// permessage-deflate, append `00 00 FF FF` to each message's payload before inflating it
/// (RFC 7692 §7.2.2). After any thrown error the stream state is unusable until ``reset()``.
public final class Inflater {
    private let stream: InflateStream

    /// True once a final DEFLATE block (or the zlib trailer) has been decoded. Further input is
    /// an error until ``reset()``.
    public private(set) var isFinished = false

    /// Creates an inflater. `raw` selects raw DEFLATE (RFC 1951) instead of zlib (RFC 1950).
    /// `windowBits` (8...15) is the compressor's LZ77 window; 8 is raised to 9 because zlib's own
    /// compressor silently uses a 9-bit window when asked for 8, and a larger decoder window is
    /// always safe.
    public init(raw: Bool = true, windowBits: Int = 15) throws {
        guard (8...15).contains(windowBits) else {
            throw ContentDecodingError(.setup, "inflater: windowBits \(windowBits) is outside 8...15")
        }
        let bits = Int32(max(windowBits, 9))
        stream = try InflateStream(windowBits: raw ? -bits : bits, label: raw ? "deflate" : "zlib")
    }

    /// Inflates `input`, returning at most `limit` bytes; throws if this input would produce more.
    public func inflate(_ input: [UInt8], limit: Int) throws -> [UInt8] {
        if input.isEmpty { return [] }
        guard !isFinished else {
            throw ContentDecodingError(.corrupt, "deflate: data after the end of the stream")
        }
        var out = BoundedOutput(limit: max(0, limit))
        let (consumed, ended) = try input.withUnsafeBufferPointer { try stream.run($0, into: &out) }
        if ended {
            isFinished = true
            if consumed < input.count {
                throw ContentDecodingError(.corrupt, "deflate: \(input.count - consumed) bytes of data after the end of the stream")
            }
        }
        return out.bytes
    }

    /// Forgets the window and any partial state, ready for a new stream.
    public func reset() throws {
        try stream.reset()
        isFinished = false
    }
}
