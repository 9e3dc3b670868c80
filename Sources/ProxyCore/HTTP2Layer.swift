import HTTP1
import HTTP2
import Recording

/// HTTP/2 on both sides of an intercepted connection (RFC 9113): the client's streams become
/// streams on one upstream HTTP/2 connection, each recorded as its own exchange.
///
/// Sans-IO like the other layers: plaintext from either side goes in, and `pump` hands out the
/// bytes for each side and what to record. nghttp2 (`HTTP2Connection`) does the framing, HPACK
/// and protocol checks on each side; this type maps streams, moves heads, bodies, trailers and
/// resets across, and ties the two sides' flow control together: received DATA is acknowledged
/// (`consumed`) only once the other side's nghttp2 took it for sending, so a slow reader on one
/// stream closes that stream's window toward the sender instead of growing memory here, and the
/// other streams go on.
final class HTTP2Layer {
    /// Where the connection stands.
    enum State: Equatable {
        /// Streams come and go.
        case open
        /// A GOAWAY was sent or received: streams in flight finish, no new ones are taken.
        case draining
        /// The upstream connection is gone; what remains goes out to the client, then it closes.
        case closed
    }

    /// What the session does with the layer's results, in order.
    enum Output: Equatable {
        case record(Flow)
        /// The next part of a large body still in flight (`ProxyConfiguration.streamBodies`).
        case recordPart(RecordedBodyPart)
        case log(LiveEvent.Kind)
        /// Call `answerDueStreams` at this instant (a replayed stream's recorded latency).
        case wake(Double)
        /// `harrec replay --passthrough`: open the upstream connection (TLS offering h2, or h2c
        /// prior knowledge in a plain tunnel) and report it with `replayUpstreamReady` or
        /// `upstreamLost`.
        case openUpstream
        /// A reverse listener's stream asked for a mark or a replay reset (`HTTP2Layer+Reverse`);
        /// its answer already went to the client.
        case reserved(ReservedHost.Answer)
    }

    /// What a recorded URL and flow need from the session.
    struct Context {
        var clientAddress: String
        /// "https" inside an intercepted tunnel.
        var scheme: String
        /// The authority when a request carries neither `:authority` nor `Host`.
        var fallbackAuthority: String
        var maxRecordedBodyBytes: Int
        /// `ProxyConfiguration.bodyPartSize`: large bodies go to the recording in parts of this
        /// size (0: whole), unless the filter already skips their exchange.
        var bodyPartSize = 0
        var recordingFilter = RecordingFilter()
        var liveLog: Bool
        /// `harrec replay`: streams are answered from here, and nothing is sent upstream.
        var replay: (any Responder)? = nil
        /// A reverse listener's connection: streams go to its upstream (`HTTP2Layer+Reverse`).
        var reverse: ReverseRoute? = nil
    }

    /// One client stream and its upstream stream.
    final class Stream {
        /// The request's progress from the client.
        enum RequestProgress: Equatable {
            /// Body bytes may still come.
            case receiving
            /// The upstream took no more of the upload (a complete answer, then
            /// RST_STREAM(NO_ERROR)): the rest is read and dropped, `dropped` bytes so far.
            case dropping(dropped: Int)
            /// The client's END_STREAM arrived, or the dropped upload was stopped.
            case ended
        }

        /// The response's progress toward the client.
        enum ResponseProgress: Equatable {
            /// No final head went to the client: an error response can still replace it.
            case awaitingHead
            /// The final head went to the client; body bytes follow.
            case forwarding
            /// The response ended (the upstream's END_STREAM, or a replay's answer).
            case ended
        }

        let clientID: Int32
        var upstreamID: Int32?
        var flow: Flow
        var request = RequestProgress.receiving
        var response = ResponseProgress.awaitingHead
        var requestTrailers: [HTTPField]?
        var responseTrailers: [HTTPField]?
        /// Body bytes received from one side and handed to the other side's nghttp2 that it has
        /// not yet sent: acknowledged to the sender only as they go out.
        var unacknowledgedFromClient = 0
        var unacknowledgedFromUpstream = 0
        var recorded = false
        var clientClosed = false
        var upstreamClosed = false
        var lastUpstreamActivity: Double
        /// Set when the stream is answered from a replay (`HTTP2Layer+Replay`).
        var replay: ReplayRequest?
        /// On a reverse listener: the scheme and authority the client used.
        var listenerOrigin: String?

        init(clientID: Int32, flow: Flow, at time: Double) {
            self.clientID = clientID
            self.flow = flow
            lastUpstreamActivity = time
        }

        var requestEnded: Bool { request == .ended }
        var responseEnded: Bool { response == .ended }
        /// The final response head went to the client (an error response can no longer replace it).
        var responseHeadForwarded: Bool { response != .awaitingHead }

