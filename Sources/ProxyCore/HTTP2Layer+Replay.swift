import HTTP1
import HTTP2
import Recording

// `harrec replay` over HTTP/2: each client stream is answered by the responder instead of
// an upstream stream. The request body is gathered (matching may compare it), then the recorded
// response goes out at once, or at the stream's due instant with `--latency recorded`.
extension HTTP2Layer {
    /// A replayed stream's request so far, and its answer once decided.
    final class ReplayRequest {
        /// The request's fields as the client sent them (pseudo-headers included), for `--passthrough`.
        let fields: [HTTPField]
        var body: [UInt8] = []
        var decision: ReplayDecision?
        /// When the answer is due (`--latency recorded`); nil: at once.
        var dueAt: Double?
        /// `--passthrough` sent it again after a reused HTTP/1.1 connection closed under it.
        var retried = false
        /// A body read from its source as the client takes it, and when its last piece was
        /// queued (a stream whose client stops taking it is reset after the idle limit).
        var streaming: StreamedBodyProgress?
        var lastPieceAt = 0.0

        init(fields: [HTTPField]) { self.fields = fields }
    }

    /// Connection-specific fields an HTTP/2 response must not carry (RFC 9113 §8.2.2); the
    /// recording drops most of them already, a foreign HAR may not.
    static let connectionSpecificFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te",
    ]

    /// A new client stream while replaying: nothing is opened upstream.
    func startReplayStream(_ stream: Stream, fields: [HTTPField], endStream: Bool) {
        stream.replay = ReplayRequest(fields: fields)
        if endStream { requestComplete(stream) }
    }

    /// Request body bytes of a replayed stream: kept, and acknowledged at once (the body is
    /// bounded by `ReplayWire.maximumRequestBody`; past it the stream is refused).
    func replayData(_ stream: Stream, _ bytes: [UInt8]) {
        client.consumed(bytes.count, on: stream.clientID)
        guard let request = stream.replay, request.decision == nil, !stream.recorded else { return }
        guard request.body.count + bytes.count <= ReplayWire.maximumRequestBody else {
            client.reset(stream.clientID, errorCode: HTTP2ErrorCode.refusedStream)
            stream.recorded = true
            outputs.append(.log(.rejected(status: 413, reason: "request body over \(ReplayWire.maximumRequestBody >> 20) MiB, too large to match against the recording")))
            return
        }
        request.body += bytes
    }

    /// The request ended: decide now, answer now or when due.
    func requestComplete(_ stream: Stream) {
        guard let request = stream.replay, let service = context.replay, request.decision == nil, !stream.recorded else { return }
        stream.request = .ended
        let flow = stream.flow.request
        let decision = service.decide(method: flow.method, url: flow.url,
                                      headers: flow.fields.map { HTTPField(name: $0.name, value: $0.value) },
                                      body: request.body, canForward: true)
        request.decision = decision
        stream.lastUpstreamActivity = now
        if case .serve(let response, _) = decision, let delay = response.delay, delay > 0,
           stream.flow.instants.requestStart + delay > now {
            request.dueAt = stream.flow.instants.requestStart + delay
            outputs.append(.wake(request.dueAt!))
            return
        }
        answer(stream)
    }

    /// Answers the streams whose recorded latency has passed.
    func answerDueStreams(at time: Double) {
        now = max(now, time)
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) {
            if let due = stream.replay?.dueAt, due <= now, !stream.recorded { answer(stream) }
        }
    }

    private func answer(_ stream: Stream) {
        guard let request = stream.replay, let decision = request.decision, !stream.recorded else { return }
        if case .forward = decision {
            forward(stream)
            return
        }
        stream.recorded = true
        stream.response = .ended
        let method = stream.flow.request.method, url = stream.flow.request.url
        switch decision {
        case .serve(let response, let resetAfter):
            switch response.outcome {
            case .failed(let failure), .cut(let failure):
                // What the recorded client got (the head and part of the body, when cut), then
                // the end it saw: a give-up stays silent until the client resets the stream again;
                // a broken exchange is reset, with the code the recording's client got when it
                // was a passed-on reset, else as a broken connection would end it.
                var status: Int?
                if case .cut = response.outcome {
                    send(stream, fields: h2Fields(response, contentLength: false),
                         body: method == "HEAD" ? [] : Array(response.body), end: false)
                    status = response.status
                }
                if case .broken(let resetCode) = failure {
                    client.reset(stream.clientID, errorCode: resetCode ?? HTTP2ErrorCode.internalError,
                                 afterQueued: status != nil)
                }
                outputs.append(.log(.replayed(method: method, url: url, status: status, label: response.label)))
            case .answered:
                if let streamed = response.streamed, method != "HEAD", streamed.source.count > 0 {
                    send(stream, fields: h2Fields(response, contentLength: true), body: [], end: false)
                    request.streaming = StreamedBodyProgress(streamed, label: response.label)
                    streamingIDs.append(stream.clientID)
                    continueStreamedBodies(at: now)
                } else {
                    send(stream, fields: h2Fields(response, contentLength: true), body: method == "HEAD" ? [] : Array(response.body))
                }
                if context.liveLog {
                    outputs.append(.log(.replayed(method: method, url: url, status: response.status, label: response.label)))
                }
            }
            if resetAfter { outputs.append(.log(.replayReset(trigger: "\(method) \(url)"))) }
        case .forward:
            break // handled above
        case .unmatched(let diagnosis):
            let body = Array((diagnosis + "\n").utf8)
            send(stream, fields: [HTTPField(name: ":status", value: String(ReplayWire.unmatchedStatus)),
                                  HTTPField(name: "content-type", value: "text/plain; charset=utf-8"),
                                  HTTPField(name: "content-length", value: String(body.count)),
                                  HTTPField(name: "x-harrec-replay", value: "unmatched")],
                 body: method == "HEAD" ? [] : body)
            outputs.append(.log(.replayUnmatched(method: method, url: url, diagnosis: diagnosis)))
        }
    }

    /// The response's head as HTTP/2 fields; `contentLength`: announce the body's length (not
    /// for a response cut short, whose client must not take it for whole).
    private func h2Fields(_ response: ReplayResponse, contentLength: Bool) -> [HTTPField] {
        var fields = [HTTPField(name: ":status", value: String(response.status))]
        for field in response.fields {
            let name = field.name.lowercased()
            if !Self.connectionSpecificFields.contains(name) { fields.append(HTTPField(name: name, value: field.value)) }
        }
        if contentLength && !HTTP1Forwarding.hasNoContent(status: response.status) {
            fields.append(HTTPField(name: "content-length", value: String(response.bodyCount)))
        }
        return fields
    }

    /// Whether a streamed body's stream has room for its next piece (`continueStreamedBodies`).
    var wantsStreamedBodyPieces: Bool {
        streamingIDs.contains { client.bufferedOutgoingBytes(on: $0) < ReplayWire.streamedPiece }
    }

    /// Queues the next piece of each streamed body whose stream has room (its window took the
    /// last piece); the last piece ends the stream. A stream the client reset is dropped; a body
    /// the file no longer holds resets its stream, so the client sees the answer cut.
    func continueStreamedBodies(at time: Double) {
        now = max(now, time)
        streamingIDs.removeAll { id in
            guard let stream = streams[id], !stream.clientClosed, let request = stream.replay,
                  var body = request.streaming else { return true }
            guard client.bufferedOutgoingBytes(on: id) < ReplayWire.streamedPiece else { return false }
            guard case .piece(let piece, let last) = body.next() else {
                client.reset(id, errorCode: HTTP2ErrorCode.internalError, afterQueued: true)
                outputs.append(.log(.replayBodyLost(url: stream.flow.request.url, label: body.label, sent: body.sent,
                                                    count: body.count)))
                request.streaming = nil
                return true
            }
            client.sendData(piece, on: id, end: last)
            request.streaming = last ? nil : body
            request.lastPieceAt = now
            return last
        }
    }

    /// Resets the streams whose client took no piece of their streamed body for `limit` seconds
    /// (CANCEL), as an HTTP/1 connection is closed then: a client that stopped reading does not
    /// hold its stream and the file for good.
    func expireStalledBodies(at time: Double, limit: Double) {
        now = max(now, time)
        streamingIDs.removeAll { id in
            guard let request = streams[id]?.replay, request.streaming != nil else { return true }
            guard now - request.lastPieceAt > limit else { return false }
            request.streaming = nil
            client.reset(id, errorCode: HTTP2ErrorCode.cancel)
            return true
        }
    }

    /// `end`: the stream ends after `body` (false for a response cut short).
    private func send(_ stream: Stream, fields: [HTTPField], body: [UInt8], end: Bool = true) {
        do {
            try client.sendResponse(reverseResponseFields(fields, stream), on: stream.clientID, endStream: end && body.isEmpty)
            stream.forwardedHead()
            if !body.isEmpty { client.sendData(body, on: stream.clientID, end: end) }
        } catch {
            client.reset(stream.clientID, errorCode: HTTP2ErrorCode.internalError)
            outputs.append(.log(.rejected(status: 502, reason: "the recorded response cannot be sent over HTTP/2: \(error.message)")))
        }
    }
}
