import HTTP1
import HTTP2
import Recording
import TLS

// An HTTP/1.1 client of an h2-only upstream (RFC 9113 §8): harrec learns it when the upstream
// refuses the client's http/1.1 offer (TLS alert no_application_protocol, as Go and gRPC servers
// send), reconnects offering h2, and carries each HTTP/1 exchange as one stream. The response
// comes back to the client as HTTP/1.1 (chunked when it has no Content-Length).
extension ProxySession {
    /// Whether an upstream TLS failure means "speak h2 to me": the alert a server sends when none
    /// of the offered protocols is one it speaks.
    static func refusedALPN(_ error: TLSError) -> Bool {
        error.message.lowercased().contains("no application protocol")
    }

    /// After that refusal: the next upstream connection of this session offers only h2, and an
    /// exchange waiting for the upstream gets a fresh connection now. False when it does not
    /// apply (HTTP/2 off, already tried, or not an HTTP/1 session).
    func retryUpstreamWithHTTP2(after error: TLSError) -> Bool {
        guard configuration.http2, !upstreamRequiresHTTP2, Self.refusedALPN(error), case .http = mode else { return false }
        upstreamRequiresHTTP2 = true
        closeUpstream()
        if let current = exchange, !current.headSent {
            openUpstream(to: current.target)
        }
        return true
    }

    /// The "response" to an HTTP/1 request is an HTTP/2 SETTINGS or GOAWAY frame: the server speaks
    /// only h2 although it accepted the handshake without ALPN (gRPC servers do this). This and
    /// later connections speak h2; a bodiless request is sent again on a fresh connection, one
    /// whose body already went out gets a 502 saying why. False when the bytes are HTTP/1.
    func switchToHTTP2UpstreamIfItSpeaksIt(_ plaintext: [UInt8]) -> Bool {
        // The frame test first: it is the cheap one, and this runs on every response's first bytes.
        guard NextLayer.isHTTP2ServerFrame(plaintext), configuration.http2, !upstreamRequiresHTTP2,
              let current = exchange else { return false }
        upstreamRequiresHTTP2 = true
        // A replay's passthrough request holds its whole body (`gatheredBody`), so it can go again too.
        guard !current.retried, current.requestFraming == .none || current.gatheredBody != nil, current.endConsumed else {
            failExchange("the upstream speaks only HTTP/2 (its next request will use it)", respondWith: 502)
            return true
        }
        closeUpstream()
        current.retried = true
        current.request = .awaitingUpstream(bodyComplete: true)
        openUpstream(to: current.target)
        return true
    }

    /// The upstream TLS handshake chose h2 for an HTTP/1 client: HTTP/2 framing on that connection.
    func startUpstreamHTTP2() {
        guard let connection = upstreams.active, connection.http2 == nil else { return }
        do {
            connection.http2 = try HTTP2Connection(role: .client)
        } catch {
            closeUpstream()
            pendingUpstreamFailure = "cannot start HTTP/2 to the upstream: \(error.message)"
            return
        }
        flushUpstreamHTTP2()
    }

    /// Request body bytes queued for an h2 upstream whose window is closed; past this the
    /// session stops pulling the client's body (and so stops reading the client).
    static let maxQueuedHTTP2RequestBytes = 256 * 1024

    var upstreamHTTP2Backlogged: Bool {
        guard let connection = upstreams.active, let h2 = connection.http2, let stream = connection.http2Stream else { return false }
        return h2.bufferedOutgoingBytes(on: stream) >= Self.maxQueuedHTTP2RequestBytes
    }

    /// Sends what the upstream's HTTP/2 connection has queued.
    func flushUpstreamHTTP2() {
        guard let upstreamID = upstreams.activeID, let h2 = upstreams.active?.http2 else { return }
        let bytes = h2.takeOutput()
        if !bytes.isEmpty { sendUpstream(upstreamID, bytes) }
    }

    /// The request head as a stream on the h2 upstream; false when it cannot be sent (the
    /// exchange has then failed).
    func sendHTTP2RequestHead(_ current: HTTP1Exchange, on h2: HTTP2Connection) -> Bool {
        let fields = HTTP1Forwarding.http2RequestFields(current.requestHead, originForm: current.originForm, scheme: scheme,
                                                        authority: current.target.authority(defaultPort: 443))
        do {
            upstreams.active?.http2Stream = try h2.sendRequest(fields, endStream: current.requestFraming == .none)
        } catch {
            exchange = current
            failExchange("cannot send the request over HTTP/2: \(error.message)", respondWith: 502)
            return false
        }
        return true
    }

