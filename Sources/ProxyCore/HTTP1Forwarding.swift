import HTTP1
import Recording

/// The proxy rules for one HTTP/1.1 exchange, as pure functions: where a request goes and the
/// URL it is recorded under, the head sent upstream, and the response head sent back to the
/// client (hop-by-hop fields removed per RFC 9110 §7.6.1, framing per RFC 9112 §6-7).
/// `ProxySession` decides when; this decides what.
enum HTTP1Forwarding {
    /// The tunnel a request arrived in (CONNECT or SOCKS5), when it did.
    struct Tunnel: Equatable {
        var target: ProxyTarget
        /// "https" when intercepted, else "http".
        var scheme: String
        /// The name the client asked for (SNI), used for the URL when the request has no Host.
        var serverName: String?
        var addressed: Addressee = .upstream
    }

    /// Whom the client addressed, which says whose Host names the upstream.
    enum Addressee: Equatable {
        /// The upstream (CONNECT, SOCKS5): the client's Host stands, in the URL and upstream.
        case upstream
        /// harrec (a reverse listener): URL and Host are the upstream's.
        case listener
    }

    /// Where a request goes.
    struct Route: Equatable {
        var target: ProxyTarget
        /// The request target sent upstream (origin-form, or `*`).
        var originForm: String
        /// The URL recorded for it.
        var url: String
        /// The Host sent upstream in place of the client's (a reverse listener's upstream).
        var hostOverride: String? = nil
    }

    /// Outside a tunnel the request target must be absolute-form (`http://host/path`); inside
    /// one, origin-form or absolute, to the tunnel's target, with the URL's authority from Host.
    /// Throws the reason for a 400.
    static func route(_ head: HTTPRequestHead, in tunnel: Tunnel?) throws(TargetError) -> Route {
        guard let tunnel else {
            let absolute = try parseAbsoluteTarget(head.target)
            return Route(target: absolute.target, originForm: absolute.originForm, url: absolute.url)
        }
        let originForm: String
        if head.target.hasPrefix("/") || head.target == "*" {
            originForm = head.target
        } else if let absolute = try? parseAbsoluteTarget(head.target, schemes: ["http", "https", "ws", "wss"]) {
            originForm = absolute.originForm
        } else {
            throw .invalid("bad request target in tunnel")
        }
        let defaultPort: UInt16 = tunnel.scheme == "https" ? 443 : 80
        let authority: String
        if tunnel.addressed == .listener {
            authority = tunnel.target.authority(defaultPort: defaultPort)
        } else if let host = head.fields["Host"], let parsed = try? parseAuthority(Substring(host), defaultPort: defaultPort) {
            authority = parsed.authority(defaultPort: defaultPort)
        } else {
            authority = ProxyTarget(host: tunnel.serverName ?? tunnel.target.host, port: tunnel.target.port)
                .authority(defaultPort: defaultPort)
        }
        let path = stripFragment(originForm == "*" ? "/" : originForm)
        return Route(target: tunnel.target, originForm: originForm, url: "\(tunnel.scheme)://\(authority)\(path)",
                     hostOverride: tunnel.addressed == .listener ? authority : nil)
    }

    /// Whether the request asks to switch protocols (WebSocket): `Connection: upgrade` and an
    /// `Upgrade` field. Only then are those two forwarded. An upgrade to `h2c` alone is not
    /// passed on: it is answered in HTTP/1.1 (the upstream would switch a connection harrec
    /// records as HTTP/1), with Upgrade and HTTP2-Settings removed (RFC 9113 §3.1 leaves the
    /// upgrade optional for the server).
    static func isUpgrade(_ head: HTTPRequestHead) -> Bool {
        guard head.fields.connectionTokens.contains("upgrade"), let upgrade = head.fields["Upgrade"] else { return false }
        return upgrade.split(separator: ",").contains { $0.filter { $0 != " " && $0 != "\t" }.lowercased() != "h2c" }
    }

    /// The head sent upstream: hop-by-hop fields removed (Upgrade kept for an upgrade), Host set
    /// to the target (a tunnel's client Host stands), and the framing harrec forwards the body
    /// with. Throws when a field cannot be serialized.
    /// `viaProxy`: the request goes to this HTTP upstream proxy, in absolute form with its
    /// credentials.
    static func requestHead(_ head: HTTPRequestHead, framing: HTTPBodyFraming, route: Route, inTunnel: Bool,
                            viaProxy: UpstreamProxy? = nil) throws -> [UInt8] {
        let upgrade = isUpgrade(head)
        var fields = head.fields.removingHopByHop(keepUpgrade: upgrade)
        if let host = route.hostOverride {
            setHost(&fields, host, keepClientHost: false)
        } else {
            setHost(&fields, route.target.authority(defaultPort: 80), keepClientHost: inTunnel)
        }
        if upgrade { fields.append(name: "Connection", value: "Upgrade") }
        if framing == .chunked { fields.append(name: "Transfer-Encoding", value: "chunked") }
        if let viaProxy {
            if let authorization = viaProxy.basicAuthorization { fields.append(name: "Proxy-Authorization", value: authorization) }
            return try HTTP1Serializer.requestHead(method: head.method, target: route.url, version: .http11, fields: fields)
        }
        return try HTTP1Serializer.requestHead(method: head.method, target: route.originForm, version: .http11, fields: fields)
    }

