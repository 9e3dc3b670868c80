// Value types shared by the SOCKS5 server handshake (RFC 1928, RFC 1929).

/// A destination or bind address as carried in a SOCKS5 request or reply (RFC 1928 §4, §5).
public enum SOCKS5Host: Equatable, Hashable, Sendable {
    /// ATYP 0x01. Dotted-quad text, e.g. `"192.0.2.1"`.
    case ipv4(String)
    /// ATYP 0x04. RFC 5952 canonical text without brackets, e.g. `"2001:db8::1"`.
    case ipv6(String)
    /// ATYP 0x03. The domain name exactly as the client sent it (printable ASCII).
    case domain(String)

    /// The address text: dotted quad, RFC 5952 IPv6 text, or the domain name.
    public var text: String {
        switch self {
        case .ipv4(let s), .ipv6(let s), .domain(let s): return s
        }
    }
}

/// The destination of a SOCKS5 CONNECT request.
public struct SOCKS5Target: Equatable, Hashable, Sendable {
    /// The destination host.
    public var host: SOCKS5Host
    /// The destination port, never 0 when produced by ``SOCKS5ServerHandshake``.
    public var port: UInt16

    /// Creates a target.
    public init(host: SOCKS5Host, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The host text (IPv4 dotted quad, IPv6 RFC 5952 text without brackets, or domain name).
    public var hostString: String { host.text }

    /// `host:port`, with brackets around IPv6 addresses (suitable for logs and HTTP authorities).
    public var authority: String {
        if case .ipv6(let s) = host { return "[\(s)]:\(port)" }
        return "\(host.text):\(port)"
    }
}

/// The REP field of a SOCKS5 reply (RFC 1928 §6).
public enum SOCKS5ReplyCode: UInt8, Sendable {
    /// 00: the upstream is connected.
    case succeeded = 0
    /// 01: general SOCKS server failure (also used for malformed requests).
    case generalFailure = 1
    /// 02: connection not allowed by ruleset.
    case connectionNotAllowed = 2
    /// 03: network unreachable.
    case networkUnreachable = 3
    /// 04: host unreachable (also DNS failure and connect timeout, see ``SOCKS5UpstreamFailure``).
    case hostUnreachable = 4
    /// 05: connection refused.
    case connectionRefused = 5
    /// 06: TTL expired.
    case ttlExpired = 6
    /// 07: command not supported (BIND, UDP ASSOCIATE, unknown commands).
    case commandNotSupported = 7
    /// 08: address type not supported.
    case addressTypeNotSupported = 8
}

/// Username and password for RFC 1929 authentication.
public struct SOCKS5Credentials: Sendable {
    /// Expected username. RFC 1929 carries at most 255 bytes; a longer one can never match.
    public var username: String
    /// Expected password. RFC 1929 carries at most 255 bytes; a longer one can never match.
    public var password: String

    /// Creates credentials.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// What the caller must do next while driving ``SOCKS5ServerHandshake``.
public enum SOCKS5Event: Equatable, Sendable {
    /// Write these bytes to the client and keep going (method selection, authentication success).
    case send([UInt8])
    /// The client asked to CONNECT to this target. Open the upstream, then write
    /// ``SOCKS5ServerHandshake/reply(_:bindAddress:bindPort:)`` (or use
    /// ``SOCKS5ServerHandshake/replyToConnect(_:bindAddress:bindPort:)``).
    case connect(SOCKS5Target)
    /// Write `reply` (may be empty) to the client, then close the connection.
    /// `reason` is one line with no control characters and never contains credentials.
    case fail(reply: [UInt8], reason: String)
}
