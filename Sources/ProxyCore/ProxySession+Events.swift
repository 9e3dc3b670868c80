import HTTP1
import Recording
import SOCKS5
import TLS
import WebSocket

// The events the runtime delivers: bytes, EOFs and failures from the client and the upstream
// connections, connect results, and the signed leaf. Each dispatches on the session's mode.
extension ProxySession {
    // MARK: - Client events

    /// Bytes arrived from the client.
    public func clientReceived(_ bytes: UnsafeRawBufferPointer, at time: Double) {
        now = max(now, time)
        lastActivity = now
        switch mode {
        case .detecting:
            guard let first = bytes.first else { return }
            if let reverse {
                // A reverse listener is a server: TLS (a ClientHello, answered with a leaf from
                // harrec's CA) or plain HTTP, never SOCKS5.
                let target = ProxyTarget(host: reverse.tlsName, port: 443)
                mode = .sniffingTunnel(target)
                pendingClientBytes.append(contentsOf: bytes)
                sniffTunnel(target)
            } else if NextLayer.connectionProtocol(firstByte: first) == .socks5 {
                mode = .socksHandshake
                handleSOCKS(socks.receive(bytes))
            } else {
                mode = .http
                requestDecoder.feed(bytes)
                advanceHTTP()
            }
        case .socksHandshake:
            handleSOCKS(socks.receive(bytes))
        case .connectingTunnel:
            pendingClientBytes.append(contentsOf: bytes)
        case .sniffingTunnel(let target):
            pendingClientBytes.append(contentsOf: bytes)
            sniffTunnel(target)
        case .awaitingCertificate, .awaitingUpstreamALPN:
            pendingClientBytes.append(contentsOf: bytes)
        case .http, .http2:
            guard let plaintext = clientPlaintext(bytes) else { return }
            clientPlaintextArrived(plaintext)
        case .relay(let relay):
            guard let plaintext = clientPlaintext(bytes), !plaintext.isEmpty else { return }
            sendUpstream(relay.upstreamID, plaintext)
            recordWebSocket(plaintext, from: .clientToServer)
        case .finished:
            break
        }
    }

    /// The client closed its write direction (EOF).
    public func clientClosed(at time: Double) {
        now = max(now, time)
        clientSentEOF = true
        if let tls = clientTLS, tls.state == .handshaking, exchange == nil {
            // Apps that distrust a certificate often just hang up without an alert.
            let host = interceptedServerName ?? tunnelTarget?.host ?? "?"
            recordClientTLSFailure("the client closed the TLS handshake for \(host) before completing it (it may not trust harrec's CA: harrec ca show)")
            finish(log: .clientAbandonedTLS(host: host))
            return
        }
        switch mode {
        case .http:
            requestDecoder.finish()
            if let replayed = replayExchange, case .silent = replayed.phase {
                // A replayed give-up: the client left again.
                finish(log: nil)
                return
            }
            if let current = exchange, current.endConsumed {
                // The whole request was sent and the client hung up before the whole answer:
                // it gave up (as nginx reads it, a half-close too). Waiting for the upstream
                // would hold both sides until its timeout and blame it.
                clientLeft("client closed the connection", current)
                return
            }
            advanceHTTP()
        case .relay(var relay):
            let step = relay.clientEnded()
            mode = .relay(relay)
            if step == .finish {
                finish(log: nil)
            } else {
                // Over TLS the end of the stream is a close_notify, then the TCP half-close.
                flushPlaintext()
                if upstreams.active?.tls != nil {
                    sendUpstreamCiphertext(relay.upstreamID, upstreams.active!.tls!.close())
                }
                commands.append(.shutdownUpstreamWrite(relay.upstreamID))
            }
        case .socksHandshake:
            handleSOCKS(socks.clientClosed())
        case .http2:
            http2ClientLost("client closed the connection")
        case .finished:
            break
        default:
            finish(log: nil)
        }
    }

    /// The client connection broke (reset, write error).
    public func clientFailed(_ failure: ClientFailure, at time: Double) {
        now = max(now, time)
        clientSentEOF = true
        let how = switch failure {
        case .reset: "client reset the connection"
        case .other(let reason): "client connection failed: \(reason)"
        }
        if case .http2 = mode {
            http2ClientLost(how)
        } else if let current = exchange {
            clientLeft(how, current)
        } else {
            finish(log: nil)
        }
    }

