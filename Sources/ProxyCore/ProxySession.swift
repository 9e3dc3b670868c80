import HAR
import HTTP1
import Recording
import SOCKS5
import Synchronization
import TLS
import WebSocket

/// A source of unique ids shared by all sessions of one proxy.
public final class IDSource: Sendable {
    private let next = Atomic<UInt64>(1)
    public init() {}
    public func make() -> UInt64 { next.add(1, ordering: .relaxed).oldValue }
}

/// The sans-IO state machine for one client connection and the upstream connections it uses.
///
/// The runtime delivers events (bytes, EOFs, connect results, ticks) and then executes the commands
/// the session queued (`takeCommands()`). The session never blocks and never touches a socket, so
/// every path can be driven byte by byte in a test.
///
/// Protocol detection is deferred, as in mitmproxy: the first client byte picks SOCKS5 (0x05) or
/// HTTP; after CONNECT or a SOCKS5 CONNECT, the first tunnel bytes pick HTTP (parsed and recorded)
/// or an opaque relay.
public final class ProxySession {
    /// Bytes buffered from one peer while the session cannot forward them; past this the runtime
    /// stops reading that peer (backpressure instead of memory growth).
    public static let maxBufferedInputBytes = 256 * 1024

    public let id: UInt64
    public let clientAddress: String
    private let configuration: ProxyConfiguration
    private let flowIDs: IDSource
    /// The instant of the event being handled: time arrives with each event (the runtime owns the
    /// clock), so a transcript replays the same way every time.
    private var now: Double

    private var commands: [ProxyCommand] = []
    /// True once the session has asked to close the client; the runtime drops it after executing.
    public private(set) var isFinished = false

    private enum Mode {
        case detecting
        case socksHandshake
        case connectingTunnel(ProxyTarget, viaSOCKS: Bool)
        case sniffingTunnel(ProxyTarget)
        /// A ClientHello to intercept arrived; its leaf is being signed off the loop.
        case awaitingCertificate(ProxyTarget, serverName: String?)
        case http
        case relay(TunnelRelay)
        case finished
    }

    private var mode: Mode = .detecting
    private var socks: SOCKS5Layer
    private var requestDecoder = HTTP1RequestDecoder()
    /// Client bytes held while a tunnel is being set up or sniffed.
    private var pendingClientBytes: [UInt8] = []
    /// Set inside a CONNECT or SOCKS5 tunnel: every request goes to this target.
    private var tunnelTarget: ProxyTarget?
    /// The upstream connection in use (one at a time; see `UpstreamPool`).
    private var upstreams: UpstreamPool
    private var exchange: HTTP1Exchange?
    private var clientSentEOF = false
    private var shuttingDown = false
    private let createdAt: Double
    private var lastActivity: Double
    /// Arrival time of the upstream chunk being processed, for the first-byte instant.
    private var currentUpstreamChunkTime: Double = 0
    private let auth: ProxyAuth
    /// TLS toward the client once a tunnel is intercepted; nil for plain HTTP and opaque tunnels.
    private var clientTLS: TLSLayer?
    /// "https" inside an intercepted tunnel, else "http": the scheme of recorded URLs.
    private var scheme = "http"
    /// The name the client asked for (SNI, else the tunnel target): upstream SNI and verification.
    private var interceptedServerName: String?
    /// An upstream TLS failure that happened before any request arrived; the next request gets it.
    private var pendingUpstreamFailure: String?
    /// The WebSocket conversation being recorded after a 101.
    private var webSocket: WebSocketRelay?
    /// When the request head being received began (nil between requests); see `requestHead`.
    private var headStartedAt: Double?
    /// Sec-WebSocket-Extensions of the 101, when the upgrade is to websocket.
    private var webSocketExtensions: String?
    private var upgradeIsWebSocket = false


    /// `now`: when the client connection was accepted.
    public init(id: UInt64, clientAddress: String, configuration: ProxyConfiguration, flowIDs: IDSource, now: Double) {
        self.id = id
        self.clientAddress = clientAddress
        self.configuration = configuration
        self.flowIDs = flowIDs
        self.now = now
        self.createdAt = now
        self.lastActivity = now
        socks = SOCKS5Layer(credentials: configuration.credentials)
        auth = ProxyAuth(credentials: configuration.credentials)
        upstreams = UpstreamPool(sessionID: id)
    }

