import HTTP1
import Recording
import SOCKS5
import TLS
import WebSocket

// HTTP/1 exchanges: requests from the client to the upstream and responses back, with the
// proxy rules in HTTP1Forwarding and the exchange's state in HTTP1Exchange.
extension ProxySession {
    // MARK: - HTTP requests

    func advanceHTTP() {
        while case .http = mode {
            if let socket = replaySocket {
                advanceReplaySocket(socket)
                return
            }
            if let current = replayExchange, let service = configuration.replay {
                guard advanceReplay(current, service: service) else { return }
            } else if let current = exchange {
                // Pull body events only while they can be forwarded at once (for an h2 upstream:
                // while its window takes them, so a slow upstream stops the client's upload).
                guard current.request == .sendingBody, !upstreamHTTP2Backlogged else { return }
                guard let event = nextRequestEvent() else { return }
                switch event {
                case .head:
                    return // cannot happen inside a message
                case .body(let bytes):
                    forwardRequestBody(bytes)
                case .end(let trailers):
                    finishRequest(trailers: trailers)
                }
            } else {
                if shuttingDown {
                    finish(log: nil)
                    return
                }
                guard let event = nextRequestEvent() else {
                    if requestDecoder.isAtCleanEOF { finish(log: nil) }
                    return
                }
                guard case .head(let head, let framing) = event else { return }
                startExchange(head, framing: framing)
            }
        }
    }

    /// The next request event, or nil; a parse error answers 400 and closes.
    func nextRequestEvent() -> HTTP1RequestEvent? {
        do {
            return try requestDecoder.next()
        } catch {
            let reason = "\(error)"
            if exchange != nil {
                if requestDecoder.isAtCleanEOF || clientSentEOF {
                    failExchange("client closed the connection mid-request: \(reason)", respondWith: nil)
                } else {
                    failExchange("bad request body: \(reason)", respondWith: 400)
                }
            } else {
                if clientSentEOF && requestDecoder.bufferedByteCount == 0 {
                    finish(log: nil)
                } else {
                    rejectRequest(status: 400, reason: "bad request: \(reason)")
                }
            }
            return nil
        }
    }

    /// Answers the request being received with `status` and closes; the refusal is recorded
    /// with the request as parsed (`head`) or as far as its bytes tell.
    func rejectRequest(status: Int, reason: String, head: HTTPRequestHead? = nil) {
        let answer = ErrorResponses.answer(status: status, reason: reason, close: true)
        sendClient(answer.bytes)
        if configuration.recordRefusals {
            let request = head.map { Refusals.request($0, tunnel: tunnelContext) }
                ?? Refusals.request(unparsed: requestDecoder.takeBufferedBytes(), tunnel: tunnelContext)
            recordRefusal(request, response: answer.recorded, reason: reason, startedAt: headStartedAt)
        }
        finish(log: .rejected(status: status, reason: reason))
    }

    /// Records what harrec refused itself (`Refusals`), unless `recordRefusals` is off.
    func recordRefusal(_ request: RecordedRequest, response: RecordedResponse?, reason: String, startedAt: Double?) {
        guard configuration.recordRefusals else { return }
        commands.append(.record(.flow(Refusals.flow(id: flowIDs.make(), clientAddress: clientAddress, request: request,
                                                    response: response, reason: reason,
                                                    startedAt: startedAt ?? now, endedAt: now))))
    }

    /// A client that did not finish its TLS handshake with harrec, most often because it does
    /// not trust harrec's CA: an entry for its tunnel, no response (status 0) and the reason, so
    /// the first hour's most common problem is in the HAR, not only in the live log. Not marked
    /// refused: harrec opened the tunnel, and a replay must open it again.
    func recordClientTLSFailure(_ reason: String) {
        guard configuration.recordRefusals, let target = tunnelTarget else { return }
        var viaSOCKS = false
        if case .done = socks.state { viaSOCKS = true }
        var flow = Refusals.flow(id: flowIDs.make(), clientAddress: clientAddress,
                                 request: Refusals.tunnelRequest(target, viaSOCKS: viaSOCKS, carriesTLS: true), response: nil,
                                 reason: reason, startedAt: tunnelStartedAt ?? now, endedAt: now)
        flow.refused = false
        commands.append(.record(.flow(flow)))
    }

    /// A SOCKS client harrec refused before a tunnel (SOCKS4, no acceptable authentication, bad
    /// credentials, BIND): an entry with the refusal, as for HTTP refusals.
    func recordSOCKSRefusal(_ reason: String) {
        let version = reason.hasPrefix("SOCKS4") ? "SOCKS4" : "SOCKS5"
        recordRefusal(RecordedRequest(method: "CONNECT", url: "http://unknown.invalid/", httpVersion: version, fields: [], headSize: 0),
                      response: nil, reason: reason, startedAt: nil)
    }

