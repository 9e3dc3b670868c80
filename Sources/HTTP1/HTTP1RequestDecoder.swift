/// A sans-IO HTTP/1.1 request decoder: feed it bytes, pull events with `next()`.
///
/// Pull-based: the caller stops calling `next()` while it is busy (pipelining, CONNECT, Upgrade)
/// and bytes simply stay buffered; `takeBufferedBytes()` hands them over for a tunnel.
/// Strict per RFC 9110/9112; every leniency is named where it is implemented.
public struct HTTP1RequestDecoder: Sendable {
    var core: MessageCore

    /// Creates a decoder with the given limits.
    public init(limits: HTTP1Limits = .default) {
        core = MessageCore(limits: limits)
    }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) { core.feed(bytes) }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: [UInt8]) { core.feed(bytes) }

    /// Records that the peer sent EOF; later `next()` calls report an incomplete message as
    /// `.unexpectedEOF`.
    public mutating func finish() { core.eof = true }

    /// Bytes received and not yet turned into events.
    public var bufferedByteCount: Int { core.bufferedByteCount }

    /// True when between messages, nothing buffered and `finish()` was called.
    public var isAtCleanEOF: Bool { core.isIdle && core.eof && core.bufferedByteCount == 0 }

    /// True when between messages (no message in progress). Buffered bytes, if any, belong to the
    /// next message.
    public var isIdle: Bool { core.isIdle }

    /// True after `takeBufferedBytes()`.
    public var hasStopped: Bool {
        if case .stopped = core.state { return true }
        return false
    }

    /// Hands over all buffered, not-yet-parsed bytes and stops the decoder (after CONNECT or a
    /// 101 upgrade). Later `next()` calls return nil.
    public mutating func takeBufferedBytes() -> [UInt8] {
        core.state = .stopped
        return core.takeAll()
    }

    /// The next event, or nil when more bytes are needed (or at clean EOF between messages).
    /// After an error the decoder stays failed and throws the same error again.
    public mutating func next() throws(HTTP1ParseError) -> HTTP1RequestEvent? {
        if let failure = core.failure { throw failure }
        do {
            return try step()
        } catch {
            core.failure = error
            throw error
        }
    }

    mutating func step() throws(HTTP1ParseError) -> HTTP1RequestEvent? {
        switch core.state {
        case .idle:
            guard let length = try core.findHead(isRequest: true) else {
                if core.eof && core.bufferedByteCount > 0 {
                    throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed inside a request head")
                }
                return nil
            }
            let base = core.readIndex
            let limits = core.limits
            let (head, framing) = try core.buffer.withUnsafeBufferPointer {
                (p) throws(HTTP1ParseError) -> (HTTPRequestHead, HTTPBodyFraming) in
                try Self.parseHead(p, base: base, length: length, limits: limits)
            }
            core.consume(length)
            core.startBody(framing)
            return .head(head, framing)
        case .stopped:
            return nil
        default:
            switch try core.nextBodyStep() {
            case nil: return nil
            case .body(let bytes): return .body(bytes)
            case .end(let trailers): return .end(trailers: trailers)
            }
        }
    }

    /// Parses a delimited request head and decides the body framing (RFC 9112 §6.3, requests).
    static func parseHead(_ p: UnsafeBufferPointer<UInt8>, base: Int, length: Int, limits: HTTP1Limits)
        throws(HTTP1ParseError) -> (HTTPRequestHead, HTTPBodyFraming)
    {
        let end = base + length
        let lineEnd = HeadParser.lineEnd(p, base, end)
        let (method, target, version) = try HeadParser.parseRequestLine(p, base, lineEnd)
        var facts = FieldFacts()
        let fields = try HeadParser.parseFields(p, from: lineEnd + 2, to: end, expectedCount: 16,
                                                collectFacts: true, facts: &facts)
        // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any
        // HTTP/1.1 request message that lacks a Host header field and to any request message
        // that contains more than one Host header field line".
        if facts.hostCount > 1 {
            throw HTTP1ParseError(kind: .duplicateHost, message: "request has \(facts.hostCount) Host fields")
        }
        if facts.hostCount == 0 && version == .http11 {
            throw HTTP1ParseError(kind: .missingHost, message: "HTTP/1.1 request without Host field")
        }
        let framing = try requestFraming(facts, version: version)
        let head = HTTPRequestHead(method: method, target: target, version: version, fields: fields,
                                   headSize: length, keepAlive: facts.keepAlive(version: version))
        return (head, framing)
    }

    /// RFC 9112 §6.3 for requests:
    /// 3. Transfer-Encoding and Content-Length together: reject (smuggling; "MAY reject", we do).
    ///    Transfer-Encoding must be exactly "chunked" (a request with any other final coding is 400
    ///    per item 4; we also refuse codings before chunked, which no client sends).
    ///    HTTP/1.0 with Transfer-Encoding: faulty framing (§6.1), rejected.
    /// 5. Content-Length: that many bytes.
    /// 7. Neither: no body.
    static func requestFraming(_ facts: FieldFacts, version: HTTPVersion) throws(HTTP1ParseError) -> HTTPBodyFraming {
        if facts.transferEncodingPresent {
            if facts.contentLength != nil {
                throw HTTP1ParseError(kind: .conflictingFraming,
                                      message: "request has both Transfer-Encoding and Content-Length")
            }
            guard version == .http11 else {
                throw HTTP1ParseError(kind: .unsupportedTransferEncoding,
                                      message: "Transfer-Encoding in an HTTP/1.0 request")
            }
            guard facts.codingCount == 1, facts.chunkedCount == 1 else {
                throw HTTP1ParseError(kind: .unsupportedTransferEncoding,
                                      message: "request Transfer-Encoding must be exactly \"chunked\"")
            }
            return .chunked
        }
        if let length = facts.contentLength { return .contentLength(length) }
        return .none
    }
}