    // MARK: - Upstream events

    /// An upstream connection requested with `openUpstream` is established.
    public func upstreamConnected(_ upstreamID: UpstreamID, _ connection: UpstreamConnection, at time: Double) {
        now = max(now, time)
        guard upstreams.connected(upstreamID, connection) else { return }
        lastActivity = now
        switch mode {
        case .connectingTunnel(let target, let viaSOCKS):
            tunnelEstablished(target, viaSOCKS: viaSOCKS)
        case .http2 where configuration.replay != nil:
            passthroughUpstreamEstablished()
        case .http2 where reverse != nil:
            reverseHTTP2UpstreamEstablished()
        case .awaitingUpstreamALPN:
            // A reverse listener's upstream, opened for a client offering h2.
            startUpstreamTLS(alpnProtocols: upstreamALPNOffer(forHello: pendingClientBytes))
        case .http:
            if scheme == "https" {
                startUpstreamTLS()
            } else {
                // An h2c-only server (learned on an earlier connection): prior knowledge.
                if upstreamRequiresHTTP2 { startUpstreamHTTP2() }
                sendRequestHead()
            }
        default:
            break
        }
    }

    /// A tunnel that cannot be opened: the SOCKS5 failure reply or a 502/504 to CONNECT, the
    /// refusal recorded, and the connection closed.
    func refuseTunnel(_ target: ProxyTarget, viaSOCKS: Bool, _ failure: UpstreamFailure, startedAt: Double? = nil) {
        let reason = "cannot connect to \(target): \(failure.message)"
        var answer: ErrorResponses.Answer?
        var recordedReason = reason
        if viaSOCKS {
            let reply = socks.connectFailed(failure.kind)
            commands.append(.sendToClient(reply))
            if reply.count > 1 { recordedReason += " (SOCKS5 reply \(reply[1]))" }
        } else {
            answer = ErrorResponses.answer(status: failure.kind == .timeout ? 504 : 502, reason: reason, close: true)
            commands.append(.sendToClient(answer!.bytes))
        }
        recordRefusal(Refusals.tunnelRequest(target, viaSOCKS: viaSOCKS), response: answer?.recorded,
                      reason: recordedReason, startedAt: startedAt ?? now)
        finish(log: .tunnelFailed(target, reason: failure.message))
    }

    /// An upstream connection could not be made.
    public func upstreamConnectFailed(_ upstreamID: UpstreamID, _ failure: UpstreamFailure, at time: Double) {
        now = max(now, time)
        guard let current = upstreams.active, current.id == upstreamID else { return }
        upstreams.forget()
        let reason = "cannot connect to \(current.target): \(failure.message)"
        switch mode {
        case .connectingTunnel(_, let viaSOCKS):
            refuseTunnel(current.target, viaSOCKS: viaSOCKS, failure, startedAt: current.connectStartedAt)
        case .http:
            failExchange(reason, respondWith: failure.kind == .timeout ? 504 : 502)
        case .awaitingUpstreamALPN:
            // The client is answered over HTTP/1.1, and its first request gets the reason.
            pendingUpstreamFailure = reason
            resumeClientHandshake()
        case .http2:
            http2UpstreamLost(reason, status: failure.kind == .timeout ? 504 : 502)
        default:
            finish(log: nil)
        }
    }