    /// The tunnel the session's requests arrive in, if any.
    var tunnelContext: HTTP1Forwarding.Tunnel? {
        tunnelTarget.map {
            HTTP1Forwarding.Tunnel(target: $0, scheme: scheme, serverName: interceptedServerName,
                                   addressed: reverse == nil ? .upstream : .listener)
        }
    }

    /// The origin a reverse listener's client used for `head` (its scheme and Host): what
    /// redirects and cookies for the upstream are pointed back at.
    func listenerOrigin(_ head: HTTPRequestHead) -> String {
        "\(clientTLS == nil ? "http" : "https")://\(head.fields["Host"] ?? "localhost")"
    }

    /// A request to a reverse listener: the connection becomes a tunnel to the upstream its path
    /// goes to (the next request may go to another). harrec's own paths (`/harrec/...`) are
    /// answered here. False when the request was answered.
    func enterReverseTunnel(_ head: HTTPRequestHead, framing: HTTPBodyFraming, _ reverse: ReverseProxy) -> Bool {
        if let own = ReservedHost.reversePath(head.target) {
            answerReservedHost(head, framing: framing, originForm: own, base: "/" + ReservedHost.name)
            return false
        }
        guard let upstream = reverse.upstream(forPath: head.target) else {
            tunnelTarget = nil
            rejectRequest(status: 404, reason: "no --reverse upstream takes \(sanitizedControlCharacters(String(head.target.prefix(200))))", head: head)
            return false
        }
        enterReverseTunnel(upstream)
        return true
    }

    func startExchange(_ head: HTTPRequestHead, framing: HTTPBodyFraming) {
        headStartedAt = nil
        if let reverse, !enterReverseTunnel(head, framing: framing, reverse) { return }
        // Asked directly (not as a proxy) for its own pages: a phone's first visit to
        // http://<lan-ip>:<port>/harrec/, before its proxy is set. The setup page and the CA
        // need no credentials; a mark does.
        let ownPath = tunnelTarget == nil ? ReservedHost.reversePath(head.target) : nil
        if let ownPath, ReservedHost.isPublic(ownPath) {
            answerReservedHost(head, framing: framing, originForm: ownPath, base: "/" + ReservedHost.name)
            return
        }
        // Proxy authentication applies to requests to the proxy, not inside an authorized tunnel.
        if tunnelTarget == nil, !auth.admits(head.fields) {
            let mustClose = framing != .none
            let answer = ErrorResponses.proxyAuthenticationRequired(close: mustClose)
            sendClient(answer.bytes)
            recordRefusal(Refusals.request(head, tunnel: nil), response: answer.recorded,
                          reason: "proxy authentication required", startedAt: headStartedAt)
            log(.proxyAuthenticationRequired(method: head.method))
            if mustClose || !head.keepAlive { finish(log: nil) }
            return
        }

        if let ownPath {
            answerReservedHost(head, framing: framing, originForm: ownPath, base: "/" + ReservedHost.name)
            return
        }
        if head.method == "CONNECT" {
            guard tunnelTarget == nil else {
                rejectRequest(status: 400, reason: "CONNECT inside a tunnel is not supported", head: head)
                return
            }
            do {
                let target = try parseAuthority(Substring(head.target), defaultPort: nil)
                pendingClientBytes = requestDecoder.takeBufferedBytes()
                openTunnel(to: target, viaSOCKS: false)
            } catch {
                rejectRequest(status: 400, reason: "bad CONNECT target: \(describe(error))", head: head)
            }
            return
        }

        var route: HTTP1Forwarding.Route
        let forwardedHead: [UInt8]
        do {
            route = try HTTP1Forwarding.route(head, in: tunnelContext)
        } catch {
            rejectRequest(status: 400, reason: describe(error), head: head)
            return
        }
        if ReservedHost.isReserved(route.target) {
            answerReservedHost(head, framing: framing, originForm: route.originForm)
            return
        }
        if configuration.replay != nil {
            startReplayExchange(head, framing: framing, route: route)
            return
        }
        // Plain HTTP through an HTTP upstream proxy goes to the proxy in absolute form, as a
        // client behind it would send it (many proxies allow CONNECT only to 443).
        let viaProxy = configuration.upstreamProxy.flatMap { $0.forwards(route, isUpgrade: HTTP1Forwarding.isUpgrade(head)) ? $0 : nil }
        do {
            forwardedHead = try HTTP1Forwarding.requestHead(head, framing: framing, route: route, inTunnel: tunnelTarget != nil,
                                                            viaProxy: viaProxy)
        } catch {
            rejectRequest(status: 400, reason: "bad request: \(error)", head: head)
            return
        }
        var request = RecordedRequest(method: head.method, url: route.url, httpVersion: head.version.description,
                                      fields: HTTP1Forwarding.recordedFields(head.fields, host: route.hostOverride),
                                      headSize: head.headSize)
        if case .contentLength(let length) = framing {
            request.body.reserve(expected: length, cap: configuration.maxRecordedBodyBytes)
        }
        let flow = Flow(id: flowIDs.make(), clientAddress: clientAddress, request: request,
                        instants: FlowInstants(requestStart: now))
        if let viaProxy { route.target = viaProxy.target }
        exchange = HTTP1Exchange(flow: flow, target: route.target, requestHead: head, originForm: route.originForm,
                                 method: head.method, requestFraming: framing,
                                 forwardedHead: forwardedHead, clientVersion: head.version,
                                 clientKeepAlive: head.keepAlive, isUpgradeRequest: HTTP1Forwarding.isUpgrade(head),
                                 lastUpstreamActivity: now)
        exchange?.forwardedVia = viaProxy

        if pendingUpstreamFailure != nil {
            failPendingUpstream()
            return
        }
        switch upstreams.reuse(for: route.target) {
        case .ready:
            sendRequestHead()
        case .handshaking:
            break // the head goes out when the upstream TLS handshake completes
        case .none:
            closeUpstream()
            openUpstream(to: route.target)
        }
    }