    /// The commands queued since the last call, in order.
    public func takeCommands() -> [ProxyCommand] {
        flushPlaintext()
        let taken = commands
        commands.removeAll(keepingCapacity: true)
        return taken
    }

    /// Hands each queued command to `body`, then clears the queue without reallocating it (the
    /// runtime's hot path). `body` must not call back into the session.
    public func drainCommands(_ body: (ProxyCommand) -> Void) {
        flushPlaintext()
        for command in commands { body(command) }
        commands.removeAll(keepingCapacity: true)
    }

    /// Whether commands are waiting. Plaintext written to a TLS side during the event is
    /// encrypted first, so it is counted.
    public var hasCommands: Bool {
        flushPlaintext()
        return !commands.isEmpty
    }

    /// Whether the runtime should read from the client now.
    public var wantsClientData: Bool {
        switch mode {
        case .finished: return false
        case .http: return requestDecoder.bufferedByteCount < Self.maxBufferedInputBytes
        case .relay(let relay): return relay.clientToUpstreamOpen
        default: return pendingClientBytes.count < Self.maxBufferedInputBytes
        }
    }

    /// Whether the runtime should read from the upstream now.
    public var wantsUpstreamData: Bool {
        switch mode {
        case .finished: return false
        case .relay(let relay): return relay.upstreamToClientOpen
        default: return true
        }
    }

    // MARK: - Client events

    /// Bytes arrived from the client.
    public func clientReceived(_ bytes: UnsafeRawBufferPointer, at time: Double) {
        now = max(now, time)
        lastActivity = now
        switch mode {
        case .detecting:
            guard let first = bytes.first else { return }
            if NextLayer.connectionProtocol(firstByte: first) == .socks5 {
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
        case .awaitingCertificate:
            pendingClientBytes.append(contentsOf: bytes)
        case .http:
            guard let plaintext = clientPlaintext(bytes) else { return }
            requestDecoder.feed(plaintext)
            advanceHTTP()
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
            finish(log: .clientAbandonedTLS(host: host))
            return
        }
        switch mode {
        case .http:
            requestDecoder.finish()
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
        case .finished:
            break
        default:
            finish(log: nil)
        }
    }

    /// The client connection broke (reset, write error).
    public func clientFailed(_ reason: String, at time: Double) {
        now = max(now, time)
        clientSentEOF = true
        if exchange != nil {
            failExchange("client connection failed: \(reason)", respondWith: nil)
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
            if viaSOCKS {
                commands.append(.sendToClient(socks.connected()))
            } else {
                commands.append(.sendToClient(ErrorResponses.connectionEstablished))
            }
            tunnelTarget = target
            mode = .sniffingTunnel(target)
            if !pendingClientBytes.isEmpty {
                sniffTunnel(target)
            }
        case .http:
            if scheme == "https" {
                startUpstreamTLS()
            } else {
                sendRequestHead()
            }
        default:
            break
        }
    }

    /// An upstream connection could not be made.
    public func upstreamConnectFailed(_ upstreamID: UpstreamID, _ failure: UpstreamFailure, at time: Double) {
        now = max(now, time)
        guard let current = upstreams.active, current.id == upstreamID else { return }
        upstreams.forget()
        let reason = "cannot connect to \(current.target): \(failure.message)"
        switch mode {
        case .connectingTunnel(_, let viaSOCKS):
            if viaSOCKS {
                commands.append(.sendToClient(socks.connectFailed(failure.kind)))
            } else {
                let status = failure.kind == .timeout ? 504 : 502
                commands.append(.sendToClient(errorResponse(status: status, reason: reason, close: true)))
            }
            finish(log: .tunnelFailed(current.target, reason: failure.message))
        case .http:
            failExchange(reason, respondWith: failure.kind == .timeout ? 504 : 502)
        default:
            finish(log: nil)
        }
    }

    /// Bytes arrived from an upstream connection.
    public func upstreamReceived(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer, at time: Double) {
        now = max(now, time)
        guard upstreams.active?.id == upstreamID else { return }
        lastActivity = now
        currentUpstreamChunkTime = now
        switch mode {
        case .relay:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes), !plaintext.isEmpty else { return }
            sendClient(plaintext)
            recordWebSocket(plaintext, from: .serverToClient)
        case .sniffingTunnel:
            // The server spoke first: not HTTP from the client, so relay opaquely.
            startRelay(upstreamID)
            commands.append(.sendToClient(Array(bytes)))
        case .http:
            guard let plaintext = upstreamPlaintext(upstreamID, bytes), !plaintext.isEmpty,
                  upstreams.active?.id == upstreamID else { return }
            if exchange == nil {
                // Bytes from an idle upstream are not a response to anything: drop the connection.
                closeUpstream()
                return
            }
            exchange?.lastUpstreamActivity = now
            upstreams.active?.decoder.feed(plaintext)
            advanceResponse()
        default:
            break
        }
    }

