// Sans-IO SOCKS5 server handshake: RFC 1928 (method selection, CONNECT request) and
// RFC 1929 (username/password sub-negotiation). Bytes in via `feed`, events out via `next`.
//
// Wire formats (RFC 1928 §3, §4; RFC 1929 §2):
//
//   greeting:  VER(05) NMETHODS(1..255) METHODS[NMETHODS]
//   auth:      VER(01) ULEN(1..255) UNAME[ULEN] PLEN(1..255) PASSWD[PLEN]
//   request:   VER(05) CMD RSV(00) ATYP DST.ADDR DST.PORT(2, big endian)
//              ATYP 01: 4 bytes; 03: LEN(1..255) + LEN bytes; 04: 16 bytes
//   reply:     VER(05) REP RSV(00) ATYP BND.ADDR BND.PORT
//
// Deliberate choices (the RFCs leave these open):
// - A domain name must be 1...255 bytes of printable ASCII (0x21...0x7E); anything else gets
//   REP 01 (general failure). RFC 1928 has no "bad name" code and a name with spaces, controls or
//   non-ASCII bytes cannot be looked up safely or logged verbatim.
// - Destination port 0 gets REP 01 (general failure): nothing can be connected to on port 0.
// - RSV must be 00 (RFC 1928 §4 says "reserved", i.e. 00); otherwise REP 01.
// - BIND and UDP ASSOCIATE, and unknown commands, get REP 07 (command not supported).
// - Client EOF before the handshake is done (including while the caller is connecting upstream)
//   fails with an empty reply; after `.done`, EOF is the caller's business.

/// Named limits for the handshake.
public enum SOCKS5Limits {
    /// Longest handshake message we will wait for. The longest legal one is the RFC 1929
    /// request: 1 + 1 + 255 + 1 + 255 = 513 bytes; a greeting is at most 257 bytes and a
    /// request at most 262. An incomplete message can therefore never exceed this.
    public static let maxHandshakeMessageBytes = 600

    /// Most bytes we hold before the caller drains them with `takeBufferedBytes()`. A pipelined
    /// greeting + auth + request is at most 1,032 bytes; the rest is early data for the upstream
    /// (optimistic clients send a TLS ClientHello, usually < 2 KiB). 64 KiB matches one read of
    /// the runtime; the runtime must stop reading from the client while the upstream is opening.
    public static let maxBufferedBytes = 64 * 1024
}

/// Sans-IO SOCKS5 server handshake. Feed client bytes, then call `next()` until it returns nil.
///
/// Typical driving loop:
/// ```
/// hs.feed(bytes)
/// while let event = hs.next() {
///     switch event {
///     case .send(let b): write(b)
///     case .connect(let target): openUpstream(target)   // later: write(hs.replyToConnect(.succeeded))
///     case .fail(let reply, let reason): write(reply); close(reason)
///     }
/// }
/// ```
public struct SOCKS5ServerHandshake: Sendable {
    /// Where the handshake is.
    public enum State: Equatable, Sendable {
        /// Waiting for the method-selection greeting.
        case greeting
        /// Method 02 chosen; waiting for the RFC 1929 username/password request.
        case authenticating
        /// Waiting for the CONNECT request.
        case awaitingRequest
        /// `.connect` was emitted; the caller is opening the upstream and must send a reply.
        case awaitingConnect
        /// A success reply was produced by `replyToConnect`; the connection is a tunnel now.
        case done
        /// A `.fail` event was returned, or `replyToConnect` sent a failure reply. Terminal.
        case failed
    }

    /// Current state.
    public private(set) var state: State = .greeting

    private let expectedUsername: [UInt8]?
    private let expectedPassword: [UInt8]?
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var clientClosed = false
    private var overflowed = false
    private var pendingFailure: SOCKS5Event?
    private var failureDelivered = false

    /// Creates a handshake. `nil` credentials require method 00 (no authentication);
    /// non-nil credentials require method 02 (username/password, RFC 1929).
    public init(credentials: SOCKS5Credentials?) {
        expectedUsername = credentials.map { Array($0.username.utf8) }
        expectedPassword = credentials.map { Array($0.password.utf8) }
    }

