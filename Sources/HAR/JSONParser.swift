#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON syntax error: where it is and a one-line reason.
///
/// `line` and `column` are 1-based; `column` counts bytes (UTF-8 code units) from the start of the
/// line. The reason never contains raw bytes from the input: unprintable bytes are shown as hex.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset of the error from the start of the input.
    public var offset: Int
    public var line: Int
    public var column: Int
    public var reason: String

    public var description: String { "line \(line), column \(column): \(reason)" }
}

/// A strict RFC 8259 JSON parser working on bytes.
///
/// - Input must be UTF-8 (no BOM; callers that accept one, such as `HARLog.parse`, strip it).
/// - Any JSON value is accepted at top level; only whitespace may follow it.
/// - Object members keep document order; duplicate keys are all kept.
/// - Numbers keep their literal text (`JSONValue.number`).
/// - Rejected: trailing commas, leading zeros, `+1`, `.5`, `1.`, NaN/Infinity, single quotes,
///   comments, unescaped control characters, invalid escapes, invalid UTF-8, nesting deeper than
///   `maximumDepth`.
/// - Lone UTF-16 surrogates in `\u` escapes (legal JSON grammar, but not Unicode text) are replaced
///   by U+FFFD by default, because Swift strings cannot hold them and browsers' `JSON.stringify`
///   emits them for broken strings; a whole HAR should not become unreadable over one character.
///   Pass `rejectLoneSurrogates: true` to make them an error instead.
public enum JSONParser {
    /// Maximum nesting of arrays and objects. HAR needs about 8 levels (custom fields a few more);
    /// 512 bounds the parser's recursion to a stack depth that is safe on 512 KiB thread stacks,
    /// so a "[[[[..." bomb is an error, not a crash.
    public static let maximumDepth = 512

    /// Parses one JSON document.
    public static func parse(_ bytes: [UInt8], rejectLoneSurrogates: Bool = false) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buf) throws(JSONParseError) -> JSONValue in
            try parse(buf, rejectLoneSurrogates: rejectLoneSurrogates)
        }
    }

    /// `parse`, over bytes the caller holds (a range of a mapped file: no copy).
    static func parse(_ buf: UnsafeBufferPointer<UInt8>, rejectLoneSurrogates: Bool = false) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, ScanFailure>
        var scanner = Scanner(buf: buf, rejectLoneSurrogates: rejectLoneSurrogates)
        do throws(ScanFailure) {
            result = .success(try scanner.parseDocument())
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let value):
            return value
        case .failure(let failure):
            throw makeError(buf, failure)
        }
    }

    static func makeError(_ bytes: [UInt8], _ failure: ScanFailure) -> JSONParseError {
        bytes.withUnsafeBufferPointer { makeError($0, failure) }
    }

    static func makeError(_ bytes: UnsafeBufferPointer<UInt8>, _ failure: ScanFailure) -> JSONParseError {
        let offset = min(max(failure.offset, 0), bytes.count)
        var line = 1
        var lineStart = 0
        var i = 0
        while i < offset {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        return JSONParseError(offset: offset, line: line, column: offset - lineStart + 1, reason: failure.reason)
    }
}

struct ScanFailure: Error {
    var offset: Int
    var reason: String
}

/// Describes a byte for an error message without echoing control characters.
func describeByte(_ b: UInt8) -> String {
    if b >= 0x21 && b <= 0x7E { return "'\(Character(Unicode.Scalar(b)))'" }
    let hex = String(b, radix: 16, uppercase: true)
    return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
}

private let quote: UInt8 = 0x22
private let backslash: UInt8 = 0x5C

private struct Scanner {
    let buf: UnsafeBufferPointer<UInt8>
    let rejectLoneSurrogates: Bool
    var pos = 0
    var depth = 0

    init(buf: UnsafeBufferPointer<UInt8>, rejectLoneSurrogates: Bool) {
        self.buf = buf
        self.rejectLoneSurrogates = rejectLoneSurrogates
    }

    var end: Int { buf.count }

    func fail(_ reason: String, at offset: Int? = nil) -> ScanFailure {
        ScanFailure(offset: offset ?? pos, reason: reason)
    }

    func unexpected(_ expected: String) -> ScanFailure {
        if pos >= end { return fail("unexpected end of input, expected \(expected)") }
        return fail("unexpected \(describeByte(buf[pos])), expected \(expected)")
    }

    mutating func skipWhitespace() {
        while pos < end {
            let b = buf[pos]
            if b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { pos += 1 } else { return }
        }
    }