        /// A replayed stream that matched nothing and went to the real upstream (`--passthrough`):
        /// recorded like a recording's stream.
        var forwarded: Bool {
            if case .forward? = replay?.decision { return true }
            return false
        }

        /// The final head went to the client.
        func forwardedHead() {
            if response == .awaitingHead { response = .forwarding }
        }
    }

    static let httpVersion = "http/2.0"

    var state = State.open
    let client: HTTP2Connection
    /// Replaced when a replay's passthrough connection is reopened.
    var upstream: HTTP2Connection
    let limits: HTTP2Limits
    let context: Context
    let pool: UpstreamPool
    let flowIDs: IDSource
    /// Streams by client stream id, and the client id of each upstream stream.
    var streams: [Int32: Stream] = [:]
    var clientIDs: [Int32: Int32] = [:]
    var outputs: [Output] = []
    var now: Double
    /// A graceful GOAWAY is due to the client once the bodies queued for it went out: nghttp2
    /// sends control frames before DATA, and a client may treat DATA after a GOAWAY as an error
    /// (python's h2, and so httpx, does), so the order the origin used is kept.
    var goAwayOwed = false
    /// `harrec replay --passthrough`: the connection forwarded streams go on, and the streams
    /// waiting for it (`HTTP2Layer+Passthrough`).
    var replayUpstream = ReplayUpstream.none
    var awaitingUpstream: [Stream] = []
    /// Set while the passthrough connection speaks HTTP/1.1 (`HTTP2Layer+PassthroughHTTP1`).
    var passthroughHTTP1: PassthroughHTTP1?
    /// False until the upstream connection can take bytes (`upstreamWritable`).
    var upstreamReady = true
    /// Replayed streams whose body is read from its source as the client takes it
    /// (`HTTP2Layer+Replay`), in the order they were answered.
    var streamingIDs: [Int32] = []

    init(context: Context, pool: UpstreamPool, flowIDs: IDSource, limits: HTTP2Limits = HTTP2Limits(),
         at time: Double) throws(HTTP2Error) {
        self.context = context
        self.pool = pool
        self.flowIDs = flowIDs
        client = try HTTP2Connection(role: .server, limits: limits)
        upstream = try HTTP2Connection(role: .client, limits: limits)
        self.limits = limits
        now = time
    }

    /// Streams in flight.
    var openStreamCount: Int { streams.count }

    /// True when the client connection can close after the last output: the client is done, the
    /// layer drained its last stream, or the upstream is gone.
    var isFinished: Bool {
        switch state {
        case .open: return !client.isActive
        case .draining: return !client.isActive || streams.isEmpty
        case .closed: return true
        }
    }

    // MARK: - Input

    /// Plaintext from the client. A connection error (bad preface, flood, protocol violation)
    /// ends the layer; its GOAWAY is in the next `pump`.
    func clientReceived(_ bytes: [UInt8], at time: Double) {
        now = max(now, time)
        do {
            try bytes.withUnsafeBytes { try client.receive($0) }
        } catch {
            endAll(reason: "client \(error)", status: nil, resetCode: HTTP2ErrorCode.cancel)
            // nghttp2 answers most violations itself; a bad preface gets no GOAWAY from it.
            client.goAway(errorCode: HTTP2ErrorCode.protocolError)
            state = .closed
        }
    }

    /// Plaintext from the upstream.
    func upstreamReceived(_ bytes: [UInt8], at time: Double) {
        now = max(now, time)
        if passthroughHTTP1 != nil {
            passthroughHTTP1Received(bytes)
            return
        }
        do {
            try bytes.withUnsafeBytes { try upstream.receive($0) }
        } catch {
            upstreamLost("upstream \(error)", at: time)
        }
    }

    /// Handles every queued event of both sides and returns the bytes for each, with the
    /// results to record and log. Call after every input.
    func pump(at time: Double) -> (client: [UInt8], upstream: [UInt8], outputs: [Output]) {
        now = max(now, time)
        var toClient: [UInt8] = []
        var toUpstream: [UInt8] = []
        // Sending can close streams and so queue events; loop until both sides are quiet.
        repeat {
            while let event = client.nextEvent() { handleClient(event) }
            while let event = upstream.nextEvent() { handleUpstream(event) }
            toClient += client.takeOutput()
            acknowledgeUpstream()
            if state != .closed && upstreamWritable { toUpstream += upstream.takeOutput() }
            acknowledgeClient()
            toClient += client.takeOutput()
            if state != .closed && upstreamWritable { toUpstream += upstream.takeOutput() }
            if let h1 = passthroughHTTP1, !h1.output.isEmpty {
                toUpstream += h1.output
                h1.output.removeAll()
            }
            if goAwayOwed && !client.hasQueuedBodies {
                goAwayOwed = false
                client.goAway()
                toClient += client.takeOutput()
            }
        } while client.hasEvents || upstream.hasEvents
        let taken = outputs
        outputs.removeAll()
        return (toClient, toUpstream, taken)
    }

