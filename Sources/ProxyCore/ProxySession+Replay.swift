import HTTP1
import Recording
import WebSocket

/// One request `harrec replay` is answering: its body is gathered (matching may compare it), then
/// the answer goes out at once or after the recorded latency.
final class ReplayExchange {
    enum Phase {
        case receiving
        /// The answer waits until `until` (`--latency recorded`).
        case waiting(until: Double)
        /// A recorded give-up (the client, or a timeout, ended it with no whole answer): nothing
        /// is sent, as nothing more reached the client then; the client leaves as it did.
        case silent
        /// The head went out; the body is read from its source as the client takes it (the
        /// runtime's `clientDrained`). `close`: the connection ends after it.
        case streaming(StreamedBodyProgress, close: Bool)
    }

    let head: HTTPRequestHead
    let framing: HTTPBodyFraming
    let route: HTTP1Forwarding.Route
    var method: String { head.method }
    var url: String { route.url }
    var fields: [HTTPField] { head.fields.fields }
    var body: [UInt8] = []
    var phase = Phase.receiving
    var keepAlive: Bool { head.keepAlive }
    let startedAt: Double
    /// Set once the decision is made.
    var decision: ReplayDecision?

    init(head: HTTPRequestHead, framing: HTTPBodyFraming, route: HTTP1Forwarding.Route, startedAt: Double) {
        self.head = head; self.framing = framing; self.route = route; self.startedAt = startedAt
    }
}

// `harrec replay`: requests are answered by the responder (`configuration.replay`) instead of an upstream. The
// front end (HTTP and SOCKS5, CONNECT, TLS interception) is the recorder's; nothing is connected.
extension ProxySession {

    func startReplayExchange(_ head: HTTPRequestHead, framing: HTTPBodyFraming, route: HTTP1Forwarding.Route) {
        replayExchange = ReplayExchange(head: head, framing: framing, route: route, startedAt: now)
    }

    /// Gathers the body of the request being replayed and answers it. Returns false when the
    /// session must wait (more bytes, the recorded latency) or ended.
    func advanceReplay(_ current: ReplayExchange, service: any Responder) -> Bool {
        guard case .receiving = current.phase else { return false }
        while true {
            let event: HTTP1RequestEvent?
            do {
                event = try requestDecoder.next()
            } catch {
                replayExchange = nil
                if clientSentEOF {
                    finish(log: nil)
                } else {
                    rejectRequest(status: 400, reason: "bad request body: \(error)")
                }
                return false
            }
            guard let event else { return false }
            switch event {
            case .head:
                return false // cannot happen inside a message
            case .body(let bytes):
                guard current.body.count + bytes.count <= ReplayWire.maximumRequestBody else {
                    replayExchange = nil
                    rejectRequest(status: 413, reason: "request body over \(ReplayWire.maximumRequestBody >> 20) MiB, "
                                  + "too large to match against the recording")
                    return false
                }
                current.body += bytes
            case .end:
                if ReplayWire.isWebSocketUpgrade(current.head) { return answerWebSocketUpgrade(current, service: service) }
                var decision = service.decide(method: current.method, url: current.url, headers: current.fields,
                                              body: current.body, canForward: true)
                if let reverse, case .serve(let response, let resetAfter) = decision {
                    decision = .serve(response.replacingFields(reverse.responseFields(response.fields,
                                                                                      listenerOrigin: listenerOrigin(current.head))),
                                      resetAfter: resetAfter)
                }
                current.decision = decision
                if case .serve(let response, _) = decision, let delay = response.delay, delay > 0 {
                    let until = current.startedAt + delay
                    if until > now {
                        current.phase = .waiting(until: until)
                        commands.append(.wake(at: until))
                        return false
                    }
                }
                return answerReplay(current)
            }
        }
    }

    /// Sends the decided answer; true when the connection goes on to the next request.
    func answerReplay(_ current: ReplayExchange) -> Bool {
        replayExchange = nil
        let headOnly = current.method == "HEAD"
        let close = !current.keepAlive || shuttingDown
        switch current.decision {
        case .serve(let response, let resetAfter)?:
            switch response.outcome {
            case .answered:
                break
            case .failed(let failure), .cut(let failure):
                // What the recorded client got, then the end it saw: its own give-up (silence
                // until it leaves again) or a broken connection.
                var status: Int?
                if case .cut = response.outcome {
                    sendClient(response.cutWire(http11: current.head.version == .http11, headOnly: headOnly))
                    status = response.status
                }
                log(.replayed(method: current.method, url: current.url, status: status, label: response.label))
                if failure == .silence {
                    current.phase = .silent
                    replayExchange = current
                } else {
                    finish(log: nil)
                }
                return false
            }
            if let streamed = response.streamed, !headOnly, streamed.source.count > 0 {
                sendClient(response.head(close: close))
                if configuration.liveLog {
                    log(.replayed(method: current.method, url: current.url, status: response.status, label: response.label))
                }
                if resetAfter { log(.replayReset(trigger: "\(current.method) \(current.url)")) }
                current.phase = .streaming(StreamedBodyProgress(streamed, label: response.label), close: close)
                replayExchange = current
                lastActivity = now
                return false
            }
            if !close && !headOnly {
                sendClient(response.keepAliveWire)
            } else {
                sendClient(response.head(close: close))
                if !headOnly { sendClient(Array(response.body)) }
            }
            if configuration.liveLog {
                log(.replayed(method: current.method, url: current.url, status: response.status, label: response.label))
            }
            if resetAfter { log(.replayReset(trigger: "\(current.method) \(current.url)")) }
        case .forward?:
            passThrough(current)
            return false
        case .unmatched(let diagnosis)?:
            sendClient(ReplayWire.unmatchedResponse(diagnosis, headOnly: headOnly, close: close))
            log(.replayUnmatched(method: current.method, url: current.url, diagnosis: diagnosis))
        case nil:
            return false
        }
        if close || (clientSentEOF && requestDecoder.bufferedByteCount == 0) {
            finish(log: nil)
            return false
        }
        return true
    }

