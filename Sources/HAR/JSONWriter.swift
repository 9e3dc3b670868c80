import Foundation

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

    /// Extra output bytes for each input byte: 0 copy, 1 for a two-character escape (\n, \"),
    /// 5 for \u00XX; 0xFF marks 0xE2, the first byte of a possible U+2028/U+2029.
    private static let escapeExtra: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for b in 0..<0x20 { t[b] = 5 }
        for b in [0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x22, 0x5C] { t[b] = 1 }
        t[0xE2] = 0xFF
        return t
    }()

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `s` as a quoted JSON string. Two passes: count the escaped length, grow `out`
    /// once, then write through a pointer with plain runs copied by memcpy.
    static func appendEscaped(_ s: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let n = s.count
        var extra = 0
        escapeExtra.withUnsafeBufferPointer { table in
            var i = 0
            while i < n {
                if i + 8 <= n, !wordMayNeedEscape(UnsafeRawPointer(s.baseAddress! + i).loadUnaligned(as: UInt64.self)) {
                    i += 8
                    continue
                }
                defer { i += 1 }
                let e = table[Int(s[i])]
                if e == 0 { continue }
                if e != 0xFF { extra &+= Int(e); continue }
                if i + 2 < n, s[i + 1] == 0x80, s[i + 2] == 0xA8 || s[i + 2] == 0xA9 { extra &+= 3 }  // 3 bytes -> 6
            }
        }
        guard let base = s.baseAddress, n > 0 else {
            out.append(0x22); out.append(0x22)
            return
        }
        if extra == 0 {
            out.append(0x22)
            out.append(contentsOf: s)
            out.append(0x22)
            return
        }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: n + extra + 2))
        out.withUnsafeMutableBufferPointer { buffer in
            let dst = buffer.baseAddress! + start
            var o = 0
            dst[o] = 0x22; o += 1
            escapeExtra.withUnsafeBufferPointer { table in
                var runStart = 0
                var i = 0
                while i < n {
                    if i + 8 <= n, !wordMayNeedEscape(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) {
                        i += 8
                        continue
                    }
                    let b = s[i]
                    let e = table[Int(b)]
                    if e == 0 { i += 1; continue }
                    var consumed = 1
                    if e == 0xFF {
                        guard i + 2 < n, s[i + 1] == 0x80, s[i + 2] == 0xA8 || s[i + 2] == 0xA9 else { i += 1; continue }
                        consumed = 3
                    }
                    if runStart < i {
                        (dst + o).update(from: base + runStart, count: i - runStart)
                        o += i - runStart
                    }
                    dst[o] = 0x5C
                    switch b {
                    case 0x22: dst[o + 1] = 0x22; o += 2
                    case 0x5C: dst[o + 1] = 0x5C; o += 2
                    case 0x08: dst[o + 1] = 0x62; o += 2
                    case 0x09: dst[o + 1] = 0x74; o += 2
                    case 0x0A: dst[o + 1] = 0x6E; o += 2
                    case 0x0C: dst[o + 1] = 0x66; o += 2
                    case 0x0D: dst[o + 1] = 0x72; o += 2
                    case 0xE2:
                        dst[o + 1] = 0x75; dst[o + 2] = 0x32; dst[o + 3] = 0x30; dst[o + 4] = 0x32
                        dst[o + 5] = s[i + 2] == 0xA8 ? 0x38 : 0x39
                        o += 6
                    default:
                        dst[o + 1] = 0x75; dst[o + 2] = 0x30; dst[o + 3] = 0x30
                        dst[o + 4] = hexDigits[Int(b >> 4)]; dst[o + 5] = hexDigits[Int(b & 0x0F)]
                        o += 6
                    }
                    i += consumed
                    runStart = i
                }
                if runStart < n {
                    (dst + o).update(from: base + runStart, count: n - runStart)
                    o += n - runStart
                }
            }
            dst[o] = 0x22
            assert(o + 1 == n + extra + 2)
        }
    }

    static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        appendUInt(value.magnitude, to: &out)
    }

    static func appendUInt(_ value: UInt, to out: inout [UInt8]) {
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
        out.append(contentsOf: String(format: "%.0f", v).utf8)
    }
}

/// SWAR test of 8 bytes: false means none is a control character, '"', '\\' or 0xE2, so the
/// word can be copied as is. (The zero-byte trick may report extra hits, never miss one.)
@inline(__always)
func wordMayNeedEscape(_ w: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let control = (w &- ones &* 0x20) & ~w & highs
    let q = w ^ (ones &* 0x22)
    let b = w ^ (ones &* 0x5C)
    let e = w ^ (ones &* 0xE2)
    let hits = ((q &- ones) & ~q) | ((b &- ones) & ~b) | ((e &- ones) & ~e)
    return (control | (hits & highs)) != 0
}

/// SWAR test of 8 bytes for the JSON parser: false means none is a control character, '"' or '\\'.
@inline(__always)
func wordMayEndString(_ w: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    let control = (w &- ones &* 0x20) & ~w & highs
    let q = w ^ (ones &* 0x22)
    let b = w ^ (ones &* 0x5C)
    return (control | (((q &- ones) & ~q) | ((b &- ones) & ~b)) & highs) != 0
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
