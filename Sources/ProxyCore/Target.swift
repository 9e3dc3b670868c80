import HTTP1

/// A host and port the proxy connects to.
public struct ProxyTarget: Hashable, Sendable, CustomStringConvertible {
    /// Host name or IP literal, without brackets, lowercased.
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host.lowercased()
        self.port = port
    }

    /// `host:port`, with brackets around IPv6 literals.
    public var description: String { "\(authorityHost):\(port)" }

    /// The host as it appears in a URL authority.
    public var authorityHost: String { host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host }

    /// The authority for a URL or Host header: the port only when it is not the scheme's default.
    public func authority(defaultPort: UInt16) -> String {
        port == defaultPort ? authorityHost : "\(authorityHost):\(port)"
    }
}

/// A parsed absolute-form request target: `http://host[:port]/path?query`.
struct AbsoluteTarget: Equatable {
    var target: ProxyTarget
    /// Origin-form for the upstream: path and query, at least "/".
    var originForm: String
    /// The URL as recorded: scheme and host lowercased, fragment removed.
    var url: String
}

/// Why a request target, authority or upstream URL is not usable.
public enum TargetError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalid(String)

    public var description: String {
        switch self {
        case .invalid(let reason): return reason
        }
    }
}

/// Characters allowed in a reg-name host (RFC 3986 unreserved + sub-delims, no percent-encoding:
/// DNS names never need it, and refusing it keeps odd bytes out of logs and DNS).
private func isHostByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
         UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
        return true
    default:
        return false
    }
}

/// Parses `host[:port]` or `[v6]:port` (authority without userinfo). Works on UTF-8 bytes: this
/// runs for every proxied request, and Character-level String processing is an order of
/// magnitude slower.
func parseAuthority(_ authority: Substring, defaultPort: UInt16?) throws(TargetError) -> ProxyTarget {
    let bytes = Array(authority.utf8)
    var hostRange: Range<Int>
    var portStart: Int?
    if bytes.first == UInt8(ascii: "[") {
        guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else {
            throw .invalid("unterminated IPv6 literal in '\(authority)'")
        }
        hostRange = 1..<close
        if close + 1 < bytes.count {
            guard bytes[close + 1] == UInt8(ascii: ":") else { throw .invalid("garbage after IPv6 literal in '\(authority)'") }
            portStart = close + 2
        }
        guard !hostRange.isEmpty, bytes[hostRange].allSatisfy(isIPv6LiteralByte) else {
            throw .invalid("bad IPv6 literal in '\(authority)'")
        }
    } else {
        if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            hostRange = 0..<colon
            portStart = colon + 1
        } else {
            hostRange = 0..<bytes.count
        }
        guard !hostRange.isEmpty, bytes[hostRange].allSatisfy(isHostByte) else {
            throw .invalid("bad host in '\(authority)'")
        }
    }
    let port: UInt16
    if let portStart {
        let digits = bytes[portStart...]
        guard !digits.isEmpty, digits.count <= 5 else { throw .invalid("bad port in '\(authority)'") }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { throw .invalid("bad port in '\(authority)'") }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        guard value > 0, value <= 65535 else { throw .invalid("bad port in '\(authority)'") }
        port = UInt16(value)
    } else if let defaultPort {
        port = defaultPort
    } else {
        throw .invalid("missing port in '\(authority)'")
    }
    return ProxyTarget(host: String(decoding: bytes[hostRange], as: UTF8.self), port: port)
}

private func isIPv6LiteralByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
         UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: ":"), UInt8(ascii: "."):
        return true
    default:
        return false
    }
}

/// Parses an absolute-form request target (RFC 9112 §3.2.2). On the proxy port `http` and `ws`
/// are accepted (`GET ws://host/path` with Upgrade, as aiohttp sends it, goes upstream like
/// http); clients use CONNECT for https and wss. Inside a tunnel `https` is accepted too
/// (`schemes`), since a server must accept absolute-form whatever the connection.
func parseAbsoluteTarget(_ target: String, schemes: [String] = ["http", "ws"]) throws(TargetError) -> AbsoluteTarget {
    let bytes = Array(target.utf8)
    // scheme "://"
    var schemeEnd = 0
    while schemeEnd < bytes.count, bytes[schemeEnd] != UInt8(ascii: ":") { schemeEnd += 1 }
    guard schemeEnd > 0, bytes.count >= schemeEnd + 3,
          bytes[schemeEnd + 1] == UInt8(ascii: "/"), bytes[schemeEnd + 2] == UInt8(ascii: "/") else {
        throw .invalid("request target is not absolute-form (expected http://host/path)")
    }
    let scheme = String(decoding: bytes[0..<schemeEnd], as: UTF8.self).lowercased()
    guard schemes.contains(scheme) else {
        let secure = scheme == "https" || scheme == "wss"
        throw .invalid("unsupported scheme '\(sanitizedControlCharacters(String(scheme.prefix(16))))' in absolute-form request"
                       + (secure ? "; use CONNECT for \(scheme)" : "; expected http or ws"))
    }
    let authorityStart = schemeEnd + 3
    var authorityEnd = authorityStart
    while authorityEnd < bytes.count {
        let byte = bytes[authorityEnd]
        if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
        authorityEnd += 1
    }
    var hostStart = authorityStart
    if let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) {
        // Userinfo is deprecated in http URLs (RFC 9110 §4.2.4); drop it rather than forward it.
        hostStart = at + 1
    }
    let authority = String(decoding: bytes[hostStart..<authorityEnd], as: UTF8.self)
    let defaultPort: UInt16 = scheme == "https" || scheme == "wss" ? 443 : 80
    let proxyTarget = try parseAuthority(Substring(authority), defaultPort: defaultPort)
    var restEnd = bytes.count
    if let hash = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) {
        restEnd = hash
    }
    var originForm = String(decoding: bytes[authorityEnd..<restEnd], as: UTF8.self)
    if authorityEnd == restEnd || bytes[authorityEnd] == UInt8(ascii: "?") {
        originForm = "/" + originForm
    }
    let url = "\(scheme)://\(proxyTarget.authority(defaultPort: defaultPort))\(originForm)"
    return AbsoluteTarget(target: proxyTarget, originForm: originForm, url: url)
}
