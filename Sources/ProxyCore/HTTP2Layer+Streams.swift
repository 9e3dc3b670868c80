import HTTP1
import HTTP2
import Recording

// HTTP2Layer's streams: client streams opened and forwarded, upstream streams answered back, the
// two sides' flow control tied together, and each stream recorded once.
extension HTTP2Layer {
    // MARK: - Client streams

    func handleClient(_ event: HTTP2Event) {
        switch event {
        case .headers(let streamID, let fields, let endStream):
            startStream(streamID, fields: fields, endStream: endStream)
        case .trailers(let streamID, let fields):
            guard let stream = streams[streamID] else { return }
            stream.requestTrailers = fields
            stream.flow.request.trailers = fields.map { RecordedField(name: $0.name, value: $0.value) }
        case .data(let streamID, let bytes):
            if let stream = streams[streamID], stream.replay != nil {
                replayData(stream, bytes)
                return
            }
            guard let stream = streams[streamID], let upstreamID = stream.upstreamID, !stream.recorded else {
                client.consumed(bytes.count, on: streamID)
                if let stream = streams[streamID], case .dropping(let dropped) = stream.request {
                    dropUpload(stream, more: dropped + bytes.count)
                }
                return
            }
            if let part = stream.flow.recordBody(bytes, .request, cap: context.maxRecordedBodyBytes, partSize: context.bodyPartSize,
                                                 filter: context.recordingFilter) {
                outputs.append(.recordPart(part))
            }
            stream.unacknowledgedFromClient += bytes.count
            upstream.sendData(bytes, on: upstreamID)
        case .endStream(let streamID):
            if let stream = streams[streamID], stream.replay != nil {
                requestComplete(stream)
                return
            }
            guard let stream = streams[streamID], let upstreamID = stream.upstreamID else { return }
            stream.request = .ended
            stream.flow.instants.sendEnd = now
            stream.lastUpstreamActivity = now
            upstream.sendData([], on: upstreamID, end: true, trailers: stream.requestTrailers)
            if stream.responseEnded { complete(stream) }
        case .reset(let streamID, let errorCode):
            guard let stream = streams[streamID] else { return }
            if let upstreamID = stream.upstreamID, !stream.upstreamClosed {
                upstream.reset(upstreamID, errorCode: HTTP2ErrorCode.cancel)
            }
            clientLeft(stream, "client reset the stream (\(HTTP2ErrorCode.name(errorCode)))")
        case .closed(let streamID, let errorCode):
            defer { client.forgetEnd(of: streamID) }
            guard let stream = streams[streamID] else { return }
            stream.clientClosed = true
            if !stream.recorded {
                if let upstreamID = stream.upstreamID, !stream.upstreamClosed {
                    upstream.reset(upstreamID, errorCode: HTTP2ErrorCode.cancel)
                }
                clientLeft(stream, "client stream closed before the exchange finished (\(HTTP2ErrorCode.name(errorCode)))")
            }
            forgetIfDone(stream)
        case .goAway:
            // The client opens no more streams; those in flight finish.
            if state == .open { state = .draining }
        }
    }

    func startStream(_ streamID: Int32, fields: [HTTPField], endStream: Bool) {
        var method = "", scheme = context.scheme, authority: String?, path = ""
        var regular: [HTTPField] = []
        // A proxy credential is for harrec: never forwarded or recorded (as with HTTP/1).
        var fields = fields.filter { $0.name != "proxy-authorization" }
        for field in fields {
            switch field.name {
            case ":method": method = field.value
            case ":scheme": scheme = field.value
            case ":authority": authority = field.value
            case ":path": path = field.value
            default: if !field.name.hasPrefix(":") { regular.append(field) }
            }
        }
        let host = authority ?? regular.first(where: { $0.name == "host" })?.value ?? context.fallbackAuthority
        let url = method == "CONNECT" ? "\(scheme)://\(host)" : "\(scheme)://\(host)\(path)"
        let request = RecordedRequest(method: method, url: url, httpVersion: Self.httpVersion,
                                      fields: regular.map { RecordedField(name: $0.name, value: $0.value) }, headSize: -1)
        var flow = Flow(id: flowIDs.make(), clientAddress: context.clientAddress, request: request,
                        instants: FlowInstants(requestStart: now))
        pool.assign(&flow)
        flow.instants.sendStart = now
        let stream = Stream(clientID: streamID, flow: flow, at: now)
        streams[streamID] = stream
        if method == "CONNECT" {
            // Extended CONNECT is never advertised, so this is a tunnel request inside HTTP/2.
            client.reset(streamID, errorCode: HTTP2ErrorCode.connectError)
            fail(stream, "CONNECT inside an HTTP/2 connection is not supported", status: nil)
            return
        }
        guard state == .open else {
            client.reset(streamID, errorCode: HTTP2ErrorCode.refusedStream)
            fail(stream, "stream opened while the connection was closing", status: nil)
            return
        }
        if let route = context.reverse {
            let request = ReverseRequest(method: method, listenerOrigin: "\(scheme)://\(host)", path: path)
            guard let upstreamFields = reverseFields(fields, request, stream, route: route) else { return }
            fields = upstreamFields
        }
        if context.replay != nil {
            startReplayStream(stream, fields: fields, endStream: endStream)
            return
        }
        do {
            let upstreamID = try upstream.sendRequest(fields, endStream: endStream)
            stream.upstreamID = upstreamID
            clientIDs[upstreamID] = streamID
        } catch {
            client.reset(streamID, errorCode: HTTP2ErrorCode.refusedStream)
            fail(stream, "cannot forward the request: \(error.message)", status: nil)
            return
        }
        if endStream {
            stream.request = .ended
            stream.flow.instants.sendEnd = now
        }
    }