    /// Upstream plaintext on an HTTP/2 connection of an HTTP/1 session.
    func upstreamHTTP2Received(_ plaintext: [UInt8]) {
        guard let h2 = upstreams.active?.http2 else { return }
        do {
            try plaintext.withUnsafeBytes { try h2.receive($0) }
        } catch {
            flushUpstreamHTTP2()
            if exchange != nil {
                failExchange("upstream \(error)", respondWith: 502)
            } else {
                closeUpstream()
            }
            return
        }
        advanceHTTP2Response()
    }

    /// Turns the upstream stream's events into the HTTP/1 response path's steps.
    func advanceHTTP2Response() {
        while let connection = upstreams.active, let h2 = connection.http2, let event = h2.nextEvent() {
            let stream = connection.http2Stream
            switch event {
            case .headers(let id, let fields, let endStream) where id == stream && exchange != nil:
                exchange!.lastUpstreamActivity = now
                let (head, framing) = Self.http1ResponseHead(fields, endStream: endStream)
                if head.status >= 100 && head.status < 200 {
                    if let bytes = HTTP1Forwarding.interimHead(head, clientVersion: exchange!.clientVersion) { sendClient(bytes) }
                    continue
                }
                handleResponseHead(head, framing: framing)
                exchange?.flow.response?.httpVersion = HTTP2Layer.httpVersion
                exchange?.flow.response?.headSize = -1
            case .data(let id, let bytes):
                h2.consumed(bytes.count, on: id)
                guard id == stream, exchange != nil else { continue }
                exchange!.lastUpstreamActivity = now
                forwardResponseBody(bytes)
            case .trailers(let id, let fields) where id == stream:
                connection.http2Trailers = fields
            case .endStream(let id) where id == stream && exchange?.finalHeadForwarded == true:
                let trailers = HTTPFields(connection.http2Trailers ?? [])
                connection.http2Trailers = nil
                connection.http2Stream = nil
                finishResponse(trailers: trailers)
            case .reset(let id, let code) where id == stream && exchange != nil:
                connection.http2Stream = nil
                failExchange("upstream reset the stream (\(HTTP2ErrorCode.name(code)))", respondWith: 502)
            case .closed(let id, let code) where id == stream && code != 0 && exchange != nil:
                connection.http2Stream = nil
                failExchange("upstream closed the stream (\(HTTP2ErrorCode.name(code)))", respondWith: 502)
            case .goAway:
                // No new streams on this connection: the exchange in flight finishes, the next
                // one gets a fresh connection.
                connection.http2GoneAway = true
                exchange?.upstreamReusable = false
                if exchange == nil { closeUpstream() }
            default:
                break
            }
        }
        flushUpstreamHTTP2()
        // A WINDOW_UPDATE may have made room for more of the request body.
        if exchange?.request == .sendingBody { advanceHTTP() }
    }

    /// An HTTP/1 response head for an HTTP/2 one: the status with its usual phrase, the fields
    /// without pseudo-headers, and the framing (chunked toward the client when no length is known).
    static func http1ResponseHead(_ fields: [HTTPField], endStream: Bool) -> (HTTPResponseHead, HTTPBodyFraming) {
        let status = fields.first(where: { $0.name == ":status" }).flatMap { Int($0.value) } ?? 502
        var regular = HTTPFields(fields.filter { !$0.name.hasPrefix(":") })
        let bodiless = HTTP1Forwarding.hasNoContent(status: status)
        if endStream && !bodiless && !regular.contains("content-length") {
            // An HTTP/1.1 client needs a length to know the (empty) body ended.
            regular.append(name: "content-length", value: "0")
        }
        let head = HTTPResponseHead(version: .http11, status: status, reason: HTTP1Forwarding.reasonPhrase(status), fields: regular)
        if endStream || bodiless { return (head, .contentLength(0)) }
        if let length = regular["content-length"].flatMap(UInt64.init) { return (head, .contentLength(length)) }
        return (head, .chunked)
    }
}
