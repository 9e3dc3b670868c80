/// Writes HTTP/1.1 heads and chunked framing. Everything written is validated first, the same
/// rules the decoders apply, so the proxy never forwards bytes a strict peer would reject.
public enum HTTP1Serializer {
    /// Validates (token method, visible-ASCII target, token names, no CR/LF/NUL/CTL in values) and
    /// serializes `method SP target SP version CRLF *(field CRLF) CRLF`.
    public static func requestHead(method: String, target: String, version: HTTPVersion, fields: HTTPFields) throws
        -> [UInt8]
    {
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenChar) else {
            throw HTTP1ParseError(kind: .malformedStartLine, message: "method \"\(escapedForMessage(method.utf8))\" is not a token")
        }
        guard !target.isEmpty, target.utf8.allSatisfy(isVisibleASCII) else {
            throw HTTP1ParseError(kind: .malformedStartLine,
                                  message: "request-target \"\(escapedForMessage(target.utf8))\" is not visible ASCII")
        }
        try validateVersion(version)
        var out: [UInt8] = []
        out.reserveCapacity(method.utf8.count + target.utf8.count + 12 + estimatedSize(fields))
        out.append(contentsOf: method.utf8)
        out.append(SP)
        out.append(contentsOf: target.utf8)
        out.append(SP)
        appendVersion(version, to: &out)
        out.append(CR); out.append(LF)
        try appendFields(fields, to: &out)
        out.append(CR); out.append(LF)
        return out
    }

    /// Validates and serializes `version SP 3DIGIT SP reason CRLF *(field CRLF) CRLF`.
    /// The status must be 100...599; the reason may be empty (the SP is still written).
    public static func responseHead(version: HTTPVersion, status: Int, reason: String, fields: HTTPFields) throws
        -> [UInt8]
    {
        try responseHead(version: version, status: status, reason: reason, reasonIsLatin1: false, fields: fields)
    }

    /// As `responseHead(version:status:reason:fields:)`, writing a latin-1 reason byte-exactly.
    public static func responseHead(
        version: HTTPVersion, status: Int, reason: String, reasonIsLatin1: Bool, fields: HTTPFields
    ) throws -> [UInt8] {
        try validateVersion(version)
        guard (100...599).contains(status) else {
            throw HTTP1ParseError(kind: .malformedStartLine, message: "status code \(status) outside 100...599")
        }
        var out: [UInt8] = []
        out.reserveCapacity(reason.utf8.count + 16 + estimatedSize(fields))
        appendVersion(version, to: &out)
        out.append(SP)
        out.append(UInt8(0x30 + status / 100))
        out.append(UInt8(0x30 + (status / 10) % 10))
        out.append(UInt8(0x30 + status % 10))
        out.append(SP)
        // reason-phrase = 1*( HTAB / SP / VCHAR / obs-text )
        guard try appendText(reason, latin1: reasonIsLatin1, to: &out, allowEdgeWhitespace: true) else {
            throw HTTP1ParseError(kind: .malformedStartLine, message: "control character in reason phrase")
        }
        out.append(CR); out.append(LF)
        try appendFields(fields, to: &out)
        out.append(CR); out.append(LF)
        return out
    }

    /// Appends one chunk: `<hex size>\r\n<data>\r\n`. Appends nothing for empty data (an empty
    /// chunk would be the last-chunk).
    public static func appendChunk(_ data: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        guard data.count > 0 else { return }
        appendChunkSize(data.count, to: &buffer)
        buffer.append(contentsOf: data)
        buffer.append(CR); buffer.append(LF)
    }

    /// Appends one chunk: `<hex size>\r\n<data>\r\n`. Appends nothing for empty data.
    public static func appendChunk(_ data: [UInt8], to buffer: inout [UInt8]) {
        guard !data.isEmpty else { return }
        appendChunkSize(data.count, to: &buffer)
        buffer.append(contentsOf: data)
        buffer.append(CR); buffer.append(LF)
    }

    /// `0\r\n` + trailer fields + `\r\n`. Trailer fields that would not pass validation (bad
    /// name, control characters in the value) are left out rather than written.
    public static func lastChunk(trailers: HTTPFields) -> [UInt8] {
        var out: [UInt8] = [0x30, CR, LF]
        for field in trailers.fields {
            var line: [UInt8] = []
            if (try? appendField(field, to: &line)) != nil {
                out.append(contentsOf: line)
            }
        }
        out.append(CR); out.append(LF)
        return out
    }

    // MARK: helpers

    static func appendChunkSize(_ n: Int, to buffer: inout [UInt8]) {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var shift = (Int.bitWidth - n.leadingZeroBitCount + 3) / 4 * 4 - 4
        while shift >= 0 {
            buffer.append(digits[(n >> shift) & 0xF])
            shift -= 4
        }
        buffer.append(CR); buffer.append(LF)
    }

    static func validateVersion(_ v: HTTPVersion) throws {
        guard (0...9).contains(v.major), (0...9).contains(v.minor) else {
            throw HTTP1ParseError(kind: .malformedStartLine, message: "HTTP version \(v.major).\(v.minor) is not two digits")
        }
    }

    static func appendVersion(_ v: HTTPVersion, to out: inout [UInt8]) {
        out.append(contentsOf: [0x48, 0x54, 0x54, 0x50, 0x2F, UInt8(0x30 + v.major), 0x2E, UInt8(0x30 + v.minor)])
    }

    static func estimatedSize(_ fields: HTTPFields) -> Int {
        var n = 0
        for f in fields.fields { n += f.name.utf8.count + f.value.utf8.count + 4 }
        return n
    }

    static func appendFields(_ fields: HTTPFields, to out: inout [UInt8]) throws {
        for field in fields.fields { try appendField(field, to: &out) }
    }

    /// field-line = field-name ":" OWS field-value OWS; written as `name: value`.
    static func appendField(_ field: HTTPField, to out: inout [UInt8]) throws {
        // Checked and copied as one contiguous buffer: the generic UTF-8 iterator costs several
        // times more per byte, on every proxied head.
        var name = field.name
        let nameIsToken = name.withUTF8 { bytes -> Bool in
            guard !bytes.isEmpty, bytes.allSatisfy(isTokenChar) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        guard nameIsToken else {
            throw HTTP1ParseError(kind: .malformedField,
                                  message: "field name \"\(escapedForMessage(field.name.utf8))\" is not a token")
        }
        out.append(COLON)
        out.append(SP)
        guard try appendText(field.value, latin1: field.valueIsLatin1, to: &out, allowEdgeWhitespace: false) else {
            throw HTTP1ParseError(kind: .invalidFieldValue,
                                  message: "invalid value for field \"\(escapedForMessage(field.name.utf8))\" (control character, or leading/trailing whitespace)")
        }
        out.append(CR); out.append(LF)
    }

    /// Appends a value or reason: UTF-8 bytes, or one byte per scalar when `latin1`. Returns false
    /// for NUL/CR/LF/other CTL/DEL, or (values only) leading/trailing SP/HTAB, which the
    /// field-content grammar does not allow and the decoder would strip.
    static func appendText(_ text: String, latin1: Bool, to out: inout [UInt8], allowEdgeWhitespace: Bool) throws -> Bool {
        let start = out.count
        if latin1 {
            for u in text.unicodeScalars {
                guard u.value <= 0xFF else {
                    throw HTTP1ParseError(kind: .invalidFieldValue,
                                          message: "latin-1 text contains U+\(String(u.value, radix: 16, uppercase: true))")
                }
                let b = UInt8(u.value)
                guard isFieldValueByte(b) else { return false }
                out.append(b)
            }
        } else {
            // One contiguous buffer, as for names in `appendField`.
            var text = text
            let valid = text.withUTF8 { bytes -> Bool in
                guard bytes.allSatisfy(isFieldValueByte) else { return false }
                out.append(contentsOf: bytes)
                return true
            }
            guard valid else { return false }
        }
        if !allowEdgeWhitespace && out.count > start {
            if isWhitespace(out[start]) || isWhitespace(out[out.count - 1]) { return false }
        }
        return true
    }
}
