import SOCKS5

/// The SOCKS5 front of a connection (RFC 1928, RFC 1929) as a layer: it drives
/// `SOCKS5ServerHandshake` through negotiation and the CONNECT to `.done` or `.failed`, replies
/// included, and owns the one mapping from an upstream connect failure to a reply code.
struct SOCKS5Layer {
    enum State: Equatable {
        /// Greeting, authentication and the request are being read.
        case negotiating
        /// A CONNECT arrived and the upstream is being opened.
        case connecting(ProxyTarget)
        /// `succeeded` went out: the connection is a tunnel to the target now.
        case done(ProxyTarget)
        /// A refusal went out (or nothing, to a client that hung up).
        case failed
    }

    enum Output: Equatable {
        /// Bytes for the client (the method choice, the authentication result).
        case send([UInt8])
        /// Open the upstream. `earlyData` is what the client sent after its request, for the tunnel.
        case connect(ProxyTarget, earlyData: [UInt8])
        /// Send `reply` (possibly empty), then close; `reason` is for the log.
        case refuse(reply: [UInt8], reason: String)
    }

    private var handshake: SOCKS5ServerHandshake
    private(set) var state: State = .negotiating

    init(credentials: ProxyCredentials?) {
        handshake = SOCKS5ServerHandshake(credentials: credentials.map {
            SOCKS5Credentials(username: $0.username, password: $0.password)
        })
    }

    /// Bytes from the client while negotiating.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> [Output] {
        guard state == .negotiating else { return [] }
        handshake.feed(bytes)
        return advance()
    }

    /// The client closed its side while negotiating.
    mutating func clientClosed() -> [Output] {
        guard state == .negotiating else { return [] }
        handshake.finish()
        return advance()
    }

    /// The upstream is connected: the success reply, after which the connection is a tunnel.
    mutating func connected() -> [UInt8] {
        guard case .connecting(let target) = state else { return [] }
        state = .done(target)
        return handshake.replyToConnect(.succeeded)
    }

    /// The upstream could not be opened: the failure reply; the caller sends it and closes.
    mutating func connectFailed(_ kind: UpstreamFailure.Kind) -> [UInt8] {
        guard case .connecting = state else { return [] }
        state = .failed
        return handshake.replyToConnect(Self.replyCode(for: kind))
    }

    /// The reply code for a connect failure. A timeout and a DNS failure map to 04 (host
    /// unreachable), not 06 (TTL expired, an IP hop limit): curl would report a connect timeout as
    /// "TTL expired", which misleads; 04 is the closest code RFC 1928 has for a name that does not
    /// resolve.
    static func replyCode(for kind: UpstreamFailure.Kind) -> SOCKS5ReplyCode {
        switch kind {
        case .refused: .connectionRefused
        case .unreachable, .dns, .timeout: .hostUnreachable
        case .networkUnreachable: .networkUnreachable
        case .notAllowed: .connectionNotAllowed
        case .addressFamily: .addressTypeNotSupported
        case .reset, .other: .generalFailure
        }
    }

    private mutating func advance() -> [Output] {
        var out: [Output] = []
        while state == .negotiating, let event = handshake.next() {
            switch event {
            case .send(let bytes):
                out.append(.send(bytes))
            case .fail(let reply, let reason):
                state = .failed
                out.append(.refuse(reply: reply, reason: reason))
            case .connect(let target):
                let proxyTarget = ProxyTarget(host: target.hostString, port: target.port)
                state = .connecting(proxyTarget)
                out.append(.connect(proxyTarget, earlyData: handshake.takeBufferedBytes()))
            }
        }
        return out
    }
}
