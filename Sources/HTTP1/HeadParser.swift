// Parsing of a complete head (or trailer section) that the line scanner has already delimited.
// By the time these functions run, every line in the block ends in CRLF, there is no bare CR or
// bare LF, and the block ends with an empty line.

/// Framing-relevant facts collected on bytes while the fields are parsed, so that no field has
/// to be looked up again by String comparison.
struct FieldFacts {
    var hostCount = 0
    var contentLength: UInt64?
    var transferEncodingPresent = false
    var chunkedCount = 0
    var codingCount = 0
    var lastCodingIsChunked = false
    var connectionClose = false
    var connectionKeepAlive = false

    func keepAlive(version: HTTPVersion) -> Bool {
        if connectionClose { return false }
        return version.defaultsToKeepAlive || connectionKeepAlive
    }
}

enum HeadParser {
    /// Index of the CR that ends the line starting at `start` (the block guarantees one exists
    /// before `end`).
    @inline(__always)
    static func lineEnd(_ buf: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int {
        var i = start
        while i < end && buf[i] != CR { i += 1 }
        return i
    }

    // MARK: start lines

    /// request-line = method SP request-target SP HTTP-version   (RFC 9112 §3)
    /// method       = token
    /// Strict: exactly one SP between the parts (the "MAY accept any whitespace" leniency of
    /// §3 is not taken). The target must be 1*VCHAR: the RFC forms (origin-form, absolute-form,
    /// authority-form, asterisk-form) are all ASCII without whitespace; raw UTF-8 is rejected.
    static func parseRequestLine(_ buf: UnsafeBufferPointer<UInt8>, _ s: Int, _ e: Int) throws(HTTP1ParseError)
        -> (method: String, target: String, version: HTTPVersion)
    {
        var i = s
        while i < e && isTokenChar(buf[i]) { i += 1 }
        guard i > s else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "request line does not start with a method token: \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e])))\"")
        }
        guard i < e, buf[i] == SP else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "method is not followed by a single space in request line \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e])))\"")
        }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < e && isVisibleASCII(buf[i]) { i += 1 }
        guard i > targetStart, i < e, buf[i] == SP else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "invalid request-target (must be visible ASCII followed by one space) in \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e])))\"")
        }
        let targetEnd = i
        i += 1
        let version = try parseVersion(buf, i, e, context: "request line")
        guard i + 8 == e else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "unexpected bytes after HTTP version in request line: \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[(i + 8)..<e]), limit: quotedWireBytes))\"")
        }
        let method = String(decoding: UnsafeBufferPointer(rebasing: buf[s..<methodEnd]), as: UTF8.self)
        let target = String(decoding: UnsafeBufferPointer(rebasing: buf[targetStart..<targetEnd]), as: UTF8.self)
        return (method, target, version)
    }

    /// HTTP-version = HTTP-name "/" DIGIT "." DIGIT ; HTTP-name = %s"HTTP"   (RFC 9112 §2.3)
    /// Reads exactly 8 bytes at `i`. Well-formed versions other than 1.0/1.1 are `unsupportedVersion`.
    static func parseVersion(_ buf: UnsafeBufferPointer<UInt8>, _ i: Int, _ e: Int, context: String) throws(HTTP1ParseError)
        -> HTTPVersion
    {
        guard e - i >= 8,
              buf[i] == 0x48, buf[i + 1] == 0x54, buf[i + 2] == 0x54, buf[i + 3] == 0x50, buf[i + 4] == 0x2F,
              isDigit(buf[i + 5]), buf[i + 6] == 0x2E, isDigit(buf[i + 7]),
              i + 8 == e || buf[i + 8] == SP
        else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "malformed HTTP version in \(context): \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[i..<e]), limit: quotedWireBytes))\"")
        }
        let major = Int(buf[i + 5] &- 0x30), minor = Int(buf[i + 7] &- 0x30)
        guard major == 1, minor <= 1 else {
            throw HTTP1ParseError(kind: .unsupportedVersion,
                                  message: "unsupported HTTP version HTTP/\(major).\(minor) (only HTTP/1.0 and HTTP/1.1)")
        }
        return HTTPVersion(major: major, minor: minor)
    }

    /// status-line   = HTTP-version SP status-code SP [ reason-phrase ]   (RFC 9112 §4)
    /// status-code   = 3DIGIT
    /// reason-phrase = 1*( HTAB / SP / VCHAR / obs-text )
    /// Leniency (named): `HTTP/1.1 200\r\n` without the second SP is accepted, as RFC 9112 §4 asks
    /// clients to be ready for a missing reason and many servers omit the space.
    /// Strict: status codes outside 100...599 are rejected (RFC 9110 §15: such values are invalid).
    static func parseStatusLine(_ buf: UnsafeBufferPointer<UInt8>, _ s: Int, _ e: Int) throws(HTTP1ParseError)
        -> (version: HTTPVersion, status: Int, reason: String, reasonIsLatin1: Bool)
    {
        let version = try parseVersion(buf, s, e, context: "status line")
        var i = s + 8
        guard i < e, buf[i] == SP, e - i >= 4,
              isDigit(buf[i + 1]), isDigit(buf[i + 2]), isDigit(buf[i + 3]),
              i + 4 == e || buf[i + 4] == SP
        else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "status line lacks \"SP 3DIGIT\" after the version: \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e])))\"")
        }
        let status = Int(buf[i + 1] &- 0x30) * 100 + Int(buf[i + 2] &- 0x30) * 10 + Int(buf[i + 3] &- 0x30)
        guard (100...599).contains(status) else {
            throw HTTP1ParseError(kind: .malformedStartLine, message: "status code \(status) outside 100...599")
        }
        i += 4
        if i == e { return (version, status, "", false) }
        i += 1  // the SP before the reason
        var high = false
        var k = i
        while k < e {
            let b = buf[k]
            if b >= 0x80 { high = true } else if !isFieldValueByte(b) {
                throw HTTP1ParseError(kind: .malformedStartLine,
                                      message: "control byte \(escapedByte(b)) in reason phrase")
            }
            k += 1
        }
        let (reason, latin1) = decodeText(UnsafeBufferPointer(rebasing: buf[i..<e]), hasHighBytes: high)
        return (version, status, reason, latin1)
    }

    // MARK: field lines

    /// Parses field lines from `start` up to and including the empty line.
    ///   field-line   = field-name ":" OWS field-value OWS        (RFC 9112 §5)
    ///   field-name   = token
    ///   field-value  = *field-content
    ///   field-content = field-vchar [ 1*( SP / HTAB / field-vchar ) field-vchar ]
    ///   field-vchar  = VCHAR / obs-text
    /// Strict: no whitespace between name and colon (§5.1 MUST reject), obs-fold rejected (§5.2),
    /// NUL/CTL/DEL in values rejected (RFC 9110 §5.5).
    static func parseFields(
        _ buf: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, expectedCount: Int,
        collectFacts: Bool, facts: inout FieldFacts
    ) throws(HTTP1ParseError) -> HTTPFields {
        var fields: [HTTPField] = []
        fields.reserveCapacity(expectedCount)
        var p = start
        while p < end {
            let e = lineEnd(buf, p, end)
            if e == p { break }
            fields.append(try parseFieldLine(buf, p, e, collectFacts: collectFacts, facts: &facts))
            p = e + 2
        }
        return HTTPFields(fields)
    }

    static func parseFieldLine(
        _ buf: UnsafeBufferPointer<UInt8>, _ s: Int, _ e: Int, collectFacts: Bool, facts: inout FieldFacts
    ) throws(HTTP1ParseError) -> HTTPField {
        if isWhitespace(buf[s]) {
            throw HTTP1ParseError(kind: .obsFold,
                                  message: "field line starts with whitespace (obs-fold is not accepted; \(e - s) bytes)")
        }
        var i = s
        while i < e && isTokenChar(buf[i]) { i += 1 }
        guard i < e else {
            throw HTTP1ParseError(kind: .malformedField,
                                  message: "field line without colon: \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e]), limit: quotedWireBytes))\"")
        }
        let c = buf[i]
        if c != COLON {
            if isWhitespace(c) {
                throw HTTP1ParseError(kind: .malformedField,
                                      message: "whitespace between field name and colon after \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<i])))\"")
            }
            throw HTTP1ParseError(kind: .malformedField,
                                  message: "invalid byte \(escapedByte(c)) in field name \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<i])))\"")
        }
        guard i > s else {
            throw HTTP1ParseError(kind: .malformedField, message: "empty field name")
        }
        let nameEnd = i
        var vs = i + 1
        while vs < e && isWhitespace(buf[vs]) { vs += 1 }
        var ve = e
        while ve > vs && isWhitespace(buf[ve - 1]) { ve -= 1 }
        var high = false
        var k = vs
        while k < ve {
            let b = buf[k]
            if b >= 0x80 {
                high = true
            } else if !isFieldValueByte(b) {
                let name = escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<nameEnd]))
                let what = b == 0 ? "NUL" : "control byte \(escapedByte(b))"
                throw HTTP1ParseError(kind: .invalidFieldValue, message: "\(what) in value of field \"\(name)\"")
            }
            k += 1
        }
        if collectFacts {
            try collect(buf, s, nameEnd, vs, ve, into: &facts)
        }
        let name = String(decoding: UnsafeBufferPointer(rebasing: buf[s..<nameEnd]), as: UTF8.self)
        let (value, latin1) = decodeText(UnsafeBufferPointer(rebasing: buf[vs..<ve]), hasHighBytes: high)
        return HTTPField(name: name, value: value, valueIsLatin1: latin1)
    }

    /// Records Host / Content-Length / Transfer-Encoding / Connection facts for one field.
    @inline(__always)
    static func collect(
        _ buf: UnsafeBufferPointer<UInt8>, _ ns: Int, _ ne: Int, _ vs: Int, _ ve: Int, into facts: inout FieldFacts
    ) throws(HTTP1ParseError) {
        switch ne - ns {
        case 4 where bytesEqualIgnoringCase(buf, ns, ne, "host"):
            facts.hostCount += 1
        case 10 where bytesEqualIgnoringCase(buf, ns, ne, "connection"):
            forEachListElement(buf, vs, ve) { a, b in
                if bytesEqualIgnoringCase(buf, a, b, "close") { facts.connectionClose = true }
                if bytesEqualIgnoringCase(buf, a, b, "keep-alive") { facts.connectionKeepAlive = true }
            }
        case 14 where bytesEqualIgnoringCase(buf, ns, ne, "content-length"):
            try collectContentLength(buf, vs, ve, into: &facts)
        case 17 where bytesEqualIgnoringCase(buf, ns, ne, "transfer-encoding"):
            facts.transferEncodingPresent = true
            // Transfer-Encoding = [ transfer-coding *( OWS "," OWS transfer-coding ) ]
            // Empty list elements are ignored (RFC 9110 §5.6.1).
            forEachListElement(buf, vs, ve) { a, b in
                facts.codingCount += 1
                let chunked = bytesEqualIgnoringCase(buf, a, b, "chunked")
                if chunked { facts.chunkedCount += 1 }
                facts.lastCodingIsChunked = chunked
            }
        default:
            break
        }
    }

    /// Content-Length = 1*DIGIT   (RFC 9110 §8.6)
    /// Leniency required by RFC 9112 §6.3 item 5: a comma list, or repeated fields, of identical
    /// values is accepted as that value. Empty elements, signs, spaces inside, hex: rejected.
    static func collectContentLength(
        _ buf: UnsafeBufferPointer<UInt8>, _ vs: Int, _ ve: Int, into facts: inout FieldFacts
    ) throws(HTTP1ParseError) {
        var p = vs
        while true {
            var q = p
            while q < ve && buf[q] != COMMA { q += 1 }
            var a = p, b = q
            while a < b && isWhitespace(buf[a]) { a += 1 }
            while b > a && isWhitespace(buf[b - 1]) { b -= 1 }
            guard a < b else {
                throw HTTP1ParseError(kind: .invalidContentLength, message: "empty Content-Length value")
            }
            var value: UInt64 = 0
            var k = a
            while k < b {
                let d = buf[k]
                guard isDigit(d) else {
                    throw HTTP1ParseError(kind: .invalidContentLength,
                                          message: "Content-Length is not 1*DIGIT: \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[vs..<ve])))\"")
                }
                let (m, o1) = value.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(UInt64(d &- 0x30))
                guard !o1, !o2 else {
                    throw HTTP1ParseError(kind: .invalidContentLength, message: "Content-Length overflows 64 bits")
                }
                value = s
                k += 1
            }
            if let existing = facts.contentLength, existing != value {
                throw HTTP1ParseError(kind: .invalidContentLength,
                                      message: "conflicting Content-Length values \(existing) and \(value)")
            }
            facts.contentLength = value
            if q >= ve { break }
            p = q + 1
        }
    }

    /// Calls `body` with the bounds of each non-empty, OWS-trimmed element of a comma list.
    @inline(__always)
    static func forEachListElement(
        _ buf: UnsafeBufferPointer<UInt8>, _ vs: Int, _ ve: Int, _ body: (Int, Int) -> Void
    ) {
        var p = vs
        while p <= ve {
            var q = p
            while q < ve && buf[q] != COMMA { q += 1 }
            var a = p, b = q
            while a < b && isWhitespace(buf[a]) { a += 1 }
            while b > a && isWhitespace(buf[b - 1]) { b -= 1 }
            if a < b { body(a, b) }
            p = q + 1
        }
    }
}
