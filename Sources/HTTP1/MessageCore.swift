// The byte buffer and body state machine shared by the request and response decoders.
//
// The buffer is an [UInt8] with a read index; consumed bytes are dropped lazily (when the buffer
// empties, or when more than half of it is consumed on the next feed) so that parsing never shifts
// memory per message. All scanning happens on an UnsafeBufferPointer. Progress of incomplete
// scans is remembered, so feeding a head or a chunk line one byte at a time stays linear.

/// How far a scan for the empty line that ends a block (head or trailer section) got.
/// Offsets are relative to the read index, which does not move while a block is scanned.
struct LineScan: Sendable {
    var offset = 0
    var lineStart = 0
    var lines = 0
}

enum CoreState: Sendable {
    /// Between messages: waiting for a head.
    case idle
    /// The body is complete (or absent); `.end` is next.
    case endPending
    case contentLength(remaining: UInt64)
    /// Looking for the end of a chunk-size line; `scanned` bytes were already checked.
    case chunkSizeLine(scanned: Int)
    case chunkData(remaining: UInt64)
    /// Expecting the CRLF after chunk data.
    case chunkDataCRLF
    case trailers(LineScan)
    case untilClose
    /// No more parsing (101, 2xx to CONNECT, or the caller took the buffered bytes).
    case stopped
}

enum BodyStep {
    case body([UInt8])
    case end(HTTPFields)
}

/// The buffer, body framing and limits both decoders share. Public as a type only, because
/// `HTTP1DecoderRole` names it; its members are this module's.
public struct MessageCore: Sendable {
    var buffer: [UInt8] = []
    var readIndex = 0
    var eof = false
    var state: CoreState = .idle
    var failure: HTTP1ParseError?
    let limits: HTTP1Limits
    var headScan = LineScan()
    var leadingEmptyLines = 0
    /// Set when the current message is the last one this decoder parses (101, CONNECT 2xx).
    var stopAfterMessage = false

    init(limits: HTTP1Limits) {
        self.limits = limits
    }

    /// Compaction threshold: consumed bytes are shifted out only when there are at least this many
    /// and they make up half the buffer, so the cost is amortized O(1) per byte.
    static let compactionThreshold = 4096

