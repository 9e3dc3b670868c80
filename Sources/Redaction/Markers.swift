#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR

// Pass 1 cannot write final placeholders: their numbers follow the order of first appearance in
// the whole file, and entries are redacted in parallel. So it writes markers that name a value of
// its own entry, and pass 2 (`Finalizer`) swaps each marker for the placeholder the frozen table
// gave that value, applying the marker's encoding.
//
//   value:    U+E000 nonce index [modifier] U+E001
//             modifier: none | "@" (an email whose '@' is written %40) | "#" length (padded or
//             cut to exactly that many bytes, for binary bodies)
//   base64:   U+E002 nonce alphabet padding text U+E003 nonce
//             the text (which may hold markers) is base64-encoded once its markers are resolved;
//             alphabet "s" (standard) or "u" (url), padding "p" or "n"
//   binary:   U+E004 nonce (base64-chunk | value marker)* U+E005 nonce
//             a binary body with same-length replacements: chunks decoded, placeholders inserted,
//             the whole re-encoded as standard padded base64
//   query:    U+E006 nonce text U+E007 nonce
//             the text is percent-encoded as a query value once its markers are resolved
//
// The nonce is random per run, so text in the input that happens to hold these private-use
// characters is never taken for a marker.

/// How a marker's placeholder is written.
enum MarkerModifier: Equatable {
    case plain
    /// An email whose '@' was written %40.
    case percentAt
    /// Exactly this many bytes (a binary body keeps its length).
    case sameLength(Int)
}

struct MarkerSyntax: Sendable {
    static let valueOpen: [UInt8] = [0xEE, 0x80, 0x80]
    static let base64Open: [UInt8] = [0xEE, 0x80, 0x82]
    static let base64Close: [UInt8] = [0xEE, 0x80, 0x83]
    static let binaryOpen: [UInt8] = [0xEE, 0x80, 0x84]
    static let binaryClose: [UInt8] = [0xEE, 0x80, 0x85]

    /// Three ASCII letters, random per run. Kept as bytes, not an array: the syntax is copied
    /// into every rewriter and finalizer, and an array there cost a retain and a release a copy.
    let n0, n1, n2: UInt8

    init(nonce: [UInt8]) { (n0, n1, n2) = (nonce[0], nonce[1], nonce[2]) }

    var nonce: [UInt8] { [n0, n1, n2] }

    static func random() -> MarkerSyntax {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        return MarkerSyntax(nonce: (0..<3).map { _ in letters[Int(generator.next() % UInt64(letters.count))] })
    }

