import CNghttp2Shims
import HTTP1

// Sending: heads, bodies through a deferred data source (sent as the peer's windows allow),
// trailers, resets and GOAWAY. Everything queues; `takeOutput()` serializes it.
extension HTTP2Connection {
    /// Client: opens a stream with a request head (`:method`, `:scheme`, `:authority`, `:path`
    /// first). Without `endStream` the body follows through `sendData`. Returns the stream id.
    public func sendRequest(_ fields: [HTTPField], endStream: Bool) throws(HTTP2Error) -> Int32 {
        precondition(role == .client, "only a client sends requests")
        let streamID = try withFieldArray(fields) { nva, count in
            if endStream {
                return nghttp2_submit_request(session, nil, nva, count, nil, nil)
            }
            var provider = Self.dataProvider()
            return nghttp2_submit_request(session, nil, nva, count, &provider, nil)
        }
        guard streamID > 0 else { throw HTTP2Error(.stream, "cannot open a stream: \(Self.text(streamID))") }
        // Our own streams' events are delivered even after the peer's GOAWAY (its responses).
        deliveredStreams.insert(streamID)
        if !endStream { outgoing[streamID] = OutgoingBody() }
        return streamID
    }

    /// Server: the response head on `streamID` (`:status` first); 1xx heads are sent with
    /// `sendInformational`. Without `endStream` the body follows through `sendData`.
    public func sendResponse(_ fields: [HTTPField], on streamID: Int32, endStream: Bool) throws(HTTP2Error) {
        precondition(role == .server, "only a server sends responses")
        let rv = try withFieldArray(fields) { nva, count in
            if endStream {
                return nghttp2_submit_response(session, streamID, nva, count, nil)
            }
            var provider = Self.dataProvider()
            return nghttp2_submit_response(session, streamID, nva, count, &provider)
        }
        guard rv == 0 else { throw HTTP2Error(.stream, "cannot answer stream \(streamID): \(Self.text(rv))") }
        if !endStream { outgoing[streamID] = OutgoingBody() }
    }

    /// Server: an interim response (100 Continue, 103 Early Hints) before the final one.
    public func sendInformational(_ fields: [HTTPField], on streamID: Int32) throws(HTTP2Error) {
        let rv = try withFieldArray(fields) { nva, count in
            nghttp2_submit_headers(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, nil, nva, count, nil)
        }
        guard rv >= 0 else { throw HTTP2Error(.stream, "cannot send an interim response on stream \(streamID): \(Self.text(rv))") }
    }

