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
        case log(LiveEvent.Kind)
    }

    /// What a recorded URL and flow need from the session.
    struct Context {
        var clientAddress: String
        /// "https" inside an intercepted tunnel.
        var scheme: String
        /// The authority when a request carries neither `:authority` nor `Host`.
        var fallbackAuthority: String
        var maxRecordedBodyBytes: Int
        var liveLog: Bool
    }

    /// One client stream and its upstream stream.
    final class Stream {
        let clientID: Int32
        var upstreamID: Int32?
        var flow: Flow
        var requestEnded = false
        var responseEnded = false
        /// The final response head went to the client (an error response can no longer replace it).
        var responseHeadForwarded = false
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

        init(clientID: Int32, flow: Flow, at time: Double) {
            self.clientID = clientID
            self.flow = flow
            lastUpstreamActivity = time
        }
    }

    /// RFC 9113 §7 error codes used here.
    enum ErrorCode {
        static let noError: UInt32 = 0x0
        static let protocolError: UInt32 = 0x1
        static let internalError: UInt32 = 0x2
        static let refusedStream: UInt32 = 0x7
        static let cancel: UInt32 = 0x8
        static let connectError: UInt32 = 0xa
    }

    static let httpVersion = "http/2.0"

    private(set) var state = State.open
    let client: HTTP2Connection
    let upstream: HTTP2Connection
    private let context: Context
    private let pool: UpstreamPool
    private let flowIDs: IDSource
    /// Streams by client stream id, and the client id of each upstream stream.
    private(set) var streams: [Int32: Stream] = [:]
    private var clientIDs: [Int32: Int32] = [:]
    private var outputs: [Output] = []
    private var now: Double
    /// A graceful GOAWAY is due to the client once the bodies queued for it went out: nghttp2
    /// sends control frames before DATA, and a client may treat DATA after a GOAWAY as an error
    /// (python's h2, and so httpx, does), so the order the origin used is kept.
    private var goAwayOwed = false

    init(context: Context, pool: UpstreamPool, flowIDs: IDSource, limits: HTTP2Limits = HTTP2Limits(),
         at time: Double) throws(HTTP2Error) {
        self.context = context
        self.pool = pool
        self.flowIDs = flowIDs
        client = try HTTP2Connection(role: .server, limits: limits)
        upstream = try HTTP2Connection(role: .client, limits: limits)
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
            endAll(reason: "client \(error)", status: nil, resetCode: ErrorCode.cancel)
            // nghttp2 answers most violations itself; a bad preface gets no GOAWAY from it.
            client.goAway(errorCode: ErrorCode.protocolError)
            state = .closed
        }
    }

    /// Plaintext from the upstream.
    func upstreamReceived(_ bytes: [UInt8], at time: Double) {
        now = max(now, time)
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
            if state != .closed { toUpstream += upstream.takeOutput() }
            acknowledgeClient()
            toClient += client.takeOutput()
            if state != .closed { toUpstream += upstream.takeOutput() }
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
    func upstreamLost(_ reason: String, at time: Double) {
        now = max(now, time)
        guard state != .closed else { return }
        for stream in streams.values { stream.upstreamClosed = true }
        endAll(reason: reason, status: 502, resetCode: ErrorCode.internalError)
        if state == .open { goAwayOwed = true }
        state = .closed
    }

    /// The client connection closed or broke, or harrec stops: every stream in flight is
    /// recorded as failed.
    func clientLost(_ reason: String, at time: Double) {
        now = max(now, time)
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) {
            fail(stream, reason, status: nil)
        }
        streams.removeAll()
        clientIDs.removeAll()
        state = .closed
    }

    /// Streams whose request went out and whose upstream said nothing for `limit` seconds get
    /// a 504 (or a reset once their response started).
    func expireSilentStreams(at time: Double, limit: Double) {
        now = max(now, time)
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID })
        where stream.requestEnded && !stream.recorded && now - stream.lastUpstreamActivity > limit {
            if let upstreamID = stream.upstreamID { upstream.reset(upstreamID, errorCode: ErrorCode.cancel) }
            answerOrReset(stream, status: 504, reason: "upstream sent nothing for \(formatSeconds(limit))",
                          resetCode: ErrorCode.cancel)
        }
    }

    /// Every open stream: an error response where none was forwarded, else a reset.
    private func endAll(reason: String, status: Int?, resetCode: UInt32) {
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) where !stream.recorded {
            answerOrReset(stream, status: status, reason: reason, resetCode: resetCode)
        }
    }

    private func answerOrReset(_ stream: Stream, status: Int?, reason: String, resetCode: UInt32) {
        if let status, !stream.responseHeadForwarded,
           (try? client.sendResponse(Self.errorResponseFields(status: status, reason: reason), on: stream.clientID,
                                     endStream: false)) != nil {
            client.sendData(Array("harrec: \(sanitizedForLog(reason))\n".utf8), on: stream.clientID, end: true)
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

    // MARK: - Client streams

    private func handleClient(_ event: HTTP2Event) {
        switch event {
        case .headers(let streamID, let fields, let endStream):
            startStream(streamID, fields: fields, endStream: endStream)
        case .trailers(let streamID, let fields):
            guard let stream = streams[streamID] else { return }
            stream.requestTrailers = fields
            stream.flow.request.trailers = fields.map { RecordedField(name: $0.name, value: $0.value) }
        case .data(let streamID, let bytes):
            guard let stream = streams[streamID], let upstreamID = stream.upstreamID, !stream.recorded else {
                client.consumed(bytes.count, on: streamID)
                return
            }
            stream.flow.request.body.append(bytes, cap: context.maxRecordedBodyBytes)
            stream.unacknowledgedFromClient += bytes.count
            upstream.sendData(bytes, on: upstreamID)
        case .endStream(let streamID):
            guard let stream = streams[streamID], let upstreamID = stream.upstreamID else { return }
            stream.requestEnded = true
            stream.flow.instants.sendEnd = now
            stream.lastUpstreamActivity = now
            upstream.sendData([], on: upstreamID, end: true, trailers: stream.requestTrailers)
            if stream.responseEnded { complete(stream) }
        case .reset(let streamID, let errorCode):
            guard let stream = streams[streamID] else { return }
            if let upstreamID = stream.upstreamID, !stream.upstreamClosed {
                upstream.reset(upstreamID, errorCode: ErrorCode.cancel)
            }
            if !stream.recorded { fail(stream, "client reset the stream (\(Self.name(errorCode)))", status: nil) }
        case .closed(let streamID, let errorCode):
            guard let stream = streams[streamID] else { return }
            stream.clientClosed = true
            if !stream.recorded {
                if let upstreamID = stream.upstreamID, !stream.upstreamClosed {
                    upstream.reset(upstreamID, errorCode: ErrorCode.cancel)
                }
                fail(stream, "client stream closed before the exchange finished (\(Self.name(errorCode)))", status: nil)
            }
            forgetIfDone(stream)
        case .goAway:
            // The client opens no more streams; those in flight finish.
            if state == .open { state = .draining }
        }
    }

    private func startStream(_ streamID: Int32, fields: [HTTPField], endStream: Bool) {
        var method = "", scheme = context.scheme, authority: String?, path = ""
        var regular: [HTTPField] = []
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
            client.reset(streamID, errorCode: ErrorCode.connectError)
            fail(stream, "CONNECT inside an HTTP/2 connection is not supported", status: nil)
            return
        }
        guard state == .open else {
            client.reset(streamID, errorCode: ErrorCode.refusedStream)
            fail(stream, "stream opened while the connection was closing", status: nil)
            return
        }
        do {
            let upstreamID = try upstream.sendRequest(fields, endStream: endStream)
            stream.upstreamID = upstreamID
            clientIDs[upstreamID] = streamID
        } catch {
            client.reset(streamID, errorCode: ErrorCode.refusedStream)
            fail(stream, "cannot forward the request: \(error.message)", status: nil)
            return
        }
        if endStream {
            stream.requestEnded = true
            stream.flow.instants.sendEnd = now
        }
    }

    // MARK: - Upstream streams

    private func handleUpstream(_ event: HTTP2Event) {
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
            stream.flow.response?.body.append(bytes, cap: context.maxRecordedBodyBytes)
            stream.unacknowledgedFromUpstream += bytes.count
            client.sendData(bytes, on: stream.clientID)
        case .endStream(let upstreamID):
            guard let stream = stream(upstream: upstreamID), !stream.recorded else { return }
            stream.responseEnded = true
            stream.flow.instants.responseEnd = now
            client.sendData([], on: stream.clientID, end: true, trailers: stream.responseTrailers)
            if stream.requestEnded { complete(stream) }
        case .reset(let upstreamID, let errorCode):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.upstreamClosed = true
            if !stream.clientClosed { client.reset(stream.clientID, errorCode: errorCode) }
            if !stream.recorded { fail(stream, "upstream reset the stream (\(Self.name(errorCode)))", status: nil) }
        case .closed(let upstreamID, let errorCode):
            guard let stream = stream(upstream: upstreamID) else { return }
            stream.upstreamClosed = true
            clientIDs[upstreamID] = nil
            if !stream.recorded && !stream.responseEnded {
                // Refused streams (above a GOAWAY's last id) may be retried by the client.
                let code = errorCode == ErrorCode.noError ? ErrorCode.internalError : errorCode
                answerOrReset(stream, status: errorCode == ErrorCode.refusedStream ? nil : 502,
                              reason: "upstream closed the stream (\(Self.name(errorCode)))", resetCode: code)
            }
            forgetIfDone(stream)
        case .goAway(_, let errorCode):
            // Streams above its last id are closed by nghttp2 as refused; tell the client to
            // take new requests elsewhere.
            if state == .open {
                state = .draining
                goAwayOwed = true
            }
            if errorCode != ErrorCode.noError {
                outputs.append(.log(.rejected(status: 502, reason: "upstream sent GOAWAY (\(Self.name(errorCode)))")))
            }
        }
    }

    private func stream(upstream upstreamID: Int32) -> Stream? {
        clientIDs[upstreamID].flatMap { streams[$0] }
    }

    private func forwardResponseHead(_ stream: Stream, fields: [HTTPField], endStream: Bool) {
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
            try client.sendResponse(fields, on: stream.clientID, endStream: endStream)
            stream.responseHeadForwarded = true
        } catch {
            if let upstreamID = stream.upstreamID { upstream.reset(upstreamID, errorCode: ErrorCode.cancel) }
            client.reset(stream.clientID, errorCode: ErrorCode.internalError)
            fail(stream, "upstream response head cannot be forwarded: \(error.message)", status: nil)
        }
    }

    // MARK: - Flow control

    /// Request bytes the upstream's nghttp2 sent since the last call are acknowledged to the client.
    private func acknowledgeClient() {
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
    private func acknowledgeUpstream() {
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
    private func forgetIfDone(_ stream: Stream) {
        guard stream.clientClosed && (stream.upstreamClosed || stream.upstreamID == nil) else { return }
        if stream.unacknowledgedFromClient > 0 { client.consumed(stream.unacknowledgedFromClient, on: stream.clientID) }
        if stream.unacknowledgedFromUpstream > 0, let upstreamID = stream.upstreamID {
            upstream.consumed(stream.unacknowledgedFromUpstream, on: upstreamID)
        }
        streams[stream.clientID] = nil
        if let upstreamID = stream.upstreamID { clientIDs[upstreamID] = nil }
    }

    // MARK: - Recording

    private func complete(_ stream: Stream) {
        guard !stream.recorded else { return }
        stream.recorded = true
        stream.flow.instants.end = now
        if stream.flow.instants.sendEnd == nil { stream.flow.instants.sendEnd = stream.flow.instants.responseStart }
        outputs.append(.record(stream.flow))
        if context.liveLog { outputs.append(.log(.exchange(stream.flow))) }
    }

    private func fail(_ stream: Stream, _ reason: String, status: Int?) {
        guard !stream.recorded else { return }
        stream.recorded = true
        stream.flow.error = sanitizedForLog(reason)
        stream.flow.instants.end = now
        if stream.flow.response != nil && stream.flow.instants.responseEnd == nil {
            stream.flow.instants.responseEnd = now
        }
        outputs.append(.record(stream.flow))
        outputs.append(.log(.exchangeFailed(stream.flow, status: status, reason: reason, cut: stream.responseHeadForwarded)))
    }

    /// RFC 9113 §7's name for an error code.
    static func name(_ code: UInt32) -> String {
        let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
                     "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
                     "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
        return code < names.count ? names[Int(code)] : "error 0x\(String(code, radix: 16))"
    }
}
