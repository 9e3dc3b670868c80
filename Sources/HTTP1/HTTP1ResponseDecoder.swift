/// A sans-IO HTTP/1.1 response decoder: feed it bytes, pull events with `next()`.
///
/// Call `expectResponse(toMethod:)` once per request sent (in order; calls may run ahead for
/// pipelining), because HEAD and CONNECT change the framing. Without a pending call the response
/// is framed as if answering GET.
///
/// - 1xx other than 101: `.head(status 1xx, .none)` then `.end`; the same request then still
///   awaits its final response.
/// - 101, and 2xx to CONNECT: `.head` + `.end`, then the decoder stops; the caller takes the
///   following bytes with `takeBufferedBytes()`.
/// - Close-delimited bodies end with `.end` once `finish()` is called.
public struct HTTP1ResponseDecoder: Sendable {
    var core: MessageCore
    /// Methods of requests whose final response has not been decoded yet, oldest first.
    var pendingMethods: [RequestKind] = []
    var pendingStart = 0

    enum RequestKind: Sendable { case head, connect, other }

    /// Creates a decoder with the given limits.
    public init(limits: HTTP1Limits = .default) {
        core = MessageCore(limits: limits)
    }

    /// Must be called before each response with the request method: HEAD and CONNECT change
    /// framing. Methods are case-sensitive (RFC 9110 §9.1).
    public mutating func expectResponse(toMethod method: String) {
        let kind: RequestKind = method == "HEAD" ? .head : method == "CONNECT" ? .connect : .other
        if pendingStart > 0 && pendingStart == pendingMethods.count {
            pendingMethods.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        pendingMethods.append(kind)
    }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) { core.feed(bytes) }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: [UInt8]) { core.feed(bytes) }

    /// Records that the peer sent EOF: ends a close-delimited body, or makes an incomplete
    /// message `.unexpectedEOF`.
    public mutating func finish() { core.eof = true }

    /// Bytes received and not yet turned into events.
    public var bufferedByteCount: Int { core.bufferedByteCount }

    /// True when between messages, nothing buffered and `finish()` was called.
    public var isAtCleanEOF: Bool { core.isIdle && core.eof && core.bufferedByteCount == 0 }

    /// True when between messages (no message in progress).
    public var isIdle: Bool { core.isIdle }

    /// True after a 101 or a 2xx answer to CONNECT has ended, or after `takeBufferedBytes()`.
    public var hasStopped: Bool {
        if case .stopped = core.state { return true }
        return false
    }

    /// Hands over all buffered, not-yet-parsed bytes and stops the decoder.
    public mutating func takeBufferedBytes() -> [UInt8] {
        core.state = .stopped
        return core.takeAll()
    }

    /// The next event, or nil when more bytes are needed (or at clean EOF between messages).
    /// After an error the decoder stays failed and throws the same error again.
    public mutating func next() throws(HTTP1ParseError) -> HTTP1ResponseEvent? {
        if let failure = core.failure { throw failure }
        do {
            return try step()
        } catch {
            core.failure = error
            throw error
        }
    }

    mutating func step() throws(HTTP1ParseError) -> HTTP1ResponseEvent? {
        switch core.state {
        case .idle:
            guard let length = try core.findHead(isRequest: false) else {
                if core.eof && core.bufferedByteCount > 0 {
                    throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed inside a response head")
                }
                return nil
            }
            let base = core.readIndex
            let kind = pendingStart < pendingMethods.count ? pendingMethods[pendingStart] : .other
            let (head, framing, interim) = try core.buffer.withUnsafeBufferPointer {
                (p) throws(HTTP1ParseError) -> (HTTPResponseHead, HTTPBodyFraming, Bool) in
                try Self.parseHead(p, base: base, length: length, request: kind)
            }
            core.consume(length)
            if !interim {
                if pendingStart < pendingMethods.count { pendingStart += 1 }
                if head.status == 101 || (kind == .connect && (200...299).contains(head.status)) {
                    core.stopAfterMessage = true
                }
            } else if head.status == 101 {
                core.stopAfterMessage = true
            }
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

    /// Parses a delimited response head and decides the body framing. `interim` is true for 1xx
    /// other than 101 (the request still awaits its final response).
    static func parseHead(_ p: UnsafeBufferPointer<UInt8>, base: Int, length: Int, request: RequestKind)
        throws(HTTP1ParseError) -> (HTTPResponseHead, HTTPBodyFraming, interim: Bool)
    {
        let end = base + length
        let lineEnd = HeadParser.lineEnd(p, base, end)
        let (version, status, reason, reasonIsLatin1) = try HeadParser.parseStatusLine(p, base, lineEnd)
        var facts = FieldFacts()
        let fields = try HeadParser.parseFields(p, from: lineEnd + 2, to: end, expectedCount: 16,
                                                collectFacts: true, facts: &facts)
        let framing = try responseFraming(facts, status: status, request: request)
        var keepAlive = facts.keepAlive(version: version)
        if framing == .untilClose { keepAlive = false }
        let head = HTTPResponseHead(version: version, status: status, reason: reason, reasonIsLatin1: reasonIsLatin1,
                                    fields: fields, headSize: length, keepAlive: keepAlive)
        return (head, framing, (100...199).contains(status) && status != 101)
    }

    /// RFC 9112 §6.3, in its order:
    /// 1. Response to HEAD, or status 1xx/204/304: no body (whatever the fields say).
    /// 2. 2xx to CONNECT: no body, the connection becomes a tunnel.
    /// 3. Transfer-Encoding and Content-Length together: rejected (RFC: "ought to be handled as an
    ///    error"; a proxy MUST NOT forward such a response as is).
    /// 4. Transfer-Encoding with chunked as final coding: chunked. Other final coding: read until
    ///    close. chunked more than once (§6.1 MUST NOT) or an empty Transfer-Encoding: rejected.
    /// 5. Content-Length: that many bytes.
    /// 7. Otherwise: until close. HTTP/1.0 responses follow the same rules.
    /// Content-Length syntax is validated even when it does not decide the framing.
    static func responseFraming(_ facts: FieldFacts, status: Int, request: RequestKind) throws(HTTP1ParseError)
        -> HTTPBodyFraming
    {
        if request == .head || (100...199).contains(status) || status == 204 || status == 304 {
            return .none
        }
        if request == .connect && (200...299).contains(status) { return .none }
        if facts.transferEncodingPresent {
            if facts.contentLength != nil {
                throw HTTP1ParseError(kind: .conflictingFraming,
                                      message: "response has both Transfer-Encoding and Content-Length")
            }
            if facts.codingCount == 0 {
                throw HTTP1ParseError(kind: .unsupportedTransferEncoding, message: "empty Transfer-Encoding")
            }
            if facts.chunkedCount > 1 {
                throw HTTP1ParseError(kind: .unsupportedTransferEncoding, message: "chunked applied more than once")
            }
            return facts.lastCodingIsChunked ? .chunked : .untilClose
        }
        if let length = facts.contentLength { return .contentLength(length) }
        return .untilClose
    }
}
