// Mapping from upstream connect failures to SOCKS5 reply codes (RFC 1928 §6).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why opening the upstream failed, in the terms a SOCKS5 reply can express.
public enum SOCKS5UpstreamFailure: Equatable, Sendable {
    /// The peer refused the connection (ECONNREFUSED).
    case refused
    /// The host could not be reached (EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL).
    case hostUnreachable
    /// The name did not resolve (getaddrinfo failure).
    case dnsFailure
    /// No route to the network (ENETUNREACH, ENETDOWN).
    case networkUnreachable
    /// The connect attempt timed out (ETIMEDOUT, or the proxy's own connect timer).
    case timedOut
    /// The proxy's policy forbids this destination (also EACCES / EPERM from the kernel).
    case notAllowed
    /// The address family is not available (EAFNOSUPPORT), e.g. IPv6 on an IPv4-only host.
    case addressFamilyNotSupported
    /// Anything else.
    case other

    /// Classifies a `connect(2)` / `SO_ERROR` errno value.
    public init(errno code: Int32) {
        switch code {
        case ECONNREFUSED: self = .refused
        case EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL: self = .hostUnreachable
        case ENETUNREACH, ENETDOWN: self = .networkUnreachable
        case ETIMEDOUT: self = .timedOut
        case EACCES, EPERM: self = .notAllowed
        case EAFNOSUPPORT: self = .addressFamilyNotSupported
        default: self = .other
        }
    }

    /// The reply code to send.
    ///
    /// A timeout maps to 04 (host unreachable), not 06 (TTL expired): 06 describes an IP-level
    /// hop-limit expiry, and clients such as curl would report a connect timeout as
    /// "TTL expired", which misleads. Many servers answer a timeout with 04 as well.
    /// A DNS failure also maps to 04, the closest code RFC 1928 has.
    public var replyCode: SOCKS5ReplyCode {
        switch self {
        case .refused: return .connectionRefused
        case .hostUnreachable, .dnsFailure, .timedOut: return .hostUnreachable
        case .networkUnreachable: return .networkUnreachable
        case .notAllowed: return .connectionNotAllowed
        case .addressFamilyNotSupported: return .addressTypeNotSupported
        case .other: return .generalFailure
        }
    }
}

extension SOCKS5ReplyCode {
    /// The reply code for a `connect(2)` / `SO_ERROR` errno value; see ``SOCKS5UpstreamFailure``.
    public init(upstreamErrno code: Int32) {
        self = SOCKS5UpstreamFailure(errno: code).replyCode
    }
}