    /// An HTTP/1 request as an HTTP/2 header list (RFC 9113 §8.3.1): pseudo-headers first, Host
    /// carried as `:authority`, no connection-specific fields (`TE: trailers` is the one TE kept).
    static func http2RequestFields(_ head: HTTPRequestHead, originForm: String, scheme: String, authority: String) -> [HTTPField] {
        var fields = [HTTPField(name: ":method", value: head.method), HTTPField(name: ":scheme", value: scheme),
                      HTTPField(name: ":authority", value: head.fields["Host"] ?? authority),
                      HTTPField(name: ":path", value: originForm)]
        for field in head.fields.removingHopByHop() where !field.name.equalsIgnoringASCIICase("Host") {
            fields.append(field)
        }
        if head.fields.values("TE").contains(where: { $0.lowercased().contains("trailers") }) {
            fields.append(HTTPField(name: "te", value: "trailers"))
        }
        return fields
    }

    /// RFC 9110 §6.4.1 and §8.6: 1xx, 204 and 304 responses carry no content and no
    /// Content-Length, whatever the protocol.
    static func hasNoContent(status: Int) -> Bool {
        (100..<200).contains(status) || status == 204 || status == 304
    }

    /// The usual reason phrase of a status (HTTP/2 has none; HTTP/1.1 clients get this one).
    static func reasonPhrase(_ status: Int, fallback: String? = nil) -> String {
        switch status {
        case 100: return "Continue"
        case 103: return "Early Hints"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return fallback ?? "Status \(status)"
        }
    }

    /// The request fields as recorded: as received, without the proxy's own credentials, and
    /// with the Host sent upstream when harrec replaced the client's (`host`).
    static func recordedFields(_ fields: HTTPFields, host: String? = nil) -> [RecordedField] {
        fields.fields
            .filter { !$0.name.equalsIgnoringASCIICase("Proxy-Authorization") }
            .map { RecordedField(name: $0.name, value: host != nil && $0.name.equalsIgnoringASCIICase("Host") ? host! : $0.value) }
    }

    /// What the client gets for a final (non-1xx) response head, and how the exchange continues.
    struct ResponsePlan: Equatable {
        var head: [UInt8]
        /// The body is re-chunked toward the client (an HTTP/1.1 client of a chunked response).
        var chunkedToClient: Bool
        /// The client connection closes after this response.
        var closeClient: Bool
    }

    /// The client-side situation a response head is forwarded into.
    struct ClientState: Equatable {
        var version: HTTPVersion
        var keepAlive: Bool
        /// The whole request body was forwarded.
        var requestDone: Bool
        /// harrec is stopping (no further requests on this connection).
        var shuttingDown: Bool
    }

    /// A final response head toward the client. A chunked body goes to an HTTP/1.0 client
    /// delimited by close; a body read until close, an unfinished request body (the rest cannot be
    /// resynchronized), a client without keep-alive and harrec stopping all close the connection
    /// after it. Throws when a field cannot be serialized.
    static func responseHead(_ head: HTTPResponseHead, framing: HTTPBodyFraming, client: ClientState) throws -> ResponsePlan {
        var fields = head.fields.removingHopByHop()
        let clientIs11 = client.version == .http11
        var chunkedToClient = false
        var closeClient = !client.requestDone || client.shuttingDown
        switch framing {
        case .chunked:
            if clientIs11 {
                chunkedToClient = true
                fields.append(name: "Transfer-Encoding", value: "chunked")
            } else {
                closeClient = true
            }
        case .untilClose:
            closeClient = true
        case .none, .contentLength:
            break
        }
        if closeClient || !client.keepAlive {
            fields.append(name: "Connection", value: "close")
        } else if !clientIs11 {
            fields.append(name: "Connection", value: "keep-alive")
        }
        let bytes = try HTTP1Serializer.responseHead(version: .http11, status: head.status, reason: head.reason, fields: fields)
        return ResponsePlan(head: bytes, chunkedToClient: chunkedToClient, closeClient: closeClient)
    }

    /// An interim response (100 Continue, 103 Early Hints) for an HTTP/1.1 client; nil for an
    /// HTTP/1.0 client, which must not get one (RFC 9110 §15.2), or an unforwardable head.
    static func interimHead(_ head: HTTPResponseHead, clientVersion: HTTPVersion) -> [UInt8]? {
        guard clientVersion == .http11 else { return nil }
        return try? HTTP1Serializer.responseHead(version: .http11, status: head.status, reason: head.reason,
                                                 fields: head.fields.removingHopByHop())
    }

    /// A 101 toward the client: Upgrade and `Connection: Upgrade` kept. Throws when a field
    /// cannot be serialized.
    static func switchingProtocolsHead(_ head: HTTPResponseHead) throws -> [UInt8] {
        var fields = head.fields.removingHopByHop(keepUpgrade: true)
        fields.append(name: "Connection", value: "Upgrade")
        return try HTTP1Serializer.responseHead(version: .http11, status: 101, reason: head.reason, fields: fields)
    }

    /// Absolute-form wins over Host (RFC 9112 §3.2.2); inside a tunnel the client's Host stands.
    private static func setHost(_ fields: inout HTTPFields, _ authority: String, keepClientHost: Bool) {
        if let index = fields.fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase("Host") }) {
            if !keepClientHost {
                fields.fields[index] = HTTPField(name: fields.fields[index].name, value: authority)
            }
        } else {
            fields.fields.insert(HTTPField(name: "Host", value: authority), at: 0)
        }
    }

    private static func stripFragment(_ target: String) -> String {
        guard let hash = target.utf8.firstIndex(of: UInt8(ascii: "#")) else { return target }
        return String(target[..<hash])
    }
}