    /// Body bytes for a stream whose head went out without `endStream`; `end` ends the stream
    /// after them (with `trailers`, when given, as a final HEADERS frame).
    public func sendData(_ bytes: [UInt8], on streamID: Int32, end: Bool = false, trailers: [HTTPField]? = nil) {
        guard var body = outgoing[streamID] else { return }
        if body.offset > 0 && body.offset == body.bytes.count {
            body.bytes.removeAll(keepingCapacity: true)
            body.offset = 0
        }
        body.bytes += bytes
        if end {
            body.ended = true
            body.trailers = trailers?.isEmpty == true ? nil : trailers
        }
        outgoing[streamID] = body
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Resets a stream with an RFC 9113 §7 error code (CANCEL 0x8 when the other side went away).
    /// With `afterQueued`, what is queued on the stream goes out first: the reset follows its
    /// END_STREAM when the body was ended, else its last queued DATA frame. A server that
    /// answered before it read the whole request ends the upload with RST_STREAM(NO_ERROR) after
    /// its complete response (RFC 9113 §8.1), and a reset at once would drop that response; a
    /// replayed response cut short keeps the bytes its client had.
    public func reset(_ streamID: Int32, errorCode: UInt32, afterQueued: Bool = false) {
        if afterQueued && nghttp2_session_get_stream_local_close(session, streamID) == 0
            && nghttp2_session_find_stream(session, streamID) != nil
            && outgoing[streamID].map({ $0.ended || $0.offset < $0.bytes.count }) ?? true {
            resetsAfterQueued[streamID] = errorCode
            return
        }
        outgoing[streamID] = nil
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// Server: whether the end of the response on `streamID` went out (its last frame, with
    /// END_STREAM, was written): a client that leaves after it had the whole response. Known
    /// until `forgetEnd(of:)`, after the stream's `closed` event.
    public func sentEnd(on streamID: Int32) -> Bool {
        endsSent.contains(streamID)
    }

    /// Drops what `sentEnd(on:)` knew of a closed stream.
    public func forgetEnd(of streamID: Int32) {
        endsSent.remove(streamID)
    }

    /// Without an error code, a graceful drain: GOAWAY names the last stream the peer opened that
    /// will be processed, and streams up to it finish (RFC 9113 §6.8). With one, the connection
    /// ends after the GOAWAY goes out.
    public func goAway(errorCode: UInt32 = 0) {
        if errorCode == 0 {
            _ = nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
                                      0, nil, 0)
        } else {
            _ = nghttp2_session_terminate_session(session, errorCode)
        }
    }

    /// The data source of every streamed body: copies what `sendData` queued, defers while the
    /// queue is empty, and ends the stream (or hands over to trailers) after the last byte.
    static func dataProvider() -> nghttp2_data_provider {
        var provider = nghttp2_data_provider()
        provider.read_callback = { session, streamID, buffer, length, flags, _, userData in
            guard let connection = HTTP2Connection.connection(userData), let buffer, let flags,
                  var body = connection.outgoing[streamID] else {
                return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
            }
            let available = body.bytes.count - body.offset
            if available == 0 && !body.ended { return Int(NGHTTP2_ERR_DEFERRED.rawValue) }
            let count = min(length, available)
            if count > 0 {
                body.bytes.withUnsafeBufferPointer { source in
                    buffer.update(from: source.baseAddress! + body.offset, count: count)
                }
                body.offset += count
            }
            if body.ended && body.offset == body.bytes.count {
                flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
                if let trailers = body.trailers {
                    flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue)
                    _ = try? connection.withFieldArray(trailers) { nva, n in nghttp2_submit_trailer(session, streamID, nva, n) }
                }
                connection.outgoing[streamID] = nil
            } else {
                connection.outgoing[streamID] = body
            }
            return count
        }
        return provider
    }

    /// Runs `body` with the fields as an `nghttp2_nv` array (nghttp2 copies them during the
    /// call). Names are lowercased, as HTTP/2 requires (RFC 9113 §8.2.1).
    func withFieldArray<R>(_ fields: [HTTPField], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) throws(HTTP2Error) -> R {
        var storage: [UInt8] = []
        var ranges: [(name: Range<Int>, value: Range<Int>)] = []
        var total = 0
        for field in fields {
            let name = Array(field.name.lowercased().utf8), value = Array(field.value.utf8)
            total += name.count + value.count + 32
            let start = storage.count
            storage += name
            storage += value
            ranges.append((start..<start + name.count, start + name.count..<storage.count))
        }
        guard total <= limits.maximumHeaderListSize else {
            throw HTTP2Error(.stream, "header list of \(total) bytes is over the \(limits.maximumHeaderListSize)-byte limit")
        }
        guard !ranges.isEmpty else {
            // No fields (an empty trailer or interim list): a valid pointer, a count of 0.
            var none = nghttp2_nv()
            return withUnsafePointer(to: &none) { body($0, 0) }
        }
        storage.append(0) // so the buffer has an address even when every name and value is empty
        return storage.withUnsafeMutableBufferPointer { bytes in
            let base = bytes.baseAddress!
            let nva = ranges.map { range in
                nghttp2_nv(name: base + range.name.lowerBound, value: base + range.value.lowerBound,
                           namelen: range.name.count, valuelen: range.value.count,
                           flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return nva.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
        }
    }
}
