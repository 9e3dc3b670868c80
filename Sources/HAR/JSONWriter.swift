#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming JSON writer appending UTF-8 bytes to `bytes`.
///
/// Pretty mode matches `JSON.stringify(value, null, 2)`: two-space indent, `"key": value`, empty
/// containers as `{}` / `[]`, no trailing newline. Compact mode writes no whitespace at all.
///
/// Strings: `"` and `\` are escaped, control characters use `\b \t \n \f \r` or `\u00XX`,
/// U+2028 and U+2029 are written as `\u2028` / `\u2029` (so output is also valid JavaScript),
/// everything else (including non-ASCII) is copied as UTF-8.
///
/// Doubles (`double(_:)`): integral values have no fraction, others at most 3 decimals with
/// trailing zeros trimmed (HAR times are milliseconds, so this is microsecond resolution), never
/// exponent notation. JSON has no NaN or infinity: non-finite values are written as `-1`, the HAR
/// spelling of "not available".
///
/// The caller is responsible for a well-formed call sequence (a `key` before each value inside an
/// object, balanced begin/end); misuse is caught by assertions in debug builds only.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]
    /// Whether whitespace and newlines are written.
    public let pretty: Bool

    private var stack: [Frame] = []
    private var afterKey = false
    /// Deferred bodies written so far, each at its offset in `bytes` (between its quotes); only
    /// when `keepsDeferredBodies`, else each is written out in place.
    public private(set) var deferredBodies: [(offset: Int, body: HARDeferredBody)] = []
    /// Whether the owner writes deferred bodies itself (streaming them into the output at
    /// `deferredBodies`' offsets).
    public var keepsDeferredBodies = false

    private struct Frame: Sendable {
        var isObject: Bool
        var count: Int
    }

    public init(pretty: Bool = true, reservingCapacity capacity: Int = 0) {
        self.pretty = pretty
        self.bytes = []
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    /// Returns the written bytes, leaving the writer empty.
    public mutating func finish() -> [UInt8] {
        assert(stack.isEmpty, "unbalanced begin/end")
        let out = bytes
        bytes = []
        return out
    }

    /// Hands over the bytes written so far and keeps the nesting state, so a long document can be
    /// streamed to a file piece by piece.
    public mutating func takeBytes() -> [UInt8] {
        let out = bytes
        bytes = []
        bytes.reserveCapacity(out.count)
        return out
    }

    /// Hands over the deferred bodies written since the last call (their offsets are in the
    /// bytes `takeBytes` hands over next).
    public mutating func takeDeferredBodies() -> [(offset: Int, body: HARDeferredBody)] {
        defer { deferredBodies = [] }
        return deferredBodies
    }

    /// Writes a deferred body as a JSON string of its base64: a place for the owner to stream it
    /// into when `keepsDeferredBodies`, else the text itself (read whole; a failed read writes
    /// what was read, and the HAR's sizes then disagree, which `validate` reports).
    public mutating func deferredString(_ body: HARDeferredBody) {
        beforeValue()
        bytes.append(0x22)
        if keepsDeferredBodies {
            deferredBodies.append((bytes.count, body))
        } else {
            try? body.writeBase64 { bytes += $0 }
        }
        bytes.append(0x22)
    }

    /// Appends `raw` as it is, between top-level values: framing of the caller's (an event
    /// stream's `data:` lines), not JSON.
    public mutating func framing(_ raw: [UInt8]) {
        assert(stack.isEmpty, "framing inside a value")
        bytes.append(contentsOf: raw)
    }

    /// Serializes one value.
    public static func serialize(_ value: JSONValue, pretty: Bool = true) -> [UInt8] {
        var w = JSONWriter(pretty: pretty)
        w.raw(value)
        return w.finish()
    }

    // MARK: Structure

    public mutating func beginObject() {
        beforeValue()
        bytes.append(0x7B)
        stack.append(Frame(isObject: true, count: 0))
    }

    public mutating func endObject() {
        assert(stack.last?.isObject == true && !afterKey, "endObject without matching beginObject")
        close(0x7D)
    }

    public mutating func beginArray() {
        beforeValue()
        bytes.append(0x5B)
        stack.append(Frame(isObject: false, count: 0))
    }

    public mutating func endArray() {
        assert(stack.last?.isObject == false, "endArray without matching beginArray")
        close(0x5D)
    }

    /// Writes an object member name; the next call must write its value.
    public mutating func key(_ name: String) {
        assert(stack.last?.isObject == true && !afterKey, "key outside an object")
        separator()
        appendString(name)
        bytes.append(0x3A)
        if pretty { bytes.append(0x20) }
        afterKey = true
    }

    // MARK: Values

    public mutating func string(_ value: String) {
        beforeValue()
        appendString(value)
    }

    public mutating func int(_ value: Int) {
        beforeValue()
        JSONWriter.appendInt(value, to: &bytes)
    }

    public mutating func double(_ value: Double) {
        beforeValue()
        JSONWriter.appendDouble(value, to: &bytes)
    }

    public mutating func bool(_ value: Bool) {
        beforeValue()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        }
    }

    public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    /// Writes a whole `JSONValue`, members in order. A `.number` whose literal is not valid JSON
    /// is written as `null` so the output stays parseable.
    public mutating func raw(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .string(let s): string(s)
        case .number(let literal):
            if isValidJSONNumber(literal) {
                beforeValue()
                bytes.append(contentsOf: literal.utf8)
            } else {
                null()
            }
        case .array(let items):
            beginArray()
            for item in items { raw(item) }
            endArray()
        case .object(let fields):
            beginObject()
            for field in fields {
                key(field.key)
                raw(field.value)
            }
            endObject()
        }
    }

    // MARK: Convenience for optional members

    /// Writes `"name": value` when `value` is not nil.
    public mutating func field(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Writes `"name": value` when `value` is not nil.
    public mutating func field(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    /// Writes `"name": value` when `value` is not nil.
    public mutating func field(_ name: String, _ value: Double?) {
        guard let value else { return }
        key(name)
        double(value)
    }

    /// Writes `"name": value` when `value` is not nil.
    public mutating func field(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bool(value)
    }

    /// Writes each custom member in order.
    public mutating func fields(_ custom: JSONFields) {
        for field in custom {
            key(field.key)
            raw(field.value)
        }
    }

    // MARK: Internals

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        assert(stack.last?.isObject != true, "value inside an object without a key")
        if !stack.isEmpty { separator() }
    }

    private mutating func separator() {
        let last = stack.count - 1
        if stack[last].count > 0 { bytes.append(0x2C) }
        stack[last].count += 1
        if pretty { newline(indent: stack.count) }
    }

    private mutating func close(_ bracket: UInt8) {
        let frame = stack.removeLast()
        if frame.count > 0 && pretty { newline(indent: stack.count) }
        bytes.append(bracket)
    }

    private static let spaces = [UInt8](repeating: 0x20, count: 128)

    private mutating func newline(indent level: Int) {
        bytes.append(0x0A)
        var n = level * 2
        while n > 0 {
            let k = min(n, JSONWriter.spaces.count)
            JSONWriter.spaces.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<k])) }
            n -= k
        }
    }

    private mutating func appendString(_ value: String) {
        var s = value
        s.withUTF8 { JSONWriter.appendEscaped($0, to: &bytes) }
    }

    /// Appends `value` as a quoted JSON string, for callers writing a fixed shape straight to bytes.
    public static func appendString(_ value: String, to out: inout [UInt8]) {
        var s = value
        s.withUTF8 { appendEscaped($0, to: &out) }
    }

    /// Appends `s` as a quoted JSON string (escaping rules on the type).
    ///
    /// One pass, 8 bytes at a time (SWAR masks below). The run before the first byte that needs
    /// escaping is appended directly; with none, that is all. Otherwise `out` grows by twice the
    /// remaining input plus `escapePad`, and the rest is written through one pointer: each input
    /// word is stored whole at the output position, then for each byte of it that needs escaping
    /// the escape is stored and the word's remaining bytes are stored again after it. Two-character
    /// escapes and U+2028/U+2029 (3 bytes in, 6 out) fit the 2x budget; only `\u00XX` (1 in, 6
    /// out) needs more, and when the headroom runs out `out` grows to a 6x budget for the rest.
    /// The unused tail is removed at the end.
    public static func appendEscaped(_ s: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let n = s.count
        guard let src = s.baseAddress, n > 0 else {
            out.append(0x22); out.append(0x22)
            return
        }
        var i = firstEscape(src, count: n)
        out.append(0x22)
        if i == n {
            out.append(contentsOf: s)
            out.append(0x22)
            return
        }
        if i > 0 { out.append(contentsOf: UnsafeBufferPointer(start: src, count: i)) }
        var o = out.count
        // While writing: o + 2 * (n - i) + 1 + escapePad <= out.count.
        out.append(contentsOf: repeatElement(0, count: 2 * (n - i) + 1 + escapePad))
        while !out.withUnsafeMutableBufferPointer({ writeEscaped(src, count: n, from: &i, to: $0, at: &o) }) {
            // Room for a \u00XX escape for every remaining byte.
            let need = o + 6 * (n - i) + 1 + escapePad
            out.append(contentsOf: repeatElement(0, count: need - out.count))
        }
        out.removeLast(out.count - o)
    }

    /// Output room past the 2x budget: 8-byte stores write up to 7 bytes beyond what they keep,
    /// and the rest is headroom for the first `\u00XX` escapes.
    private static let escapePad = 16

    /// The index of the first byte of `src[0..<n]` that must be escaped, or `n`.
    @inline(__always)
    private static func firstEscape(_ src: UnsafePointer<UInt8>, count n: Int) -> Int {
        var i = 0
        while i + 16 <= n {
            let a = loadWord(src + i), b = loadWord(src + i + 8)
            let ma = escapeMask(a), mb = escapeMask(b)
            if ma | mb != 0 {
                if ma != 0, let p = firstEscape(inWord: a, src, count: n, at: i) { return p }
                if mb != 0, let p = firstEscape(inWord: b, src, count: n, at: i + 8) { return p }
            }
            i += 16
        }
        if i + 8 <= n {
            if let p = firstEscape(inWord: loadWord(src + i), src, count: n, at: i) { return p }
            i += 8
        }
        if i < n, let p = firstEscape(inWord: loadTail(src, count: n, at: i), src, count: n, at: i) { return p }
        return n
    }

    /// The index of the first byte to escape in the word `w` loaded from `src + i`, if any. (0xE2
    /// needs escaping only as the start of U+2028/U+2029; the check reads on past the word.)
    @inline(__always)
    private static func firstEscape(inWord w: UInt64, _ src: UnsafePointer<UInt8>, count n: Int, at i: Int) -> Int? {
        var m = exactEscapeMask(w)
        while m != 0 {
            let p = i &+ m.trailingZeroBitCount &>> 3
            if src[p] != 0xE2 || isLineOrParagraphSeparator(src, count: n, at: p) { return p }
            m &= m &- 1
        }
        return nil
    }

    /// Writes the escaped `src[i..<n]` and the closing quote into `dst` from `o`, advancing both.
    /// Returns false, with `i` and `o` where it stopped, when a `\u00XX` escape needs more room.
    private static func writeEscaped(_ src: UnsafePointer<UInt8>, count n: Int, from start: inout Int,
                                     to dst: UnsafeMutableBufferPointer<UInt8>, at outStart: inout Int) -> Bool {
        let base = UnsafeMutableRawPointer(dst.baseAddress!)
        let limit = dst.count &- 1 &- escapePad  // keep o + 2 * (n - i) <= limit
        var i = start, o = outStart
        outer: while i < n {
            let r = n &- i
            let width = r >= 8 ? 8 : r
            let raw = r >= 8 ? UnsafeRawPointer(src + i).loadUnaligned(as: UInt64.self) : loadTail(src, count: n, at: i).littleEndian
            base.storeBytes(of: raw, toByteOffset: o, as: UInt64.self)
            let w = UInt64(littleEndian: raw)
            var m = exactEscapeMask(w)
            // Bytes of this word written so far; the output from o on holds w's bytes from `done`.
            var done = 0
            while m != 0 {
                let k = m.trailingZeroBitCount &>> 3
                o &+= k &- done
                let c = UInt8(truncatingIfNeeded: w &>> UInt64(k &* 8))
                if c == 0xE2 {
                    if !isLineOrParagraphSeparator(src, count: n, at: i &+ k) {
                        // A plain byte after all, already in place: the run goes on through it.
                        o &-= k &- done
                        m &= m &- 1
                        continue
                    }
                    // \u2028 or \u2029, then go on with the word after it (the sequence may
                    // reach into the next word).
                    i &+= k
                    let last: UInt64 = src[i &+ 2] == 0xA8 ? 0x38 : 0x39
                    base.storeBytes(of: (0x3230_3275_5C | last << 40).littleEndian, toByteOffset: o, as: UInt64.self)
                    i &+= 3; o &+= 6
                    continue outer
                }
                let e = shortEscape(c)
                let seq: UInt64, len: Int
                if e != 0 {
                    seq = 0x5C | UInt64(e) << 8
                    len = 2
                } else {
                    // \u00XX: 6 bytes for 1, so it spends 4 bytes of headroom.
                    if o &+ 2 &* (n &- i &- k) &+ 4 > limit {
                        start = i &+ k; outStart = o
                        return false
                    }
                    let lo = UInt64(c & 0x0F)
                    let hex = (0x30 | UInt64(c &>> 4)) | (lo < 10 ? 0x30 &+ lo : 0x57 &+ lo) << 8
                    seq = 0x3030_755C | hex << 32
                    len = 6
                }
                base.storeBytes(of: seq.littleEndian, toByteOffset: o, as: UInt64.self)
                o &+= len
                done = k &+ 1
                // The rest of the word after the escape (for done == 8 this stores w again: harmless).
                base.storeBytes(of: (w &>> UInt64(done &* 8)).littleEndian, toByteOffset: o, as: UInt64.self)
                m &= m &- 1
            }
            o &+= width &- done
            i &+= width
        }
        base.storeBytes(of: 0x22, toByteOffset: o, as: UInt8.self)
        start = i; outStart = o &+ 1
        return true
    }

    /// The second character of a two-character escape for `c` (a byte that needs escaping other
    /// than 0xE2), or 0 for `\u00XX`.
    @inline(__always)
    private static func shortEscape(_ c: UInt8) -> UInt8 {
        if c == 0x22 || c == 0x5C { return c }
        // b t n - f r for 0x08 ... 0x0D
        let d = UInt64(c &- 8)
        return d < 6 ? UInt8(truncatingIfNeeded: 0x7266_006E_7462 &>> (d &* 8)) : 0
    }

    /// Whether `src[i...]`, which starts with 0xE2, is E2 80 A8 (U+2028) or E2 80 A9 (U+2029).
    @inline(__always)
    private static func isLineOrParagraphSeparator(_ src: UnsafePointer<UInt8>, count n: Int, at i: Int) -> Bool {
        i + 2 < n && src[i + 1] == 0x80 && src[i + 2] | 1 == 0xA9
    }

    /// The 8 bytes at `p`, first byte lowest.
    @inline(__always)
    private static func loadWord(_ p: UnsafePointer<UInt8>) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
    }

    /// The last `n - i` (1...7) bytes of `src`, first byte lowest, padded with spaces (which need
    /// no escape) to 8 bytes.
    @inline(__always)
    private static func loadTail(_ src: UnsafePointer<UInt8>, count n: Int, at i: Int) -> UInt64 {
        let r = n &- i
        let padding = 0x2020_2020_2020_2020 &<< UInt64(r &* 8)
        if n >= 8 {
            // The word ending at the end of the input, shifted down past the bytes before i.
            return loadWord(src + (n &- 8)) &>> UInt64((8 &- r) &* 8) | padding
        }
        // Shorter input: 4 + 2 + 1 bytes as needed.
        let p = UnsafeRawPointer(src + i)
        var w: UInt64 = 0, k = 0
        if r & 4 != 0 {
            w = UInt64(UInt32(littleEndian: p.loadUnaligned(as: UInt32.self)))
            k = 4
        }
        if r & 2 != 0 {
            w |= UInt64(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: k, as: UInt16.self))) &<< UInt64(k &* 8)
            k &+= 2
        }
        if r & 1 != 0 {
            w |= UInt64(p.load(fromByteOffset: k, as: UInt8.self)) &<< UInt64(k &* 8)
        }
        return w | padding
    }

    /// Appends `value` as a JSON number, for callers writing a fixed shape straight to bytes.
    public static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        appendUInt(value.magnitude, to: &out)
    }

    /// Appends `value` as a JSON number, for callers writing a fixed shape straight to bytes.
    public static func appendUInt(_ value: UInt, to out: inout [UInt8]) {
        if value < 10 {
            out.append(0x30 &+ UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes, enough for 20 digits
        var count = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while v > 0 {
                raw[23 - count] = 0x30 &+ UInt8(v % 10)
                v /= 10
                count += 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[(24 - count)..<24]))
        }
    }

    /// Appends a double in the deterministic HAR format described on the type.
    public static func appendDouble(_ value: Double, to out: inout [UInt8]) {
        let v = value.isFinite ? value : -1
        // Below 9e15, v * 1000 fits in Int64 (max ~9.22e18) and has exact integer resolution.
        if abs(v) < 9.0e15 {
            var thousandths = Int64((v * 1000).rounded())
            if thousandths < 0 {
                out.append(0x2D)
                thousandths = -thousandths
            }
            appendUInt(UInt(thousandths / 1000), to: &out)
            var frac = Int(thousandths % 1000)
            if frac != 0 {
                out.append(0x2E)
                var width = 3
                while frac % 10 == 0 { frac /= 10; width -= 1 }
                var divisor = 1
                for _ in 1..<width { divisor *= 10 }
                while divisor > 0 {
                    out.append(0x30 &+ UInt8(frac / divisor % 10))
                    divisor /= 10
                }
            }
            return
        }
        // Every double this large is an integer; print all its digits without an exponent.
        var buffer = [CChar](repeating: 0, count: 400)  // the largest double has 309 digits
        let count = buffer.withUnsafeMutableBufferPointer { b in
            withVaList([v]) { vsnprintf(b.baseAddress, b.count, "%.0f", $0) }
        }
        out.append(contentsOf: buffer[0..<Int(max(0, count))].map { UInt8(bitPattern: $0) })
    }
}

