import ProxyCore
import Recording

/// The live log's wording: one line per `LiveEvent`. The session reports events as data; this is
/// the one place that turns them into text (`LogOutput` sanitizes it again before printing).
enum LiveLog {
    static func line(_ event: LiveEvent) -> String {
        "\(event.client) " + text(event.kind)
    }

    private static func text(_ kind: LiveEvent.Kind) -> String {
        switch kind {
        case .exchange(let flow):
            let status = flow.response.map { String($0.status) } ?? "-"
            return "\(request(flow)) \(status) \(size(flow.response?.body.wireSize ?? 0)) \(duration(elapsed(flow)))"
        case .exchangeFailed(let flow, let status, let reason, let cut):
            // The line says what the client saw: a response it was already receiving was cut (the
            // 502/504 that would describe the failure never reached it).
            if cut, let response = flow.response {
                return "\(request(flow)) \(response.status) \(size(response.body.wireSize)) \(duration(elapsed(flow))) cut: \(reason)"
            }
            if cut { return "\(request(flow)) cut: \(reason)" }
            return "\(request(flow)) \(status.map(String.init) ?? "-") error: \(reason)"
        case .tunnel(let target):
            return "tunnel \(target)"
        case .tunnelFailed(let target, let reason):
            return "tunnel to \(target) failed: \(reason)"
        case .tunnelIdle(let seconds):
            return "tunnel closed after \(formatSeconds(seconds)) idle"
        case .handshakeTimeout(let seconds):
            return "closed: no complete proxy handshake within \(formatSeconds(seconds))"
        case .socksRefused(let reason):
            return "SOCKS5 refused: \(reason)"
        case .rejected(let status, let reason):
            return "\(status) \(reason)"
        case .proxyAuthenticationRequired(let method):
            return "\(method) 407 proxy authentication required"
        case .webSocketOpened(let flow):
            return "\(request(flow)) 101 websocket"
        case .webSocketEnded(let flow, let stillOpen, let sent, let received):
            return "websocket \(flow.request.url) \(stillOpen ? "still open at shutdown" : "closed"): \(sent) sent, \(received) received"
        case .clientAbandonedTLS(let host):
            return "the client closed the TLS handshake for \(host) before completing it; if it does not trust harrec's CA, install it: harrec ca show"
        case .clientTLSFailed(let host, let message, let rejectedCertificate):
            if rejectedCertificate {
                return "the client rejected harrec's certificate for \(host) (\(message)); install the CA: harrec ca show"
            }
            return "TLS handshake with the client for \(host) failed: \(message); if the client does not trust harrec's CA, install it: harrec ca show"
        case .cannotIntercept(let target, let reason):
            return "cannot intercept \(target): \(reason)"
        }
    }

    private static func request(_ flow: Flow) -> String { "\(flow.request.method) \(flow.request.url)" }

    private static func elapsed(_ flow: Flow) -> Double {
        (flow.instants.end ?? flow.instants.requestStart) - flow.instants.requestStart
    }

    static func size(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes)B" }
        if bytes < 1024 * 1024 { return format1(Double(bytes) / 1024) + "kB" }
        return format1(Double(bytes) / (1024 * 1024)) + "MB"
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 1 ? format1(seconds * 1000) + "ms" : format1(seconds) + "s"
    }
}
