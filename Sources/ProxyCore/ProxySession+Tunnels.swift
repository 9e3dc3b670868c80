import HTTP1
import Recording
import SOCKS5
import TLS
import WebSocket

// SOCKS5, CONNECT tunnels (sniffing what they carry, opaque relays) and TLS interception: the
// session's side of TLSLayer on both ends.
extension ProxySession {
    // MARK: - SOCKS5

    func handleSOCKS(_ outputs: [SOCKS5Layer.Output]) {
        for output in outputs {
            switch output {
            case .send(let bytes):
                commands.append(.sendToClient(bytes))
            case .refuse(let reply, let reason):
                if !reply.isEmpty {
                    commands.append(.sendToClient(reply))
                    recordSOCKSRefusal(reason)
                }
                finish(log: .socksRefused(reason: reason))
            case .connect(let target, let earlyData):
                pendingClientBytes = earlyData
                openTunnel(to: target, viaSOCKS: true)
            }
        }
    }

    func openTunnel(to target: ProxyTarget, viaSOCKS: Bool) {
        mode = .connectingTunnel(target, viaSOCKS: viaSOCKS)
        if !ReservedHost.isReserved(target), let failure = configuration.replay?.refusedTunnel(target) {
            // The recording could not open this tunnel: neither can the replay.
            refuseTunnel(target, viaSOCKS: viaSOCKS, failure)
            return
        }
        if ReservedHost.isReserved(target) || configuration.replay != nil {
            // harrec:80 through SOCKS5 or CONNECT (how a SOCKS client sends http://harrec/):
            // nothing to connect to; its requests are answered here. So are a replay's.
            tunnelEstablished(target, viaSOCKS: viaSOCKS)
            return
        }
        openUpstream(to: target)
    }

    /// The tunnel's upstream is there (or it is harrec's own host): the client gets its
    /// CONNECT or SOCKS5 success, and its first bytes decide what the tunnel carries.
    func tunnelEstablished(_ target: ProxyTarget, viaSOCKS: Bool) {
        if viaSOCKS {
            commands.append(.sendToClient(socks.connected()))
        } else {
            commands.append(.sendToClient(ErrorResponses.connectionEstablished))
        }
        tunnelTarget = target
        tunnelStartedAt = now
        mode = .sniffingTunnel(target)
        if !pendingClientBytes.isEmpty {
            sniffTunnel(target)
        }
    }

    // MARK: - Tunnels

    /// Looks at the first tunnel bytes: an HTTP request line means plain HTTP to record; anything
    /// else (TLS, other protocols) is relayed opaquely.
    func sniffTunnel(_ target: ProxyTarget) {
        switch NextLayer.tunnelContent(pendingClientBytes, target: target, interception: configuration.interception) {
        case .needMoreData:
            return
        case .intercept(let serverName, let leafToSign):
            if let leafToSign {
                mode = .awaitingCertificate(target, serverName: serverName)
                commands.append(.prepareCertificate(leafToSign))
            } else if let interception = configuration.interception {
                startInterception(target, serverName: serverName, interception: interception)
            }
        case .http:
            mode = .http
            requestDecoder = HTTP1RequestDecoder()
            if !pendingUpstreamBytes.isEmpty {
                // The server spoke HTTP/2 first (h2c only) and the client speaks HTTP/1: translate.
                upstreamRequiresHTTP2 = true
                startUpstreamHTTP2()
                let held = pendingUpstreamBytes
                pendingUpstreamBytes = []
                upstreamHTTP2Received(held)
            }
            let bytes = pendingClientBytes
            pendingClientBytes = []
            requestDecoder.feed(bytes)
            advanceHTTP()
        case .http2PriorKnowledge where configuration.http2 && configuration.replay != nil:
            // h2c prior knowledge to a replay: its streams are answered from the HAR.
            if let upstream = reverseHTTP2Upstream { enterReverseTunnel(upstream) }
            guard startHTTP2() else { return }
            let bytes = pendingClientBytes
            pendingClientBytes = []
            clientPlaintextArrived(bytes)
        case .http2PriorKnowledge where configuration.http2 && reverse != nil:
            startReverseHTTP2PriorKnowledge()
        case .http2PriorKnowledge where configuration.http2 && upstreams.active?.connected == true:
            // Prior knowledge toward the upstream too, as the client assumed of it.
            guard startHTTP2() else { return }
            let bytes = pendingClientBytes
            pendingClientBytes = []
            if !pendingUpstreamBytes.isEmpty {
                http2?.upstreamReceived(pendingUpstreamBytes, at: now)
                pendingUpstreamBytes = []
            }
            clientPlaintextArrived(bytes)
        case .opaque, .http2PriorKnowledge:
            guard let upstreamID = upstreams.activeID else {
                finish(log: nil)
                return
            }
            startRelay(upstreamID)
        }
    }