    /// The value marker for `index`, built in one buffer on the stack: pass 1 makes one for every
    /// value of every entry (an array per part cost a few percent of a redaction).
    func value(_ index: Int, _ modifier: MarkerModifier) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { buffer -> String in
            let out = buffer.baseAddress!
            out[0] = 0xEE; out[1] = 0x80; out[2] = 0x80
            out[3] = n0; out[4] = n1; out[5] = n2
            var n = 6 + Self.writeDecimal(index, to: out + 6)
            switch modifier {
            case .plain: break
            case .percentAt:
                out[n] = UInt8(ascii: "@")
                n += 1
            case .sameLength(let length):
                out[n] = UInt8(ascii: "#")
                n += 1 + Self.writeDecimal(length, to: out + n + 1)
            }
            out[n] = 0xEE; out[n + 1] = 0x80; out[n + 2] = 0x81
            return String(decoding: UnsafeBufferPointer(start: out, count: n + 3), as: UTF8.self)
        }
    }

    /// Writes the decimal digits of `value` (not negative, at most 19 digits) at `out`; returns
    /// how many.
    private static func writeDecimal(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1, rest = max(0, value) / 10
        while rest > 0 { digits += 1; rest /= 10 }
        var v = max(0, value)
        for k in stride(from: digits - 1, through: 0, by: -1) {
            out[k] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
            v /= 10
        }
        return digits
    }

    func base64(_ text: [UInt8], urlSafe: Bool, padded: Bool) -> [UInt8] {
        Self.base64Open + nonce + [urlSafe ? UInt8(ascii: "u") : UInt8(ascii: "s"), padded ? UInt8(ascii: "p") : UInt8(ascii: "n")]
            + text + Self.base64Close + nonce
    }

    /// Whether `p[i...]` starts with `mark` followed by this run's nonce.
    @inline(__always)
    func matches(_ mark: [UInt8], _ p: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        matches(code: mark[2], p, at: i)
    }

    /// Whether `p[i...]` starts with the mark whose third byte is `code`, then this run's nonce.
    @inline(__always)
    func matches(code: UInt8, _ p: UnsafeBufferPointer<UInt8>, at i: Int) -> Bool {
        guard i + 6 <= p.count, p[i] == 0xEE, p[i + 1] == 0x80, p[i + 2] == code else { return false }
        return p[i + 3] == n0 && p[i + 4] == n1 && p[i + 5] == n2
    }

    /// A value marker at `i`: its index, modifier and end.
    func parseValue(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> (index: Int, modifier: MarkerModifier, end: Int)? {
        guard matches(code: 0x80, p, at: i) else { return nil }
        var j = i + 6
        var index = 0
        let digitsStart = j
        while j < p.count, RedactionEngine.isDigit(p[j]), j - digitsStart < 9 { index = index * 10 + Int(p[j] - 0x30); j += 1 }
        guard j > digitsStart, j < p.count else { return nil }
        var modifier = MarkerModifier.plain
        switch p[j] {
        case UInt8(ascii: "@"): modifier = .percentAt; j += 1
        case UInt8(ascii: "#"):
            j += 1
            var n = 0
            let start = j
            while j < p.count, RedactionEngine.isDigit(p[j]), j - start < 9 { n = n * 10 + Int(p[j] - 0x30); j += 1 }
            guard j > start else { return nil }
            modifier = .sameLength(n)
        default: break
        }
        guard j + 3 <= p.count, p[j] == 0xEE, p[j + 1] == 0x80, p[j + 2] == 0x81 else { return nil }
        return (index, modifier, j + 3)
    }

    /// The end of the wrap (base64 or binary) whose open mark is at `i`: the index just after its
    /// close mark, counting nested wraps of the same kind.
    func wrapEnd(_ p: UnsafeBufferPointer<UInt8>, from i: Int, open: [UInt8], close: [UInt8]) -> (contentEnd: Int, end: Int)? {
        wrapEnd(p, from: i, openCode: open[2], closeCode: close[2])
    }

    private func wrapEnd(_ p: UnsafeBufferPointer<UInt8>, from i: Int, openCode: UInt8, closeCode: UInt8) -> (contentEnd: Int, end: Int)? {
        var depth = 0
        var j = i
        while j < p.count {
            if p[j] == 0xEE {
                if matches(code: openCode, p, at: j) { depth += 1; j += 6; continue }
                if matches(code: closeCode, p, at: j) {
                    depth -= 1
                    if depth == 0 { return (j, j + 6) }
                    j += 6
                    continue
                }
            }
            j += 1
        }
        return nil
    }

    /// The end of the base64, binary or query wrap that opens at `i`, or nil.
    func wrapEnd(at i: Int, in p: UnsafeBufferPointer<UInt8>) -> Int? {
        guard i + 6 <= p.count, p[i] == 0xEE, p[i + 1] == 0x80 else { return nil }
        switch p[i + 2] {
        case 0x82, 0x84, 0x86: return wrapEnd(p, from: i, openCode: p[i + 2], closeCode: p[i + 2] + 1)?.end
        default: return nil
        }
    }

    /// Whether `p` holds any mark of this run.
    func containsMarks(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = p.baseAddress else { return false }
        var i = 0
        // memchr for the lead byte: most text has none, and libc scans it a vector at a time.
        while i + 6 <= p.count, let hit = memchr(base + i, 0xEE, p.count - 5 - i) {
            i = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if p[i + 1] == 0x80, p[i + 2] & 0xF8 == 0x80,
               p[i + 3] == n0, p[i + 4] == n1, p[i + 5] == n2 { return true }
            i += 1
        }
        return false
    }
}

/// The values one unit of pass 1 (an entry, or the log's own fields) replaced, in order of first
/// appearance; markers refer to them by index.
struct ValueCollector {
    private(set) var values: [(kind: ValueKind, value: String)] = []
    /// Each value's `PlaceholderTable.hash`, computed here on the worker threads.
    private(set) var hashes: [UInt64] = []
    /// Index by hash (kind mixed in), open addressing: `slots[s]` is a value's index + 1 (0:
    /// free); `keys` holds each value's lookup key to confirm a hit. Only the slots in use are
    /// cleared for the next unit (a Swift Dictionary cost about a third of each lookup).
    private var slots = [Int32](repeating: 0, count: 64)
    private var usedSlots: [Int32] = []
    /// Each value's lookup key (`PlaceholderTable.key`), so interning does not compute it again.
    private(set) var keys: [String] = []
    /// The plain marker of value index k, built once: a marker names only its index (and the
    /// run's syntax), so the markers outlive the unit (`removeAll` keeps them). Made per value,
    /// each was a string validated as UTF-8 (a third of a marker's cost).
    var plainMarkers: [String] = []
    /// Placeholder numbers met in the input: new numbers start after them.
    private(set) var reserved: [(ValueKind, Int)] = []