    // MARK: - WebSockets

    /// A recorded WebSocket for an upgrade request: a 101, then the conversation
    /// (`WebSocketReplay`); without one, a 599 with the diagnosis and a close.
    func answerWebSocketUpgrade(_ current: ReplayExchange, service: any Responder) -> Bool {
        replayExchange = nil
        guard let key = current.head.fields["Sec-WebSocket-Key"], !key.isEmpty else {
            rejectRequest(status: 400, reason: "a WebSocket upgrade without Sec-WebSocket-Key", head: current.head)
            return false
        }
        // permessage-deflate when offered: a client may insist on it, and the recording
        // keeps messages inflated either way.
        let offers = current.head.fields.fields.filter { $0.name.lowercased() == "sec-websocket-extensions" }
        let deflate = offers.isEmpty ? nil : PerMessageDeflate.accepting(offer: offers.map(\.value).joined(separator: ", "))
        switch service.decideWebSocket(url: current.url, headers: current.fields, deflate: deflate?.parameters) {
        case .forward:
            passThrough(current)
        case .unmatched(let diagnosis):
            sendClient(ReplayWire.unmatchedResponse(diagnosis, headOnly: false, close: true))
            log(.replayUnmatched(method: current.method, url: current.url, diagnosis: diagnosis))
            finish(log: nil)
        case .conversation(let socket, let subprotocol, let label):
            var fields = HTTPFields()
            fields.append(name: "Upgrade", value: "websocket")
            fields.append(name: "Connection", value: "Upgrade")
            fields.append(name: "Sec-WebSocket-Accept", value: ReplayWire.webSocketAccept(key: key))
            if let chosen = subprotocol,
               let offered = current.head.fields["Sec-WebSocket-Protocol"],
               offered.split(separator: ",").contains(where: { trimmingSpacesAndTabs($0) == chosen }) {
                fields.append(name: "Sec-WebSocket-Protocol", value: chosen)
            }
            if let deflate { fields.append(name: "Sec-WebSocket-Extensions", value: deflate.response) }
            sendClient((try? HTTP1Serializer.responseHead(version: .http11, status: 101, reason: "Switching Protocols",
                                                          fields: fields)) ?? [])
            replaySocket = socket
            replaySocketURL = webSocketURL(current.url)
            log(.replayed(method: current.method, url: replaySocketURL, status: 101, label: label))
            applyReplaySocket(socket.start(at: now), socket)
            let early = requestDecoder.takeBufferedBytes()
            if !early.isEmpty, !isFinished { applyReplaySocket(socket.clientBytes(early, at: now), socket) }
        }
        return false
    }

    /// Client bytes after the 101 go to the replayed conversation.
    func advanceReplaySocket(_ socket: any ReplayedWebSocket) {
        let bytes = requestDecoder.takeBufferedBytes()
        if !bytes.isEmpty { applyReplaySocket(socket.clientBytes(bytes, at: now), socket) }
        if clientSentEOF && !isFinished { finish(log: nil) }
    }

    /// Scheduled frames whose time came, and the idle limit of a tunnel.
    func replaySocketTick() {
        guard let socket = replaySocket else { return }
        applyReplaySocket(socket.due(at: now), socket)
        if !isFinished && now - lastActivity > configuration.timeouts.tunnelIdle {
            finish(log: .tunnelIdle(seconds: configuration.timeouts.tunnelIdle))
        }
    }

    func applyReplaySocket(_ output: WebSocketReplayOutput, _ socket: any ReplayedWebSocket) {
        if !output.frames.isEmpty { sendClient(output.frames) }
        for divergence in output.divergences {
            configuration.replay?.noteDivergence("\(replaySocketURL): \(divergence)")
            log(.replayDivergence(url: replaySocketURL, detail: divergence))
        }
        if let instant = output.wakeAt { commands.append(.wake(at: instant)) }
        if output.close && !isFinished { finish(log: nil) }
    }

