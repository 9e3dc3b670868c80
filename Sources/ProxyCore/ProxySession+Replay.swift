import HTTP1
import Recording

/// One request `harrec replay` is answering: its body is gathered (matching may compare it), then
/// the answer goes out at once or after the recorded latency.
final class ReplayExchange {
    enum Phase {
        case receiving
        /// The answer waits until `until` (`--latency recorded`).
        case waiting(until: Double)
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

// `harrec replay`: requests are answered from the HAR (ReplayService) instead of an upstream. The
// front end (HTTP and SOCKS5, CONNECT, TLS interception) is the recorder's; nothing is connected.
extension ProxySession {

    func startReplayExchange(_ head: HTTPRequestHead, framing: HTTPBodyFraming, route: HTTP1Forwarding.Route) {
        replayExchange = ReplayExchange(head: head, framing: framing, route: route, startedAt: now)
    }

    /// Gathers the body of the request being replayed and answers it. Returns false when the
    /// session must wait (more bytes, the recorded latency) or ended.
    func advanceReplay(_ current: ReplayExchange, service: ReplayService) -> Bool {
        guard case .receiving = current.phase else { return false }
        while true {
            let event: HTTP1RequestEvent?
            do {
                event = try requestDecoder.next()
            } catch {
                if clientSentEOF {
                    replayExchange = nil
                    finish(log: nil)
                } else {
                    replayExchange = nil
                    rejectRequest(status: 400, reason: "bad request body: \(error)")
                }
                return false
            }
            guard let event else { return false }
            switch event {
            case .head:
                return false // cannot happen inside a message
            case .body(let bytes):
                guard current.body.count + bytes.count <= ReplayService.maximumRequestBody else {
                    replayExchange = nil
                    rejectRequest(status: 413, reason: "request body over \(ReplayService.maximumRequestBody >> 20) MiB, "
                                  + "too large to match against the recording")
                    return false
                }
                current.body += bytes
            case .end:
                let decision = service.decide(method: current.method, url: current.url, headers: current.fields,
                                              body: current.body, canForward: true)
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
            if response.failure != nil {
                // A recorded transport failure: the client sees its connection end, as it did.
                log(.replayed(method: current.method, url: current.url, status: nil, label: response.label))
                finish(log: nil)
                return false
            }
            if !close && !headOnly {
                sendClient(response.keepAliveWire)
            } else {
                sendClient(response.head(close: close))
                if !headOnly { sendClient(response.body) }
            }
            if configuration.liveLog {
                log(.replayed(method: current.method, url: current.url, status: response.status, label: response.label))
            }
            if resetAfter { log(.replayReset(trigger: "\(current.method) \(current.url)")) }
        case .forward?:
            passThrough(current)
            return false
        case .unmatched(let diagnosis)?:
            sendClient(ReplayService.unmatchedResponse(diagnosis, headOnly: headOnly, close: close))
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
                                      isUpgradeRequest: false, lastUpstreamActivity: now)
        // The head carries the whole request: it goes out in one piece once the upstream is ready.
        forwarded.request = .awaitingUpstream(bodyComplete: true)
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
    /// it (its streams are answered by `HTTP2Layer+Replay`), any other gets HTTP/1.1.
    func startReplayInterception() {
        mode = .http
        if upstreamALPNOffer(forHello: pendingClientBytes) != nil {
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

    /// The recorded latency of the waiting answer has passed (called from `tick`).
    func replayDue() {
        guard let current = replayExchange, case .waiting(let until) = current.phase, now >= until else { return }
        if answerReplay(current) { advanceHTTP() }
    }
}