    /// An upstream connection sent EOF.
    public func upstreamClosed(_ upstreamID: UpstreamID, at time: Double) {
        now = max(now, time)
        guard upstreams.active?.id == upstreamID else { return }
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
            if retryOnFreshConnection() { return }
            upstreams.active?.decoder.finish()
            advanceResponse(eofReason: "upstream closed the connection")
        default:
            finish(log: nil)
        }
    }

    /// An upstream connection broke after it was established (reset, write error).
    public func upstreamFailed(_ upstreamID: UpstreamID, _ reason: String, at time: Double) {
        now = max(now, time)
        guard upstreams.active?.id == upstreamID else { return }
        switch mode {
        case .http where exchange != nil:
            if retryOnFreshConnection() { return }
            failExchange("upstream connection failed: \(reason)", respondWith: 502)
        case .http:
            upstreams.forget()
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

    // MARK: - Time and shutdown

    /// Called by the runtime about once a second; enforces the timeouts.
    public func tick(at time: Double) {
        now = max(now, time)
        let timeouts = configuration.timeouts
        switch mode {
        case .detecting, .socksHandshake:
            if now - createdAt > timeouts.handshake {
                finish(log: .handshakeTimeout(seconds: timeouts.handshake))
            }
        case .connectingTunnel:
            failUpstreamConnectIfLate(now)
        case .sniffingTunnel, .relay, .awaitingCertificate:
            if now - lastActivity > timeouts.tunnelIdle {
                finish(log: .tunnelIdle(seconds: timeouts.tunnelIdle))
            }
        case .http:
            if let exchange {
                if upstreams.active?.ready == false {
                    failUpstreamConnectIfLate(now)
                } else if exchange.requestDone && now - exchange.lastUpstreamActivity > timeouts.upstreamResponse {
                    failExchange("upstream sent nothing for \(formatSeconds(timeouts.upstreamResponse))", respondWith: 504)
                }
            } else if requestDecoder.bufferedByteCount > 0 {
                // A request head has begun (seen at this tick at the latest) and must end in time.
                let started = headStartedAt ?? now
                headStartedAt = started
                if now - started > timeouts.requestHead {
                    rejectRequest(status: 408, reason: "the request head did not complete within \(formatSeconds(timeouts.requestHead))")
                }
            } else {
                headStartedAt = nil
                if now - lastActivity > timeouts.clientIdle { finish(log: nil) }
            }
        case .finished:
            break
        }
    }

    /// DNS, TCP connect and (inside an intercepted tunnel) the TLS handshake share one limit.
    private func failUpstreamConnectIfLate(_ now: Double) {
        let limit = configuration.timeouts.upstreamConnect
        guard let current = upstreams.overdueConnect(at: now, limit: limit) else { return }
        commands.append(.closeUpstream(current.id))
        upstreamConnectFailed(current.id, UpstreamFailure(.timeout, "connect timed out after \(formatSeconds(limit))"), at: now)
    }

    /// Graceful shutdown: finish the exchange in flight, accept no new request.
    public func beginShutdown(at time: Double) {
        now = max(now, time)
        shuttingDown = true
        switch mode {
        case .http:
            if exchange == nil { finish(log: nil) }
        case .finished:
            break
        default:
            finish(log: nil)
        }
    }

    /// Hard stop: the exchange in flight is recorded as aborted.
    public func abort(_ reason: String, at time: Double) {
        now = max(now, time)
        if exchange != nil {
            failExchange(reason, respondWith: nil)
        }
        if !isFinished { finish(log: nil) }
    }

    // MARK: - SOCKS5

    private func handleSOCKS(_ outputs: [SOCKS5Layer.Output]) {
        for output in outputs {
            switch output {
            case .send(let bytes):
                commands.append(.sendToClient(bytes))
            case .refuse(let reply, let reason):
                if !reply.isEmpty { commands.append(.sendToClient(reply)) }
                finish(log: .socksRefused(reason: reason))
            case .connect(let target, let earlyData):
                pendingClientBytes = earlyData
                openTunnel(to: target, viaSOCKS: true)
            }
        }
    }

    private func openTunnel(to target: ProxyTarget, viaSOCKS: Bool) {
        mode = .connectingTunnel(target, viaSOCKS: viaSOCKS)
        openUpstream(to: target)
    }

    // MARK: - Tunnels

    /// Looks at the first tunnel bytes: an HTTP request line means plain HTTP to record; anything
    /// else (TLS, other protocols) is relayed opaquely.
    private func sniffTunnel(_ target: ProxyTarget) {
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
            let bytes = pendingClientBytes
            pendingClientBytes = []
            requestDecoder.feed(bytes)
            advanceHTTP()
        case .opaque:
            guard let upstreamID = upstreams.active?.id else {
                finish(log: nil)
                return
            }
            startRelay(upstreamID)
        }
    }

    /// A relay to `upstreamID`; a client that already sent EOF has nothing more to relay.
    private func relay(to upstreamID: UpstreamID) -> TunnelRelay {
        var relay = TunnelRelay(upstreamID: upstreamID)
        if clientSentEOF { _ = relay.clientEnded() }
        return relay
    }

    private func startRelay(_ upstreamID: UpstreamID) {
        mode = .relay(relay(to: upstreamID))
        if !pendingClientBytes.isEmpty {
            commands.append(.sendToUpstream(upstreamID, pendingClientBytes))
            pendingClientBytes = []
        }
        if let target = tunnelTarget {
            log(.tunnel(target))
        }
    }

    // MARK: - HTTP requests

    private func advanceHTTP() {
        while case .http = mode {
            if let current = exchange {
                // Pull body events only while they can be forwarded at once.
                guard current.request == .sendingBody else { return }
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
    private func nextRequestEvent() -> HTTP1RequestEvent? {
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
                    sendClient(errorResponse(status: 400, reason: "bad request: \(reason)", close: true))
                    finish(log: .rejected(status: 400, reason: "bad request: \(reason)"))
                }
            }
            return nil
        }
    }

    private func rejectRequest(status: Int, reason: String) {
        sendClient(errorResponse(status: status, reason: reason, close: true))
        finish(log: .rejected(status: status, reason: reason))
    }

    private func startExchange(_ head: HTTPRequestHead, framing: HTTPBodyFraming) {
        headStartedAt = nil
        // Proxy authentication applies to requests to the proxy, not inside an authorized tunnel.
        if tunnelTarget == nil, !auth.admits(head.fields) {
            let mustClose = framing != .none
            sendClient(ErrorResponses.proxyAuthenticationRequired(close: mustClose))
            log(.proxyAuthenticationRequired(method: head.method))
            if mustClose || !head.keepAlive { finish(log: nil) }
            return
        }

        if head.method == "CONNECT" {
            guard tunnelTarget == nil else {
                rejectRequest(status: 400, reason: "CONNECT inside a tunnel is not supported")
                return
            }
            do {
                let target = try parseAuthority(Substring(head.target), defaultPort: nil)
                pendingClientBytes = requestDecoder.takeBufferedBytes()
                openTunnel(to: target, viaSOCKS: false)
            } catch {
                rejectRequest(status: 400, reason: "bad CONNECT target: \(describe(error))")
            }
            return
        }

        let target: ProxyTarget
        let originForm: String
        let url: String
        if let tunnelTarget {
            target = tunnelTarget
            if head.target.hasPrefix("/") || head.target == "*" {
                originForm = head.target
            } else if let absolute = try? parseAbsoluteTarget(head.target) {
                originForm = absolute.originForm
            } else {
                rejectRequest(status: 400, reason: "bad request target in tunnel")
                return
            }
            let defaultPort: UInt16 = scheme == "https" ? 443 : 80
            let authority: String
            if let host = head.fields["Host"], let parsed = try? parseAuthority(Substring(host), defaultPort: defaultPort) {
                authority = parsed.authority(defaultPort: defaultPort)
            } else {
                authority = ProxyTarget(host: interceptedServerName ?? target.host, port: target.port).authority(defaultPort: defaultPort)
            }
            url = "\(scheme)://\(authority)\(stripFragment(originForm == "*" ? "/" : originForm))"
        } else {
            do {
                let absolute = try parseAbsoluteTarget(head.target)
                target = absolute.target
                originForm = absolute.originForm
                url = absolute.url
            } catch {
                rejectRequest(status: 400, reason: describe(error))
                return
            }
        }

        let isUpgrade = head.fields.connectionTokens.contains("upgrade") && head.fields.contains("Upgrade")
        var fields = head.fields.removingHopByHop(keepUpgrade: isUpgrade)
        setHost(&fields, target.authority(defaultPort: 80), keepClientHost: tunnelTarget != nil)
        if isUpgrade { fields.append(name: "Connection", value: "Upgrade") }
        if framing == .chunked { fields.append(name: "Transfer-Encoding", value: "chunked") }
        let forwardedHead: [UInt8]
        do {
            forwardedHead = try HTTP1Serializer.requestHead(method: head.method, target: originForm, version: .http11, fields: fields)
        } catch {
            rejectRequest(status: 400, reason: "bad request: \(error)")
            return
        }

        let recordedFields = head.fields.fields
            .filter { !$0.name.equalsIgnoringASCIICase("Proxy-Authorization") }
            .map { RecordedField(name: $0.name, value: $0.value) }
        var request = RecordedRequest(method: head.method, url: url, httpVersion: head.version.description,
                                      fields: recordedFields, headSize: head.headSize)
        if case .contentLength(let length) = framing {
            request.body.reserve(expected: length, cap: configuration.maxRecordedBodyBytes)
        }
        let flow = Flow(id: flowIDs.make(), clientAddress: clientAddress, request: request,
                        instants: FlowInstants(requestStart: now))
        exchange = HTTP1Exchange(flow: flow, target: target, method: head.method, requestFraming: framing,
                                 forwardedHead: forwardedHead, clientVersion: head.version,
                                 clientKeepAlive: head.keepAlive, isUpgradeRequest: isUpgrade,
                                 lastUpstreamActivity: now)

        if pendingUpstreamFailure != nil {
            failPendingUpstream()
            return
        }
        switch upstreams.reuse(for: target) {
        case .ready:
            sendRequestHead()
        case .handshaking:
            break // the head goes out when the upstream TLS handshake completes
        case .none:
            closeUpstream()
            openUpstream(to: target)
        }
    }

    private func openUpstream(to target: ProxyTarget) {
        commands.append(upstreams.open(to: target, at: now))
    }

    /// Closes the upstream connection in use, if any.
    private func closeUpstream() {
        if let command = upstreams.close() { commands.append(command) }
    }

    /// Sends the request head on the (now connected) upstream and starts streaming the body.
    private func sendRequestHead() {
        guard exchange?.headSent == false, upstreams.active?.ready == true else { return }
        // Taken out, not copied: a copy would share the flow's buffers, and the next append to
        // one of them would copy it whole.
        var current = exchange.take()!
        upstreams.assign(&current.flow)
        let upstreamID = upstreams.active!.id
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
        sendUpstream(upstreamID, current.forwardedHead)
        if current.requestDone {
            // Pipelined requests wait in the decoder; the response may already be buffered.
            advanceResponse()
        } else {
            advanceHTTP()
        }
    }

    private func forwardRequestBody(_ bytes: [UInt8]) {
        guard exchange != nil, let upstreamID = upstreams.active?.id else { return }
        // In place: appending to a copy of the exchange would copy the recorded body each time.
        exchange!.flow.request.body.append(bytes, cap: configuration.maxRecordedBodyBytes)
        if exchange!.requestFraming == .chunked {
            var framed: [UInt8] = []
            framed.reserveCapacity(bytes.count + 16)
            HTTP1Serializer.appendChunk(bytes, to: &framed)
            sendUpstream(upstreamID, framed)
        } else {
            sendUpstream(upstreamID, bytes)
        }
    }

    private func finishRequest(trailers: HTTPFields) {
        guard let upstreamID = upstreams.active?.id, var current = exchange.take() else { return }
        if current.requestFraming == .chunked {
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

    // MARK: - HTTP responses

    private func advanceResponse(eofReason: String? = nil) {
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

    private func handleResponseHead(_ head: HTTPResponseHead, framing: HTTPBodyFraming) {
        guard exchange != nil else { return }
        if head.status >= 100 && head.status < 200 && head.status != 101 {
            // Interim responses (100 Continue, 103 Early Hints) go to HTTP/1.1 clients only.
            exchange!.response = .interim
            if exchange!.clientVersion == .http11 {
                let fields = head.fields.removingHopByHop()
                if let bytes = try? HTTP1Serializer.responseHead(version: .http11, status: head.status, reason: head.reason, fields: fields) {
                    sendClient(bytes)
                }
            }
            return
        }
        var current = exchange.take()!
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
            var fields = head.fields.removingHopByHop(keepUpgrade: true)
            fields.append(name: "Connection", value: "Upgrade")
            guard let bytes = try? HTTP1Serializer.responseHead(version: .http11, status: 101, reason: head.reason, fields: fields) else {
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

        var fields = head.fields.removingHopByHop()
        let clientIs11 = current.clientVersion == .http11
        var chunkedToClient = false
        switch framing {
        case .chunked:
            if clientIs11 {
                chunkedToClient = true
                fields.append(name: "Transfer-Encoding", value: "chunked")
            } else {
                current.closeClientAfter = true
            }
        case .untilClose:
            current.closeClientAfter = true
        case .none, .contentLength:
            break
        }
        if !current.requestDone {
            // The upstream answered before the request body was complete: the rest of the body
            // cannot be resynchronised, so this client connection ends with the response.
            current.closeClientAfter = true
        }
        if shuttingDown { current.closeClientAfter = true }
        if current.closeClientAfter || !current.clientKeepAlive {
            fields.append(name: "Connection", value: "close")
        } else if !clientIs11 {
            fields.append(name: "Connection", value: "keep-alive")
        }
        guard let bytes = try? HTTP1Serializer.responseHead(version: .http11, status: head.status, reason: head.reason, fields: fields) else {
            exchange = current
            failExchange("upstream response head cannot be forwarded", respondWith: 502)
            return
        }
        sendClient(bytes)
        current.response = .body(chunked: chunkedToClient)
        exchange = current
    }

    private func forwardResponseBody(_ bytes: [UInt8]) {
        guard exchange != nil else { return }
        // In place: appending to a copy of the exchange would copy the recorded body each time.
        exchange!.flow.response?.body.append(bytes, cap: configuration.maxRecordedBodyBytes)
        if exchange!.chunkedToClient {
            var framed: [UInt8] = []
            framed.reserveCapacity(bytes.count + 16)
            HTTP1Serializer.appendChunk(bytes, to: &framed)
            sendClient(framed)
        } else {
            sendClient(bytes)
        }
    }

    private func finishResponse(trailers: HTTPFields) {
        guard var current = exchange.take() else { return }
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

    private func completeExchange() {
        guard var current = exchange.take() else { return }
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

    /// After a 101: record the upgrade, then relay raw bytes both ways.
    private func switchToUpgradedRelay() {
        guard let upstreamID = upstreams.active?.id, var current = exchange.take() else { return }
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
    private func recordWebSocket(_ bytes: [UInt8], from direction: WebSocketDirection) {
        guard webSocket != nil else { return }
        for record in webSocket!.relayed(bytes, from: direction, at: now) { commands.append(.record(record)) }
    }

    /// Records the WebSocket conversation once, when the session ends.
    private func finishWebSocket() {
        guard var relay = webSocket else { return }
        webSocket = nil
        let (records, event) = relay.finish(at: now, shuttingDown: shuttingDown)
        for record in records { commands.append(.record(record)) }
        log(event)
    }

    /// A reused keep-alive connection that closes before any response byte is retried once on a
    /// fresh connection, as browsers do, when the request had no body to replay.
    private func retryOnFreshConnection() -> Bool {
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

    // MARK: - TLS interception

    /// Bytes to the client, encrypted when the tunnel is intercepted. Encrypted bytes are
    /// gathered until the event is handled (`flushPlaintext`), so a response head and body
    /// become one TLS record and one write instead of several.
    private func sendClient(_ bytes: [UInt8]) {
        if clientTLS != nil {
            clientTLS!.write(bytes)
        } else {
            commands.append(.sendToClient(bytes))
        }
    }

    /// Bytes to an upstream connection, encrypted when it speaks TLS (gathered like the
    /// client's). Bytes for an upstream that has since been closed or replaced go with it, as the
    /// runtime drops queued bytes on close.
    private func sendUpstream(_ upstreamID: UpstreamID, _ bytes: [UInt8]) {
        if upstreams.active?.id == upstreamID, upstreams.active?.tls != nil {
            upstreams.active!.tls!.write(bytes)
        } else {
            commands.append(.sendToUpstream(upstreamID, bytes))
        }
    }

    /// Encrypts the plaintext gathered during this event, as few records as possible. Runs
    /// before the commands are handed out and before anything that ends a direction.
    private func flushPlaintext() {
        if clientTLS?.hasPendingPlaintext == true {
            sendClientCiphertext(clientTLS!.flush())
        }
        if let upstreamID = upstreams.active?.id, upstreams.active?.tls?.hasPendingPlaintext == true {
            sendUpstreamCiphertext(upstreamID, upstreams.active!.tls!.flush())
        }
    }

    private func sendClientCiphertext(_ bytes: [UInt8]) {
        if !bytes.isEmpty { commands.append(.sendToClient(bytes)) }
    }

    private func sendUpstreamCiphertext(_ upstreamID: UpstreamID, _ bytes: [UInt8]) {
        if !bytes.isEmpty { commands.append(.sendToUpstream(upstreamID, bytes)) }
    }

    /// Decrypts client bytes when intercepting (else returns them as they are). Handshake
    /// failures and close_notify are handled here; nil means the session ended.
    private func clientPlaintext(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard clientTLS != nil else { return Array(bytes) }
        let received = clientTLS!.receive(bytes, at: now)
        sendClientCiphertext(received.output)
        if let error = received.failure {
            let host = interceptedServerName ?? tunnelTarget?.host ?? "?"
            if exchange == nil && requestDecoder.isIdle && !clientTLS!.handshakeDone {
                finish(log: .clientTLSFailed(host: host, message: error.message, rejectedCertificate: error.kind == .peerAlert))
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
    private func upstreamPlaintext(_ upstreamID: UpstreamID, _ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard upstreams.active?.id == upstreamID, upstreams.active?.tls != nil else { return Array(bytes) }
        let wasEstablished = upstreams.active!.tls!.handshakeDone
        let received = upstreams.active!.tls!.receive(bytes, at: now)
        sendUpstreamCiphertext(upstreamID, received.output)
        if let error = received.failure {
            let host = interceptedServerName ?? upstreams.active!.target.host
            let reason = wasEstablished
                ? "upstream TLS failed: \(error.message)"
                : "upstream \(error.message) (host \(host))"
            closeUpstream()
            if exchange != nil {
                failExchange(reason, respondWith: 502)
            } else {
                if !wasEstablished { pendingUpstreamFailure = reason }
            }
            return nil
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
    private func startInterception(_ target: ProxyTarget, serverName: String?, interception: TLSInterception) {
        let name = serverName ?? target.host
        do {
            clientTLS = try TLSLayer.server(context: interception.serverContext, fallbackServerName: target.host, at: now)
        } catch {
            finish(log: .cannotIntercept(target, reason: "\(error)"))
            return
        }
        interceptedServerName = name
        scheme = "https"
        mode = .http
        requestDecoder = HTTP1RequestDecoder()
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
    private func startUpstreamTLS() {
        guard let upstreamID = upstreams.active?.id, upstreams.active?.connected == true, upstreams.active?.tls == nil,
              let interception = configuration.interception else { return }
        let name = interceptedServerName ?? upstreams.active!.target.host
        do {
            upstreams.active!.tls = try TLSLayer.client(context: interception.clientContext, serverName: name, at: now)
        } catch {
            closeUpstream()
            pendingUpstreamFailure = "cannot start TLS to \(name): \(error)"
            if exchange != nil { failPendingUpstream() }
            return
        }
        sendUpstreamCiphertext(upstreamID, upstreams.active!.tls!.flush())
    }

    /// Fails the exchange in flight with the upstream failure recorded before it started.
    private func failPendingUpstream() {
        guard let reason = pendingUpstreamFailure else { return }
        pendingUpstreamFailure = nil
        failExchange(reason, respondWith: 502)
    }

    // MARK: - Failures and ending

    /// Records the exchange in flight as failed, answers the client if nothing was sent yet, and
    /// closes both sides.
    private func failExchange(_ reason: String, respondWith status: Int?) {
        guard var current = exchange.take() else {
            finish(log: nil)
            return
        }
        current.flow.error = sanitizedForLog(reason)
        current.flow.instants.end = now
        if current.flow.response != nil && current.flow.instants.responseEnd == nil {
            current.flow.instants.responseEnd = now
        }
        commands.append(.record(.flow(current.flow)))
        if let status, !current.finalHeadForwarded {
            sendClient(errorResponse(status: status, reason: reason, close: true))
        }
        closeUpstream()
        finish(log: .exchangeFailed(current.flow, status: status, reason: reason, cut: current.finalHeadForwarded))
    }

    private func finish(log event: LiveEvent.Kind?) {
        guard !isFinished else { return }
        finishWebSocket()
        flushPlaintext()
        if let event { log(event) }
        closeUpstream()
        mode = .finished
        isFinished = true
        commands.append(.closeClient)
    }

    // MARK: - Helpers

    private func errorResponse(status: Int, reason: String, close: Bool) -> [UInt8] {
        ErrorResponses.plain(status: status, reason: reason, close: close)
    }

    private func log(_ event: LiveEvent.Kind) {
        commands.append(.log(LiveEvent(client: clientAddress, event)))
    }

    private func setHost(_ fields: inout HTTPFields, _ authority: String, keepClientHost: Bool) {
        // Absolute-form wins over Host (RFC 9112 §3.2.2); inside a tunnel the client's Host stands.
        if let index = fields.fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase("Host") }) {
            if !keepClientHost {
                fields.fields[index] = HTTPField(name: fields.fields[index].name, value: authority)
            }
        } else {
            fields.fields.insert(HTTPField(name: "Host", value: authority), at: 0)
        }
    }

}

private func describe(_ error: Error) -> String {
    if case TargetError.invalid(let message) = error { return message }
    return "\(error)"
}

private func stripFragment(_ target: String) -> String {
    guard let hash = target.utf8.firstIndex(of: UInt8(ascii: "#")) else { return target }
    return String(target[..<hash])
}


/// "15 s", "0.5 s": whole seconds without a fraction.
package func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(format1(seconds)) s"
}

/// One decimal place without Foundation.
package func format1(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

extension String {
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) where x != y {
            let lx = x >= 65 && x <= 90 ? x + 32 : x
            let ly = y >= 65 && y <= 90 ? y + 32 : y
            if lx != ly { return false }
        }
        return true
    }
}
