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
public typealias HTTP1ResponseDecoder = HTTP1Decoder<HTTP1ResponseRole>

extension HTTP1Decoder where Role == HTTP1ResponseRole {
    /// Must be called before each response with the request method: HEAD and CONNECT change
    /// framing. Methods are case-sensitive (RFC 9110 §9.1).
    public mutating func expectResponse(toMethod method: String) { role.expect(method) }
}

/// Responses: the status line, interim responses, and response framing by request method
/// (RFC 9112 §4, §6.3).
public struct HTTP1ResponseRole: HTTP1DecoderRole {
    public static let messageName = "response"
    public static let isRequest = false
    /// Methods of requests whose final response has not been decoded yet, oldest first.
    var pendingMethods: [RequestKind] = []
    var pendingStart = 0

    enum RequestKind: Sendable { case head, connect, other }

    public init() {}

    mutating func expect(_ method: String) {
        let kind: RequestKind = method == "HEAD" ? .head : method == "CONNECT" ? .connect : .other
        if pendingStart > 0 && pendingStart == pendingMethods.count {
            pendingMethods.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        pendingMethods.append(kind)
    }

    public mutating func head(_ core: inout MessageCore, length: Int) throws(HTTP1ParseError) -> HTTP1ResponseEvent {
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
    }

    public static func body(_ bytes: [UInt8]) -> HTTP1ResponseEvent { .body(bytes) }
    public static func end(_ trailers: HTTPFields) -> HTTP1ResponseEvent { .end(trailers: trailers) }

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
