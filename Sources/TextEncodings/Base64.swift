/// Base64 (RFC 4648 §4: the standard alphabet, with padding): encoding, strict decoding for
/// harrec's own output, and lenient decoding for what other tools recorded.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet bytes, 0xFF otherwise.
    private static let decodeTable: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Standard base64 with padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        let outCount = (bytes.count + 2) / 3 * 4
        if outCount == 0 { return "" }
        return String(unsafeUninitializedCapacity: outCount) { out in
            bytes.withUnsafeBufferPointer { encodeBase64($0, into: out) }
            return outCount
        }
    }

    /// Appends the standard base64 (padded) of `src` to `out`.
    public static func append(_ src: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let outCount = (src.count + 2) / 3 * 4
        guard outCount > 0 else { return }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: outCount))
        out.withUnsafeMutableBufferPointer { encodeBase64(src, into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// Writes the base64 of `src` to the first (n + 2) / 3 * 4 bytes of `out`.
    private static func encodeBase64(_ src: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) {
        let n = src.count
        alphabet.withUnsafeBufferPointer { a in
            var i = 0
            var o = 0
            while i + 3 <= n {
                let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 0x3F)]
                out[o + 2] = a[Int(v >> 6 & 0x3F)]
                out[o + 3] = a[Int(v & 0x3F)]
                i += 3
                o += 4
            }
            let rest = n - i
            if rest > 0 {
                var v = UInt32(src[i]) << 16
                if rest == 2 { v |= UInt32(src[i + 1]) << 8 }
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 0x3F)]
                out[o + 2] = rest == 2 ? a[Int(v >> 6 & 0x3F)] : 0x3D
                out[o + 3] = 0x3D
            }
        }
    }

    /// Strict decoding: length a multiple of 4, standard alphabet only, "=" only as 1 or 2
    /// final padding characters, unused bits of the last character zero (canonical), no
    /// whitespace. Returns nil otherwise.
    public static func decode(_ text: String) -> [UInt8]? {
        var s = text
        return s.withUTF8 { src -> [UInt8]? in
            var ok = true
            let out = [UInt8](unsafeUninitializedCapacity: src.count / 4 * 3) { buffer, initialized in
                let count = decodeBase64Core(src, into: buffer.baseAddress)
                ok = count != nil
                initialized = count ?? 0
            }
            return ok ? out : nil
        }
    }

    /// Lenient decoding, for bodies and messages any tool recorded: whitespace is skipped, the
    /// URL-safe alphabet and missing padding are accepted, and anything else (a stray character,
    /// data after padding) is not base64, so a body is never silently changed. The generator and
    /// HARMocking, which serves what it generates, both decode with this; `harrec validate` holds
    /// harrec's own output to the strict `decode`.
    public static func decodeLenient(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case 0x41...0x5A: v = c - 0x41
            case 0x61...0x7A: v = c - 0x61 + 26
            case 0x30...0x39: v = c - 0x30 + 52
            case 0x2B, 0x2D: v = 62          // + and URL-safe -
            case 0x2F, 0x5F: v = 63          // / and URL-safe _
            case 0x3D: padding += 1; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            // Data after padding is not base64.
            if padding > 0 { return nil }
            values.append(v)
        }
        guard padding <= 2, values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i + 4 <= values.count {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6 | UInt32(values[i + 3])
            out += [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        let rest = values.count - i
        if rest >= 2 {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | (rest == 3 ? UInt32(values[i + 2]) << 6 : 0)
            out.append(UInt8(n >> 16 & 0xFF))
            if rest == 3 { out.append(UInt8(n >> 8 & 0xFF)) }
        }
        return out
    }

    /// The decoded length of strict base64 `text` (validating it without allocating), or nil.
    public static func decodedCount(_ text: String) -> Int? {
        var s = text
        return s.withUTF8 { decodeBase64Core($0, into: nil) }
    }

    /// Decodes strict base64 `src` into `out` (room for count / 4 * 3 bytes) or, with `out` nil,
    /// only validates it: the decoded byte count, or nil when `src` is not strict base64. Bodies
    /// of tens of MB go through here, so a group at a time, straight into memory.
    private static func decodeBase64Core(_ src: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>?) -> Int? {
        let n = src.count
        if n == 0 { return 0 }
        guard n % 4 == 0 else { return nil }
        let pad = src[n - 1] == 0x3D ? (src[n - 2] == 0x3D ? 2 : 1) : 0
        return decodeTable.withUnsafeBufferPointer { t -> Int? in
            // Valid digits are below 64; anything else (0xFF) has a high bit set.
            var i = 0, o = 0
            while i + 4 < n {
                let a = t[Int(src[i])], b = t[Int(src[i + 1])], c = t[Int(src[i + 2])], d = t[Int(src[i + 3])]
                if (a | b | c | d) & 0xC0 != 0 { return nil }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                if let out {
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                }
                i += 4
                o += 3
            }
            // The last group: its padding, and no stray bits under it (canonical).
            let a = t[Int(src[i])], b = t[Int(src[i + 1])]
            let c = pad == 2 ? 0 : t[Int(src[i + 2])], d = pad >= 1 ? 0 : t[Int(src[i + 3])]
            if (a | b | c | d) & 0xC0 != 0 { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            let bytes = 3 - pad
            if pad == 2 && v & 0xFFFF != 0 || pad == 1 && v & 0xFF != 0 { return nil }
            if let out {
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                if bytes > 1 { out[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
                if bytes > 2 { out[o + 2] = UInt8(truncatingIfNeeded: v) }
            }
            return o + bytes
        }
    }
}
