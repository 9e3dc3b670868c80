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

    /// The standard base64 (padded) of `src`, as bytes.
    public static func encodedBytes(_ src: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let outCount = (src.count + 2) / 3 * 4
        return [UInt8](unsafeUninitializedCapacity: outCount) { out, n in
            encodeBase64(src, into: out)
            n = outCount
        }
    }

    /// Appends the standard base64 (padded) of `src` to `out`.
    public static func append(_ src: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let outCount = (src.count + 2) / 3 * 4
        guard outCount > 0 else { return }
        let start = out.count
        // Grown by copies of a zero block: an element-wise fill costs seconds a GB in a debug build.
        out.reserveCapacity(start + outCount)
        zeros.withUnsafeBufferPointer { z in
            var left = outCount
            while left > 0 {
                let n = min(left, z.count)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: z[..<n]))
                left -= n
            }
        }
        out.withUnsafeMutableBufferPointer { encodeBase64(src, into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    private static let zeros = [UInt8](repeating: 0, count: 1 << 16)

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
        var s = text
        return s.withUTF8 { src -> [UInt8]? in
            var stream = Base64LenientStream()
            var out: [UInt8] = []
            out.reserveCapacity(src.count / 4 * 3 + 2)
            guard stream.decode(src, into: &out), stream.finish(into: &out) else { return nil }
            return out
        }
    }

    /// The length `decodeLenient` would give `text`, without decoding it; nil when it is not base64.
    public static func decodedCountLenient(_ text: String) -> Int? {
        var s = text
        return s.withUTF8 { src -> Int? in
            var stream = Base64LenientStream()
            guard stream.count(src) else { return nil }
            return stream.finishedCount
        }
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

/// Lenient base64 (`Base64.decodeLenient`) fed in pieces of any size: a large body left in a HAR
/// file is decoded a piece at a time as it is served. Whitespace is skipped, the standard and
/// URL-safe alphabets are both accepted, padding is optional, and anything after padding (or a
/// stray byte) is not base64.
public struct Base64LenientStream {
    /// Digits of the group in progress (up to 3 kept), and how many.
    private var group: UInt32 = 0
    private var digits = 0
    private var padding = 0
    /// Whole groups and digits seen (for `finishedCount`).
    private var total = 0

    public init() {}

    /// 0...63 for both alphabets' digits, 0x40 for whitespace, 0x41 for '=', 0xFF otherwise.
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { t[Int(c)] = UInt8(i) }
        t[0x2D] = 62; t[0x5F] = 63  // URL-safe - and _
        for c: UInt8 in [0x20, 0x09, 0x0A, 0x0D] { t[Int(c)] = 0x40 }
        t[0x3D] = 0x41
        return t
    }()

    /// Appends the bytes of `piece`'s whole groups to `out`; false when it is not base64.
    public mutating func decode(_ piece: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
        out.reserveCapacity(out.count + piece.count / 4 * 3 + 3)
        return Self.table.withUnsafeBufferPointer { t in
            var i = 0
            let n = piece.count
            while i < n {
                // Whole groups of four digits at once, the common case between line breaks.
                if digits == 0 && padding == 0 && i + 4 <= n {
                    let a = t[Int(piece[i])], b = t[Int(piece[i + 1])], c = t[Int(piece[i + 2])], d = t[Int(piece[i + 3])]
                    if (a | b | c | d) < 64 {
                        let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        out.append(UInt8(truncatingIfNeeded: v >> 16))
                        out.append(UInt8(truncatingIfNeeded: v >> 8))
                        out.append(UInt8(truncatingIfNeeded: v))
                        total += 4
                        i += 4
                        continue
                    }
                }
                let v = t[Int(piece[i])]
                i += 1
                if v < 64 {
                    // Data after padding is not base64.
                    guard padding == 0 else { return false }
                    group = group << 6 | UInt32(v)
                    digits += 1
                    total += 1
                    if digits == 4 {
                        out.append(UInt8(truncatingIfNeeded: group >> 16))
                        out.append(UInt8(truncatingIfNeeded: group >> 8))
                        out.append(UInt8(truncatingIfNeeded: group))
                        group = 0
                        digits = 0
                    }
                } else if v == 0x41 {
                    padding += 1
                } else if v != 0x40 {
                    return false
                }
            }
            return true
        }
    }

    /// 1 for a digit of either alphabet, 0 for whitespace, 4 for '=', 2 for anything else.
    private static let classes: [UInt8] = table.map { $0 < 64 ? 1 : $0 == 0x40 ? 0 : $0 == 0x41 ? 4 : 2 }

    /// Checks `piece` as `decode` does, counting instead of decoding (then `finishedCount`).
    public mutating func count(_ piece: UnsafeBufferPointer<UInt8>) -> Bool {
        // Without padding, in or before the piece, a branch-free count (a HAR's large bodies are
        // counted this way when a replay loads them).
        let fast = Self.classes.withUnsafeBufferPointer { t -> Bool? in
            var digits = 0
            var seen: UInt8 = 0
            for c in piece {
                let v = t[Int(c)]
                digits &+= Int(v & 1)
                seen |= v
            }
            if seen & 2 != 0 { return false }
            guard seen & 4 == 0 && padding == 0 else { return nil }
            total += digits
            self.digits = total % 4
            return true
        }
        if let fast { return fast }
        return Self.table.withUnsafeBufferPointer { t in
            for c in piece {
                let v = t[Int(c)]
                if v < 64 {
                    guard padding == 0 else { return false }
                    total += 1
                } else if v == 0x41 {
                    padding += 1
                } else if v != 0x40 {
                    return false
                }
            }
            digits = total % 4
            return true
        }
    }

    /// The end: appends the last partial group's bytes; false when the text cannot end here (a
    /// single digit left over, or more than two '=').
    public mutating func finish(into out: inout [UInt8]) -> Bool {
        guard padding <= 2, digits != 1 else { return false }
        if digits >= 2 {
            let n = group << (6 * UInt32(4 - digits))
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            if digits == 3 { out.append(UInt8(truncatingIfNeeded: n >> 8)) }
        }
        group = 0
        digits = 0
        return true
    }

    /// After `count`: the decoded length, or nil when the text cannot end here.
    public var finishedCount: Int? {
        guard padding <= 2, total % 4 != 1 else { return nil }
        return total / 4 * 3 + max(0, total % 4 - 1)
    }
}
