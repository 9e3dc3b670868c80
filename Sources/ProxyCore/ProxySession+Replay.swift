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

    let method: String
    let url: String
    let fields: [HTTPField]
    var body: [UInt8] = []
    var phase = Phase.receiving
    let keepAlive: Bool
    let startedAt: Double
    /// Set once the decision is made.
    var decision: ReplayDecision?

    init(method: String, url: String, fields: [HTTPField], keepAlive: Bool, startedAt: Double) {
        self.method = method; self.url = url; self.fields = fields; self.keepAlive = keepAlive; self.startedAt = startedAt
    }
}

// `harrec replay`: requests are answered from the HAR (ReplayService) instead of an upstream. The
// front end (HTTP and SOCKS5, CONNECT, TLS interception) is the recorder's; nothing is connected.
extension ProxySession {
    /// The largest request body a replayed request may carry: matching holds it whole.
    static let maximumReplayRequestBody = 64 << 20

    func startReplayExchange(_ head: HTTPRequestHead, route: HTTP1Forwarding.Route) {
        replayExchange = ReplayExchange(method: head.method, url: route.url, fields: head.fields.fields,
                                        keepAlive: head.keepAlive, startedAt: now)
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
                guard current.body.count + bytes.count <= Self.maximumReplayRequestBody else {
                    replayExchange = nil
                    rejectRequest(status: 413, reason: "request body over \(Self.maximumReplayRequestBody >> 20) MiB, "
                                  + "too large to match against the recording")
                    return false
                }
                current.body += bytes
            case .end:
                let decision = service.decide(method: current.method, url: current.url, headers: current.fields,
                                              body: current.body)
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

    /// The recorded latency of the waiting answer has passed (called from `tick`).
    func replayDue() {
        guard let current = replayExchange, case .waiting(let until) = current.phase, now >= until else { return }
        if answerReplay(current) { advanceHTTP() }
    }
}