    mutating func parseDocument() throws(ScanFailure) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if pos < end { throw fail("unexpected \(describeByte(buf[pos])) after the JSON value") }
        return value
    }

    mutating func parseValue() throws(ScanFailure) -> JSONValue {
        skipWhitespace()
        guard pos < end else { throw unexpected("a value") }
        switch buf[pos] {
        case 0x7B: return try parseObject()
        case 0x5B: return try parseArray()
        case quote: return .string(try parseString())
        case 0x74: try expectLiteral("true"); return .bool(true)
        case 0x66: try expectLiteral("false"); return .bool(false)
        case 0x6E: try expectLiteral("null"); return .null
        case 0x2D, 0x30...0x39: return try parseNumber()
        default: throw unexpected("a value")
        }
    }

    mutating func expectLiteral(_ word: StaticString) throws(ScanFailure) {
        let start = pos
        let count = word.utf8CodeUnitCount
        let expected = word.utf8Start
        for i in 0..<count {
            guard pos < end, buf[pos] == expected[i] else {
                throw fail("invalid literal, expected '\(word)'", at: start)
            }
            pos += 1
        }
    }

    mutating func enter() throws(ScanFailure) {
        depth += 1
        if depth > JSONParser.maximumDepth {
            throw fail("nesting deeper than \(JSONParser.maximumDepth) levels")
        }
    }

    mutating func parseObject() throws(ScanFailure) -> JSONValue {
        try enter()
        pos += 1  // '{'
        var fields: JSONFields = []
        skipWhitespace()
        if pos < end && buf[pos] == 0x7D {
            pos += 1
            depth -= 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard pos < end, buf[pos] == quote else { throw unexpected("a string key") }
            let key = try parseString()
            skipWhitespace()
            guard pos < end, buf[pos] == 0x3A else { throw unexpected("':' after object key") }
            pos += 1
            let value = try parseValue()
            fields.append((key: key, value: value))
            skipWhitespace()
            guard pos < end else { throw unexpected("',' or '}' in object") }
            if buf[pos] == 0x2C {
                pos += 1
                skipWhitespace()
                if pos < end && buf[pos] == 0x7D { throw fail("trailing comma in object") }
                continue
            }
            if buf[pos] == 0x7D { pos += 1; break }
            throw unexpected("',' or '}' in object")
        }
        depth -= 1
        return .object(fields)
    }

    mutating func parseArray() throws(ScanFailure) -> JSONValue {
        try enter()
        pos += 1  // '['
        var items: [JSONValue] = []
        skipWhitespace()
        if pos < end && buf[pos] == 0x5D {
            pos += 1
            depth -= 1
            return .array(items)
        }
        while true {
            items.append(try parseValue())
            skipWhitespace()
            guard pos < end else { throw unexpected("',' or ']' in array") }
            if buf[pos] == 0x2C {
                pos += 1
                skipWhitespace()
                if pos < end && buf[pos] == 0x5D { throw fail("trailing comma in array") }
                continue
            }
            if buf[pos] == 0x5D { pos += 1; break }
            throw unexpected("',' or ']' in array")
        }
        depth -= 1
        return .array(items)
    }

    // number = [ minus ] int [ frac ] [ exp ]
    // int    = zero / ( digit1-9 *DIGIT )
    // frac   = decimal-point 1*DIGIT
    // exp    = e [ minus / plus ] 1*DIGIT
    mutating func parseNumber() throws(ScanFailure) -> JSONValue {
        let start = pos
        if buf[pos] == 0x2D { pos += 1 }
        guard pos < end, isDigit(buf[pos]) else { throw unexpected("a digit after '-'") }
        if buf[pos] == 0x30 {
            pos += 1
            if pos < end && isDigit(buf[pos]) { throw fail("leading zeros are not allowed in numbers", at: pos - 1) }
        } else {
            while pos < end && isDigit(buf[pos]) { pos += 1 }
        }
        if pos < end && buf[pos] == 0x2E {
            pos += 1
            guard pos < end, isDigit(buf[pos]) else { throw unexpected("a digit after the decimal point") }
            while pos < end && isDigit(buf[pos]) { pos += 1 }
        }
        if pos < end && (buf[pos] == 0x65 || buf[pos] == 0x45) {
            pos += 1
            if pos < end && (buf[pos] == 0x2B || buf[pos] == 0x2D) { pos += 1 }
            guard pos < end, isDigit(buf[pos]) else { throw unexpected("a digit in the exponent") }
            while pos < end && isDigit(buf[pos]) { pos += 1 }
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: buf[start..<pos]), as: UTF8.self)
        return .number(literal)
    }

    @inline(__always) func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// Parses a string starting at its opening quote; leaves `pos` after the closing quote.
    mutating func parseString() throws(ScanFailure) -> String {
        let open = pos
        pos += 1
        let start = pos
        // Fast path: no escapes.
        let raw = UnsafeRawPointer(buf.baseAddress)
        while pos < end {
            if pos + 8 <= end, let raw {
                let m = stringStopMask(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: pos, as: UInt64.self)))
                if m == 0 { pos += 8; continue }
                pos += m.trailingZeroBitCount >> 3
                break
            }
            let b = buf[pos]
            if b == quote || b == backslash || b < 0x20 { break }
            pos += 1
        }
        guard pos < end else { throw fail("unterminated string", at: open) }
        if buf[pos] < 0x20 {
            throw fail("unescaped control character \(describeByte(buf[pos])) in string")
        }
        if buf[pos] == quote {
            let raw = UnsafeBufferPointer(rebasing: buf[start..<pos])
            guard let s = validatedString(raw) else {
                throw fail("invalid UTF-8 in string", at: start + firstInvalidUTF8(raw))
            }
            pos += 1
            return s
        }
        return try parseEscapedString(open: open, start: start)
    }

    /// The rest of a string with escapes, from the first stop byte at `pos`. The decoded bytes
    /// are never more than the escaped ones, so they go straight into a buffer of that size: an
    /// array `append` per run and per escape cost about 100 instructions each in bodies full of
    /// `\n` and `\"`. Errors are reported in the order they stand in the text.
    mutating func parseEscapedString(open: Int, start: Int) throws(ScanFailure) -> String {
        // Where decoding stops: the closing quote, a control character, or the end of the input.
        let raw = UnsafeRawPointer(buf.baseAddress!)
        var stop = pos
        while stop < end {
            let b = buf[stop]
            if b == quote || b < 0x20 { break }
            if b == backslash { stop += 2; continue }
            stop += 1
            while stop + 8 <= end {
                let m = stringStopMask(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: stop, as: UInt64.self)))
                if m != 0 { stop += m.trailingZeroBitCount >> 3; break }
                stop += 8
            }
        }
        stop = min(stop, end)
        var failure: ScanFailure?
        let decoded = [UInt8](unsafeUninitializedCapacity: max(1, stop - start)) { out, count in
            guard let o = out.baseAddress, let b = buf.baseAddress else { return }
            (o).update(from: b + start, count: pos - start)
            count = pos - start
            while pos < stop {
                if buf[pos] != backslash {
                    let next = memchr(b + pos, Int32(backslash), stop - pos)
                    let run = next.map { UnsafeRawPointer($0) - UnsafeRawPointer(b) } ?? stop
                    (o + count).update(from: b + pos, count: run - pos)
                    count += run - pos
                    pos = run
                    continue
                }
                let escapeStart = pos
                pos += 1
                guard pos < end else { failure = fail("unterminated string", at: open); return }
                switch JSONEscape.decode(buf, letterAt: pos, end: end, rejectLoneSurrogates: rejectLoneSurrogates) {
                case .success(let (scalar, next)):
                    count += writeUTF8(scalar, to: o + count)
                    pos = next
                case .failure(.badHex):
                    failure = fail("invalid \\u escape, expected 4 hex digits", at: escapeStart); return
                case .failure(.loneSurrogate):
                    failure = fail("lone UTF-16 surrogate in \\u escape", at: escapeStart); return
                case .failure(.invalidEscape(let e)):
                    failure = fail("invalid escape sequence '\\' followed by \(describeByte(e))", at: escapeStart); return
                }
            }
        }
        if let failure { throw failure }
        guard pos < end else { throw fail("unterminated string", at: open) }
        let b = buf[pos]
        if b < 0x20 { throw fail("unescaped control character \(describeByte(b)) in string") }
        let close = pos
        pos += 1
        guard let s = decoded.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else {
            let raw = UnsafeBufferPointer(rebasing: buf[start..<close])
            throw fail("invalid UTF-8 in string", at: start + firstInvalidUTF8(raw))
        }
        return s
    }
}

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
    /// escape is invalid or cut off. Lone surrogates become U+FFFD, as in `parse`.
    public static func unescapeStringContent(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var k = 0
        while k < raw.count {
            let c = raw[k]
            guard c == 0x5C else { out.append(c); k += 1; continue }
            guard k + 1 < raw.count else { return nil }
            switch JSONEscape.decode(raw, letterAt: k + 1, end: raw.count, into: &out, rejectLoneSurrogates: false) {
            case .success(let next): k = next
            case .failure: return nil
            }
        }
        return out
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