    /// A relay to `upstreamID`; a client that already sent EOF has nothing more to relay.
    func relay(to upstreamID: UpstreamID) -> TunnelRelay {
        var relay = TunnelRelay(upstreamID: upstreamID)
        if clientSentEOF { _ = relay.clientEnded() }
        return relay
    }

    func startRelay(_ upstreamID: UpstreamID) {
        mode = .relay(relay(to: upstreamID))
        if !pendingUpstreamBytes.isEmpty {
            commands.append(.sendToClient(pendingUpstreamBytes))
            pendingUpstreamBytes = []
        }
        if !pendingClientBytes.isEmpty {
            commands.append(.sendToUpstream(upstreamID, pendingClientBytes))
            pendingClientBytes = []
        }
        if let target = tunnelTarget {
            log(.tunnel(target))
        }
    }


    // MARK: - Upgrades

    /// After a 101: record the upgrade, then relay raw bytes both ways.
    func switchToUpgradedRelay() {
        guard let upstreamID = upstreams.activeID, let current = exchange.take() else { return }
        current.flow.instants.end = now
        if current.flow.instants.sendEnd == nil { current.flow.instants.sendEnd = current.flow.instants.responseStart }
        if upgradeIsWebSocket {
            let relay = WebSocketRelay(upgrade: current.flow, extensionHeader: webSocketExtensions, configuration: configuration)
            for record in relay.startRecords { commands.append(.record(record)) }
            log(.webSocketOpened(relay.flow))
            webSocket = relay
        } else {
            commands.append(.record(.flow(current.flow)))
            if configuration.liveLog { log(.exchange(current.flow)) }
        }
        let fromClient = requestDecoder.takeBufferedBytes()
        let fromUpstream = upstreams.active!.decoder.takeBufferedBytes()
        mode = .relay(relay(to: upstreamID))
        if !fromUpstream.isEmpty {
            sendClient(fromUpstream)
            recordWebSocket(fromUpstream, from: .serverToClient)
        }
        if !fromClient.isEmpty {
            sendUpstream(upstreamID, fromClient)
            recordWebSocket(fromClient, from: .clientToServer)
        }
    }

    /// Parses a copy of relayed bytes into the WebSocket recording, if there is one.
    func recordWebSocket(_ bytes: [UInt8], from direction: WebSocketDirection) {
        guard webSocket != nil else { return }
        for record in webSocket!.relayed(bytes, from: direction, at: now) { commands.append(.record(record)) }
    }

    /// Records the WebSocket conversation once, when the session ends.
    func finishWebSocket() {
        guard var relay = webSocket else { return }
        webSocket = nil
        let (records, event) = relay.finish(at: now, shuttingDown: shuttingDown)
        for record in records { commands.append(.record(record)) }
        log(event)
    }

    // MARK: - TLS interception

    /// Bytes to the client, encrypted when the tunnel is intercepted. Encrypted bytes are
    /// gathered until the event is handled (`flushPlaintext`), so a response head and body
    /// become one TLS record and one write instead of several.
    func sendClient(_ bytes: [UInt8]) {
        if clientTLS != nil {
            clientTLS!.write(bytes)
        } else {
            commands.append(.sendToClient(bytes))
        }
    }