    /// Number of bytes received and not yet consumed by the handshake.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    // MARK: Input

    /// Appends bytes received from the client.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Appends bytes received from the client.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard state != .failed, !bytes.isEmpty else { return }
        guard bytes.count <= SOCKS5Limits.maxBufferedBytes - bufferedByteCount else {
            overflowed = true
            return
        }
        compactIfUseful()
        buffer.append(contentsOf: bytes)
    }

    /// Signals client EOF. Before `.done`, the next `next()` yields
    /// `.fail(reply: [], reason: "client closed during SOCKS5 handshake")` once every complete
    /// buffered message has been handled.
    public mutating func finish() {
        clientClosed = true
    }

    /// Removes and returns every byte after the CONNECT request (early data for the upstream).
    /// Meant for `.awaitingConnect` / `.done`; in earlier states it returns unparsed handshake bytes.
    public mutating func takeBufferedBytes() -> [UInt8] {
        let out = Array(buffer[readIndex...])
        buffer = []
        readIndex = 0
        return out
    }

    // MARK: Output

    /// The next event, or nil when more bytes are needed (or the caller has to act: while
    /// `.awaitingConnect`, `.done`, or after the `.fail` event was delivered).
    public mutating func next() -> SOCKS5Event? {
        if let failure = pendingFailure {
            guard !failureDelivered else { return nil }
            failureDelivered = true
            return failure
        }
        if overflowed {
            return fail([], "SOCKS5 client sent more than \(SOCKS5Limits.maxBufferedBytes) bytes before the handshake completed")
        }
        let event: SOCKS5Event?
        switch state {
        case .greeting: event = parseGreeting()
        case .authenticating: event = parseAuth()
        case .awaitingRequest: event = parseRequest()
        case .awaitingConnect, .done, .failed: event = nil
        }
        if let event { return event }
        if clientClosed && state != .done && state != .failed {
            return fail([], "client closed during SOCKS5 handshake")
        }
        if bufferedByteCount > SOCKS5Limits.maxHandshakeMessageBytes
            && (state == .greeting || state == .authenticating || state == .awaitingRequest) {
            // Unreachable with the current grammar (see the limit's comment); kept as a guard.
            return fail([], "SOCKS5 handshake message longer than \(SOCKS5Limits.maxHandshakeMessageBytes) bytes")
        }
        return nil
    }

    /// Builds the reply to the CONNECT request and moves to `.done` (for `.succeeded`) or
    /// `.failed` (any other code; the caller writes the bytes and closes). Only meaningful in
    /// `.awaitingConnect`; in other states it just returns the bytes.
    public mutating func replyToConnect(_ code: SOCKS5ReplyCode, bindAddress: SOCKS5Host = .ipv4("0.0.0.0"), bindPort: UInt16 = 0) -> [UInt8] {
        let bytes = Self.reply(code, bindAddress: bindAddress, bindPort: bindPort)
        if state == .awaitingConnect {
            if code == .succeeded {
                state = .done
            } else {
                state = .failed
                failureDelivered = true
                pendingFailure = .fail(reply: bytes, reason: "upstream connect failed (SOCKS5 reply \(code.rawValue))")
            }
        }
        return bytes
    }

    /// A SOCKS5 reply: `05 REP 00 ATYP BND.ADDR BND.PORT`. An IPv4/IPv6 text that does not
    /// parse, or a domain that is empty or longer than 255 bytes, is replaced by `0.0.0.0`.
    public static func reply(_ code: SOCKS5ReplyCode, bindAddress: SOCKS5Host = .ipv4("0.0.0.0"), bindPort: UInt16 = 0) -> [UInt8] {
        var out: [UInt8] = [0x05, code.rawValue, 0x00]
        switch bindAddress {
        case .ipv4(let s):
            if let a = SOCKS5Address.parseIPv4(s) { out.append(0x01); out += a } else { out += [0x01, 0, 0, 0, 0] }
        case .ipv6(let s):
            if let a = SOCKS5Address.parseIPv6(s) { out.append(0x04); out += a } else { out += [0x01, 0, 0, 0, 0] }
        case .domain(let s):
            let d = Array(s.utf8)
            if !d.isEmpty && d.count <= 255 {
                out.append(0x03); out.append(UInt8(d.count)); out += d
            } else {
                out += [0x01, 0, 0, 0, 0]
            }
        }
        out.append(UInt8(bindPort >> 8))
        out.append(UInt8(bindPort & 0xFF))
        return out
    }

    /// SOCKS4 rejection (VN 0, CD 0x5B "request rejected or failed", zero port and address).
    public static let socks4Rejection: [UInt8] = [0x00, 0x5B, 0, 0, 0, 0, 0, 0]

    // MARK: Parsing

    private func byte(_ offset: Int) -> UInt8? {
        let i = readIndex + offset
        return i < buffer.count ? buffer[i] : nil
    }

    private func bytes(_ offset: Int, _ count: Int) -> ArraySlice<UInt8> {
        buffer[(readIndex + offset)..<(readIndex + offset + count)]
    }

    private mutating func consume(_ n: Int) {
        readIndex += n
        if readIndex == buffer.count { buffer.removeAll(keepingCapacity: true); readIndex = 0 }
    }

    private mutating func compactIfUseful() {
        if readIndex > 0 && readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    private mutating func fail(_ reply: [UInt8], _ reason: String) -> SOCKS5Event {
        let event = SOCKS5Event.fail(reply: reply, reason: reason)
        state = .failed
        pendingFailure = event
        failureDelivered = true
        buffer = []
        readIndex = 0
        return event
    }

    private mutating func parseGreeting() -> SOCKS5Event? {
        guard let ver = byte(0) else { return nil }
        if ver == 0x04 {
            return fail(Self.socks4Rejection, "SOCKS4 is not supported; use SOCKS5")
        }
        if ver != 0x05 {
            return fail([], "not a SOCKS5 greeting (first byte 0x\(SOCKS5Address.hexByte(ver)))")
        }
        guard let nmethods = byte(1) else { return nil }
        if nmethods == 0 {
            return fail([0x05, 0xFF], "SOCKS5 greeting offers no authentication methods")
        }
        let total = 2 + Int(nmethods)
        guard bufferedByteCount >= total else { return nil }
        let methods = bytes(2, Int(nmethods))
        let wanted: UInt8 = expectedUsername == nil ? 0x00 : 0x02
        guard methods.contains(wanted) else {
            let offered = methods.prefix(16).map { SOCKS5Address.hexByte($0) }.joined(separator: " ")
            let more = methods.count > 16 ? " ..." : ""
            let need = wanted == 0 ? "00 (no authentication)" : "02 (username/password)"
            return fail([0x05, 0xFF], "no acceptable SOCKS5 authentication method: need \(need), client offered \(offered)\(more)")
        }
        consume(total)
        state = wanted == 0x00 ? .awaitingRequest : .authenticating
        return .send([0x05, wanted])
    }

    private mutating func parseAuth() -> SOCKS5Event? {
        guard let ver = byte(0) else { return nil }
        if ver != 0x01 {
            return fail([0x01, 0x01], "bad SOCKS5 username/password sub-negotiation version 0x\(SOCKS5Address.hexByte(ver))")
        }
        guard let ulen = byte(1) else { return nil }
        if ulen == 0 {
            return fail([0x01, 0x01], "SOCKS5 authentication failed (empty username)")
        }
        guard let plen = byte(2 + Int(ulen)) else { return nil }
        if plen == 0 {
            return fail([0x01, 0x01], "SOCKS5 authentication failed (empty password)")
        }
        let total = 3 + Int(ulen) + Int(plen)
        guard bufferedByteCount >= total else { return nil }
        let user = Array(bytes(2, Int(ulen)))
        let pass = Array(bytes(3 + Int(ulen), Int(plen)))
        // Evaluate both comparisons unconditionally: no short-circuit between them.
        let diff = constantTimeDifference(user, expectedUsername ?? [])
            | constantTimeDifference(pass, expectedPassword ?? [])
        guard diff == 0 else {
            return fail([0x01, 0x01], "SOCKS5 authentication failed")
        }
        consume(total)
        state = .awaitingRequest
        return .send([0x01, 0x00])
    }

    private mutating func parseRequest() -> SOCKS5Event? {
        guard let ver = byte(0) else { return nil }
        if ver != 0x05 {
            return fail(Self.reply(.generalFailure), "bad SOCKS5 request version 0x\(SOCKS5Address.hexByte(ver))")
        }
        guard let cmd = byte(1) else { return nil }
        switch cmd {
        case 0x01: break
        case 0x02: return fail(Self.reply(.commandNotSupported), "SOCKS5 BIND is not supported")
        case 0x03: return fail(Self.reply(.commandNotSupported), "SOCKS5 UDP ASSOCIATE is not supported")
        default: return fail(Self.reply(.commandNotSupported), "unknown SOCKS5 command 0x\(SOCKS5Address.hexByte(cmd))")
        }
        guard let rsv = byte(2) else { return nil }
        if rsv != 0x00 {
            return fail(Self.reply(.generalFailure), "SOCKS5 request reserved byte is 0x\(SOCKS5Address.hexByte(rsv)), not 0x00")
        }
        guard let atyp = byte(3) else { return nil }
        let host: SOCKS5Host
        let addrEnd: Int
        switch atyp {
        case 0x01:
            addrEnd = 4 + 4
            guard bufferedByteCount >= addrEnd + 2 else { return nil }
            host = .ipv4(SOCKS5Address.formatIPv4(bytes(4, 4)))
        case 0x04:
            addrEnd = 4 + 16
            guard bufferedByteCount >= addrEnd + 2 else { return nil }
            host = .ipv6(SOCKS5Address.formatIPv6(bytes(4, 16)))
        case 0x03:
            guard let len = byte(4) else { return nil }
            if len == 0 {
                return fail(Self.reply(.generalFailure), "SOCKS5 request has an empty domain name")
            }
            addrEnd = 5 + Int(len)
            guard bufferedByteCount >= addrEnd + 2 else { return nil }
            let name = bytes(5, Int(len))
            guard name.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
                return fail(Self.reply(.generalFailure), "SOCKS5 domain name contains bytes other than printable ASCII")
            }
            host = .domain(String(decoding: name, as: UTF8.self))
        default:
            return fail(Self.reply(.addressTypeNotSupported), "unsupported SOCKS5 address type 0x\(SOCKS5Address.hexByte(atyp))")
        }
        guard let hi = byte(addrEnd), let lo = byte(addrEnd + 1) else { return nil }
        let port = UInt16(hi) << 8 | UInt16(lo)
        if port == 0 {
            return fail(Self.reply(.generalFailure), "SOCKS5 request for port 0")
        }
        consume(addrEnd + 2)
        state = .awaitingConnect
        return .connect(SOCKS5Target(host: host, port: port))
    }
}

/// Compares two byte strings in time that depends only on `max(a.count, b.count, 255)`, never on
/// where they differ or on which one is shorter: every position up to that bound is visited and
/// the length difference is folded into the result. 255 is RFC 1929's field maximum, so a
/// client-sent value of any legal length costs the same as any other.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    constantTimeDifference(a, b) == 0
}

/// Zero when equal; see ``constantTimeEquals(_:_:)``.
func constantTimeDifference(_ a: [UInt8], _ b: [UInt8]) -> UInt {
    let n = max(a.count, b.count, 255)
    var diff = UInt(bitPattern: a.count ^ b.count)
    a.withUnsafeBufferPointer { pa in
        b.withUnsafeBufferPointer { pb in
            for i in 0..<n {
                // The index comparisons depend only on the lengths, never on the contents.
                let x = i < pa.count ? pa[i] : 0
                let y = i < pb.count ? pb[i] : 0
                diff |= UInt(x ^ y)
            }
        }
    }
    return diff
}
