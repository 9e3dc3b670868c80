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

    /// What the bytes given to `parse` are.
    enum Extent {
        /// A whole document: nothing but spaces may follow the value.
        case document
        /// One element of an array that many levels deep in a document (an entry of a HAR is 3
        /// levels in), followed by the byte after it. The nesting limit, and what is met at the
        /// value's end, are as in a parse of the whole document: the value may end at a `,` or
        /// `]`, and a number cut by that byte is reported at that byte.
        case element(depth: Int)
    }

    /// `parse`, over bytes the caller holds (a range of a mapped file: no copy).
    static func parse(_ buf: UnsafeBufferPointer<UInt8>, rejectLoneSurrogates: Bool = false,
                      extent: Extent = .document) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, ScanFailure>
        var scanner = Scanner(buf: buf, rejectLoneSurrogates: rejectLoneSurrogates)
        if case .element(let depth) = extent { scanner.depth = depth }
        scanner.extent = extent
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
        var lines = LineCounter()
        lines.count(UnsafeBufferPointer(rebasing: bytes[..<offset]))
        return lines.error(at: offset, failure.reason)
    }
}

/// The line and column of an offset, counted over the bytes before it, a piece at a time (one
/// piece for a document in memory, several for one read by ranges).
struct LineCounter {
    private var line = 1
    private var lineStart = 0
    private var counted = 0

    mutating func count(_ piece: UnsafeBufferPointer<UInt8>) {
        for (j, b) in piece.enumerated() where b == 0x0A {
            line += 1
            lineStart = counted + j + 1
        }
        counted += piece.count
    }

    /// The error at `offset`, which is where the counted bytes end.
    func error(at offset: Int, _ reason: String) -> JSONParseError {
        JSONParseError(offset: offset, line: line, column: offset - lineStart + 1, reason: reason)
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
    var extent = JSONParser.Extent.document
    /// Room to decode strings with escapes in (`parseEscapedString`).
    var scratch: [UInt8] = []

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
        guard pos < end else { return value }
        guard case .element = extent else { throw fail("unexpected \(describeByte(buf[pos])) after the JSON value") }
        // An array's element: what follows it is met as the array's parse meets it.
        guard buf[pos] == 0x2C || buf[pos] == 0x5D else { throw unexpected("',' or ']' in array") }
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

    /// The rest of a string with escapes, from the first stop byte at `pos`, in one pass: decoded
    /// into `scratch` (reused by every string of the document) up to the closing quote, then
    /// copied into the string. Finding the quote first, to decode into a string of the escaped
    /// size, read every body twice. An array `append` per run and per escape cost about 100
    /// instructions each in bodies full of `\n` and `\"`, so runs are stored eight bytes at a
    /// time. Errors are reported in the order they stand in the text.
    mutating func parseEscapedString(open: Int, start: Int) throws(ScanFailure) -> String {
        let raw = UnsafeRawPointer(buf.baseAddress!)
        // Out of `self` while in use (the decoding closure reads the scanner), back when done.
        var scratch = self.scratch
        self.scratch = []
        defer { self.scratch = scratch }
        // The bytes before the first stop byte, as they are.
        var count = pos - start
        Self.ensure(&scratch, count + Self.scratchSlack + 64, keeping: 0)
        scratch.withUnsafeMutableBufferPointer { out in
            out.baseAddress!.update(from: buf.baseAddress! + start, count: count)
        }
        // The high bits of every byte copied as it is: when none is set, the result is ASCII but
        // for what escapes wrote (valid UTF-8), and needs no check.
        var high: UInt64 = 0
        for k in start..<pos { high |= UInt64(buf[k]) }
        var failure: ScanFailure?
        // Read once: a static's lazy initializer is checked at each access (a call per escape).
        let singleLetter = JSONEscape.singleLetter
        var needsRoom = true
        while needsRoom {
            Self.ensure(&scratch, count + Self.scratchSlack + 64, keeping: count)
            needsRoom = scratch.withUnsafeMutableBufferPointer { buffer -> Bool in
                let o = buffer.baseAddress!
                let out = UnsafeMutableRawPointer(o)
                // Below this, a word store and the longest escape's bytes fit.
                let room = buffer.count - Self.scratchSlack
                while count < room {
                    if pos + 8 <= end {
                        let w = raw.loadUnaligned(fromByteOffset: pos, as: UInt64.self)
                        out.storeBytes(of: w, toByteOffset: count, as: UInt64.self)
                        high |= w
                        let m = stringStopMask(UInt64(littleEndian: w))
                        if m == 0 { pos += 8; count += 8; continue }
                        let k = m.trailingZeroBitCount >> 3
                        pos += k
                        count += k
                    } else if pos >= end {
                        return false
                    }
                    let b = buf[pos]
                    if b == quote || b < 0x20 { return false }
                    if b != backslash {
                        o[count] = b
                        high |= UInt64(b)
                        count += 1
                        pos += 1
                        continue
                    }
                    let escapeStart = pos
                    pos += 1
                    guard pos < end else { failure = fail("unterminated string", at: open); return false }
                    // The one-letter escapes of text, without a call.
                    let single = singleLetter[Int(buf[pos])]
                    if single != 0 {
                        o[count] = single
                        count += 1
                        pos += 1
                        continue
                    }
                    switch JSONEscape.decode(buf, letterAt: pos, end: end, rejectLoneSurrogates: rejectLoneSurrogates) {
                    case .success(let (scalar, next)):
                        count += writeUTF8(scalar, to: o + count)
                        pos = next
                    case .failure(.badHex):
                        failure = fail("invalid \\u escape, expected 4 hex digits", at: escapeStart); return false
                    case .failure(.loneSurrogate):
                        failure = fail("lone UTF-16 surrogate in \\u escape", at: escapeStart); return false
                    case .failure(.invalidEscape(let e)):
                        failure = fail("invalid escape sequence '\\' followed by \(describeByte(e))", at: escapeStart); return false
                    }
                }
                return true
            }
        }
        if let failure { throw failure }
        guard pos < end else { throw fail("unterminated string", at: open) }
        let b = buf[pos]
        if b < 0x20 { throw fail("unescaped control character \(describeByte(b)) in string") }
        let close = pos
        pos += 1
        let decoded = count
        let valid = high & 0x8080_8080_8080_8080 == 0
            || scratch.withUnsafeBufferPointer { firstInvalidUTF8(UnsafeBufferPointer(rebasing: $0[..<decoded])) == decoded }
        guard valid else {
            let raw = UnsafeBufferPointer(rebasing: buf[start..<close])
            throw fail("invalid UTF-8 in string", at: start + firstInvalidUTF8(raw))
        }
        return scratch.withUnsafeBufferPointer { decodedBytes in
            String(unsafeUninitializedCapacity: decoded) { out in
                out.baseAddress!.update(from: decodedBytes.baseAddress!, count: decoded)
                return decoded
            }
        }
    }

    /// Bytes past the decoded ones that `parseEscapedString` may write before checking its room:
    /// an eight-byte store, or a scalar's four.
    static let scratchSlack = 16

    /// Makes `scratch` hold at least `capacity` bytes, its first `keeping` kept.
    static func ensure(_ scratch: inout [UInt8], _ capacity: Int, keeping: Int) {
        guard scratch.count < capacity else { return }
        let old = scratch
        scratch = [UInt8](unsafeUninitializedCapacity: max(capacity, 2 * old.count, 4096)) { buffer, initialized in
            old.withUnsafeBufferPointer { buffer.baseAddress!.update(from: $0.baseAddress!, count: keeping) }
            initialized = buffer.count
        }
    }
}
