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
    public var authorityHost: String { host.contains(":") ? "[\(host)]" : host }

    /// The authority for a URL or Host header: the port only when it is not the scheme's default.
    public func authority(defaultPort: UInt16) -> String {
        port == defaultPort ? authorityHost : "\(authorityHost):\(port)"
    }
}

/// A parsed absolute-form request target: `http://host[:port]/path?query`.
struct AbsoluteTarget: Equatable {
    var scheme: String
    var target: ProxyTarget
    /// Origin-form for the upstream: path and query, at least "/".
    var originForm: String
    /// The URL as recorded: scheme and host lowercased, fragment removed.
    var url: String
}

enum TargetError: Error, Equatable {
    case invalid(String)
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

/// Parses `host[:port]` or `[v6]:port` (authority without userinfo).
func parseAuthority(_ authority: Substring, defaultPort: UInt16?) throws(TargetError) -> ProxyTarget {
    var hostPart: Substring
    var portPart: Substring?
    if authority.hasPrefix("[") {
        guard let close = authority.firstIndex(of: "]") else {
            throw .invalid("unterminated IPv6 literal in '\(authority)'")
        }
        hostPart = authority[authority.index(after: authority.startIndex)..<close]
        let rest = authority[authority.index(after: close)...]
        if !rest.isEmpty {
            guard rest.hasPrefix(":") else { throw .invalid("garbage after IPv6 literal in '\(authority)'") }
            portPart = rest.dropFirst()
        }
        guard !hostPart.isEmpty, hostPart.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
            throw .invalid("bad IPv6 literal in '\(authority)'")
        }
    } else {
        if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        } else {
            hostPart = authority
        }
        guard !hostPart.isEmpty, hostPart.utf8.allSatisfy(isHostByte) else {
            throw .invalid("bad host in '\(authority)'")
        }
    }
    let port: UInt16
    if let portPart {
        guard !portPart.isEmpty, portPart.count <= 5, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = UInt16(portPart), value != 0 else {
            throw .invalid("bad port in '\(authority)'")
        }
        port = value
    } else if let defaultPort {
        port = defaultPort
    } else {
        throw .invalid("missing port in '\(authority)'")
    }
    return ProxyTarget(host: String(hostPart), port: port)
}

/// Parses an absolute-form request target (RFC 9112 §3.2.2). Only `http` is accepted on the proxy
/// port: clients use CONNECT for https.
func parseAbsoluteTarget(_ target: String) throws(TargetError) -> AbsoluteTarget {
    guard let schemeEnd = target.range(of: "://") else {
        throw .invalid("request target is not absolute-form (expected http://host/path)")
    }
    let scheme = target[..<schemeEnd.lowerBound].lowercased()
    guard scheme == "http" else {
        throw .invalid("unsupported scheme '\(scheme)' in absolute-form request; use CONNECT for https")
    }
    let afterScheme = target[schemeEnd.upperBound...]
    let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
    var authority = afterScheme[..<authorityEnd]
    if let at = authority.lastIndex(of: "@") {
        // Userinfo is deprecated in http URLs (RFC 9110 §4.2.4); drop it rather than forward it.
        authority = authority[authority.index(after: at)...]
    }
    let proxyTarget = try parseAuthority(authority, defaultPort: 80)
    var rest = afterScheme[authorityEnd...]
    if let hash = rest.firstIndex(of: "#") {
        rest = rest[..<hash]
    }
    var originForm = String(rest)
    if originForm.isEmpty || originForm.hasPrefix("?") {
        originForm = "/" + originForm
    }
    let url = "\(scheme)://\(proxyTarget.authority(defaultPort: 80))\(originForm)"
    return AbsoluteTarget(scheme: scheme, target: proxyTarget, originForm: originForm, url: url)
}