/// SWAR test of 8 bytes (first byte lowest): the high bit of each byte that is a control
/// character, '"', '\\' or 0xE2. Bytes above a marked byte may be marked wrongly (a borrow
/// carries over), but the lowest marked byte is always a real one, and no mark means none.
@inline(__always)
func escapeMask(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let q = w ^ (ones &* 0x22)
    let b = w ^ (ones &* 0x5C)
    let e = w ^ (ones &* 0xE2)
    // A byte x is 0 (or < 0x20 for the control test) when x - 1 (x - 0x20) borrows into its
    // high bit while x's own high bit is clear. '"', '\\' and controls have the high bit clear,
    // so those tests share one "& ~w"; for 0xE2 the high bit of ~e is the high bit of w.
    let ascii = ((w &- ones &* 0x20) | (q &- ones) | (b &- ones)) & ~w
    return (ascii | ((e &- ones) & w)) & highs
}

/// Like `escapeMask`, but exact: the high bit of every byte that is a control character, '"',
/// '\\' or 0xE2, and of no other (the additions never carry out of a byte).
@inline(__always)
func exactEscapeMask(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let low7 = w & (ones &* 0x7F)
    // High bit of (x & 0x7F) + 0x7F is set iff x & 0x7F != 0; of (x & 0x7F) + 0x60 iff x & 0x7F >= 0x20.
    let notControl = low7 &+ (ones &* 0x60)
    let notQuote = (low7 ^ (ones &* 0x22)) &+ (ones &* 0x7F)
    let notBackslash = (low7 ^ (ones &* 0x5C)) &+ (ones &* 0x7F)
    let notE2 = (low7 ^ (ones &* 0x62)) &+ (ones &* 0x7F)
    // For the first three the byte's own high bit must be clear, for 0xE2 set.
    return (~((notControl & notQuote & notBackslash) | w) | (~notE2 & w)) & (ones &* 0x80)
}

