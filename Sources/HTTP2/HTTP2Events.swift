import CNghttp2Shims
import HTTP1

/// What an HTTP/2 connection reports, in the order its frames arrived.
public enum HTTP2Event: Equatable, Sendable {
    /// A request head (server side) or a response head, 1xx included (client side), with its
    /// pseudo-header fields first as sent (`:method`, `:path`, `:status`, ...). `endStream`: no
    /// body follows.
    case headers(streamID: Int32, fields: [HTTPField], endStream: Bool)
    /// Trailer fields; the stream's end follows.
    case trailers(streamID: Int32, fields: [HTTPField])
    /// Body bytes. Acknowledge them with `consumed` once passed on.
    case data(streamID: Int32, bytes: [UInt8])
    /// The peer ended its side of the stream (END_STREAM).
    case endStream(streamID: Int32)
    /// The peer reset the stream (RST_STREAM) with an RFC 9113 §7 error code.
    case reset(streamID: Int32, errorCode: UInt32)
    /// The stream is closed in both directions (after its end, a reset either way, or GOAWAY);
    /// `errorCode` 0 is a clean close.
    case closed(streamID: Int32, errorCode: UInt32)
    /// The peer will accept no stream above `lastStreamID` (graceful drain or an error). Only the
    /// first GOAWAY of a connection is reported.
    case goAway(lastStreamID: Int32, errorCode: UInt32)
}

/// A stream's body on its way out: bytes not yet taken by nghttp2, whether the end was given,
/// and trailers to send after the last byte.
struct OutgoingBody {
    var bytes: [UInt8] = []
    var offset = 0
    var ended = false
    var trailers: [HTTPField]?
}

extension HTTP2Connection {
    static func connection(_ userData: UnsafeMutableRawPointer?) -> HTTP2Connection? {
        userData.map { Unmanaged<HTTP2Connection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The callbacks nghttp2 calls during `mem_recv` (and the data source during `mem_send`).
    static func install(_ callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            guard let connection = HTTP2Connection.connection(userData), let frame else { return 0 }
            let streamID = frame.pointee.hd.stream_id
            connection.incomingFields[streamID] = []
            connection.incomingFieldBytes[streamID] = 0
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, userData in
            guard let connection = HTTP2Connection.connection(userData), let frame, let name, let value else { return 0 }
            let streamID = frame.pointee.hd.stream_id
            // RFC 9113 §6.5.2's accounting: name, value and 32 bytes per field.
            let size = (connection.incomingFieldBytes[streamID] ?? 0) + nameLength + valueLength + 32
            connection.incomingFieldBytes[streamID] = size
            if size > connection.limits.maximumHeaderListSize {
                // The stream is reset; the connection goes on.
                connection.incomingFields[streamID] = nil
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
            }
            let field = HTTPField(name: String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self),
                                  value: String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self))
            connection.incomingFields[streamID, default: []].append(field)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            guard let connection = HTTP2Connection.connection(userData), let frame else { return 0 }
            connection.frameReceived(frame.pointee)
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, userData in
            guard let connection = HTTP2Connection.connection(userData), let data, length > 0,
                  connection.delivers(streamID) else { return 0 }
            connection.events.append(.data(streamID: streamID, bytes: Array(UnsafeBufferPointer(start: data, count: length))))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { session, frame, userData in
            guard let connection = HTTP2Connection.connection(userData), let frame else { return 0 }
            let streamID = frame.pointee.hd.stream_id
            let owed: Bool
            if frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 {
                if connection.role == .server { connection.endsSent.insert(streamID) }
                owed = true
            } else if frame.pointee.hd.type == UInt8(NGHTTP2_DATA.rawValue), let body = connection.outgoing[streamID] {
                owed = !body.ended && body.offset >= body.bytes.count // the last queued byte went out
            } else {
                owed = false
            }
            if owed, let code = connection.resetsAfterQueued.removeValue(forKey: streamID) {
                _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, code)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
            guard let connection = HTTP2Connection.connection(userData) else { return 0 }
            connection.incomingFields[streamID] = nil
            connection.incomingFieldBytes[streamID] = nil
            connection.outgoing[streamID] = nil
            connection.resetsAfterQueued[streamID] = nil
            if connection.delivers(streamID) { connection.events.append(.closed(streamID: streamID, errorCode: errorCode)) }
            connection.deliveredStreams.remove(streamID)
            return 0
        }
    }

    /// Whether events of `streamID` are delivered: always, until the peer sent GOAWAY; then only
    /// for streams whose head was delivered before.
    func delivers(_ streamID: Int32) -> Bool {
        !peerWentAway || deliveredStreams.contains(streamID)
    }

    func frameReceived(_ frame: nghttp2_frame) {
        let streamID = frame.hd.stream_id
        let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(frame.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            let fields = incomingFields.removeValue(forKey: streamID) ?? []
            incomingFieldBytes[streamID] = nil
            // A peer that sent GOAWAY is closing the connection: a stream it opens afterwards is
            // not delivered. (nghttp2 drops such a stream when it comes in the same read as the
            // GOAWAY and not when it comes in a later one; this makes both the same.)
            if peerWentAway && !deliveredStreams.contains(streamID) { return }
            deliveredStreams.insert(streamID)
            let isHead = frame.headers.cat != NGHTTP2_HCAT_HEADERS || fields.first?.name.hasPrefix(":") == true
            if isHead {
                events.append(.headers(streamID: streamID, fields: fields, endStream: endStream))
            } else {
                events.append(.trailers(streamID: streamID, fields: fields))
            }
            if endStream { events.append(.endStream(streamID: streamID)) }
        case NGHTTP2_DATA.rawValue:
            if endStream && delivers(streamID) { events.append(.endStream(streamID: streamID)) }
        case NGHTTP2_RST_STREAM.rawValue:
            if delivers(streamID) { events.append(.reset(streamID: streamID, errorCode: frame.rst_stream.error_code)) }
        case NGHTTP2_GOAWAY.rawValue:
            // The first GOAWAY says it: later ones only lower the last stream id (RFC 9113
            // §6.8), and nghttp2 reports them or not depending on where reads split.
            guard !peerWentAway else { return }
            peerWentAway = true
            events.append(.goAway(lastStreamID: frame.goaway.last_stream_id, errorCode: frame.goaway.error_code))
        default:
            break
        }
    }
}