    // MARK: - Ending

    /// Graceful: GOAWAY to the client; streams in flight finish.
    func drain() {
        guard state == .open else { return }
        state = .draining
        goAwayOwed = true
    }

    /// The upstream connection closed or broke: streams still waiting for a head get a 502,
    /// the others are reset, and the client is told to go away.
    /// `status` answers the streams still waiting for a head (504 when connecting timed out).
    func upstreamLost(_ reason: String, status: Int = 502, at time: Double) {
        now = max(now, time)
        guard state != .closed else { return }
        if context.replay != nil {
            // Only the passthrough streams depended on it; the replay goes on.
            replayUpstreamLost(reason, status: status)
            return
        }
        for stream in streams.values { stream.upstreamClosed = true }
        endAll(reason: reason, status: 502, resetCode: HTTP2ErrorCode.internalError)
        if state == .open { goAwayOwed = true }
        state = .closed
    }

    /// The client connection closed or broke, or harrec stops: every stream in flight is
    /// recorded as failed, except one whose client already had the whole response (below).
    /// `byClient`: the client left (not harrec), so each reason says when it gave up.
    func clientLost(_ reason: String, at time: Double, byClient: Bool = false) {
        now = max(now, time)
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) {
            if hasWholeResponse(stream) {
                stream.response = .ended
                if stream.flow.instants.responseEnd == nil { stream.flow.instants.responseEnd = now }
                complete(stream)
            } else {
                clientLeft(stream, reason, byClient: byClient)
            }
        }
        streams.removeAll()
        clientIDs.removeAll()
        state = .closed
    }

    /// The client got every byte the response's `content-length` announced, but the upstream's
    /// END_STREAM had not arrived: a client that knows the length may finish and close first
    /// (curl does once its last transfer is done), and nginx may end a proxied stream with a
    /// separate empty DATA frame. The exchange is whole, not failed.
    func hasWholeResponse(_ stream: Stream) -> Bool {
        guard stream.requestEnded, stream.responseHeadForwarded, !stream.recorded, let response = stream.flow.response,
              let declared = response.fields.last(where: { $0.name.lowercased() == "content-length" }).flatMap({ Int($0.value) })
        else { return false }
        return response.body.wireSize == declared && client.bufferedOutgoingBytes(on: stream.clientID) == 0
    }

    /// Streams whose request went out and whose upstream said nothing for `limit` seconds get
    /// a 504 (or a reset once their response started).
    func expireSilentStreams(at time: Double, limit: Double) {
        now = max(now, time)
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID })
        where stream.requestEnded && !stream.recorded && now - stream.lastUpstreamActivity > limit {
            if let upstreamID = stream.upstreamID { upstream.reset(upstreamID, errorCode: HTTP2ErrorCode.cancel) }
            answerOrReset(stream, status: 504, reason: "upstream sent nothing for \(formatSeconds(limit))",
                          resetCode: HTTP2ErrorCode.cancel)
        }
    }

    /// Every open stream: an error response where none was forwarded, else a reset.
    func endAll(reason: String, status: Int?, resetCode: UInt32) {
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) where !stream.recorded {
            answerOrReset(stream, status: status, reason: reason, resetCode: resetCode)
        }
    }

    func answerOrReset(_ stream: Stream, status: Int?, reason: String, resetCode: UInt32) {
        if let status, !stream.responseHeadForwarded,
           (try? client.sendResponse(Self.errorResponseFields(status: status, reason: reason), on: stream.clientID,
                                     endStream: false)) != nil {
            let body = Array("harrec: \(sanitizedForLog(reason))\n".utf8)
            client.sendData(body, on: stream.clientID, end: true)
            if stream.flow.response == nil {
                // harrec's own answer is what the client got: the entry shows it.
                var recorded = RecordedResponse(status: status, reason: HTTP1Forwarding.reasonPhrase(status), httpVersion: "HTTP/2",
                                                fields: Self.errorResponseFields(status: status, reason: reason).dropFirst()
                                                    .map { RecordedField(name: $0.name, value: $0.value) }, headSize: -1)
                recorded.body = RecordedBody(bytes: body, wireSize: body.count)
                stream.flow.response = recorded
                stream.flow.instants.responseStart = now
            }
            fail(stream, reason, status: status)
        } else {
            client.reset(stream.clientID, errorCode: resetCode)
            fail(stream, reason, status: nil)
        }
    }

    static func errorResponseFields(status: Int, reason: String) -> [HTTPField] {
        [HTTPField(name: ":status", value: "\(status)"), HTTPField(name: "content-type", value: "text/plain; charset=utf-8"),
         HTTPField(name: "x-harrec-error", value: "1")]
    }
}