    mutating func index(_ kind: ValueKind, _ value: String) -> Int {
        let key = PlaceholderTable.key(kind, value)
        let hash = PlaceholderTable.hash(kind, key: key)
        if values.count * 2 >= slots.count { grow() }
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: hash) & mask
        while slots[s] != 0 {
            let known = Int(slots[s]) - 1
            if hashes[known] == hash && values[known].kind == kind && keys[known] == key { return known }
            s = (s + 1) & mask
        }
        slots[s] = Int32(values.count + 1)
        usedSlots.append(Int32(s))
        values.append((kind, value))
        hashes.append(hash)
        keys.append(key)
        return values.count - 1
    }

    /// Twice the slots, every value placed again.
    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        usedSlots.removeAll(keepingCapacity: true)
        let mask = slots.count - 1
        for (k, hash) in hashes.enumerated() {
            var s = Int(truncatingIfNeeded: hash) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Int32(k + 1)
            usedSlots.append(Int32(s))
        }
    }

    mutating func reserve(_ kind: ValueKind, _ number: Int) { reserved.append((kind, number)) }

    /// How much the collector holds: what `truncate(to:)` goes back to.
    struct Mark {
        fileprivate let values, reserved, chased, cookies: Int
    }

    var mark: Mark { Mark(values: values.count, reserved: reserved.count, chased: chased.count, cookies: cookies.count) }

    /// Forgets what was collected since `mark` (an attempt whose output was dropped: a value it
    /// found must not be chased through the file, or a second run, which reads the text
    /// differently, would disagree). The values are the last ones in, so no probe chain of an
    /// earlier value crosses their slots, and clearing them keeps the index sound.
    mutating func truncate(to mark: Mark) {
        for k in stride(from: values.count - 1, through: mark.values, by: -1) { slots[Int(usedSlots[k])] = 0 }
        if values.count > mark.values {
            usedSlots.removeSubrange(mark.values...)
            values.removeSubrange(mark.values...)
            hashes.removeSubrange(mark.values...)
            keys.removeSubrange(mark.values...)
        }
        if reserved.count > mark.reserved { reserved.removeSubrange(mark.reserved...) }
        if chased.count > mark.chased { chased.removeSubrange(mark.chased...) }
        if cookies.count > mark.cookies { cookies.removeSubrange(mark.cookies...) }
    }

    /// Values no marker stands for but pass 2 looks for everywhere (a URL password, which is
    /// dropped, and a Basic credential's password). They are numbered after every other value,
    /// so the placeholders a reader sees stay numbered 1, 2, 3 in file order.
    private(set) var chased: [(kind: ValueKind, value: String)] = []

    mutating func chase(_ kind: ValueKind, _ value: String) { chased.append((kind, value)) }

    /// Cookies whose values were replaced: `name=value` is chased everywhere else too (an API
    /// echoing its request headers), however short the value.
    private(set) var cookies: [(name: String, value: String)] = []

    mutating func cookie(_ name: String, _ value: String) {
        guard !name.isEmpty, name.utf8.count <= 64 else { return }
        cookies.append((name, value))
    }

    mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
        hashes.removeAll(keepingCapacity: true)
        keys.removeAll(keepingCapacity: true)
        for s in usedSlots { slots[Int(s)] = 0 }
        usedSlots.removeAll(keepingCapacity: true)
        reserved.removeAll(keepingCapacity: true)
        chased.removeAll(keepingCapacity: true)
        cookies.removeAll(keepingCapacity: true)
    }
}

extension URLParts {
    /// Percent-encodes for a query value: unreserved characters and `@ : / ! $ ' ( ) * , ;` stay.
    /// `keepingPercent`: text that is query-encoded already where it has a `%`.
    static func percentEncodedQueryValue(_ bytes: [UInt8], keepingPercent: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let hex: StaticString = "0123456789ABCDEF"
        for b in bytes {
            if RedactionEngine.isAlnum(b) || Self.queryKept[Int(b)] || (keepingPercent && b == 0x25) {
                out.append(b)
            } else {
                out.append(0x25)
                out.append(hex.utf8Start[Int(b >> 4)])
                out.append(hex.utf8Start[Int(b & 15)])
            }
        }
        return out
    }

    static let queryKept: [Bool] = {
        var t = [Bool](repeating: false, count: 256)
        for b in "-._~@:/!$'()*,;".utf8 { t[Int(b)] = true }
        return t
    }()

    static func percentEncodedQueryValue(_ text: String) -> String {
        String(decoding: percentEncodedQueryValue(Array(text.utf8)), as: UTF8.self)
    }
}