    /// Bytes to an upstream connection, encrypted when it speaks TLS (gathered like the
    /// client's). Bytes for an upstream that has since been closed or replaced go with it, as the
    /// runtime drops queued bytes on close.
    func sendUpstream(_ upstreamID: UpstreamID, _ bytes: [UInt8]) {
        if upstreams.activeID == upstreamID, upstreams.active?.tls != nil {
            upstreams.active!.tls!.write(bytes)
        } else {
            commands.append(.sendToUpstream(upstreamID, bytes))
        }
    }

    /// Encrypts the plaintext gathered during this event, as few records as possible. Runs
    /// before the commands are handed out and before anything that ends a direction.
    func flushPlaintext() {
        if clientTLS?.hasPendingPlaintext == true {
            sendClientCiphertext(clientTLS!.flush())
        }
        if let upstreamID = upstreams.activeID, upstreams.active?.tls?.hasPendingPlaintext == true {
            sendUpstreamCiphertext(upstreamID, upstreams.active!.tls!.flush())
        }
    }

    func sendClientCiphertext(_ bytes: [UInt8]) {
        if !bytes.isEmpty { commands.append(.sendToClient(bytes)) }
    }

    func sendUpstreamCiphertext(_ upstreamID: UpstreamID, _ bytes: [UInt8]) {
        if !bytes.isEmpty { commands.append(.sendToUpstream(upstreamID, bytes)) }
    }

    /// Decrypts client bytes when intercepting (else returns them as they are). Handshake
    /// failures and close_notify are handled here; nil means the session ended.
    func clientPlaintext(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard clientTLS != nil else { return Array(bytes) }
        let received = clientTLS!.receive(bytes, at: now)
        sendClientCiphertext(received.output)
        if let error = received.failure {
            let host = interceptedServerName ?? tunnelTarget?.host ?? "?"
            if exchange == nil && requestDecoder.isIdle && !clientTLS!.handshakeDone {
                let rejected = error.kind == .peerAlert
                recordClientTLSFailure(rejected ? "the client rejected harrec's certificate for \(host) (\(error.message)); install the CA: harrec ca show"
                                                : "TLS handshake with the client for \(host) failed: \(error.message)")
                finish(log: .clientTLSFailed(host: host, message: error.message, rejectedCertificate: rejected))
            } else if exchange != nil {
                failExchange("client TLS failed: \(error.message)", respondWith: nil)
            } else {
                finish(log: nil)
            }
            return nil
        }
        if received.closed {
            // close_notify: the client will send nothing more; what came with it still counts.
            if !received.plaintext.isEmpty {
                if case .relay(let relay) = mode {
                    sendUpstream(relay.upstreamID, received.plaintext)
                    recordWebSocket(received.plaintext, from: .clientToServer)
                } else if case .http2 = mode {
                    http2?.clientReceived(received.plaintext, at: now)
                } else {
                    requestDecoder.feed(received.plaintext)
                }
            }
            clientClosed(at: now)
            return nil
        }
        return received.plaintext
    }

    /// Decrypts upstream bytes when that connection speaks TLS. A completed handshake releases
    /// the waiting request; a failed one fails it (or the next one) with the reason.
    func upstreamPlaintext(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard upstreams.activeID == upstreamID, upstreams.active?.tls != nil else { return Array(bytes) }
        let wasEstablished = upstreams.active!.tls!.handshakeDone
        let received = upstreams.active!.tls!.receive(bytes, at: now)
        sendUpstreamCiphertext(upstreamID, received.output)
        if let error = received.failure {
            let host = interceptedServerName ?? upstreams.active!.target.host
            let reason = wasEstablished
                ? "upstream TLS failed: \(error.message)"
                : "upstream \(error.message) (host \(host))"
            switch mode {
            case .http2:
                http2UpstreamLost(reason)
                return nil
            case .awaitingUpstreamALPN:
                closeUpstream()
                pendingUpstreamFailure = reason
                resumeClientHandshake()
                return nil
            default:
                break
            }
            if !wasEstablished && retryUpstreamWithHTTP2(after: error) { return nil }
            closeUpstream()
            if exchange != nil {
                failExchange(reason, respondWith: 502)
            } else {
                if !wasEstablished { pendingUpstreamFailure = reason }
            }
            return nil
        }
        if received.handshakeCompleted, case .http = mode, upstreams.active?.tls?.negotiatedALPN == "h2" {
            startUpstreamHTTP2()
        }
        if received.handshakeCompleted, case .http2 = mode {
            if configuration.replay != nil { passthroughUpstreamEstablished() } else if reverse != nil { reverseHTTP2UpstreamEstablished() }
            guard upstreams.activeID == upstreamID else { return nil }
        }
        if received.handshakeCompleted, exchange != nil, exchange?.headSent == false {
            sendRequestHead()
        }
        if received.closed {
            // close_notify: relay or parse what came with it before handling the end.
            if !received.plaintext.isEmpty {
                if case .relay = mode {
                    sendClient(received.plaintext)
                    recordWebSocket(received.plaintext, from: .serverToClient)
                } else if case .http2 = mode {
                    http2?.upstreamReceived(received.plaintext, at: now)
                } else if upstreams.active?.http2 != nil {
                    upstreamHTTP2Received(received.plaintext)
                } else if exchange != nil {
                    upstreams.active?.decoder.feed(received.plaintext)
                    advanceResponse()
                }
            }
            upstreamClosed(upstreamID, at: now)
            return nil
        }
        return received.plaintext
    }