    // MARK: - Upstream streams

    func handleUpstream(_ event: HTTP2Event) {
        switch event {
        case .headers(let upstreamID, let fields, let endStream):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.lastUpstreamActivity = now
            forwardResponseHead(stream, fields: fields, endStream: endStream)
        case .trailers(let upstreamID, let fields):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.responseTrailers = fields
            stream.flow.response?.trailers = fields.map { RecordedField(name: $0.name, value: $0.value) }
        case .data(let upstreamID, let bytes):
            guard let stream = stream(upstream: upstreamID), !stream.recorded else {
                upstream.consumed(bytes.count, on: upstreamID)
                return
            }
            stream.lastUpstreamActivity = now
            if let part = stream.flow.recordBody(bytes, .response, cap: context.maxRecordedBodyBytes, partSize: context.bodyPartSize,
                                                 filter: context.recordingFilter) {
                outputs.append(.recordPart(part))
            }
            stream.unacknowledgedFromUpstream += bytes.count
            client.sendData(bytes, on: stream.clientID)
        case .endStream(let upstreamID):
            guard let stream = stream(upstream: upstreamID), !stream.recorded else { return }
            stream.response = .ended
            stream.flow.instants.responseEnd = now
            client.sendData([], on: stream.clientID, end: true, trailers: stream.responseTrailers)
            if stream.requestEnded { complete(stream) }
        case .reset(let upstreamID, let errorCode) where errorCode == HTTP2ErrorCode.noError:
            guard let stream = stream(upstream: upstreamID), stream.responseEnded else { fallthrough }
            // RFC 9113 §8.1: a complete response, then "stop sending the body". The exchange is
            // that response, with the body that reached the upstream; the client gets the
            // response, and the rest of its upload is read and dropped (`dropUpload`).
            stream.upstreamClosed = true
            complete(stream)
            if !stream.clientClosed && !stream.requestEnded { dropUpload(stream, more: 0) }
        case .reset(let upstreamID, let errorCode):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.upstreamClosed = true
            if !stream.clientClosed { client.reset(stream.clientID, errorCode: errorCode) }
            if !stream.recorded { fail(stream, "upstream reset the stream (\(HTTP2ErrorCode.name(errorCode)))", status: nil) }
        case .closed(let upstreamID, let errorCode):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.upstreamClosed = true
            clientIDs[upstreamID] = nil
            if !stream.recorded && !stream.responseEnded {
                // Refused streams (above a GOAWAY's last id) may be retried by the client.
                let code = errorCode == HTTP2ErrorCode.noError ? HTTP2ErrorCode.internalError : errorCode
                answerOrReset(stream, status: errorCode == HTTP2ErrorCode.refusedStream ? nil : 502,
                              reason: "upstream closed the stream (\(HTTP2ErrorCode.name(errorCode)))", resetCode: code)
            }
            forgetIfDone(stream)
        case .goAway(_, let errorCode) where context.replay != nil:
            // A passthrough connection going away: the replay goes on, and the next forwarded
            // stream opens a new connection.
            if replayUpstream == .ready { replayUpstream = .goingAway }
            if errorCode != HTTP2ErrorCode.noError {
                outputs.append(.log(.rejected(status: 502, reason: "upstream sent GOAWAY (\(HTTP2ErrorCode.name(errorCode)))")))
            }
        case .goAway(_, let errorCode):
            // Streams above its last id are closed by nghttp2 as refused; tell the client to
            // take new requests elsewhere.
            if state == .open {
                state = .draining
                goAwayOwed = true
            }
            if errorCode != HTTP2ErrorCode.noError {
                outputs.append(.log(.rejected(status: 502, reason: "upstream sent GOAWAY (\(HTTP2ErrorCode.name(errorCode)))")))
            }
        }
    }

    /// The client ended `stream` before the exchange ended (or harrec stopped, `byClient` false).
    /// One that had the whole response (its END_STREAM went out) saw a complete exchange, and it
    /// is recorded so, whatever became of its upload (curl ends an upload the answer made moot
    /// with a short body); else it failed, and a client's reason says when it gave up.
    func clientLeft(_ stream: Stream, _ reason: String, byClient: Bool = true) {
        if stream.responseEnded && client.sentEnd(on: stream.clientID) {
            complete(stream)
        } else {
            fail(stream, byClient ? gaveUpReason(reason, since: stream.flow.instants.requestStart, at: now) : reason,
                 status: nil)
        }
    }

