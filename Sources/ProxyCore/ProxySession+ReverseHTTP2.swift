import HTTP1
import Recording

// HTTP/2 on a reverse listener. Over its TLS, a client offering h2 is answered with what the
// upstream picks in ALPN, as in a CONNECT tunnel. A plain listener takes h2c with prior
// knowledge; the upstream is then asked for h2 (ALPN over TLS, prior knowledge over plain
// http), since the client's streams are already HTTP/2. `HTTP2Layer+Reverse` does the streams.
extension ProxySession {
    /// The upstream an HTTP/2 connection to this reverse listener goes to: its only one.
    var reverseHTTP2Upstream: ReverseProxy.Upstream? {
        guard configuration.http2, let reverse, reverse.upstreams.count == 1 else { return nil }
        return reverse.upstreams[0]
    }

    /// The connection's requests go to `upstream`, as `enterReverseTunnel` does per request.
    func enterReverseTunnel(_ upstream: ReverseProxy.Upstream) {
        tunnelTarget = upstream.target
        scheme = upstream.scheme
        interceptedServerName = upstream.target.host
    }

    /// The HTTP/2 layer's view of this reverse listener, or nil when it is not one.
    var reverseRoute: HTTP2Layer.ReverseRoute? {
        reverse.map { HTTP2Layer.ReverseRoute(proxy: $0, caDownloads: configuration.caDownloads) }
    }

    /// h2c with prior knowledge on a plain reverse listener: the layer starts now, and its
    /// upstream bytes wait for the connection (a listener with several upstreams answers each
    /// stream 505 and connects nothing).
    func startReverseHTTP2PriorKnowledge() {
        let upstream = reverseHTTP2Upstream
        if let upstream { enterReverseTunnel(upstream) }
        guard startHTTP2(upstreamReady: false) else { return }
        let bytes = pendingClientBytes
        pendingClientBytes = []
        if let upstream { openUpstream(to: upstream.target) }
        clientPlaintextArrived(bytes)
    }

    /// A reverse listener's h2 upstream connection is connected, or its TLS handshake ended: it
    /// must speak h2, since the client's streams already do.
    func reverseHTTP2UpstreamEstablished() {
        guard let spoken = http2UpstreamProtocol() else { return }
        guard spoken == "h2" else {
            let host = tunnelTarget?.host ?? "the upstream"
            http2UpstreamLost("\(host) does not speak HTTP/2 (ALPN chose \(spoken)); send HTTP/1.1 to the listener, or h2 over its TLS")
            return
        }
        http2?.upstreamReady = true
        pumpHTTP2()
    }

    /// A mark or replay reset asked on an HTTP/2 stream, already answered by the layer.
    func applyReserved(_ answer: ReservedHost.Answer) {
        if let name = answer.mark {
            commands.append(.record(.pageMark(PageMark(name: name, time: now))))
            log(.pageMark(name: name))
        }
        if answer.reset, let replay = configuration.replay {
            replay.reset()
            log(.replayReset(trigger: "http://harrec/reset"))
        }
    }
}
