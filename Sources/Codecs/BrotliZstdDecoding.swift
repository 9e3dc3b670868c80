// Brotli (RFC 7932) and Zstandard (RFC 8878) decoding.

import CCompressionShims

enum BrotliDecoding {
    /// Decodes one Brotli stream. Data after the end of the stream is an error.
    static func decode(_ data: [UInt8], limit: Int) throws -> [UInt8] {
        if data.isEmpty { return [] }
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw ContentDecodingError(.setup, "br: could not create decoder")
        }
        defer { BrotliDecoderDestroyInstance(state) }
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: decodeChunkSize)
        defer { chunk.deallocate() }
        var out = BoundedOutput(limit: limit)

        try data.withUnsafeBufferPointer { input in
            var availableIn = input.count
            var nextIn: UnsafePointer<UInt8>? = input.baseAddress
            while true {
                var availableOut = decodeChunkSize
                var nextOut: UnsafeMutablePointer<UInt8>? = chunk
                let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                try out.append(UnsafeBufferPointer(start: chunk, count: decodeChunkSize - availableOut))
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    if availableIn > 0 {
                        throw ContentDecodingError(.corrupt, "br: \(availableIn) bytes of trailing data after the end of the stream")
                    }
                    return
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    throw ContentDecodingError(.truncated, "br: truncated input (data ends inside the compressed stream)")
                default:
                    let code = BrotliDecoderGetErrorCode(state)
                    let name = sanitizedCString(BrotliDecoderErrorString(code))
                    throw ContentDecodingError(.corrupt, "br: corrupt data (\(name))")
                }
            }
        }
        return out.bytes
    }
}

/// Largest zstd window we accept: 2^23 = 8 MiB. RFC 9659 limits the window of the HTTP `zstd`
/// content coding to 8 MB, so a conforming body never needs more; this bounds decoder memory.
let zstdWindowLogMax: Int32 = 23

enum ZstdDecoding {
    /// Decodes every frame in `data` (RFC 8878 §3: frames may be concatenated; skippable frames
    /// are skipped). Frames without a declared content size are fine: output is streamed.
    static func decode(_ data: [UInt8], limit: Int) throws -> [UInt8] {
        if data.isEmpty { return [] }
        guard let stream = ZSTD_createDStream() else {
            throw ContentDecodingError(.setup, "zstd: could not create decoder")
        }
        defer { ZSTD_freeDStream(stream) }
        try check(ZSTD_initDStream(stream))
        try check(ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, zstdWindowLogMax))

        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: decodeChunkSize)
        defer { chunk.deallocate() }
        var out = BoundedOutput(limit: limit)

        try data.withUnsafeBufferPointer { input in
            var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
            while true {
                var outBuffer = ZSTD_outBuffer(dst: chunk, size: decodeChunkSize, pos: 0)
                let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                try check(hint)
                try out.append(UnsafeBufferPointer(start: chunk, count: outBuffer.pos))
                let inputDone = inBuffer.pos == inBuffer.size
                if hint == 0 {
                    // A frame ended and is fully flushed; another may follow.
                    if inputDone { return }
                    continue
                }
                if inputDone && outBuffer.pos < outBuffer.size {
                    throw ContentDecodingError(.truncated, "zstd: truncated input (data ends inside a frame)")
                }
            }
        }
        return out.bytes
    }

    private static func check(_ code: Int) throws {
        if ZSTD_isError(code) != 0 {
            throw ContentDecodingError(.corrupt, "zstd: corrupt data (\(sanitizedCString(ZSTD_getErrorName(code))))")
        }
    }
}
