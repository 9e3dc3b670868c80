/// A sans-IO HTTP/1.1 request decoder: feed it bytes, pull events with `next()`.
public typealias HTTP1RequestDecoder = HTTP1Decoder<HTTP1RequestRole>

/// Requests: the request line, Host rules and request framing (RFC 9112 §3, §6.3).
public struct HTTP1RequestRole: HTTP1DecoderRole {
    public static let messageName = "request"
    public static let isRequest = true
    public init() {}

    public mutating func head(_ core: inout MessageCore, length: Int) throws(HTTP1ParseError) -> HTTP1RequestEvent {
        let base = core.readIndex
        let limits = core.limits
        let (head, framing) = try core.buffer.withUnsafeBufferPointer {
            (p) throws(HTTP1ParseError) -> (HTTPRequestHead, HTTPBodyFraming) in
            try Self.parseHead(p, base: base, length: length, limits: limits)
        }
        core.consume(length)
        core.startBody(framing)
        return .head(head, framing)
    }

    public static func body(_ bytes: [UInt8]) -> HTTP1RequestEvent { .body(bytes) }
    public static func end(_ trailers: HTTPFields) -> HTTP1RequestEvent { .end(trailers: trailers) }

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
