import COpenSSLShims

/// What a TLS engine reports, in order.
public enum TLSEvent: Equatable, Sendable {
    /// The handshake finished. `version` is e.g. "TLSv1.3", `cipher` e.g. "TLS_AES_256_GCM_SHA384".
    case handshakeCompleted(alpn: String?, version: String, cipher: String)
    /// Decrypted application data.
    case plaintext([UInt8])
    /// The peer sent close_notify. (Call `close()` to answer with ours.)
    case closed
    /// The connection failed; nothing more will be reported. Flush `takeNetworkOutput()` (it
    /// may hold an alert for the peer), then close the transport.
    case failed(TLSError)
}

/// One side of one TLS connection, over memory BIOs: OpenSSL never sees a socket.
///
/// Feed ciphertext from the network with `feedNetwork`, pull events with `next()`, write
/// application data with `writePlaintext`, and send whatever `takeNetworkOutput()` returns.
/// Not thread-safe: one engine belongs to one event-loop thread.
public final class TLSEngine {
    /// The engine's progress.
    public enum State: Equatable, Sendable {
        case handshaking
        case established
        /// `close()` was called or the peer's close_notify arrived (or both).
        case closing
        case failed
    }

    /// Bytes read from OpenSSL per SSL_read call (one TLS record's worth of plaintext).
    static let readChunkSize = 16_384
    /// Largest single SSL_write (the API takes an Int32); larger writes are split.
    static let maximumWriteSize = 1 << 30

    public let isServer: Bool
    /// Client: the name given (SNI and verification). Server: the SNI the client sent, if any.
    public private(set) var serverName: String?
    /// Server: the host used when the client sends no SNI (the CONNECT or SOCKS target).
    public let fallbackServerName: String?
    public private(set) var state: State = .handshaking
    /// The leaf served to the client (server side, CA source), once chosen.
    public private(set) var servedCertificate: LeafCertificate?
    /// Negotiated values, after the handshake.
    public private(set) var negotiatedALPN: String?
    public private(set) var protocolVersion: String?
    public private(set) var cipher: String?
    /// True once the peer's close_notify arrived.
    public private(set) var receivedCloseNotify = false
    /// True once our close_notify was queued.
    public private(set) var sentCloseNotify = false

    private let ssl: OpaquePointer          // SSL*
    private let networkIn: OpaquePointer    // BIO*, owned by ssl
    private let networkOut: OpaquePointer   // BIO*, owned by ssl
    private let serverContext: TLSServerContext?
    private let clientContext: TLSClientContext?
    private var events: [TLSEvent] = []
    private var eventIndex = 0
    private var pendingPlaintext: [UInt8] = []
    /// Server side: the protocols this connection accepts instead of its context's (wire form,
    /// in preference order); set by `acceptALPN` before the ClientHello arrives.
    var alpnOverride: [[UInt8]]?
    private var certificateError: TLSError?

    private init(ssl: OpaquePointer, server: TLSServerContext?, client: TLSClientContext?,
                 serverName: String?, fallbackServerName: String?) throws {
        self.ssl = ssl
        self.isServer = server != nil
        self.serverContext = server
        self.clientContext = client
        self.serverName = serverName
        self.fallbackServerName = fallbackServerName
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError.configuration("cannot allocate memory BIOs")
        }
        // An empty input BIO means "retry later", not end of file.
        _ = harrec_BIO_set_mem_eof_return(input, -1)
        _ = harrec_BIO_set_mem_eof_return(output, -1)
        SSL_set_bio(ssl, input, output)
        networkIn = input
        networkOut = output
        _ = SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit { SSL_free(ssl) }

    /// True when the handshake resumed an earlier session (no certificate exchange).
    public var sessionWasReused: Bool { SSL_session_reused(ssl) == 1 }

    /// Client side: hands a new session (from the new-session callback) to the context's cache.
    /// Only verified or deliberately unverified handshakes reach this point.
    func keepSession(_ session: OpaquePointer) -> Bool {
        guard let clientContext, let serverName else { return false }
        clientContext.storeSession(session, for: serverName)
        return true
    }

