import Codecs
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
            return "\(request(flow)) \(status) \(bodySize(flow.response)) \(duration(elapsed(flow)))"
        case .exchangeFailed(let flow, let status, let reason, let cut):
            // The line says what the client saw: a response it was already receiving was cut (the
            // 502/504 that would describe the failure never reached it).
            if cut, let response = flow.response {
                return "\(request(flow)) \(response.status) \(bodySize(response)) \(duration(elapsed(flow))) cut: \(reason)"
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
        case .pageMark(let name):
            return "==================== scenario: \(name) ===================="
        case .replayed(let method, let url, let status, let label):
            guard let status else { return "\(method) \(url) closed (a recorded failure, item \(label))" }
            return "\(method) \(url) \(status) replayed (item \(label))"
        case .replayUnmatched(let method, let url, let diagnosis):
            // The diagnosis' lines after the first: nearest candidates and what differed.
            let detail = diagnosis.split(separator: "\n").dropFirst().prefix(4).joined(separator: " | ")
            return "\(method) \(url) 599 no recorded response" + (detail.isEmpty ? "" : ": \(detail)")
        case .replayDivergence(let url, let detail):
            return "websocket \(url) diverges from the recording: \(detail)"
        case .replayForwarded(let method, let url):
            return "\(method) \(url) no recorded response: forwarded (--passthrough)"
        case .replayReset(let trigger):
            return "-------------------- replay queues restarted (\(trigger)) --------------------"
        case .replayBodyLost(let url, let label, let sent, let count):
            return "\(url) cut after \(sent) of \(count) bytes: the recorded body of item \(label) could not be read again from the HAR (changed in place?)"
        }
    }

    private static func request(_ flow: Flow) -> String { "\(flow.request.method) \(flow.request.url)" }

    private static func elapsed(_ flow: Flow) -> Double {
        (flow.instants.end ?? flow.instants.requestStart) - flow.instants.requestStart
    }

    /// The body's size on the wire, and its decoded size beside it when a Content-Encoding makes
    /// them differ: `1.1kB (18.8kB decoded)`.
    static func bodySize(_ response: RecordedResponse?) -> String {
        guard let response else { return size(0) }
        let wire = size(response.body.wireSize)
        guard let decoded = decodedSize(response), decoded != response.body.wireSize else { return wire }
        return "\(wire) (\(size(decoded)) decoded)"
    }

    /// Bodies up to this size on the wire are decoded to learn their decoded size: the line is
    /// worded on the event loop, and decoding 1 MiB costs a few milliseconds at most.
    static let maximumDecodedForLog = 1 << 20
    /// The largest decoded size a line reports (the same guard against decompression bombs the
    /// export uses).
    static let decodedLimit = 64 << 20

    /// The decoded size of a complete, encoded body, or nil when it has no (known) coding, was
    /// cut or truncated, or cannot be learned cheaply. gzip states it in its trailer (ISIZE, the
    /// size modulo 2^32), so a large gzip body costs nothing.
    static func decodedSize(_ response: RecordedResponse) -> Int? {
        guard let field = response.fields.first(where: { $0.name.lowercased() == "content-encoding" }),
              let codings = parseContentEncoding(field.value), codings.contains(where: { $0 != .identity }),
              !response.body.isTruncated, !response.body.bytes.isEmpty else { return nil }
        let bytes = response.body.bytes
        // A body that went to the journal in parts keeps only its end here: not decodable, but
        // gzip's trailer is in it.
        if response.body.isWhole && bytes.count <= maximumDecodedForLog {
            return (try? ContentDecoder.decode(bytes, codings: codings, limit: decodedLimit))?.count
        }
        guard codings == [.gzip], bytes.count >= 4, response.body.streamed + bytes.count >= 18 else { return nil }
        let n = bytes.count
        return Int(bytes[n - 4]) | Int(bytes[n - 3]) << 8 | Int(bytes[n - 2]) << 16 | Int(bytes[n - 1]) << 24
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
