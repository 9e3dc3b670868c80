/// A framing or syntax error found while decoding (or, for the serializer, while validating) an
/// HTTP/1.x message. Decoders stay failed after throwing one: every later `next()` throws it again.
public struct HTTP1ParseError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What went wrong, for programmatic handling (400 vs 502, metrics, tests).
    public enum Kind: Sendable {
        /// Request line or status line does not match the grammar.
        case malformedStartLine
        /// Field line without colon, bad field-name, whitespace before the colon.
        case malformedField
        /// NUL, CTL or DEL in a field value (or an invalid value given to the serializer).
        case invalidFieldValue
        /// A field line starting with whitespace (obs-fold, RFC 9112 §5.2), rejected.
        case obsFold
        /// The head exceeded `HTTP1Limits.maxHeadBytes`.
        case headTooLarge
        /// More than `HTTP1Limits.maxFieldCount` field lines.
        case tooManyFields
        /// Content-Length not 1*DIGIT, overflowing, or several differing values.
        case invalidContentLength
        /// Both Transfer-Encoding and Content-Length (a request-smuggling vector).
        case conflictingFraming
        /// A Transfer-Encoding other than exactly `chunked` (requests) or otherwise unusable.
        case unsupportedTransferEncoding
        /// HTTP/1.1 request without Host.
        case missingHost
        /// Request with more than one Host field.
        case duplicateHost
        /// Chunk-size line or chunk terminator does not match the grammar.
        case malformedChunk
        /// Chunk size with more than 16 hex digits or overflowing 64 bits.
        case chunkTooLarge
        /// Chunk extensions longer than `HTTP1Limits.maxChunkExtensionBytes` on one line.
        case chunkExtensionTooLarge
        /// Trailer section longer than `HTTP1Limits.maxTrailerBytes`.
        case trailersTooLarge
        /// CR not followed by LF.
        case bareCR
        /// LF not preceded by CR.
        case bareLF
        /// The peer closed the connection in the middle of a message.
        case unexpectedEOF
        /// A well-formed HTTP version other than 1.0 or 1.1.
        case unsupportedVersion
    }

    /// The error class.
    public var kind: Kind
    /// One line of human-readable text; wire bytes in it are escaped (`\x0d`).
    public var message: String
    /// Same as `message`.
    public var description: String { message }

    /// Creates an error; control characters in `message` are escaped so it always stays one line.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = sanitizedControlCharacters(message)
    }
}