    var bufferedByteCount: Int { buffer.count - readIndex }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        compactIfWorthwhile()
        bytes.withMemoryRebound(to: UInt8.self) { buffer.append(contentsOf: $0) }
    }

    mutating func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        compactIfWorthwhile()
        buffer.append(contentsOf: bytes)
    }

    mutating func compactIfWorthwhile() {
        if readIndex >= Self.compactionThreshold && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }

    mutating func consume(_ n: Int) {
        readIndex += n
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
    }

    mutating func take(_ n: Int) -> [UInt8] {
        let bytes = Array(buffer[readIndex..<(readIndex + n)])
        consume(n)
        return bytes
    }

    mutating func takeAll() -> [UInt8] {
        let bytes = Array(buffer[readIndex...])
        buffer.removeAll()
        readIndex = 0
        return bytes
    }

    var isIdle: Bool {
        if case .idle = state, failure == nil { return true }
        return false
    }

    mutating func finishMessage() {
        state = stopAfterMessage ? .stopped : .idle
        stopAfterMessage = false
    }

    // MARK: heads

    /// Looks for a complete head at the read index and returns its length (through the final
    /// CRLF), or nil when more bytes are needed. Requests may be preceded by empty lines.
    mutating func findHead(isRequest: Bool) throws(HTTP1ParseError) -> Int? {
        if headScan.offset == 0 {
            // RFC 9112 §2.2: "a server that is expecting to receive and parse a request-line SHOULD
            // ignore at least one empty line (CRLF) received prior to the request-line."
            while isRequest && readIndex < buffer.count {
                let b = buffer[readIndex]
                if b == LF {
                    throw HTTP1ParseError(kind: .bareLF, message: "bare LF before request line")
                }
                guard b == CR else { break }
                guard readIndex + 1 < buffer.count else { return nil }
                guard buffer[readIndex + 1] == LF else {
                    throw HTTP1ParseError(kind: .bareCR, message: "bare CR before request line")
                }
                leadingEmptyLines += 1
                if leadingEmptyLines > limits.maxLeadingEmptyLines {
                    throw HTTP1ParseError(kind: .malformedStartLine,
                                          message: "more than \(limits.maxLeadingEmptyLines) empty lines before request line")
                }
                consume(2)
            }
            guard readIndex < buffer.count else { return nil }
            // Fail fast on input that cannot be HTTP/1 (TLS, HTTP/2 binary, garbage) instead of
            // buffering up to maxHeadBytes.
            let first = buffer[readIndex]
            if isRequest ? !isTokenChar(first) : first != 0x48 /* H */ {
                if first == CR || first == LF {
                    // A response starting with an empty line: let the scanner classify it.
                } else {
                    throw HTTP1ParseError(kind: .malformedStartLine,
                                          message: "\(isRequest ? "request" : "status") line starts with byte \(escapedByte(first))")
                }
            }
        }
        var progress = headScan
        let base = readIndex
        let limit = limits.maxHeadBytes
        let maxLines = limits.maxFieldCount + 1
        let length = try buffer.withUnsafeBufferPointer { (p) throws(HTTP1ParseError) -> Int? in
            try Self.scanBlock(p, base: base, progress: &progress, limit: limit, maxLines: maxLines,
                               tooLarge: .headTooLarge, what: "head")
        }
        headScan = length == nil ? progress : LineScan()
        if length != nil { leadingEmptyLines = 0 }
        return length
    }

    /// Scans for the empty line that ends a block of CRLF-terminated lines.
    ///   block = *( line CRLF ) CRLF
    /// Rejects a CR not followed by LF (bareCR) and an LF not preceded by CR (bareLF) — RFC 9112
    /// §2.2 allows recipients to accept bare LF; we do not, since parsers that disagree on line
    /// ends are a request-smuggling vector. Fails as soon as more than `limit` bytes are buffered
    /// without an end, or the block has more than `maxLines` lines.
    static func scanBlock(
        _ buf: UnsafeBufferPointer<UInt8>, base: Int, progress: inout LineScan, limit: Int, maxLines: Int,
        tooLarge: HTTP1ParseError.Kind, what: String
    ) throws(HTTP1ParseError) -> Int? {
        let end = buf.count
        let scanEnd = limit < end - base ? base + limit : end
        var i = base + progress.offset
        var lineStart = base + progress.lineStart
        var lines = progress.lines
        while i < scanEnd {
            let b = buf[i]
            if b > CR {
                i += 1
                continue
            }
            if b == LF {
                if i == base || buf[i - 1] != CR {
                    throw HTTP1ParseError(kind: .bareLF,
                                          message: "bare LF (not preceded by CR) in \(what) at byte \(i - base)")
                }
                if i - 1 == lineStart {
                    return i + 1 - base
                }
                lines += 1
                if lines > maxLines {
                    throw HTTP1ParseError(kind: .tooManyFields,
                                          message: "\(what) has more than \(maxLines) lines")
                }
                lineStart = i + 1
            } else if b == CR {
                if i + 1 < end {
                    if buf[i + 1] != LF {
                        throw HTTP1ParseError(kind: .bareCR,
                                              message: "bare CR (not followed by LF) in \(what) at byte \(i - base)")
                    }
                } else {
                    break  // the next byte decides
                }
            }
            i += 1
        }
        progress = LineScan(offset: i - base, lineStart: lineStart - base, lines: lines)
        if end - base > limit {
            throw HTTP1ParseError(kind: tooLarge, message: "\(what) exceeds \(limit) bytes")
        }
        return nil
    }

    // MARK: bodies

    /// Sets the body state for a message whose head was just consumed.
    mutating func startBody(_ framing: HTTPBodyFraming) {
        switch framing {
        case .none, .contentLength(0): state = .endPending
        case .contentLength(let n): state = .contentLength(remaining: n)
        case .chunked: state = .chunkSizeLine(scanned: 0)
        case .untilClose: state = .untilClose
        }
    }

    /// The next body event of the message in progress, or nil when more bytes are needed.
    /// Never returns an empty `.body`.
    mutating func nextBodyStep() throws(HTTP1ParseError) -> BodyStep? {
        while true {
            let available = bufferedByteCount
            switch state {
            case .idle, .stopped:
                return nil

            case .endPending:
                finishMessage()
                return .end(HTTPFields())

            case .contentLength(let remaining):
                guard available > 0 else {
                    if eof {
                        throw HTTP1ParseError(kind: .unexpectedEOF,
                                              message: "connection closed with \(remaining) body bytes missing")
                    }
                    return nil
                }
                let n = UInt64(available) < remaining ? available : Int(remaining)
                let left = remaining - UInt64(n)
                state = left == 0 ? .endPending : .contentLength(remaining: left)
                return .body(take(n))

            case .untilClose:
                if available > 0 { return .body(take(available)) }
                if eof {
                    finishMessage()
                    return .end(HTTPFields())
                }
                return nil

            case .chunkData(let remaining):
                guard available > 0 else {
                    if eof {
                        throw HTTP1ParseError(kind: .unexpectedEOF,
                                              message: "connection closed inside a chunk (\(remaining) bytes missing)")
                    }
                    return nil
                }
                let n = UInt64(available) < remaining ? available : Int(remaining)
                let left = remaining - UInt64(n)
                state = left == 0 ? .chunkDataCRLF : .chunkData(remaining: left)
                return .body(take(n))

            case .chunkDataCRLF:
                // chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF   (RFC 9112 §7.1)
                // Exactly CRLF after the data: anything else (bare LF, extra data) means the sender
                // and we disagree on the chunk size — the chunk-terminator smuggling CVEs.
                if available >= 1 && buffer[readIndex] != CR {
                    throw HTTP1ParseError(kind: .malformedChunk,
                                          message: "chunk data not followed by CRLF (found \(escapedByte(buffer[readIndex])))")
                }
                if available >= 2 && buffer[readIndex + 1] != LF {
                    throw HTTP1ParseError(kind: .malformedChunk,
                                          message: "chunk data not followed by CRLF (found \\x0d\(escapedByte(buffer[readIndex + 1])))")
                }
                guard available >= 2 else {
                    if eof {
                        throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed after chunk data")
                    }
                    return nil
                }
                consume(2)
                state = .chunkSizeLine(scanned: 0)

            case .chunkSizeLine(let scanned):
                var scannedNow = scanned
                let base = readIndex
                let maxExt = limits.maxChunkExtensionBytes
                let result = try buffer.withUnsafeBufferPointer { (p) throws(HTTP1ParseError) -> (Int, UInt64)? in
                    try Self.scanChunkLine(p, base: base, scanned: &scannedNow, maxExtensionBytes: maxExt)
                }
                guard let (length, size) = result else {
                    state = .chunkSizeLine(scanned: scannedNow)
                    if eof {
                        throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed in a chunk-size line")
                    }
                    return nil
                }
                consume(length)
                state = size == 0 ? .trailers(LineScan()) : .chunkData(remaining: size)

            case .trailers(let scan):
                // trailer-section = *( field-line CRLF )   then the final CRLF   (RFC 9112 §7.1.2)
                var progress = scan
                let base = readIndex
                let limit = limits.maxTrailerBytes
                let maxLines = limits.maxFieldCount
                let trailers = try buffer.withUnsafeBufferPointer { (p) throws(HTTP1ParseError) -> HTTPFields? in
                    guard let length = try Self.scanBlock(p, base: base, progress: &progress, limit: limit,
                                                          maxLines: maxLines, tooLarge: .trailersTooLarge,
                                                          what: "trailer section")
                    else { return nil }
                    var facts = FieldFacts()
                    let fields = try HeadParser.parseFields(p, from: base, to: base + length,
                                                            expectedCount: progress.lines, collectFacts: false,
                                                            facts: &facts)
                    progress.offset = length
                    return fields
                }
                guard let trailers else {
                    state = .trailers(progress)
                    if eof {
                        throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed in the trailer section")
                    }
                    return nil
                }
                consume(progress.offset)
                finishMessage()
                return .end(trailers)
            }
        }
    }

    /// Scans a chunk-size line and returns (line length through LF, chunk size), or nil when the
    /// line is not complete yet.
    ///   chunk-size     = 1*HEXDIG
    ///   chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
    ///   chunk-ext-name = token
    ///   chunk-ext-val  = token / quoted-string
    /// At most 16 hex digits (64 bits; leading zeros count too), the extension bytes (everything
    /// between the size and CRLF) at most `maxExtensionBytes`. Extensions are validated and dropped.
    /// Strict: whitespace after the size that is not followed by ";" is rejected.
    static func scanChunkLine(
        _ buf: UnsafeBufferPointer<UInt8>, base: Int, scanned: inout Int, maxExtensionBytes: Int
    ) throws(HTTP1ParseError) -> (Int, UInt64)? {
        let end = buf.count
        guard base < end else { return nil }
        let digitLimit = min(end, base + 17)
        var d = base
        while d < digitLimit && hexValue(buf[d]) != nil { d += 1 }
        if d - base > 16 {
            throw HTTP1ParseError(kind: .chunkTooLarge, message: "chunk size has more than 16 hex digits")
        }
        if d == base {
            let b = buf[base]
            if b == LF { throw HTTP1ParseError(kind: .bareLF, message: "bare LF where a chunk size was expected") }
            throw HTTP1ParseError(kind: .malformedChunk,
                                  message: "chunk-size line does not start with a hex digit (found \(escapedByte(b)))")
        }
        var i = base + scanned
        while i < end {
            let b = buf[i]
            if b == LF {
                if buf[i - 1] != CR {
                    throw HTTP1ParseError(kind: .bareLF, message: "bare LF in chunk-size line")
                }
                let size = try parseChunkLine(buf, base, d, i - 1)
                return (i + 1 - base, size)
            }
            if b == CR {
                if i + 1 < end {
                    if buf[i + 1] != LF {
                        throw HTTP1ParseError(kind: .bareCR, message: "bare CR in chunk-size line")
                    }
                } else {
                    break
                }
            } else if i >= d && i + 1 - d > maxExtensionBytes {
                throw HTTP1ParseError(kind: .chunkExtensionTooLarge,
                                      message: "chunk extensions exceed \(maxExtensionBytes) bytes")
            }
            i += 1
        }
        scanned = i - base
        return nil
    }

    /// Parses a complete chunk-size line `buf[s..<e]` (without CRLF); `d` ends the hex digits.
    static func parseChunkLine(_ buf: UnsafeBufferPointer<UInt8>, _ s: Int, _ d: Int, _ e: Int) throws(HTTP1ParseError)
        -> UInt64
    {
        var size: UInt64 = 0
        var k = s
        while k < d {
            let (m, o1) = size.multipliedReportingOverflow(by: 16)
            let (v, o2) = m.addingReportingOverflow(hexValue(buf[k]) ?? 0)
            guard !o1, !o2 else {
                throw HTTP1ParseError(kind: .chunkTooLarge, message: "chunk size overflows 64 bits")
            }
            size = v
            k += 1
        }
        func malformed() -> HTTP1ParseError {
            HTTP1ParseError(kind: .malformedChunk,
                            message: "malformed chunk-size line \"\(escapedForMessage(UnsafeBufferPointer(rebasing: buf[s..<e])))\"")
        }
        var p = d
        while p < e {
            while p < e && isWhitespace(buf[p]) { p += 1 }
            guard p < e, buf[p] == SEMICOLON else { throw malformed() }
            p += 1
            while p < e && isWhitespace(buf[p]) { p += 1 }
            let nameStart = p
            while p < e && isTokenChar(buf[p]) { p += 1 }
            guard p > nameStart else { throw malformed() }
            var q = p
            while q < e && isWhitespace(buf[q]) { q += 1 }
            guard q < e, buf[q] == EQUALS else { continue }
            p = q + 1
            while p < e && isWhitespace(buf[p]) { p += 1 }
            guard p < e else { throw malformed() }
            if buf[p] == DQUOTE {
                // quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE
                // qdtext        = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
                // quoted-pair   = "\" ( HTAB / SP / VCHAR / obs-text )
                p += 1
                var closed = false
                while p < e {
                    let b = buf[p]
                    if b == DQUOTE { closed = true; p += 1; break }
                    if b == BACKSLASH {
                        guard p + 1 < e, isFieldValueByte(buf[p + 1]) else { throw malformed() }
                        p += 2
                        continue
                    }
                    guard isFieldValueByte(b) else { throw malformed() }
                    p += 1
                }
                guard closed else { throw malformed() }
            } else {
                let valueStart = p
                while p < e && isTokenChar(buf[p]) { p += 1 }
                guard p > valueStart else { throw malformed() }
            }
        }
        return size
    }
}