    func openUpstream(to target: ProxyTarget) {
        commands.append(upstreams.open(to: target, at: now))
    }

    /// Closes the upstream connection in use, if any.
    func closeUpstream() {
        if let command = upstreams.close() { commands.append(command) }
    }

    /// Sends the request head on the (now connected) upstream and starts streaming the body.
    func sendRequestHead() {
        guard exchange?.headSent == false, upstreams.active?.ready == true else { return }
        // Taken out, not copied: a copy would share the flow's buffers, and the next append to
        // one of them would copy it whole.
        let current = exchange.take()!
        upstreams.assign(&current.flow)
        let upstreamID = upstreams.activeID!
        current.flow.instants.sendStart = now
        current.lastUpstreamActivity = now
        upstreams.active!.decoder.expectResponse(toMethod: current.method)
        if current.request == .awaitingUpstream(bodyComplete: true) {
            // A retry of a bodiless request: the head is the whole request.
            current.request = .sent
            current.flow.instants.sendEnd = now
        } else {
            current.request = .sendingBody
        }
        exchange = current
        if let h2 = upstreams.active?.http2 {
            guard sendHTTP2RequestHead(current, on: h2) else { return }
            if let body = current.gatheredBody, current.requestFraming != .none, let stream = upstreams.active?.http2Stream {
                h2.sendData(body, on: stream, end: true)
            }
            flushUpstreamHTTP2()
        } else {
            sendUpstream(upstreamID, current.forwardedHead)
        }
        if current.requestDone {
            // Pipelined requests wait in the decoder; the response may already be buffered.
            advanceResponse()
        } else {
            advanceHTTP()
        }
    }

    func forwardRequestBody(_ bytes: [UInt8]) {
        guard exchange != nil, let upstreamID = upstreams.activeID else { return }
        // In place: appending to a copy of the exchange would copy the recorded body each time.
        if let part = exchange!.flow.recordBody(bytes, .request, cap: configuration.maxRecordedBodyBytes,
                                                partSize: configuration.bodyPartSize, filter: configuration.recordingFilter) {
            commands.append(.record(.bodyPart(part)))
        }
        if let h2 = upstreams.active?.http2, let stream = upstreams.active?.http2Stream {
            h2.sendData(bytes, on: stream)
            flushUpstreamHTTP2()
        } else if exchange!.requestFraming == .chunked {
            var framed: [UInt8] = []
            framed.reserveCapacity(bytes.count + 16)
            HTTP1Serializer.appendChunk(bytes, to: &framed)
            sendUpstream(upstreamID, framed)
        } else {
            sendUpstream(upstreamID, bytes)
        }
    }

    func finishRequest(trailers: HTTPFields) {
        guard let upstreamID = upstreams.activeID, let current = exchange.take() else { return }
        if let h2 = upstreams.active?.http2, let stream = upstreams.active?.http2Stream {
            h2.sendData([], on: stream, end: true, trailers: trailers.fields)
            flushUpstreamHTTP2()
        } else if current.requestFraming == .chunked {
            sendUpstream(upstreamID, HTTP1Serializer.lastChunk(trailers: trailers))
        }
        current.flow.request.trailers = trailers.fields.map { RecordedField(name: $0.name, value: $0.value) }
        current.request = .sent
        current.flow.instants.sendEnd = now
        current.lastUpstreamActivity = now
        exchange = current
        if current.response == .complete {
            completeExchange()
        }
    }
}
