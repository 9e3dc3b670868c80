// JSON string text shared by the parser and by redaction: escapes, UTF-8 encoding of scalars,
// and UTF-8 validation.

/// One JSON escape sequence (RFC 8259 §7), shared by the parser and by code that rewrites JSON
/// text in place (redaction), so both decode strings identically.
enum JSONEscape {
    enum Failure: Error {
        /// `\u` not followed by 4 hex digits.
        case badHex
        /// A `\u` surrogate without its pair, when those are rejected.
        case loneSurrogate
        /// A backslash followed by this byte, which starts no escape.
        case invalidEscape(UInt8)
    }

    /// What each one-letter escape stands for (`\n`: 0x0A), by its letter; 0 for the others.
    static let singleLetter: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for (letter, byte) in [(0x22, 0x22), (0x5C, 0x5C), (0x2F, 0x2F), (0x62, 0x08), (0x66, 0x0C), (0x6E, 0x0A),
                               (0x72, 0x0D), (0x74, 0x09)] { t[letter] = UInt8(byte) }
        return t
    }()

    /// Decodes the escape whose letter is at `at` (just after the backslash, `at < end`): the
    /// scalar it stands for and the index after it. A high surrogate followed by an escaped low
    /// one is one scalar; a lone surrogate is U+FFFD unless `rejectLoneSurrogates`.
    static func decode(_ buf: UnsafeBufferPointer<UInt8>, letterAt at: Int, end: Int,
                       rejectLoneSurrogates: Bool) -> Result<(UInt32, Int), Failure> {
        let e = buf[at]
        switch e {
        case 0x22, 0x5C, 0x2F: return .success((UInt32(e), at + 1))
        case 0x62: return .success((0x08, at + 1))
        case 0x66: return .success((0x0C, at + 1))
        case 0x6E: return .success((0x0A, at + 1))
        case 0x72: return .success((0x0D, at + 1))
        case 0x74: return .success((0x09, at + 1))
        case 0x75:
            guard let unit = hex4(buf, at + 1, end) else { return .failure(.badHex) }
            var next = at + 5
            var scalar = unit
            if unit >= 0xD800 && unit <= 0xDBFF {
                if next + 5 < end, buf[next] == 0x5C, buf[next + 1] == 0x75,
                   let low = hex4(buf, next + 2, end), low >= 0xDC00, low <= 0xDFFF {
                    next += 6
                    scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    if rejectLoneSurrogates { return .failure(.loneSurrogate) }
                    scalar = 0xFFFD
                }
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                if rejectLoneSurrogates { return .failure(.loneSurrogate) }
                scalar = 0xFFFD
            }
            return .success((scalar, next))
        default:
            return .failure(.invalidEscape(e))
        }
    }

    /// `decode`, with the scalar appended to `out` as UTF-8.
    static func decode(_ buf: UnsafeBufferPointer<UInt8>, letterAt at: Int, end: Int, into out: inout [UInt8],
                       rejectLoneSurrogates: Bool) -> Result<Int, Failure> {
        decode(buf, letterAt: at, end: end, rejectLoneSurrogates: rejectLoneSurrogates).map { scalar, next in
            appendUTF8(scalar, to: &out)
            return next
        }
    }

    static func hex4(_ buf: UnsafeBufferPointer<UInt8>, _ at: Int, _ end: Int) -> UInt32? {
        guard at + 4 <= end else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 {
            let c = buf[at + i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: return nil
            }
            v = v << 4 | d
        }
        return v
    }
}

extension JSONParser {
    /// The decoded bytes of a string's content (what stands between its quotes), or nil when an
    /// escape is invalid or cut off. Lone surrogates become U+FFFD, as in `parse`. (The same
    /// decoder as `JSONStringStream`'s, given the whole content as its one piece.)
    public static func unescapeStringContent(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var stream = JSONStringStream()
        return stream.decode(raw, isLast: true, into: &out) ? out : nil
    }
}

/// Writes `scalar` as UTF-8 at `out` (room for 4 bytes); returns the bytes written.
@inline(__always)
func writeUTF8(_ scalar: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
    switch scalar {
    case 0..<0x80:
        out[0] = UInt8(scalar)
        return 1
    case 0x80..<0x800:
        out[0] = UInt8(0xC0 | (scalar >> 6))
        out[1] = UInt8(0x80 | (scalar & 0x3F))
        return 2
    case 0x800..<0x10000:
        out[0] = UInt8(0xE0 | (scalar >> 12))
        out[1] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
        out[2] = UInt8(0x80 | (scalar & 0x3F))
        return 3
    default:
        out[0] = UInt8(0xF0 | (scalar >> 18))
        out[1] = UInt8(0x80 | ((scalar >> 12) & 0x3F))
        out[2] = UInt8(0x80 | ((scalar >> 6) & 0x3F))
        out[3] = UInt8(0x80 | (scalar & 0x3F))
        return 4
    }
}

func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        out.append(UInt8(scalar))
    case 0x80..<0x800:
        out.append(UInt8(0xC0 | (scalar >> 6)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    case 0x800..<0x10000:
        out.append(UInt8(0xE0 | (scalar >> 12)))
        out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    default:
        out.append(UInt8(0xF0 | (scalar >> 18)))
        out.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
        out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
        out.append(UInt8(0x80 | (scalar & 0x3F)))
    }
}

/// Offset of the first byte that is not part of a well-formed UTF-8 sequence (RFC 3629: no
/// overlongs, no surrogates, nothing above U+10FFFF), or `bytes.count` when all are valid.
/// ASCII is skipped 8 bytes at a time.
func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
    let n = bytes.count
    guard let base = bytes.baseAddress else { return 0 }
    let raw = UnsafeRawPointer(base)
    var i = 0
    while i < n {
        if i + 8 <= n {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if word & 0x8080_8080_8080_8080 == 0 { i += 8; continue }
        }
        let b = bytes[i]
        var need = 0
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch b {
        case 0x00...0x7F: i += 1; continue
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: need = 2
        case 0xED: need = 2; upper = 0x9F
        case 0xF0: need = 3; lower = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; upper = 0x8F
        default: return i
        }
        for k in 1...need {
            guard i + k < n else { return i }
            let c = bytes[i + k]
            let lo: UInt8 = k == 1 ? lower : 0x80
            let hi: UInt8 = k == 1 ? upper : 0xBF
            if c < lo || c > hi { return i }
        }
        i += need + 1
    }
    return n
}

/// A String from bytes already known to be valid UTF-8, or nil when they are not. (For short
/// strings this is cheaper than `String(validating:as:)`, whose per-call cost shows in the
/// parser; long escaped strings use that one.)
func validatedString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard firstInvalidUTF8(bytes) == bytes.count else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}
