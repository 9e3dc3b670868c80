import HTTP1
import TextEncodings

/// A proxy every upstream connection goes through (`--upstream-proxy`), as on a company network:
/// an HTTP proxy asked for a CONNECT tunnel, or a SOCKS5 proxy asked for a CONNECT. The session
/// never knows: the runtime opens the tunnel first (`UpstreamProxyHandshake`) and then reports
/// the upstream connected.
public struct UpstreamProxy: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case http
        case socks5
    }

    public var kind: Kind
    public var target: ProxyTarget
    /// Never printed, logged or recorded (`description` leaves them out).
    public var credentials: ProxyCredentials?
    /// Hosts reached directly (`--no-upstream-proxy`, NO_PROXY style): `example.com` and
    /// `.example.com` take the host and its subdomains, `*` takes everything.
    public var exclusions: [String]

    public init(kind: Kind, target: ProxyTarget, credentials: ProxyCredentials? = nil, exclusions: [String] = []) {
        self.kind = kind
        self.target = target
        self.credentials = credentials
        self.exclusions = exclusions.map { $0.lowercased() }
    }

    /// `http://host:port` or `socks5://host:port`, without credentials.
    public var description: String { "\(kind.rawValue)://\(target)" }

    /// Parses `http://[user:pass@]host[:port]` (port 8080 by default; `https://` is not
    /// offered) or `socks5://[user:pass@]host[:port]` (1080).
    public init(parsing text: String, exclusions: [String] = []) throws(TargetError) {
        let scheme = text.prefix { $0 != ":" }.lowercased()
        guard text.dropFirst(scheme.count).hasPrefix("://") else {
            throw .invalid("'\(redactingUserinfo(text))' is not http://host:port or socks5://host:port")
        }
        let kind: Kind
        switch scheme {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default:
            // The scheme is echoed only when it is one (never text that may hold credentials).
            let echoed = !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }
            throw .invalid("an upstream proxy is http://host:port or socks5://host:port" + (echoed ? ", not \(scheme)://" : ""))
        }
        var authority = Substring(text.dropFirst(scheme.count + 3))
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.contains("/") else {
            throw .invalid("give the upstream proxy as \(scheme)://host:port, without a path")
        }
        var credentials: ProxyCredentials?
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            guard let colon = userinfo.firstIndex(of: ":") else {
                throw .invalid("the upstream proxy's credentials are user:pass@")
            }
            credentials = ProxyCredentials(username: percentDecoded(userinfo[..<colon]),
                                           password: percentDecoded(userinfo[userinfo.index(after: colon)...]))
            authority = authority[authority.index(after: at)...]
        }
        let target = try parseAuthority(authority, defaultPort: kind == .http ? 8080 : 1080)
        self.init(kind: kind, target: target, credentials: credentials, exclusions: exclusions)
    }

    /// `Basic ...` for `Proxy-Authorization`, or nil without credentials.
    var basicAuthorization: String? {
        credentials.map { "Basic " + Base64.encode(Array("\($0.username):\($0.password)".utf8)) }
    }

    /// Whether a request on `route` goes to this proxy in absolute form rather than through a
    /// tunnel: plain `http://` to an HTTP proxy, not an upgrade (proxies do not relay those
    /// reliably), not `*`.
    func forwards(_ route: HTTP1Forwarding.Route, isUpgrade: Bool) -> Bool {
        kind == .http && !isUpgrade && route.url.hasPrefix("http://") && route.originForm != "*" && applies(to: route.target.host)
    }

    /// Whether a connection to `host` goes through the proxy.
    public func applies(to host: String) -> Bool {
        let host = host.lowercased()
        return !exclusions.contains { rule in
            if rule == "*" { return true }
            let domain = rule.hasPrefix(".") ? String(rule.dropFirst()) : rule
            return host == domain || host.hasSuffix("." + domain)
        }
    }
}

/// A proxy URL as an error message may show it: anything before an `@` (credentials) hidden.
private func redactingUserinfo(_ text: String) -> String {
    guard let at = text.lastIndex(of: "@") else { return text }
    return "…@" + String(text[text.index(after: at)...])
}

