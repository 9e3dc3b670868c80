import HTTP1
import SOCKS5
import TextEncodings

/// Proxy authentication for HTTP requests to the proxy (`Proxy-Authorization: Basic`, RFC 7235
/// and RFC 7617). SOCKS5 clients authenticate in their handshake (`SOCKS5Layer`, RFC 1929).
struct ProxyAuth {
    /// base64("user:pass"), compared in constant time; nil when the proxy is open.
    private let expected: [UInt8]?

    init(credentials: ProxyCredentials?) {
        expected = credentials.map { Array(Base64.encode(Array("\($0.username):\($0.password)".utf8)).utf8) }
    }

    /// Whether a request with these fields may use the proxy. The scheme name is
    /// case-insensitive; the credentials are compared in constant time.
    func admits(_ fields: HTTPFields) -> Bool {
        guard let expected else { return true }
        guard let header = fields["Proxy-Authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return false }
        return constantTimeEquals(Array(parts[1].utf8), expected)
    }
}
