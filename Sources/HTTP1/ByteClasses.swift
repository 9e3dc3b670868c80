// Byte classes from RFC 9110 §5.6 / RFC 5234 Appendix B, tested on raw bytes so that the decoders
// never build a String just to classify input.

let CR: UInt8 = 0x0D
let LF: UInt8 = 0x0A
let SP: UInt8 = 0x20
let HTAB: UInt8 = 0x09
let COLON: UInt8 = 0x3A
let COMMA: UInt8 = 0x2C
let SEMICOLON: UInt8 = 0x3B
let EQUALS: UInt8 = 0x3D
let DQUOTE: UInt8 = 0x22
let BACKSLASH: UInt8 = 0x5C

/// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
///       / DIGIT / ALPHA
/// token = 1*tchar
/// Encoded as a 128-bit set split into two words (bit n of `low` is byte n, bit n of `high` is byte n+64).
@inline(__always)
package func isTokenChar(_ b: UInt8) -> Bool {
    let low: UInt64 = 0x03FF_6CFA_0000_0000
    let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
    if b < 64 { return (low >> UInt64(b)) & 1 == 1 }
    if b < 128 { return (high >> UInt64(b &- 64)) & 1 == 1 }
    return false
}

/// OWS = *( SP / HTAB ); BWS = OWS
@inline(__always)
func isWhitespace(_ b: UInt8) -> Bool { b == SP || b == HTAB }

/// VCHAR = %x21-7E
@inline(__always)
func isVisibleASCII(_ b: UInt8) -> Bool { b >= 0x21 && b <= 0x7E }

/// A byte allowed inside a field value: field-vchar = VCHAR / obs-text, plus SP and HTAB between
/// them (field-content). obs-text = %x80-FF.
@inline(__always)
func isFieldValueByte(_ b: UInt8) -> Bool { b >= 0x20 ? b != 0x7F : b == HTAB }

/// HEXDIG = DIGIT / "A" / "B" / "C" / "D" / "E" / "F" (case-insensitive, RFC 5234 §2.3)
@inline(__always)
func hexValue(_ b: UInt8) -> UInt64? {
    switch b {
    case 0x30...0x39: return UInt64(b &- 0x30)
    case 0x41...0x46: return UInt64(b &- 0x41 &+ 10)
    case 0x61...0x66: return UInt64(b &- 0x61 &+ 10)
    default: return nil
    }
}

@inline(__always)
func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

@inline(__always)
func asciiLowercased(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b | 0x20 : b }

/// True when `buf[start..<end]` equals `lowercaseLiteral` ignoring ASCII case.
/// `lowercaseLiteral` must be lowercase ASCII.
@inline(__always)
func bytesEqualIgnoringCase(
    _ buf: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int, _ lowercaseLiteral: StaticString
) -> Bool {
    let n = lowercaseLiteral.utf8CodeUnitCount
    guard end - start == n else { return false }
    let lit = lowercaseLiteral.utf8Start
    var i = 0
    while i < n {
        if asciiLowercased(buf[start + i]) != lit[i] { return false }
        i += 1
    }
    return true
}

/// ASCII case-insensitive comparison of two strings (field names).
func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
    let au = a.utf8, bu = b.utf8
    guard au.count == bu.count else { return false }
    var bi = bu.makeIterator()
    for x in au {
        guard let y = bi.next(), asciiLowercased(x) == asciiLowercased(y) else { return false }
    }
    return true
}

/// ASCII-only lowercasing (field names are tokens, so this never touches non-ASCII).
func asciiLowercased(_ s: String) -> String {
    if !s.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { return s }
    return String(decoding: s.utf8.map(asciiLowercased), as: UTF8.self)
}

/// Renders bytes for an error message: printable ASCII as is, everything else as `\xNN`, at most
/// `limit` input bytes (then "..."). Keeps messages on one line with no raw control characters.
/// The most bytes of a line that may hold anything (a glued or folded header, a credential) an
/// error message quotes: enough to show where it went wrong ("HTTP/1.1er"), too few to carry a
/// secret into the live log and `_error` (the proxy-session fuzz target checks this).
let quotedWireBytes = 10

func escapedForMessage<C: Collection>(_ bytes: C, limit: Int = quotedWireBytes) -> String where C.Element == UInt8 {
    var out = ""
    var n = 0
    for b in bytes {
        if n == limit { out += "..."; break }
        out += escapedByte(b)
        n += 1
    }
    return out
}

func escapedByte(_ b: UInt8) -> String {
    if b >= 0x20 && b < 0x7F && b != BACKSLASH { return String(UnicodeScalar(b)) }
    if b == BACKSLASH { return "\\\\" }
    let digits = Array("0123456789abcdef")
    return "\\x" + String(digits[Int(b >> 4)]) + String(digits[Int(b & 0x0F)])
}

/// Text safe for a terminal or a log: control characters (C0, DEL, C1) become `\xNN`, so bytes
/// from the wire can never move the cursor, change colours or forge log lines. The one
/// implementation (error messages here; `Recording.sanitizedForLog` forwards to it).
public func sanitizedControlCharacters(_ s: String) -> String {
    if !s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || ($0.value >= 0x80 && $0.value < 0xA0) }) {
        return s
    }
    var out = ""
    out.reserveCapacity(s.utf8.count + 8)
    for u in s.unicodeScalars {
        if u.value < 0x20 || u.value == 0x7F || (u.value >= 0x80 && u.value < 0xA0) {
            out += escapedByte(UInt8(truncatingIfNeeded: u.value))
        } else {
            out.unicodeScalars.append(u)
        }
    }
    return out
}

/// Builds a String from bytes: ASCII and valid UTF-8 as UTF-8, anything else as ISO-8859-1.
/// Returns whether the ISO-8859-1 fallback was used.
@inline(__always)
func decodeText(_ bytes: UnsafeBufferPointer<UInt8>, hasHighBytes: Bool) -> (String, isLatin1: Bool) {
    if !hasHighBytes {
        return (String(decoding: bytes, as: UTF8.self), false)
    }
    if let s = String(validating: bytes, as: UTF8.self) {
        return (s, false)
    }
    var s = ""
    s.unicodeScalars.reserveCapacity(bytes.count)
    for b in bytes { s.unicodeScalars.append(Unicode.Scalar(b)) }
    return (s, true)
}