    /// A server-side engine. With a CA context, the leaf is chosen by SNI, else by
    /// `fallbackServerName`.
    public static func server(context: TLSServerContext, fallbackServerName: String? = nil) throws -> TLSEngine {
        OpenSSL.clearErrors()
        guard let ssl = SSL_new(context.ctx) else { throw TLSError.configuration("SSL_new failed") }
        let engine = try TLSEngine(ssl: ssl, server: context, client: nil, serverName: nil, fallbackServerName: fallbackServerName)
        SSL_set_accept_state(ssl)
        return engine
    }

    /// A client-side engine for `serverName` (a DNS name, or an IP literal, optionally in
    /// brackets). SNI is sent for DNS names only; the certificate is checked against the name or
    /// IP unless the context disables verification. The ClientHello is ready in
    /// `takeNetworkOutput()` right away.
    ///
    /// `alpnProtocols`, when given, replaces the context's offer for this connection (a proxy
    /// offers upstream what its client offered); empty offers none.
    public static func client(context: TLSClientContext, serverName: String, alpnProtocols: [String]? = nil) throws -> TLSEngine {
        OpenSSL.clearErrors()
        guard let ssl = SSL_new(context.ctx) else { throw TLSError.configuration("SSL_new failed") }
        let engine = try TLSEngine(ssl: ssl, server: nil, client: context, serverName: serverName, fallbackServerName: nil)
        SSL_set_connect_state(ssl)
        if let alpnProtocols {
            let wire = alpnProtocols.isEmpty ? [] : try alpnWireFormat(alpnProtocols)
            // 0 is success here (unlike most of OpenSSL).
            guard wire.withUnsafeBufferPointer({ SSL_set_alpn_protos(ssl, $0.baseAddress, UInt32($0.count)) }) == 0 else {
                throw TLSError.configuration("cannot set the ALPN offer")
            }
        }
        context.offerSession(on: ssl, for: serverName)
        var name = serverName
        if name.hasPrefix("["), name.hasSuffix("]"), name.count > 2 { name = String(name.dropFirst().dropLast()) }
        if let ip = LeafTarget.canonicalIP(name) {
            if context.verifiesPeer {
                guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip) == 1 else {
                    throw TLSError.configuration("cannot set the expected IP \(ip)")
                }
            }
        } else {
            guard !name.isEmpty, name.utf8.count <= 255, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw TLSError(kind: .configuration, message: "bad server name for TLS")
            }
            guard harrec_SSL_set_tlsext_host_name(ssl, name) == 1 else {
                throw TLSError.configuration("cannot set SNI")
            }
            if context.verifiesPeer {
                SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                guard SSL_set1_host(ssl, name) == 1 else { throw TLSError.configuration("cannot set the expected host") }
            }
        }
        engine.advance()
        return engine
    }

    // MARK: - Input

    /// Ciphertext from the network. Events it produces are queued for `next()`.
    public func feedNetwork<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        guard state != .failed else { return }
        let array = Array(bytes)
        guard !array.isEmpty else { return }
        let written = array.withUnsafeBytes { BIO_write(networkIn, $0.baseAddress, Int32($0.count)) }
        if written != Int32(array.count) {
            fail(TLSError(kind: .protocolError, message: "cannot buffer network input", opensslErrors: OpenSSL.drainErrors().map(\.text)))
            return
        }
        advance()
    }

    /// The transport reached end of file. Without a prior close_notify this is reported as
    /// `.failed(.unexpectedEOF)` (a truncation the caller may choose to tolerate).
    public func feedNetworkEOF() {
        guard state != .failed, !receivedCloseNotify else { return }
        let message = state == .handshaking ? "connection closed during the TLS handshake" : "connection closed without close_notify"
        fail(TLSError(kind: .unexpectedEOF, message: message))
    }

    /// The next event, or nil when there is none until more input arrives.
    public func next() -> TLSEvent? {
        guard eventIndex < events.count else { return nil }
        let event = events[eventIndex]
        eventIndex += 1
        if eventIndex == events.count {
            events.removeAll(keepingCapacity: true)
            eventIndex = 0
        }
        return event
    }

    // MARK: - Output

    /// Encrypts application data. Before the handshake completes it is held and sent right
    /// after. Ignored once the engine is closing or failed.
    public func writePlaintext<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        switch state {
        case .handshaking:
            pendingPlaintext.append(contentsOf: bytes)
        case .established:
            write(Array(bytes))
        case .closing, .failed:
            return
        }
    }

    /// Ciphertext to send to the peer (empty when there is none).
    public func takeNetworkOutput() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(networkOut))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32(pending)) }
        return read > 0 ? Array(bytes.prefix(Int(read))) : []
    }

    /// True when `takeNetworkOutput()` would return bytes.
    public var hasNetworkOutput: Bool { BIO_ctrl_pending(networkOut) > 0 }

    /// Queues close_notify (after any plaintext written so far). Before the handshake completes
    /// nothing can be sent and the engine just stops.
    public func close() {
        switch state {
        case .failed:
            return
        case .handshaking:
            state = .closing
        case .established, .closing:
            guard !sentCloseNotify else { return }
            state = .closing
            sentCloseNotify = true
            OpenSSL.clearErrors()
            _ = SSL_shutdown(ssl)
            OpenSSL.clearErrors()
        }
    }

    // MARK: - Driving OpenSSL

    private func advance() {
        OpenSSL.clearErrors()
        if state == .handshaking {
            let result = SSL_do_handshake(ssl)
            if result != 1 {
                let code = SSL_get_error(ssl, result)
                if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { return }
                fail(handshakeError(code))
                return
            }
            state = .established
            var alpnPointer: UnsafePointer<UInt8>? = nil
            var alpnLength: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &alpnPointer, &alpnLength)
            if let alpnPointer, alpnLength > 0 {
                negotiatedALPN = String(decoding: UnsafeBufferPointer(start: alpnPointer, count: Int(alpnLength)), as: UTF8.self)
            }
            protocolVersion = stringFromOpenSSL(SSL_get_version(ssl))
            cipher = stringFromOpenSSL(SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)))
            if isServer, let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) {
                serverName = String(cString: name)
            }
            events.append(.handshakeCompleted(alpn: negotiatedALPN, version: protocolVersion ?? "", cipher: cipher ?? ""))
            if !pendingPlaintext.isEmpty {
                let pending = pendingPlaintext
                pendingPlaintext = []
                write(pending)
                if state == .failed { return }
            }
        }
        readPlaintext()
    }

    private func readPlaintext() {
        guard state == .established || state == .closing, !receivedCloseNotify else { return }
        var plaintext: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.readChunkSize)
        while true {
            let count = chunk.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                plaintext += chunk[0..<Int(count)]
                continue
            }
            let code = SSL_get_error(ssl, count)
            if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE { break }
            if !plaintext.isEmpty { events.append(.plaintext(plaintext)) }
            if code == SSL_ERROR_ZERO_RETURN {
                receivedCloseNotify = true
                state = .closing
                events.append(.closed)
            } else {
                fail(recordError(code, during: "TLS read failed"))
            }
            return
        }
        if !plaintext.isEmpty { events.append(.plaintext(plaintext)) }
    }

    private func write(_ bytes: [UInt8]) {
        OpenSSL.clearErrors()
        var offset = 0
        while offset < bytes.count {
            let length = min(bytes.count - offset, Self.maximumWriteSize)
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(length)) }
            if written <= 0 {
                fail(recordError(SSL_get_error(ssl, written), during: "TLS write failed"))
                return
            }
            offset += Int(written)
        }
    }

    private func fail(_ error: TLSError) {
        state = .failed
        pendingPlaintext = []
        events.append(.failed(error))
        OpenSSL.clearErrors()
    }

    /// Classifies a failed handshake, draining the error queue.
    private func handshakeError(_ code: Int32) -> TLSError {
        let queued = OpenSSL.drainErrors()
        let texts = queued.map(\.text)
        if let certificateError {
            var error = certificateError
            error.opensslErrors += texts
            return error
        }
        if let client = clientContext, client.verifiesPeer {
            let result = SSL_get_verify_result(ssl)
            if result != X509_V_OK {
                let reason = stringFromOpenSSL(X509_verify_cert_error_string(result))
                return TLSError(kind: .certificateVerifyFailed, message: "certificate verify failed: " + lowercasedFirst(reason),
                                verifyResult: Int(result), opensslErrors: texts)
            }
        }
        // A received alert is reported with reason SSL_AD_REASON_OFFSET (1000) + alert number.
        if let alertError = queued.first(where: { $0.library == ERR_LIB_SSL && $0.reason >= 1000 && $0.reason < 1256 }) {
            let alert = Int(alertError.reason) - 1000
            let name = stringFromOpenSSL(SSL_alert_desc_string_long(Int32(alert)))
            return TLSError(kind: .peerAlert, message: "peer sent TLS alert \(lowercasedFirst(name)) (\(alert))", alert: alert, opensslErrors: texts)
        }
        if code == SSL_ERROR_SYSCALL, texts.isEmpty {
            return TLSError(kind: .unexpectedEOF, message: "TLS handshake failed: unexpected end of stream")
        }
        return TLSError(kind: .protocolError, message: "TLS handshake failed" + (texts.isEmpty ? "" : ": " + texts.joined(separator: "; ")),
                        opensslErrors: texts)
    }

    private func recordError(_ code: Int32, during context: String) -> TLSError {
        let queued = OpenSSL.drainErrors()
        let texts = queued.map(\.text)
        if let alertError = queued.first(where: { $0.library == ERR_LIB_SSL && $0.reason >= 1000 && $0.reason < 1256 }) {
            let alert = Int(alertError.reason) - 1000
            let name = stringFromOpenSSL(SSL_alert_desc_string_long(Int32(alert)))
            return TLSError(kind: .peerAlert, message: "peer sent TLS alert \(lowercasedFirst(name)) (\(alert))", alert: alert, opensslErrors: texts)
        }
        return TLSError(kind: .protocolError, message: context + (texts.isEmpty ? " (SSL error \(code))" : ": " + texts.joined(separator: "; ")),
                        opensslErrors: texts)
    }

    /// Server side: accept only `protocols` (in preference order) on this connection, instead of
    /// the context's list: a proxy answers its client with what the upstream chose. Call it
    /// before the ClientHello is fed; empty accepts none (no ALPN in the answer).
    public func acceptALPN(_ protocols: [String]) throws {
        alpnOverride = try protocols.map { Array(try alpnWireFormat([$0]).dropFirst()) }
    }

    /// The servername callback (server side, CA source): issue or fetch the leaf for the SNI
    /// name, else the fallback host, and attach it to this connection.
    func selectCertificate(alert: UnsafeMutablePointer<Int32>?) -> Int32 {
        guard case .authority(let authority)? = serverContext?.source else { return SSL_TLSEXT_ERR_OK }
        let sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        serverName = sni
        guard let host = sni ?? fallbackServerName else {
            certificateError = TLSError(kind: .certificateUnavailable, message: "client sent no SNI and no target host is known")
            alert?.pointee = Int32(SSL_AD_UNRECOGNIZED_NAME)
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
        do {
            let leaf = try authority.issueLeaf(for: host)
            // The CA goes after the leaf: clients that allow by the CA's key (Chrome's
            // --ignore-certificate-errors-spki-list) or build the chain from what is sent can
            // then accept it; clients that trust the CA lose nothing.
            guard SSL_use_certificate(ssl, leaf.certificate) == 1, SSL_use_PrivateKey(ssl, leaf.key.pointer) == 1,
                  harrec_SSL_add1_chain_cert(ssl, authority.certificate) == 1 else {
                certificateError = TLSError.configuration("cannot attach the leaf for \(leaf.host)")
                certificateError?.kind = .certificateUnavailable
                alert?.pointee = Int32(SSL_AD_INTERNAL_ERROR)
                return SSL_TLSEXT_ERR_ALERT_FATAL
            }
            servedCertificate = leaf
            return SSL_TLSEXT_ERR_OK
        } catch {
            certificateError = TLSError(kind: .certificateUnavailable, message: "no certificate for the connection: \(error)")
            alert?.pointee = Int32(SSL_AD_INTERNAL_ERROR)
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
    }
}

private func lowercasedFirst(_ text: String) -> String {
    guard let first = text.first else { return text }
    // Keep acronyms ("CA") intact: lowercase only when the second character is lowercase.
    if text.count > 1, let second = text.dropFirst().first, second.isUppercase { return text }
    return first.lowercased() + text.dropFirst()
}