    /// Terminates the client's TLS with a leaf for its server name and starts TLS upstream on
    /// the tunnel's connection, then records the decrypted HTTP like plain HTTP.
    func startInterception(_ target: ProxyTarget, serverName: String?, interception: TLSInterception) {
        let name = serverName ?? target.host
        do {
            clientTLS = try TLSLayer.server(context: interception.serverContext, fallbackServerName: target.host, at: now)
        } catch {
            finish(log: .cannotIntercept(target, reason: "\(error)"))
            return
        }
        interceptedServerName = name
        scheme = "https"
        requestDecoder = HTTP1RequestDecoder()
        if configuration.replay != nil {
            startReplayInterception()
            return
        }
        if let upstream = reverseHTTP2Upstream, upstream.scheme == "https", upstreamALPNOffer(forHello: pendingClientBytes) != nil {
            // A reverse listener's client offering h2: asked of its upstream, as in a tunnel.
            enterReverseTunnel(upstream)
            mode = .awaitingUpstreamALPN(target)
            openUpstream(to: upstream.target)
            return
        }
        if let offer = upstreamALPNOffer(forHello: pendingClientBytes), upstreams.active?.connected == true {
            // The hello waits: the client is answered with the protocol the upstream picks.
            mode = .awaitingUpstreamALPN(target)
            startUpstreamTLS(alpnProtocols: offer)
            return
        }
        mode = .http
        startUpstreamTLS()
        let hello = pendingClientBytes
        pendingClientBytes = []
        guard let plaintext = hello.withUnsafeBytes({ clientPlaintext($0) }) else { return }
        if !plaintext.isEmpty {
            requestDecoder.feed(plaintext)
            advanceHTTP()
        }
    }

    /// Starts the TLS client handshake on the current (connected) upstream connection.
    func startUpstreamTLS(alpnProtocols: [String]? = nil) {
        let alpnProtocols = upstreamRequiresHTTP2 ? ["h2"] : alpnProtocols
        guard let upstreamID = upstreams.activeID, upstreams.active?.connected == true, upstreams.active?.tls == nil,
              let interception = configuration.interception else { return }
        let name = interceptedServerName ?? upstreams.active!.target.host
        do {
            upstreams.active!.tls = try TLSLayer.client(context: interception.clientContext, serverName: name,
                                                        alpnProtocols: alpnProtocols, at: now)
        } catch {
            closeUpstream()
            pendingUpstreamFailure = "cannot start TLS to \(name): \(error)"
            if exchange != nil { failPendingUpstream() }
            resumeClientHandshake()
            return
        }
        sendUpstreamCiphertext(upstreamID, upstreams.active!.tls!.flush())
    }

    /// Fails the exchange in flight with the upstream failure recorded before it started.
    func failPendingUpstream() {
        guard let reason = pendingUpstreamFailure else { return }
        pendingUpstreamFailure = nil
        failExchange(reason, respondWith: 502)
    }
}
