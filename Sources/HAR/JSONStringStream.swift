import TextEncodings

/// Decodes the content of a JSON string (the bytes between its quotes) fed in pieces of any size,
/// as `JSONParser` decodes it whole: a large body left in a HAR file is served from it a piece
/// at a time (`harrec replay`), never held whole.
///
/// Lone surrogates become U+FFFD, as in `JSONParser.parse`. A piece may end inside an escape:
/// its last bytes wait for the next piece.
public struct JSONStringStream {
    /// The longest escape, `\uD83D\uDE00` (a surrogate pair), in bytes: a backslash closer than
    /// this to a piece's end waits for the next piece.
    static let longestEscape = 12

    /// The bytes of an escape cut off by the end of the last piece.
    private var carry: [UInt8] = []

    public init() {}

    /// Appends the decoded bytes of `piece` to `out`. `isLast`: nothing follows (an escape cut
    /// off there is an error). False when an escape is invalid.
    public mutating func decode(_ piece: UnsafeBufferPointer<UInt8>, isLast: Bool, into out: inout [UInt8]) -> Bool {
        guard !carry.isEmpty else { return decodeWhole(piece, isLast: isLast, into: &out) }
        let joined = carry + Array(piece)
        carry = []
        return joined.withUnsafeBufferPointer { decodeWhole($0, isLast: isLast, into: &out) }
    }

    private mutating func decodeWhole(_ p: UnsafeBufferPointer<UInt8>, isLast: Bool, into out: inout [UInt8]) -> Bool {
        let n = p.count
        var k = 0
        while k < n {
            // The run up to the next backslash, as it is.
            let run = Self.nextBackslash(p, from: k)
            if run > k { out.append(contentsOf: UnsafeBufferPointer(rebasing: p[k..<run])) }
            k = run
            guard k < n else { break }
            if !isLast && n - k < Self.longestEscape {
                carry = Array(p[k...])
                return true
            }
            guard k + 1 < n else { return false }
            switch JSONEscape.decode(p, letterAt: k + 1, end: n, into: &out, rejectLoneSurrogates: false) {
            case .success(let next): k = next
            case .failure: return false
            }
        }
        return true
    }

    /// The index of the first backslash in `p` from `k` (`p.count` when there is none), eight
    /// bytes at a time.
    static func nextBackslash(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = p.baseAddress else { return start }
        let raw = UnsafeRawPointer(base)
        var k = start
        while k + 8 <= p.count {
            let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: k, as: UInt64.self)) ^ 0x5C5C_5C5C_5C5C_5C5C
            let m = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            if m != 0 { return k + m.trailingZeroBitCount >> 3 }
            k += 8
        }
        while k < p.count && p[k] != 0x5C { k += 1 }
        return k
    }

    /// Whether no byte of `p` is a backslash, a control character or above ASCII: the bytes are
    /// then the text as they stand. Eight bytes at a time.
    static func isPlainASCII(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var k = 0
        var m: UInt64 = 0
        while k + 8 <= p.count {
            let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: k, as: UInt64.self))
            let b = x ^ 0x5C5C_5C5C_5C5C_5C5C
            m |= ((b &- 0x0101_0101_0101_0101) & ~b) | ((x &- 0x2020_2020_2020_2020) & ~x) | x
            k += 8
        }
        if m & 0x8080_8080_8080_8080 != 0 { return false }
        while k < p.count {
            let c = p[k]
            if c == 0x5C || c < 0x20 || c >= 0x80 { return false }
            k += 1
        }
        return true
    }

    /// No escape is waiting for the next piece.
    var isBetweenEscapes: Bool { carry.isEmpty }
}

/// Checks UTF-8 fed in pieces of any size (RFC 3629: no overlong forms, surrogates or code
/// points past U+10FFFF), as `String(validating:)` checks it whole.
struct UTF8Check {
    /// Continuation bytes still expected, and the range the next one must fall in.
    private var need = 0
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// False at the first byte that cannot continue valid UTF-8.
    mutating func feed(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var k = 0
        while k < p.count {
            // ASCII eight bytes at a time between sequences.
            if need == 0 && k + 8 <= p.count && raw.loadUnaligned(fromByteOffset: k, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                k += 8
                continue
            }
            let b = p[k]
            k += 1
            if need > 0 {
                guard b >= lower && b <= upper else { return false }
                lower = 0x80
                upper = 0xBF
                need -= 1
                continue
            }
            switch b {
            case 0x00...0x7F: break
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; upper = 0x9F
            case 0xF0: need = 3; lower = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; upper = 0x8F
            default: return false
            }
        }
        return true
    }

    /// No sequence is cut off at the end.
    var isComplete: Bool { need == 0 }
}

extension HARLazyDocument {
    /// The lengths of the text `raw` (a string's content) decodes to and of the body it stands
    /// for, found a piece at a time as a reader streams it; nil when the text would not parse
    /// (a bad escape, invalid UTF-8) or the base64 does not decode.
    static func decodedCounts(_ raw: UnsafeBufferPointer<UInt8>, base64: Bool) -> (text: Int, body: Int)? {
        let piece = 1 << 16
        var stream = JSONStringStream()
        var utf8 = UTF8Check()
        var digits = Base64LenientStream()
        var out: [UInt8] = []
        out.reserveCapacity(piece + 16)
        var textCount = 0
        var k = 0
        repeat {
            let end = min(raw.count, k + piece)
            let bytes = UnsafeBufferPointer(rebasing: raw[k..<end])
            // Most of a large body (base64, JSON with ASCII escapes between its strings) is plain
            // ASCII: its bytes are the text, with nothing to decode or check.
            if stream.isBetweenEscapes && JSONStringStream.isPlainASCII(bytes) {
                guard !base64 || digits.count(bytes) else { return nil }
                textCount += bytes.count
                k = end
                continue
            }
            // The parser takes no raw control character inside a string.
            guard !bytes.contains(where: { $0 < 0x20 }) else { return nil }
            out.removeAll(keepingCapacity: true)
            guard stream.decode(UnsafeBufferPointer(rebasing: raw[k..<end]), isLast: end == raw.count, into: &out) else { return nil }
            let ok = out.withUnsafeBufferPointer { decoded in utf8.feed(decoded) && (!base64 || digits.count(decoded)) }
            guard ok else { return nil }
            textCount += out.count
            k = end
        } while k < raw.count
        guard utf8.isComplete else { return nil }
        guard base64 else { return (textCount, textCount) }
        return digits.finishedCount.map { (textCount, $0) }
    }
}