    /// The upload of a stream the upstream stopped reading, `dropped` bytes so far, is read and
    /// dropped, as by the upstream: a client that sends its body to the end gets its answer
    /// (curl 7.88 fails a transfer reset while it is still uploading). One that goes on past a
    /// stream window is told to stop, as the upstream did: RST_STREAM(NO_ERROR), after the answer.
    func dropUpload(_ stream: Stream, more dropped: Int) {
        stream.request = .dropping(dropped: dropped)
        if dropped > Int(client.limits.streamWindow) {
            stream.request = .ended
            client.reset(stream.clientID, errorCode: HTTP2ErrorCode.noError, afterQueued: true)
        }
    }

    func stream(upstream upstreamID: Int32) -> Stream? {
        clientIDs[upstreamID].flatMap { streams[$0] }
    }

    func forwardResponseHead(_ stream: Stream, fields: [HTTPField], endStream: Bool) {
        let status = fields.first(where: { $0.name == ":status" }).flatMap { Int($0.value) } ?? 0
        if status >= 100 && status < 200 {
            // 100 Continue, 103 Early Hints: passed on, not recorded (as with HTTP/1).
            try? client.sendInformational(fields, on: stream.clientID)
            return
        }
        let regular = fields.filter { !$0.name.hasPrefix(":") }
        stream.flow.response = RecordedResponse(status: status, reason: "", httpVersion: Self.httpVersion,
                                                fields: regular.map { RecordedField(name: $0.name, value: $0.value) },
                                                headSize: -1)
        stream.flow.instants.responseStart = now
        do {
            try client.sendResponse(reverseResponseFields(fields, stream), on: stream.clientID, endStream: endStream)
            stream.forwardedHead()
        } catch {
            if let upstreamID = stream.upstreamID { upstream.reset(upstreamID, errorCode: HTTP2ErrorCode.cancel) }
            client.reset(stream.clientID, errorCode: HTTP2ErrorCode.internalError)
            fail(stream, "upstream response head cannot be forwarded: \(error.message)", status: nil)
        }
    }

    // MARK: - Flow control

    /// Request bytes the upstream's nghttp2 sent since the last call are acknowledged to the client.
    func acknowledgeClient() {
        for stream in streams.values where stream.unacknowledgedFromClient > 0 {
            let waiting = stream.upstreamID.map { upstream.bufferedOutgoingBytes(on: $0) } ?? 0
            let sent = stream.unacknowledgedFromClient - min(waiting, stream.unacknowledgedFromClient)
            if sent > 0 {
                client.consumed(sent, on: stream.clientID)
                stream.unacknowledgedFromClient -= sent
            }
        }
    }

    /// Response bytes sent on to the client are acknowledged to the upstream.
    func acknowledgeUpstream() {
        for stream in streams.values where stream.unacknowledgedFromUpstream > 0 {
            let waiting = client.bufferedOutgoingBytes(on: stream.clientID)
            let sent = stream.unacknowledgedFromUpstream - min(waiting, stream.unacknowledgedFromUpstream)
            if sent > 0, let upstreamID = stream.upstreamID {
                upstream.consumed(sent, on: upstreamID)
                stream.unacknowledgedFromUpstream -= sent
            }
        }
    }

    /// Drops a stream once both sides closed, acknowledging what it still held so the
    /// connection windows do not shrink for good.
    func forgetIfDone(_ stream: Stream) {
        guard stream.clientClosed && (stream.upstreamClosed || stream.upstreamID == nil) else { return }
        if stream.unacknowledgedFromClient > 0 { client.consumed(stream.unacknowledgedFromClient, on: stream.clientID) }
        if stream.unacknowledgedFromUpstream > 0, let upstreamID = stream.upstreamID {
            upstream.consumed(stream.unacknowledgedFromUpstream, on: upstreamID)
        }
        streams[stream.clientID] = nil
        if let upstreamID = stream.upstreamID { clientIDs[upstreamID] = nil }
    }

    // MARK: - Recording

    func complete(_ stream: Stream) {
        guard !stream.recorded else { return }
        stream.recorded = true
        stream.flow.instants.end = now
        if stream.flow.instants.sendEnd == nil { stream.flow.instants.sendEnd = stream.flow.instants.responseStart }
        if context.replay != nil && !stream.forwarded { return } // a replay records only what it forwarded
        outputs.append(.record(stream.flow))
        if context.liveLog { outputs.append(.log(.exchange(stream.flow))) }
    }

    func fail(_ stream: Stream, _ reason: String, status: Int?) {
        guard !stream.recorded else { return }
        stream.recorded = true
        stream.flow.error = sanitizedForLog(reason)
        stream.flow.instants.end = now
        if stream.flow.response != nil && stream.flow.instants.responseEnd == nil {
            stream.flow.instants.responseEnd = now
        }
        if context.replay == nil || stream.forwarded { outputs.append(.record(stream.flow)) }
        outputs.append(.log(.exchangeFailed(stream.flow, status: status, reason: reason, cut: stream.responseHeadForwarded)))
    }
}
