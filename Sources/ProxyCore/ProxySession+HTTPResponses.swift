import HTTP1
import Recording
import SOCKS5
import TLS
import WebSocket

// HTTP/1 responses: the upstream's answer back to the client, the exchange's end, and the one
// retry of a request a stale keep-alive connection dropped.
extension ProxySession {
    func advanceResponse(eofReason: String? = nil) {
        while case .http = mode, exchange != nil, upstreams.active != nil {
            let event: HTTP1ResponseEvent?
            do {
                event = try upstreams.active!.decoder.next()
            } catch {
                let reason: String
                if let eofReason, error.kind == .unexpectedEOF {
                    reason = exchange!.finalHeadForwarded ? "\(eofReason) mid-body" : "\(eofReason) before responding"
                } else {
                    reason = "bad response from upstream: \(error)"
                }
                failExchange(reason, respondWith: 502)
                return
            }
            guard let event else {
                if eofReason != nil, exchange != nil {
                    failExchange("\(eofReason!) before responding", respondWith: 502)
                }
                return
            }
            switch event {
            case .head(let head, let framing):
                handleResponseHead(head, framing: framing)
            case .body(let bytes):
                forwardResponseBody(bytes)
            case .end(let trailers):
                if exchange?.response == .interim {
                    exchange?.response = .awaitingHead
                    continue
                }
                finishResponse(trailers: trailers)
                if eofReason != nil { return }
            }
        }
    }

    func handleResponseHead(_ head: HTTPResponseHead, framing: HTTPBodyFraming) {
        guard exchange != nil else { return }
        if head.status >= 100 && head.status < 200 && head.status != 101 {
            // Interim responses (100 Continue, 103 Early Hints) go to HTTP/1.1 clients only.
            exchange!.response = .interim
            if let bytes = HTTP1Forwarding.interimHead(head, clientVersion: exchange!.clientVersion) { sendClient(bytes) }
            return
        }
        if head.status == 407, let proxy = exchange!.forwardedVia {
            // The company proxy's own refusal, not the origin's answer: a 407 passed on would ask
            // the client for harrec's credentials.
            let hint = proxy.credentials == nil ? "it needs credentials" : "it refused the credentials"
            failExchange("upstream proxy \(proxy) refused the request: 407 \(sanitizedControlCharacters(head.reason)); \(hint)",
                         respondWith: 502)
            return
        }
        let current = exchange.take()!
        current.flow.instants.responseStart = currentUpstreamChunkTime
        current.flow.response = RecordedResponse(
            status: head.status, reason: head.reason, httpVersion: head.version.description,
            fields: head.fields.fields.map { RecordedField(name: $0.name, value: $0.value) },
            headSize: head.headSize)
        if case .contentLength(let length) = framing {
            current.flow.response!.body.reserve(expected: length, cap: configuration.maxRecordedBodyBytes)
        }
        current.upstreamReusable = head.keepAlive

        if head.status == 101 {
            guard current.isUpgradeRequest else {
                exchange = current
                failExchange("upstream switched protocols without an Upgrade request", respondWith: 502)
                return
            }
            upgradeIsWebSocket = head.fields["Upgrade"]?.lowercased() == "websocket"
            webSocketExtensions = head.fields["Sec-WebSocket-Extensions"]
            guard let bytes = try? HTTP1Forwarding.switchingProtocolsHead(head) else {
                exchange = current
                failExchange("upstream sent an unforwardable 101 head", respondWith: 502)
                return
            }
            sendClient(bytes)
            current.response = .body(chunked: false)
            current.flow.instants.responseEnd = now
            exchange = current
            switchToUpgradedRelay()
            return
        }

        let client = HTTP1Forwarding.ClientState(version: current.clientVersion, keepAlive: current.clientKeepAlive,
                                                 requestDone: current.requestDone, shuttingDown: shuttingDown)
        var forwarded = head
        if let reverse {
            // The client addressed harrec: redirects and cookies for the upstream point back here.
            forwarded.fields = reverse.responseFields(head.fields, listenerOrigin: listenerOrigin(current.requestHead))
        }
        guard let plan = try? HTTP1Forwarding.responseHead(forwarded, framing: framing, client: client) else {
            exchange = current
            failExchange("upstream response head cannot be forwarded", respondWith: 502)
            return
        }
        sendClient(plan.head)
        current.closeClientAfter = plan.closeClient
        current.response = .body(chunked: plan.chunkedToClient)
        exchange = current
    }

    func forwardResponseBody(_ bytes: [UInt8]) {
        guard exchange != nil else { return }
        // In place: appending to a copy of the exchange would copy the recorded body each time.
        if let part = exchange!.flow.recordBody(bytes, .response, cap: configuration.maxRecordedBodyBytes,
                                                partSize: configuration.bodyPartSize, filter: configuration.recordingFilter) {
            commands.append(.record(.bodyPart(part)))
        }
        if exchange!.chunkedToClient {
            var framed: [UInt8] = []
            framed.reserveCapacity(bytes.count + 16)
            HTTP1Serializer.appendChunk(bytes, to: &framed)
            sendClient(framed)
        } else {
            sendClient(bytes)
        }
    }

    func finishResponse(trailers: HTTPFields) {
        guard let current = exchange.take() else { return }
        if current.chunkedToClient {
            sendClient(HTTP1Serializer.lastChunk(trailers: trailers.removingHopByHop()))
        }
        current.flow.response?.trailers = trailers.fields.map { RecordedField(name: $0.name, value: $0.value) }
        current.flow.instants.responseEnd = now
        current.response = .complete
        exchange = current
        if current.requestDone || current.closeClientAfter {
            completeExchange()
        }
    }

    func completeExchange() {
        guard let current = exchange.take() else { return }
        if !current.requestDone {
            // The upstream answered before the whole body: what of it harrec already read is
            // still what the client sent, and the entry shows it (the connection closes next).
            while case .body(let bytes)? = try? requestDecoder.next() {
                if let part = current.flow.recordBody(bytes, .request, cap: configuration.maxRecordedBodyBytes,
                                                      partSize: configuration.bodyPartSize, filter: configuration.recordingFilter) {
                    commands.append(.record(.bodyPart(part)))
                }
            }
        }
        current.flow.instants.end = now
        if current.flow.instants.sendEnd == nil {
            current.flow.instants.sendEnd = current.flow.instants.responseStart
        }
        commands.append(.record(.flow(current.flow)))
        if configuration.liveLog { log(.exchange(current.flow)) }
        if !current.upstreamReusable || !current.requestDone {
            closeUpstream()
        }
        if current.closeClientAfter || !current.clientKeepAlive || shuttingDown
            || (clientSentEOF && requestDecoder.bufferedByteCount == 0) {
            finish(log: nil)
            return
        }
        advanceHTTP()
    }

    /// A reused keep-alive connection that closes before any response byte is retried once on a
    /// fresh connection, as browsers do, when the request had no body to replay.
    func retryOnFreshConnection() -> Bool {
        guard let current = exchange, let connection = upstreams.active, !current.retried,
              connection.exchangesCarried > 1, current.requestFraming == .none, current.endConsumed,
              !current.finalHeadForwarded, connection.decoder.bufferedByteCount == 0 else { return false }
        closeUpstream()
        exchange?.retried = true
        exchange?.request = .awaitingUpstream(bodyComplete: true)
        exchange?.response = .awaitingHead
        openUpstream(to: current.target)
        return true
    }
}
