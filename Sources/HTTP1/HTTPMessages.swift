/// A request head: `request-line = method SP request-target SP HTTP-version` plus fields.
public struct HTTPRequestHead: Equatable, Sendable {
    /// The method token, case-sensitive (`GET`).
    public var method: String
    /// The request-target exactly as received (origin-, absolute-, authority- or asterisk-form).
    public var target: String
    /// The protocol version.
    public var version: HTTPVersion
    /// The fields in wire order.
    public var fields: HTTPFields
    /// Exact bytes of request line + field lines + final CRLF as received (0 when built in code).
    /// Leading empty lines that were skipped are not counted.
    public var headSize: Int
    /// Whether the connection persists after this message: for HTTP/1.1 unless
    /// `Connection: close`; for HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
    /// Computed once at creation, so it still reflects the original fields after
    /// `removingHopByHop()`.
    public var keepAlive: Bool

    /// Creates a head; `keepAlive` is derived from `version` and the Connection field.
    public init(method: String, target: String, version: HTTPVersion, fields: HTTPFields, headSize: Int = 0) {
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields
        self.headSize = headSize
        self.keepAlive = computeKeepAlive(version: version, tokens: fields.connectionTokens)
    }

    init(method: String, target: String, version: HTTPVersion, fields: HTTPFields, headSize: Int, keepAlive: Bool) {
        self.method = method
        self.target = target
        self.version = version
        self.fields = fields
        self.headSize = headSize
        self.keepAlive = keepAlive
    }
}

/// A response head: `status-line = HTTP-version SP status-code SP [ reason-phrase ]` plus fields.
public struct HTTPResponseHead: Equatable, Sendable {
    /// The protocol version.
    public var version: HTTPVersion
    /// The three-digit status code.
    public var status: Int
    /// The reason phrase (may be empty).
    public var reason: String
    /// True when the reason phrase was not valid UTF-8 and was decoded as ISO-8859-1.
    public var reasonIsLatin1: Bool = false
    /// The fields in wire order.
    public var fields: HTTPFields
    /// Exact bytes of status line + field lines + final CRLF as received (0 when built in code).
    public var headSize: Int
    /// Whether the connection persists after this message (same rules as requests). The response
    /// decoder also sets it to false when the body is delimited by connection close.
    public var keepAlive: Bool

    /// Creates a head; `keepAlive` is derived from `version` and the Connection field.
    public init(version: HTTPVersion, status: Int, reason: String, fields: HTTPFields, headSize: Int = 0) {
        self.version = version
        self.status = status
        self.reason = reason
        self.fields = fields
        self.headSize = headSize
        self.keepAlive = computeKeepAlive(version: version, tokens: fields.connectionTokens)
    }

    init(version: HTTPVersion, status: Int, reason: String, reasonIsLatin1: Bool, fields: HTTPFields,
         headSize: Int, keepAlive: Bool) {
        self.version = version
        self.status = status
        self.reason = reason
        self.reasonIsLatin1 = reasonIsLatin1
        self.fields = fields
        self.headSize = headSize
        self.keepAlive = keepAlive
    }
}

func computeKeepAlive(version: HTTPVersion, tokens: [String]) -> Bool {
    if tokens.contains("close") { return false }
    if version.defaultsToKeepAlive { return true }
    return tokens.contains("keep-alive")
}

/// How the body of a message is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Equatable, Sendable {
    /// No body at all.
    case none
    /// Exactly this many bytes.
    case contentLength(UInt64)
    /// Chunked transfer coding; body events carry the decoded chunk data.
    case chunked
    /// Everything until the peer closes the connection (responses only).
    case untilClose
}

/// Events of one request, in order: `.head`, zero or more non-empty `.body`, `.end`.
public enum HTTP1RequestEvent: Equatable, Sendable {
    case head(HTTPRequestHead, HTTPBodyFraming)
    case body([UInt8])
    case end(trailers: HTTPFields)
}

/// Events of one response, in order: `.head`, zero or more non-empty `.body`, `.end`.
public enum HTTP1ResponseEvent: Equatable, Sendable {
    case head(HTTPResponseHead, HTTPBodyFraming)
    case body([UInt8])
    case end(trailers: HTTPFields)
}