/// SWAR scan of 8 bytes (little-endian load) for the JSON parsers: nonzero when one is a control
/// character, '"' or '\\', and then the lowest set bit is in the first such byte (a borrow only
/// flags bytes above a real hit), so `trailingZeroBitCount >> 3` is its offset.
@inlinable @inline(__always)
public func stringStopMask(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let control = (w &- ones &* 0x20) & ~w
    let q = w ^ (ones &* 0x22)
    let b = w ^ (ones &* 0x5C)
    return (control | ((q &- ones) & ~q) | ((b &- ones) & ~b)) & 0x8080_8080_8080_8080
}

/// 0x80 at the first `byte` of the little-endian word `w` (bytes after it may be marked too).
@inlinable @inline(__always)
public func byteMask(_ w: UInt64, _ byte: UInt8) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let b = w ^ (ones &* UInt64(byte))
    return ((b &- ones) & ~b) & 0x8080_8080_8080_8080
}

/// 0x80 at the first backslash of the little-endian word `w` (bytes after it may be marked too).
@inlinable @inline(__always)
public func backslashMask(_ w: UInt64) -> UInt64 { byteMask(w, 0x5C) }

/// Like `stringStopMask`, for '"' and '\\' only.
@inlinable @inline(__always)
public func quoteOrBackslashMask(_ w: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let q = w ^ (ones &* 0x22)
    let b = w ^ (ones &* 0x5C)
    return (((q &- ones) & ~q) | ((b &- ones) & ~b)) & 0x8080_8080_8080_8080
}

/// Whether `literal` matches the RFC 8259 number grammar.
public func isValidJSONNumber(_ literal: String) -> Bool {
    var it = literal.utf8.makeIterator()
    var c = it.next()
    func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
    if c == 0x2D { c = it.next() }
    guard isDigit(c) else { return false }
    if c == 0x30 {
        c = it.next()
    } else {
        repeat { c = it.next() } while isDigit(c)
    }
    if c == 0x2E {
        c = it.next()
        guard isDigit(c) else { return false }
        repeat { c = it.next() } while isDigit(c)
    }
    if c == 0x65 || c == 0x45 {
        c = it.next()
        if c == 0x2B || c == 0x2D { c = it.next() }
        guard isDigit(c) else { return false }
        repeat { c = it.next() } while isDigit(c)
    }
    return c == nil
}