    /// Bytes arrived from an upstream connection.
    public func upstreamReceived(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer, at time: Double) {
        now = max(now, time)
        guard upstreams.activeID == upstreamID else { return }
        lastActivity = now
        currentUpstreamChunkTime = now
        switch mode {
        case .relay:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes), !plaintext.isEmpty else { return }
            sendClient(plaintext)
            recordWebSocket(plaintext, from: .serverToClient)
        case .sniffingTunnel:
            let held = pendingUpstreamBytes + Array(bytes)
            if configuration.http2 && held.count <= 16_384 + 9 && NextLayer.mayBeHTTP2Settings(held) {
                pendingUpstreamBytes = held
                return
            }
            // The server spoke first: not HTTP from the client, so relay opaquely.
            pendingUpstreamBytes = []
            startRelay(upstreamID)
            commands.append(.sendToClient(held))
        case .http:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes), !plaintext.isEmpty,
                  upstreams.activeID == upstreamID else { return }
            if upstreams.active?.http2 != nil {
                // SETTINGS, PING and GOAWAY come on an idle h2 connection too.
                upstreamHTTP2Received(plaintext)
                return
            }
            if exchange == nil {
                if configuration.http2, upstreams.active?.exchangesCarried == 0, NextLayer.isHTTP2ServerFrame(plaintext) {
                    // A server that speaks h2 whatever ALPN said sends its SETTINGS at once.
                    upstreamRequiresHTTP2 = true
                    startUpstreamHTTP2()
                    upstreamHTTP2Received(plaintext)
                    return
                }
                // Bytes from an idle upstream are not a response to anything: drop the connection.
                closeUpstream()
                return
            }
            if exchange!.response == .awaitingHead, upstreams.active?.decoder.bufferedByteCount == 0,
               switchToHTTP2UpstreamIfItSpeaksIt(plaintext) {
                return
            }
            exchange?.lastUpstreamActivity = now
            upstreams.active?.decoder.feed(plaintext)
            advanceResponse()
        case .awaitingUpstreamALPN:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes) else { return }
            if upstreams.active?.tls?.handshakeDone == true {
                resumeClientHandshake()
                if !plaintext.isEmpty, case .http2 = mode { upstreamPlaintextArrived(plaintext) }
            }
        case .http2:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes), !plaintext.isEmpty else { return }
            upstreamPlaintextArrived(plaintext)
        default:
            break
        }
    }

    /// An upstream connection sent EOF.
    public func upstreamClosed(_ upstreamID: UpstreamID, at time: Double) {
        now = max(now, time)
        guard upstreams.activeID == upstreamID else { return }
        switch mode {
        case .relay(var relay):
            let step = relay.upstreamEnded()
            mode = .relay(relay)
            if step == .finish {
                finish(log: nil)
            } else {
                flushPlaintext()
                if clientTLS != nil {
                    sendClientCiphertext(clientTLS!.close())
                }
                commands.append(.shutdownClientWrite)
            }
        case .sniffingTunnel:
            finish(log: nil)
        case .http:
            guard exchange != nil else {
                closeUpstream()
                return
            }
            if upstreams.active?.http2 != nil {
                failExchange(exchange!.finalHeadForwarded ? "upstream closed the connection mid-body"
                                                         : "upstream closed the connection before responding", respondWith: 502)
                return
            }
            if retryOnFreshConnection() { return }
            upstreams.active?.decoder.finish()
            advanceResponse(eofReason: "upstream closed the connection")
        case .http2:
            http2UpstreamLost("upstream closed the connection")
        case .awaitingUpstreamALPN:
            closeUpstream()
            pendingUpstreamFailure = "upstream closed the connection during the TLS handshake"
            resumeClientHandshake()
        default:
            finish(log: nil)
        }
    }

    /// An upstream connection broke after it was established (reset, write error).
    public func upstreamFailed(_ upstreamID: UpstreamID, _ reason: String, at time: Double) {
        now = max(now, time)
        guard upstreams.activeID == upstreamID else { return }
        switch mode {
        case .http where exchange != nil:
            if retryOnFreshConnection() { return }
            failExchange("upstream connection failed: \(reason)", respondWith: 502)
        case .http:
            upstreams.forget()
        case .http2:
            http2UpstreamLost("upstream connection failed: \(reason)")
        case .awaitingUpstreamALPN:
            closeUpstream()
            pendingUpstreamFailure = "upstream connection failed during the TLS handshake: \(reason)"
            resumeClientHandshake()
        default:
            finish(log: nil)
        }
    }

    /// The leaf requested with `prepareCertificate` is ready (or could not be made; the handshake
    /// then reports it).
    public func certificatePrepared(at time: Double) {
        now = max(now, time)
        guard case .awaitingCertificate(let target, let serverName) = mode, let interception = configuration.interception else { return }
        startInterception(target, serverName: serverName, interception: interception)
    }
}
