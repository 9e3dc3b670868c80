import CNghttp2Shims
import HTTP1

/// One HTTP/2 connection (RFC 9113), either side, over libnghttp2's session: sans-IO. Bytes from
/// the peer go in (`receive`), events come out (`nextEvent`), and what to send is taken with
/// `takeOutput`. nghttp2 does the framing, HPACK, stream states, flow-control accounting and the
/// protocol checks (pseudo-headers, Content-Length, forbidden fields); this type turns its
/// callbacks into `HTTP2Event`s and keeps each stream's outgoing body until the peer's window
/// lets it go.
///
/// Flow control is tied to the caller: received DATA counts against the windows until the
/// caller says it passed the bytes on (`consumed`), so a slow reader on one side stops the
/// peer's stream instead of growing memory. Not thread-safe: one connection belongs to one loop.
public final class HTTP2Connection {
    public enum Role: Sendable { case client, server }

    public let role: Role
    public let limits: HTTP2Limits
    let session: OpaquePointer
    var events: [HTTP2Event] = []
    private var eventIndex = 0
    /// Header fields of the HEADERS frame being received, per stream.
    var incomingFields: [Int32: [HTTPField]] = [:]
    var incomingFieldBytes: [Int32: Int] = [:]
    /// Outgoing bodies waiting for the peer's window, per stream.
    var outgoing: [Int32: OutgoingBody] = [:]
    /// Resets owed once what is queued on the stream has gone out (`reset(_:errorCode:afterQueued:)`).
    var resetsAfterQueued: [Int32: UInt32] = [:]
    /// Server: streams whose END_STREAM went out, until `forgetEnd(of:)` (`sentEnd(on:)`).
    var endsSent: Set<Int32> = []
    /// The peer sent GOAWAY: it is closing the connection.
    var peerWentAway = false
    /// Streams opened here, or whose head was delivered: their later frames are delivered even
    /// after the peer's GOAWAY.
    var deliveredStreams: Set<Int32> = []
    /// Set when nghttp2 reports a fatal error; the connection is then unusable.
    public private(set) var failure: HTTP2Error?

    /// Creates the connection and queues its SETTINGS (the server also expects the client
    /// preface first; the client's preface goes out with its first `takeOutput`).
    public init(role: Role, limits: HTTP2Limits = HTTP2Limits()) throws(HTTP2Error) {
        self.role = role
        self.limits = limits
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw HTTP2Error(.internal, "cannot allocate nghttp2 callbacks")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { throw HTTP2Error(.internal, "cannot allocate nghttp2 options") }
        defer { nghttp2_option_del(option) }
        // The caller acknowledges received bytes once it passed them on (`consumed`).
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_send_header_block_length(option, limits.maximumHeaderListSize + 16 * 1024)
        var created: OpaquePointer?
        let status = role == .server
            ? nghttp2_session_server_new2(&created, callbacks, nil, option)
            : nghttp2_session_client_new2(&created, callbacks, nil, option)
        guard status == 0, let created else { throw HTTP2Error(.internal, "cannot create the nghttp2 session (\(status))") }
        session = created
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limits.maximumConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: limits.streamWindow),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(limits.maximumHeaderListSize)),
        ]
        // Server push is refused; RFC 8441's extended CONNECT is never advertised, so clients
        // keep WebSockets on HTTP/1.1.
        if role == .client {
            settings.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0))
        }
        var rv = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
        if rv == 0 {
            rv = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(limits.connectionWindow))
        }
        guard rv == 0 else {
            nghttp2_session_del(session)
            throw HTTP2Error(.internal, "cannot queue SETTINGS: \(Self.text(rv))")
        }
    }

    deinit {
        nghttp2_session_del(session)
    }

    // MARK: - Input

    /// Bytes from the peer. Events they produce queue for `nextEvent()`; protocol errors become
    /// stream resets or a GOAWAY in the output (nghttp2 chooses the error code per RFC 9113 §5.4).
    /// Throws only when the connection cannot go on (then send `takeOutput()` and close).
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2Error) {
        if let failure { throw failure }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        // Once the session wants nothing more (the peer's GOAWAY with no stream left open),
        // nghttp2 ignores the rest of the read it is in; later reads are ignored the same way,
        // so what happens does not depend on where the input was split.
        guard nghttp2_session_want_read(session) != 0 else { return }
        let read = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if read < 0 {
            let error = HTTP2Error(.connection, "HTTP/2 connection error: \(Self.text(Int32(read)))")
            failure = error
            throw error
        }
    }

    /// True when `nextEvent()` has something.
    public var hasEvents: Bool { eventIndex < events.count }

    /// The next event, or nil until more bytes arrive.
    public func nextEvent() -> HTTP2Event? {
        guard eventIndex < events.count else { return nil }
        let event = events[eventIndex]
        eventIndex += 1
        if eventIndex == events.count {
            events.removeAll(keepingCapacity: true)
            eventIndex = 0
        }
        return event
    }

    /// The caller passed `count` received body bytes of `streamID` on: the windows reopen by
    /// that much (WINDOW_UPDATE goes out with the next output).
    public func consumed(_ count: Int, on streamID: Int32) {
        guard count > 0 else { return }
        _ = nghttp2_session_consume(session, streamID, count)
    }

    // MARK: - Output

    /// Frames to send to the peer (empty when there is nothing to send). Sending can close
    /// streams (their end went out) and so queue `.closed` events: check `nextEvent()` after it.
    public func takeOutput() -> [UInt8] {
        var out: [UInt8] = []
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 {
                failure = failure ?? HTTP2Error(.connection, "HTTP/2 send error: \(Self.text(Int32(count)))")
                break
            }
            guard count > 0, let chunk else { break }
            out.append(contentsOf: UnsafeBufferPointer(start: chunk, count: count))
        }
        return out
    }

    /// False once both sides are done with the connection (GOAWAY exchanged and every stream
    /// closed, or a fatal error): the transport can close after the last output.
    public var isActive: Bool {
        failure == nil && (nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0)
    }

    /// True while some stream's body (or its end) waits for the peer's window.
    public var hasQueuedBodies: Bool { !outgoing.isEmpty }

    /// Body bytes of `streamID` queued and not yet sent (the peer's window is closed): the
    /// caller stops reading the body's source past its high-water mark.
    public func bufferedOutgoingBytes(on streamID: Int32) -> Int {
        outgoing[streamID].map { $0.bytes.count - $0.offset } ?? 0
    }

    static func text(_ code: Int32) -> String {
        String(cString: nghttp2_strerror(code))
    }
}

/// Named limits of a connection, each with its reason.
public struct HTTP2Limits: Sendable, Equatable {
    /// Streams the peer may open at once (RFC 9113 recommends at least 100; nginx allows 128).
    public var maximumConcurrentStreams: UInt32 = 100
    /// Each stream's receive window: 256 KiB keeps a fast stream moving at loopback speed while
    /// bounding what one slow reader's stream can buffer.
    public var streamWindow: UInt32 = 256 * 1024
    /// The connection's receive window, shared by its streams (4 streams' worth).
    public var connectionWindow: UInt32 = 1024 * 1024
    /// Largest header list accepted or sent (the same 64 KiB as an HTTP/1 head).
    public var maximumHeaderListSize = 64 * 1024

    public init() {}
}

/// Why an HTTP/2 connection or stream failed.
public struct HTTP2Error: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The connection cannot go on (protocol error, flow-control violation, bad preface).
        case connection
        /// A stream-level problem (the stream was reset).
        case stream
        /// A local failure (allocation, an API misuse).
        case `internal`
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
