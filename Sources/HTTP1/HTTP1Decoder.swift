/// A sans-IO HTTP/1.1 decoder: feed it bytes, pull events with `next()`. One generic core for
/// both directions; the `Role` parses heads and decides body framing (`HTTP1RequestDecoder`,
/// `HTTP1ResponseDecoder`).
///
/// Pull-based: the caller stops calling `next()` while it is busy (pipelining, CONNECT, Upgrade)
/// and bytes simply stay buffered; `takeBufferedBytes()` hands them over for a tunnel.
/// Strict per RFC 9110/9112; every leniency is named where it is implemented.
public struct HTTP1Decoder<Role: HTTP1DecoderRole>: Sendable {
    var core: MessageCore
    var role = Role()

    /// Creates a decoder with the given limits.
    public init(limits: HTTP1Limits = .default) {
        core = MessageCore(limits: limits)
    }

    /// Appends bytes received from the peer.
    @_specialize(exported: true, where Role == HTTP1RequestRole)
    @_specialize(exported: true, where Role == HTTP1ResponseRole)
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) { core.feed(bytes) }

    /// Appends bytes received from the peer.
    public mutating func feed(_ bytes: [UInt8]) { core.feed(bytes) }

    /// Records that the peer sent EOF: ends a close-delimited (response) body; later `next()`
    /// calls report an incomplete message as `.unexpectedEOF`.
    public mutating func finish() { core.eof = true }

    /// Bytes received and not yet turned into events.
    public var bufferedByteCount: Int { core.bufferedByteCount }

    /// True when between messages, nothing buffered and `finish()` was called.
    public var isAtCleanEOF: Bool { core.isIdle && core.eof && core.bufferedByteCount == 0 }

    /// True when between messages (no message in progress). Buffered bytes, if any, belong to the
    /// next message.
    public var isIdle: Bool { core.isIdle }

    /// True after `takeBufferedBytes()`, or after a message that ends the HTTP conversation has
    /// ended (a 101, a 2xx answer to CONNECT).
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
    ///
    /// Specialized for both roles where it is compiled: callers in other modules (the proxy
    /// session) would otherwise run the generic version, with the role's events built through
    /// witness tables (3% of a small request's instructions, measured with scripts/bench-cpu).
    @_specialize(exported: true, where Role == HTTP1RequestRole)
    @_specialize(exported: true, where Role == HTTP1ResponseRole)
    public mutating func next() throws(HTTP1ParseError) -> Role.Event? {
        if let failure = core.failure { throw failure }
        do {
            return try step()
        } catch {
            core.failure = error
            throw error
        }
    }

    mutating func step() throws(HTTP1ParseError) -> Role.Event? {
        switch core.state {
        case .idle:
            guard let length = try core.findHead(isRequest: Role.isRequest) else {
                if core.eof && core.bufferedByteCount > 0 {
                    throw HTTP1ParseError(kind: .unexpectedEOF, message: "connection closed inside a \(Role.messageName) head")
                }
                return nil
            }
            return try role.head(&core, length: length)
        case .stopped:
            return nil
        default:
            switch try core.nextBodyStep() {
            case nil: return nil
            case .body(let bytes): return Role.body(bytes)
            case .end(let trailers): return Role.end(trailers)
            }
        }
    }
}

/// What differs between decoding requests and responses: the head, its framing, and the events.
/// `HTTP1Decoder` does the rest.
public protocol HTTP1DecoderRole: Sendable {
    associatedtype Event: Sendable
    /// "request" or "response", for error messages.
    static var messageName: String { get }
    static var isRequest: Bool { get }
    init()
    /// The `.head` event for the complete head of `length` bytes at the core's read index: parses
    /// it, consumes it and starts its body.
    mutating func head(_ core: inout MessageCore, length: Int) throws(HTTP1ParseError) -> Event
    static func body(_ bytes: [UInt8]) -> Event
    static func end(_ trailers: HTTPFields) -> Event
}