private func percentDecoded(_ text: Substring) -> String {
    let bytes = Array(text.utf8)
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let value = UInt8(String(decoding: bytes[i + 1...i + 2], as: UTF8.self), radix: 16) {
            out.append(value)
            i += 3
        } else {
            out.append(bytes[i])
            i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// The client side of opening a tunnel through an `UpstreamProxy` to `host:port`, as a pure state
/// machine: `start()` gives the first bytes to send, each `receive` what to do next.
public struct UpstreamProxyHandshake: Sendable {
    public enum Step: Equatable, Sendable {
        /// Send these bytes to the proxy, then wait for its answer.
        case send([UInt8])
        case needMoreData
        /// The tunnel is open; bytes that came after the proxy's answer belong to the upstream.
        case established(leftover: [UInt8])
        case failed(UpstreamFailure)
    }

    enum State: Equatable, Sendable {
        case awaitingConnectReply
        case awaitingSOCKSMethod
        case awaitingSOCKSAuthentication
        case awaitingSOCKSReply
        case done
    }

    /// The longest proxy answer head read (a CONNECT reply is a few hundred bytes).
    static let maximumReplyBytes = 16 * 1024

    let proxy: UpstreamProxy
    let host: String
    let port: UInt16
    private(set) var state: State
    private var buffer: [UInt8] = []

    public init(proxy: UpstreamProxy, host: String, port: UInt16) {
        self.proxy = proxy
        self.host = host
        self.port = port
        state = proxy.kind == .http ? .awaitingConnectReply : .awaitingSOCKSMethod
    }

    /// The bytes that open the handshake.
    public func start() -> [UInt8] {
        switch proxy.kind {
        case .http:
            let authority = ProxyTarget(host: host, port: port).description
            var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let authorization = proxy.basicAuthorization { head += "Proxy-Authorization: \(authorization)\r\n" }
            return Array((head + "\r\n").utf8)
        case .socks5:
            return proxy.credentials == nil ? [5, 1, 0] : [5, 2, 0, 2]
        }
    }

    /// Whether bytes received are still waiting after a `.send` step (a proxy that answered
    /// ahead): call `receive([])` again to go on with them.
    public var hasPendingInput: Bool { state != .done && !buffer.isEmpty }

    /// Bytes from the proxy. One step at a time: after `.send`, call again with `[]` while
    /// `hasPendingInput`.
    public mutating func receive(_ bytes: some Collection<UInt8>) -> Step {
        buffer.append(contentsOf: bytes)
        switch state {
        case .awaitingConnectReply: return connectReply()
        case .awaitingSOCKSMethod: return socksMethod()
        case .awaitingSOCKSAuthentication: return socksAuthentication()
        case .awaitingSOCKSReply: return socksReply()
        case .done: return .needMoreData
        }
    }

    /// The proxy closed before the tunnel was open.
    public func closedEarly() -> UpstreamFailure {
        fail("closed the connection before the tunnel was open")
    }

    private func fail(_ why: String) -> UpstreamFailure {
        UpstreamFailure(.other, "upstream proxy \(proxy) \(why) (to \(ProxyTarget(host: host, port: port)))")
    }

    private mutating func finish(_ step: Step) -> Step {
        state = .done
        return step
    }

    // MARK: HTTP CONNECT

    private mutating func connectReply() -> Step {
        guard let end = headEnd(buffer) else {
            return buffer.count > Self.maximumReplyBytes ? finish(.failed(fail("sent a reply head over 16 KiB"))) : .needMoreData
        }
        // The status line only, cut at the first CR or LF byte ("\r\n" is one Character in a String).
        let lineEnd = buffer[..<end].firstIndex { $0 == 13 || $0 == 10 } ?? end
        let statusLine = String(decoding: buffer[..<lineEnd], as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            return finish(.failed(fail("sent no HTTP reply to CONNECT")))
        }
        guard (200..<300).contains(status) else {
            let reason = parts.count > 2 ? " \(sanitizedControlCharacters(String(parts[2].prefix(100))))" : ""
            let hint = status == 407 ? (proxy.credentials == nil ? "; it needs credentials" : "; it refused the credentials") : ""
            return finish(.failed(fail("refused the CONNECT: \(status)\(reason)\(hint)")))
        }
        return finish(.established(leftover: Array(buffer[(end + 4)...])))
    }

    private func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }

    // MARK: SOCKS5 (RFC 1928, RFC 1929)

    private mutating func socksMethod() -> Step {
        guard buffer.count >= 2 else { return .needMoreData }
        let (version, method) = (buffer[0], buffer[1])
        buffer.removeFirst(2)
        guard version == 5 else { return finish(.failed(fail("is not a SOCKS5 server"))) }
        switch method {
        case 0:
            state = .awaitingSOCKSReply
            return .send(connectRequest())
        case 2 where proxy.credentials != nil:
            state = .awaitingSOCKSAuthentication
            let user = Array(proxy.credentials!.username.utf8.prefix(255))
            let password = Array(proxy.credentials!.password.utf8.prefix(255))
            return .send([1, UInt8(user.count)] + user + [UInt8(password.count)] + password)
        default:
            return finish(.failed(fail(proxy.credentials == nil ? "needs credentials" : "accepts none of the offered methods")))
        }
    }

    private mutating func socksAuthentication() -> Step {
        guard buffer.count >= 2 else { return .needMoreData }
        let status = buffer[1]
        buffer.removeFirst(2)
        guard status == 0 else { return finish(.failed(fail("refused the credentials"))) }
        state = .awaitingSOCKSReply
        return .send(connectRequest())
    }

    private func connectRequest() -> [UInt8] {
        var request: [UInt8] = [5, 1, 0]
        if let v4 = ipv4Bytes(host) {
            request += [1] + v4
        } else {
            let name = Array(host.utf8.prefix(255))
            request += [3, UInt8(name.count)] + name
        }
        return request + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }

    private mutating func socksReply() -> Step {
        guard buffer.count >= 5 else { return .needMoreData }
        let addressLength: Int
        switch buffer[3] {
        case 1: addressLength = 4
        case 4: addressLength = 16
        case 3: addressLength = 1 + Int(buffer[4])
        default: return finish(.failed(fail("sent a malformed SOCKS5 reply")))
        }
        let total = 4 + addressLength + 2
        guard buffer.count >= total else { return .needMoreData }
        guard buffer[1] == 0 else { return finish(.failed(fail("refused the connection: \(Self.socksReplyText(buffer[1]))"))) }
        return finish(.established(leftover: Array(buffer[total...])))
    }

    /// RFC 1928 §6's reply codes, worded.
    static func socksReplyText(_ code: UInt8) -> String {
        switch code {
        case 1: return "general SOCKS server failure"
        case 2: return "connection not allowed by ruleset"
        case 3: return "network unreachable"
        case 4: return "host unreachable"
        case 5: return "connection refused"
        case 6: return "TTL expired"
        case 7: return "command not supported"
        case 8: return "address type not supported"
        default: return "reply code \(code)"
        }
    }
}

/// The four bytes of a dotted IPv4 literal, or nil.
private func ipv4Bytes(_ host: String) -> [UInt8]? {
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
        guard !part.isEmpty, part.count <= 3, let value = UInt8(part) else { return nil }
        bytes.append(value)
    }
    return bytes
}
