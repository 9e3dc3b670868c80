import HTTP2
import Recording
import TLS

// HTTP/2 inside an intercepted tunnel: ALPN chosen by the upstream first (as mitmproxy does),
// then the session's side of HTTP2Layer.
extension ProxySession {
    /// The protocols harrec can speak on an intercepted connection, in its preference order.
    static let interceptableProtocols = ["h2", "http/1.1"]

    /// Whether to learn the upstream's protocol before answering the client: only when the
    /// client offers h2 (with http/1.1 alone there is no choice, and the handshakes run side by
    /// side). Returns the list to offer the upstream, in the client's order.
    func upstreamALPNOffer(forHello hello: [UInt8]) -> [String]? {
        guard configuration.http2, case .clientHello(let info) = ClientHelloParser.parse(hello),
              info.alpnProtocols.contains("h2") else { return nil }
        return info.alpnProtocols.filter { Self.interceptableProtocols.contains($0) }
    }

    /// The upstream handshake ended (or failed, with `pendingUpstreamFailure` set): the client
    /// gets the protocol the upstream chose, and its held ClientHello is answered.
    func resumeClientHandshake() {
        guard case .awaitingUpstreamALPN = mode, clientTLS != nil else { return }
        let upstreamProtocol = upstreams.active?.tls?.negotiatedALPN
        do {
            try clientTLS!.acceptALPN(upstreamProtocol == "h2" ? ["h2"] : ["http/1.1"])
        } catch {
            finish(log: .cannotIntercept(tunnelTarget ?? ProxyTarget(host: "?", port: 0), reason: "\(error)"))
            return
        }
        mode = .http
        if upstreamProtocol == "h2" && pendingUpstreamFailure == nil {
            guard startHTTP2() else { return }
        }
        let hello = pendingClientBytes
        pendingClientBytes = []
        guard let plaintext = hello.withUnsafeBytes({ clientPlaintext($0) }) else { return }
        if !plaintext.isEmpty { clientPlaintextArrived(plaintext) }
    }

    /// Plaintext from the client in `.http` or `.http2` mode.
    func clientPlaintextArrived(_ plaintext: [UInt8]) {
        if case .http2 = mode {
            http2?.clientReceived(plaintext, at: now)
            pumpHTTP2()
        } else {
            requestDecoder.feed(plaintext)
            advanceHTTP()
        }
    }

    /// Switches the session to HTTP/2 on both sides; false (and the session finished) when the
    /// layer cannot be made. `upstreamReady`: the upstream connection can take bytes now.
    func startHTTP2(upstreamReady: Bool = true) -> Bool {
        let defaultPort: UInt16 = scheme == "https" ? 443 : 80
        let target = tunnelTarget ?? ProxyTarget(host: interceptedServerName ?? "?", port: defaultPort)
        let host = interceptedServerName ?? target.host
        let authority = target.port == defaultPort ? host : "\(host):\(target.port)"
        let context = HTTP2Layer.Context(clientAddress: clientAddress, scheme: scheme, fallbackAuthority: authority,
                                         maxRecordedBodyBytes: configuration.maxRecordedBodyBytes,
                                         bodyPartSize: configuration.bodyPartSize, recordingFilter: configuration.recordingFilter,
                                         liveLog: configuration.liveLog,
                                         replay: configuration.replay, reverse: reverseRoute)
        do {
            http2 = try HTTP2Layer(context: context, pool: upstreams, flowIDs: flowIDs, at: now)
        } catch {
            finish(log: .cannotIntercept(target, reason: "HTTP/2: \(error.message)"))
            return false
        }
        http2!.upstreamReady = upstreamReady
        mode = .http2
        pumpHTTP2()
        return true
    }

    /// Plaintext from the upstream in `.http2` mode.
    func upstreamPlaintextArrived(_ plaintext: [UInt8]) {
        http2?.upstreamReceived(plaintext, at: now)
        pumpHTTP2()
    }

    /// Hands the layer's bytes and records out, and ends the session once the layer is done.
    func pumpHTTP2() {
        guard let layer = http2, !isFinished else { return }
        emit(layer)
        if layer.isFinished { finish(log: nil) }
    }

    /// The layer's bytes and results as commands.
    func emit(_ layer: HTTP2Layer) {
        let (toClient, toUpstream, outputs) = layer.pump(at: now)
        for output in outputs {
            switch output {
            case .record(let flow): commands.append(.record(.flow(flow)))
            case .recordPart(let part): commands.append(.record(.bodyPart(part)))
            case .log(let kind): log(kind)
            case .wake(let instant): commands.append(.wake(at: instant))
            case .openUpstream: openPassthroughUpstream()
            case .reserved(let answer): applyReserved(answer)
            }
        }
        if !toUpstream.isEmpty, let upstreamID = upstreams.activeID { sendUpstream(upstreamID, toUpstream) }
        if !toClient.isEmpty { sendClient(toClient) }
    }

    /// `harrec replay --passthrough` over HTTP/2: the tunnel's target, connected now (a replay
    /// connects nothing before an unmatched stream needs it).
    func openPassthroughUpstream() {
        guard let target = tunnelTarget else {
            http2?.upstreamLost("no upstream to forward to", at: now)
            return
        }
        closeUpstream()
        openUpstream(to: target)
    }

    /// The passthrough connection is connected (plain: h2c prior knowledge, as the client spoke
    /// in the tunnel) or its TLS handshake ended (h2, or HTTP/1.1 as its ALPN chose).
    func passthroughUpstreamEstablished() {
        guard let spoken = http2UpstreamProtocol() else { return }
        // The client already has h2 from the replay: on an HTTP/1.1 upstream its streams become
        // HTTP/1.1 exchanges.
        http2?.replayUpstreamReady(at: now, speaksHTTP1: spoken != "h2")
        pumpHTTP2()
    }

    /// What an HTTP/2 session's upstream speaks once connected ("h2" over plain TCP: prior
    /// knowledge), or nil while its TLS handshake runs: started here, offering h2 and http/1.1
    /// (so an upstream without h2 says so in ALPN rather than with a bare alert), on a connection
    /// without one; a failure to start it is reported to the layer.
    func http2UpstreamProtocol() -> String? {
        guard scheme == "https" else { return "h2" }
        guard let tls = upstreams.active?.tls else {
            startUpstreamTLS(alpnProtocols: ["h2", "http/1.1"])
            if upstreams.active == nil {
                http2UpstreamLost(pendingUpstreamFailure ?? "cannot start TLS upstream")
                pendingUpstreamFailure = nil
            }
            return nil
        }
        return tls.negotiatedALPN ?? "no protocol"
    }

    /// The upstream connection of an HTTP/2 session is gone.
    func http2UpstreamLost(_ reason: String, status: Int = 502) {
        closeUpstream()
        http2?.upstreamLost(reason, status: status, at: now)
        pumpHTTP2()
    }

    /// The client side ended: streams in flight are recorded as failed, and the session ends.
    func http2ClientLost(_ reason: String) {
        http2?.clientLost(reason, at: now, byClient: true)
        pumpHTTP2()
        finish(log: nil)
    }

    /// The tick's checks: silent upstream streams, and an idle connection.
    func tickHTTP2() {
        guard let layer = http2 else { return }
        layer.answerDueStreams(at: now)
        layer.expireSilentStreams(at: now, limit: configuration.timeouts.upstreamResponse)
        layer.expireStalledBodies(at: now, limit: configuration.timeouts.clientIdle)
        if layer.openStreamCount == 0 && now - lastActivity > configuration.timeouts.clientIdle {
            layer.drain()
        }
        pumpHTTP2()
    }
}
