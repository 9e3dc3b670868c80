import HTTP1
import Recording

/// What the recording keeps of requests harrec answers itself (400, 407, 408) and of tunnels it
/// cannot open: an entry marked `refused`, with the reason as its error and the response the
/// client received, so that nothing a client sent through the proxy is missing from the HAR.
enum Refusals {
    /// Longest request line read back from a head that did not parse (a bigger one is cut).
    static let maximumRequestLine = 8 * 1024

    /// The request as recorded, from a head that parsed: its fields minus the proxy's
    /// credentials, and a URL as close to what the client meant as the target allows.
    static func request(_ head: HTTPRequestHead, tunnel: HTTP1Forwarding.Tunnel?) -> RecordedRequest {
        var url = url(target: head.target, host: head.fields["Host"], tunnel: tunnel)
        if head.method == "CONNECT", let target = try? parseAuthority(Substring(head.target), defaultPort: nil) {
            // A CONNECT's URL is written as every tunnel entry's is (`https://host:443/`).
            url = tunnelRequest(target, viaSOCKS: false).url
        }
        return RecordedRequest(method: head.method, url: url, httpVersion: head.version.description,
                               fields: HTTP1Forwarding.recordedFields(head.fields), headSize: head.headSize)
    }

    /// The request as recorded, from bytes whose head did not parse (or never completed): the
    /// request line read leniently when it is there, else method `-` and an unknown URL.
    static func request(unparsed bytes: [UInt8], tunnel: HTTP1Forwarding.Tunnel?) -> RecordedRequest {
        let line = bytes.prefix(maximumRequestLine).split(separator: UInt8(ascii: "\n"), maxSplits: 1,
                                                            omittingEmptySubsequences: false).first ?? []
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        var method = "-", target = "", version = "HTTP/1.1"
        if parts.count >= 2, parts[0].count <= 32, parts[0].allSatisfy(isTokenChar) {
            method = String(decoding: parts[0], as: UTF8.self)
            target = sanitizedControlCharacters(String(decoding: parts[1].prefix(2048), as: UTF8.self))
            if parts.count >= 3 {
                let text = String(decoding: parts[2].filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
                if text == "HTTP/1.0" || text == "HTTP/1.1" { version = text }
            }
        }
        return RecordedRequest(method: method, url: url(target: target, host: nil, tunnel: tunnel),
                               httpVersion: version, fields: [], headSize: bytes.count)
    }

    /// A tunnel request (CONNECT, or SOCKS5's CONNECT command). HAR URLs are absolute, so the
    /// target is written `https://host:443/` for port 443 or a tunnel known to carry TLS, and
    /// `http://host:port/` otherwise.
    static func tunnelRequest(_ target: ProxyTarget, viaSOCKS: Bool, carriesTLS: Bool = false) -> RecordedRequest {
        let scheme = target.port == 443 || carriesTLS ? "https" : "http"
        return RecordedRequest(method: "CONNECT", url: "\(scheme)://\(target.authority(defaultPort: 0))/",
                               httpVersion: viaSOCKS ? "SOCKS5" : "HTTP/1.1", fields: [], headSize: 0)
    }

    /// The refused flow: `request`, what the client received (`response`, nil when it got no
    /// HTTP response), and why.
    static func flow(id: UInt64, clientAddress: String, request: RecordedRequest, response: RecordedResponse?,
                     reason: String, startedAt: Double, endedAt: Double) -> Flow {
        var flow = Flow(id: id, clientAddress: clientAddress, request: request, instants: FlowInstants(requestStart: startedAt))
        flow.response = response
        flow.error = sanitizedForLog(reason)
        flow.refused = true
        flow.instants.end = endedAt
        return flow
    }

    /// An absolute URL for a target: absolute-form as given (any scheme), origin-form against
    /// the tunnel's or Host's authority, and `http://unknown.invalid/` (RFC 2606) when nothing
    /// says where the request was going.
    static func url(target: String, host: String?, tunnel: HTTP1Forwarding.Tunnel?) -> String {
        if let absolute = try? parseAbsoluteTarget(target, schemes: ["http", "https", "ws", "wss"]) {
            return absolute.url
        }
        let path = target.hasPrefix("/") ? target.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "/" : "/"
        if let tunnel {
            return "\(tunnel.scheme)://\(tunnel.target.authority(defaultPort: tunnel.scheme == "https" ? 443 : 80))\(path)"
        }
        if let host, let authority = try? parseAuthority(Substring(host), defaultPort: 80) {
            return "http://\(authority.authority(defaultPort: 80))\(path)"
        }
        return "http://unknown.invalid\(path)"
    }
}
