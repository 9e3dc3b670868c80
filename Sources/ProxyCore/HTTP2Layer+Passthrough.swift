import HTTP1
import HTTP2

// `harrec replay --passthrough` over HTTP/2: a stream that matched nothing goes to the real
// upstream as an HTTP/2 stream (or as an HTTP/1.1 exchange when the upstream chose that in ALPN:
// `HTTP2Layer+PassthroughHTTP1`), and is recorded as a recording's stream would be. The upstream
// connection is opened on the first such stream (a replay connects nothing before), and reopened
// after it went away; the replayed streams never depend on it.
extension HTTP2Layer {
    /// The passthrough connection.
    enum ReplayUpstream: Equatable {
        /// None yet, or the last one is gone.
        case none
        /// Asked for (`Output.openUpstream`): forwarded streams wait in `awaitingUpstream`.
        case connecting
        /// Streams go on it.
        case ready
        /// It sent GOAWAY: streams in flight finish on it, new ones wait for the next one.
        case goingAway
    }

    /// Whether the upstream nghttp2 session's bytes may go out: when recording, once the
    /// connection is ready (a reverse listener's h2c client speaks before harrec connected);
    /// in a replay, only once a passthrough connection speaks h2 (until then the preface waits).
    var upstreamWritable: Bool {
        guard context.replay != nil else { return upstreamReady }
        return passthroughHTTP1 == nil && (replayUpstream == .ready || replayUpstream == .goingAway)
    }

    /// Sends an unmatched stream's gathered request upstream, or queues it for the connection.
    func forward(_ stream: Stream) {
        guard let request = stream.replay else { return }
        stream.flow.request.body.append(request.body, cap: context.maxRecordedBodyBytes)
        outputs.append(.log(.replayForwarded(method: stream.flow.request.method, url: stream.flow.request.url)))
        switch replayUpstream {
        case .ready where passthroughHTTP1 != nil:
            awaitingUpstream.append(stream)
            sendNextHTTP1()
        case .ready:
            sendForwarded(stream)
        case .connecting:
            awaitingUpstream.append(stream)
        case .none:
            awaitingUpstream.append(stream)
            reopenPassthroughUpstream()
        case .goingAway:
            awaitingUpstream.append(stream)
            // Nothing left on the old connection: take a new one now rather than wait for its close.
            let busy = streams.values.contains { $0.upstreamID != nil && !$0.upstreamClosed } || passthroughHTTP1?.inFlight != nil
            if !busy { reopenPassthroughUpstream() }
        }
    }

    /// The passthrough connection is up (speaking h2, or HTTP/1.1 when its ALPN chose that): the
    /// waiting streams go out.
    func replayUpstreamReady(at time: Double, speaksHTTP1: Bool = false) {
        now = max(now, time)
        guard replayUpstream == .connecting else { return }
        replayUpstream = .ready
        if speaksHTTP1 {
            passthroughHTTP1 = PassthroughHTTP1()
            sendNextHTTP1()
            return
        }
        let waiting = awaitingUpstream
        awaitingUpstream.removeAll()
        for stream in waiting { sendForwarded(stream) }
    }

    /// The passthrough connection failed, or closed: its streams and the waiting ones get `status`
    /// (502; 504 when connecting timed out) with the reason, unless the connection had only gone
    /// away (then the waiting streams get a new one).
    func replayUpstreamLost(_ reason: String, status: Int = 502) {
        let servedWhole = endHTTP1Connection(reason: reason)
        let wentAway = replayUpstream == .goingAway || servedWhole
        for stream in streams.values.sorted(by: { $0.clientID < $1.clientID }) where stream.upstreamID != nil {
            stream.upstreamClosed = true
            if !stream.recorded { answerOrReset(stream, status: 502, reason: reason, resetCode: HTTP2ErrorCode.internalError) }
            forgetIfDone(stream)
        }
        clientIDs.removeAll()
        replayUpstream = .none
        if wentAway && !awaitingUpstream.isEmpty {
            reopenPassthroughUpstream()
            return
        }
        let waiting = awaitingUpstream
        awaitingUpstream.removeAll()
        for stream in waiting where !stream.recorded {
            answerOrReset(stream, status: status, reason: reason, resetCode: HTTP2ErrorCode.internalError)
        }
    }

    /// A fresh nghttp2 client session for the new connection, and the session is asked for it.
    func reopenPassthroughUpstream() {
        passthroughHTTP1 = nil
        if let fresh = try? HTTP2Connection(role: .client, limits: limits) { upstream = fresh }
        clientIDs.removeAll()
        replayUpstream = .connecting
        outputs.append(.openUpstream)
    }

    private func sendForwarded(_ stream: Stream) {
        guard let request = stream.replay, !stream.recorded, !stream.clientClosed else { return }
        pool.assign(&stream.flow)
        stream.flow.instants.sendStart = now
        stream.lastUpstreamActivity = now
        let bodyless = request.body.isEmpty && stream.requestTrailers == nil
        do {
            let upstreamID = try upstream.sendRequest(request.fields, endStream: bodyless)
            stream.upstreamID = upstreamID
            clientIDs[upstreamID] = stream.clientID
        } catch {
            answerOrReset(stream, status: 502, reason: "cannot forward the request: \(error.message)",
                          resetCode: HTTP2ErrorCode.refusedStream)
            return
        }
        if !bodyless { upstream.sendData(request.body, on: stream.upstreamID!, end: true, trailers: stream.requestTrailers) }
        stream.flow.instants.sendEnd = now
        request.body = [] // the upstream's nghttp2 holds it now
    }
}
