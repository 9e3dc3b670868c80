import TLS

/// What comes next on a connection, decided from its first bytes without consuming them
/// (mitmproxy's NextLayer): SOCKS5 or HTTP at the start of a client connection; inside a CONNECT
/// or SOCKS5 tunnel, TLS to intercept, HTTP to record, or bytes to relay as they are.
enum NextLayer {
    enum ConnectionProtocol: Equatable {
        case socks5
        case http
    }

    /// 0x05 is a SOCKS5 greeting; 0x04 (SOCKS4) goes to the SOCKS5 layer too, to be refused with a
    /// reason instead of a confusing HTTP 400.
    static func connectionProtocol(firstByte: UInt8) -> ConnectionProtocol {
        firstByte == 0x05 || firstByte == 0x04 ? .socks5 : .http
    }

    enum TunnelContent: Equatable {
        case needMoreData
        /// A ClientHello for a host harrec intercepts. `leafToSign`: the name whose leaf must be
        /// signed (off the event loop) before the handshake can be answered; nil when it is cached.
        case intercept(serverName: String?, leafToSign: String?)
        /// An HTTP/1.x request line: parse and record it.
        case http
        /// The HTTP/2 preface (h2c with prior knowledge): HTTP/2 on both sides.
        case http2PriorKnowledge
        /// Anything else (TLS that is not intercepted, SSH, a binary protocol): relay opaquely.
        case opaque
    }

    /// Whether the first bytes a tunnel's server sent before its client spoke can be an HTTP/2
    /// SETTINGS frame (an h2c server sends one before reading the client's preface, as Go's
    /// does). Such bytes are held until the client's first bytes decide; any other server that
    /// speaks first (an SSH or SMTP banner) is relayed at once, since its client waits for it.
    static func mayBeHTTP2Settings(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first, first == 0 else { return false }
        guard bytes.count >= 9 else { return true }
        let length = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
        return bytes[3] == 0x4 && bytes[4] == 0 && bytes[5..<9].allSatisfy { $0 == 0 } && length % 6 == 0 && length <= 16_384
    }

    /// Whether bytes an HTTP/1 request got back start with an HTTP/2 SETTINGS or GOAWAY frame on
    /// stream 0: a server that speaks only h2 (an HTTP/1 response starts with "HTTP/").
    static func isHTTP2ServerFrame(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 9, bytes[0] == 0, bytes[3] == 0x4 || bytes[3] == 0x7 else { return false }
        return bytes[5..<9].allSatisfy { $0 == 0 }
    }

    /// The tunnel's first client bytes, to `target`, under the interception policy.
    static func tunnelContent(_ bytes: [UInt8], target: ProxyTarget, interception: TLSInterception?) -> TunnelContent {
        if bytes.first == 0x16, let interception {
            switch ClientHelloParser.parse(bytes) {
            case .needMoreData:
                return .needMoreData
            case .clientHello(let hello):
                let names = ["\(target)"] + (hello.serverName.map { ["\($0):\(target.port)"] } ?? [])
                if interception.shouldIntercept(names) {
                    let name = hello.serverName ?? target.host
                    let unsigned = interception.authority.map { $0.cachedLeaf(for: name) == nil } ?? false
                    return .intercept(serverName: hello.serverName, leafToSign: unsigned ? name : nil)
                }
            case .notTLS, .invalid:
                break
            }
        }
        switch TunnelSniffer.classify(bytes) {
        case .needMoreData: return .needMoreData
        case .http: return .http
        case .http2PriorKnowledge: return .http2PriorKnowledge
        case .other: return .opaque
        }
    }
}