    /// `--passthrough`: an unmatched request goes to its real upstream as a normal exchange (and
    /// is recorded). Its body was gathered for matching, so the whole request goes out with the
    /// head, framed as the client framed it.
    func passThrough(_ current: ReplayExchange) {
        log(.replayForwarded(method: current.method, url: current.url))
        var whole: [UInt8]
        do {
            whole = try HTTP1Forwarding.requestHead(current.head, framing: current.framing, route: current.route,
                                                     inTunnel: tunnelTarget != nil)
        } catch {
            rejectRequest(status: 400, reason: "bad request: \(error)", head: current.head)
            return
        }
        if current.framing == .chunked {
            HTTP1Serializer.appendChunk(current.body, to: &whole)
            whole += HTTP1Serializer.lastChunk(trailers: HTTPFields())
        } else {
            whole += current.body
        }
        var request = RecordedRequest(method: current.method, url: current.url, httpVersion: current.head.version.description,
                                      fields: HTTP1Forwarding.recordedFields(current.head.fields), headSize: current.head.headSize)
        request.body.append(current.body, cap: configuration.maxRecordedBodyBytes)
        let flow = Flow(id: flowIDs.make(), clientAddress: clientAddress, request: request,
                        instants: FlowInstants(requestStart: current.startedAt))
        let forwarded = HTTP1Exchange(flow: flow, target: current.route.target, requestHead: current.head,
                                      originForm: current.route.originForm, method: current.method,
                                      requestFraming: current.framing, forwardedHead: whole,
                                      clientVersion: current.head.version, clientKeepAlive: current.keepAlive,
                                      isUpgradeRequest: HTTP1Forwarding.isUpgrade(current.head),
                                      lastUpstreamActivity: now)
        // The head carries the whole request: it goes out in one piece once the upstream is ready.
        forwarded.request = .awaitingUpstream(bodyComplete: true)
        forwarded.gatheredBody = current.body
        exchange = forwarded
        if pendingUpstreamFailure != nil {
            failPendingUpstream()
            return
        }
        switch upstreams.reuse(for: current.route.target) {
        case .ready:
            sendRequestHead()
        case .handshaking:
            break
        case .none:
            closeUpstream()
            openUpstream(to: current.route.target)
        }
    }

    /// TLS toward the client of a replay: nothing upstream to ask, so a client offering h2 gets
    /// it when the recording spoke h2 with that host (its streams are answered by
    /// `HTTP2Layer+Replay`), any other gets HTTP/1.1, as the recording's client did.
    func startReplayInterception() {
        mode = .http
        // A reverse listener with several upstreams stays on HTTP/1.1: its streams would share
        // one connection (`HTTP2Layer.ReverseRoute`).
        if let upstream = reverseHTTP2Upstream { enterReverseTunnel(upstream) }
        if reverse == nil || reverseHTTP2Upstream != nil, upstreamALPNOffer(forHello: pendingClientBytes) != nil,
           configuration.replay?.speaksHTTP2(to: tunnelTarget ?? ProxyTarget(host: "", port: 443)) ?? true {
            do {
                try clientTLS!.acceptALPN(["h2"])
            } catch {
                finish(log: .cannotIntercept(tunnelTarget ?? ProxyTarget(host: "?", port: 0), reason: "\(error)"))
                return
            }
            guard startHTTP2() else { return }
        }
        let hello = pendingClientBytes
        pendingClientBytes = []
        guard let plaintext = hello.withUnsafeBytes({ clientPlaintext($0) }) else { return }
        if !plaintext.isEmpty { clientPlaintextArrived(plaintext) }
    }

    /// The next piece of a streamed body, once the client took the last one; after the last
    /// piece the connection goes on to the next request. A body the file no longer holds ends
    /// the connection short of its length, so the client sees the answer cut.
    func continueStreamedReplay() {
        guard let current = replayExchange, case .streaming(var body, let close) = current.phase else { return }
        guard case .piece(let piece, let last) = body.next() else {
            log(.replayBodyLost(url: current.url, label: body.label, sent: body.sent, count: body.count))
            replayExchange = nil
            finish(log: nil)
            return
        }
        lastActivity = now
        sendClient(piece)
        guard last else {
            current.phase = .streaming(body, close: close)
            return
        }
        replayExchange = nil
        if close || (clientSentEOF && requestDecoder.bufferedByteCount == 0) {
            finish(log: nil)
            return
        }
        advanceHTTP()
    }

    /// The recorded latency of the waiting answer has passed (called from `tick`).
    /// Also ends a streamed body whose client stopped taking it for the idle limit.
    func replayDue() {
        guard let current = replayExchange else { return }
        switch current.phase {
        case .waiting(let until) where now >= until:
            if answerReplay(current) { advanceHTTP() }
        case .streaming where now - lastActivity > configuration.timeouts.clientIdle:
            replayExchange = nil
            finish(log: nil)
        default:
            break
        }
    }
}
