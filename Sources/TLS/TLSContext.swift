import COpenSSLShims
import Synchronization

/// A TLS failure, as one readable line plus what OpenSSL said.
public struct TLSError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// Bad configuration: unreadable anchor file, key mismatch, bad version range.
        case configuration
        /// The peer's certificate failed verification (client side); see `verifyResult`.
        case certificateVerifyFailed
        /// The peer sent a fatal alert (e.g. a client that does not trust the harrec CA sends
        /// unknown_ca); see `alert`.
        case peerAlert
        /// No certificate could be chosen for the connection (server side).
        case certificateUnavailable
        /// Any other handshake or record-layer failure (bad bytes, no shared cipher, ...).
        case protocolError
        /// The transport ended without a close_notify (during or after the handshake).
        case unexpectedEOF
    }

    public var kind: Kind
    /// One line, e.g. `certificate verify failed: self-signed certificate`.
    public var message: String
    /// OpenSSL's X509_V_ERR_* code for `.certificateVerifyFailed`.
    public var verifyResult: Int?
    /// The TLS alert number the peer sent, for `.peerAlert`.
    public var alert: Int?
    /// The drained OpenSSL error queue (ERR_error_string_n texts), oldest first.
    public var opensslErrors: [String]

    public init(kind: Kind, message: String, verifyResult: Int? = nil, alert: Int? = nil, opensslErrors: [String] = []) {
        self.kind = kind
        self.message = message
        self.verifyResult = verifyResult
        self.alert = alert
        self.opensslErrors = opensslErrors
    }

    public var description: String { message }

    /// A configuration error with the drained error queue appended.
    static func configuration(_ context: String) -> TLSError {
        let errors = OpenSSL.drainErrors().map(\.text)
        return TLSError(kind: .configuration, message: errors.isEmpty ? context : context + ": " + errors.joined(separator: "; "),
                        opensslErrors: errors)
    }
}

/// A TLS protocol version.
public enum TLSVersion: Int, Comparable, Sendable {
    case tls12 = 0x0303
    case tls13 = 0x0304

    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Settings shared by both context kinds.
private func configureCommon(_ ctx: OpaquePointer, minimum: TLSVersion, maximum: TLSVersion) throws {
    guard minimum <= maximum else {
        throw TLSError(kind: .configuration, message: "minimum TLS version is above the maximum")
    }
    guard harrec_SSL_CTX_set_min_proto_version(ctx, Int32(minimum.rawValue)) == 1,
          harrec_SSL_CTX_set_max_proto_version(ctx, Int32(maximum.rawValue)) == 1 else {
        throw TLSError.configuration("cannot set the TLS version range")
    }
    _ = harrec_SSL_CTX_set_proxy_options(ctx)
}

/// Wire format of an ALPN list: each name prefixed by its length.
func alpnWireFormat(_ protocols: [String]) throws -> [UInt8] {
    var wire: [UInt8] = []
    for name in protocols {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else {
            throw TLSError(kind: .configuration, message: "bad ALPN protocol name length \(bytes.count)")
        }
        wire.append(UInt8(bytes.count))
        wire += bytes
    }
    return wire
}

/// Server-side configuration (one per listener, shared by all its connections): where the
/// certificate comes from, ALPN, versions. Thread-safe once made.
public final class TLSServerContext: @unchecked Sendable {
    /// Where a connection's certificate comes from.
    public enum CertificateSource: Sendable {
        /// A leaf from the CA for the SNI name (falling back to the engine's
        /// `fallbackServerName`), chosen in the servername callback.
        case authority(CertificateAuthority)
        /// The same leaf for every connection.
        case leaf(LeafCertificate)
        /// A PEM certificate chain file and PEM private key file (e.g. a test origin).
        case files(certificateChain: String, privateKey: String)
    }

    let ctx: OpaquePointer  // SSL_CTX*
    /// The source of certificates.
    public let source: CertificateSource
    /// ALPN protocols the server accepts, in preference order ("http/1.1" by default; a client
    /// that offers none of them gets no ALPN and the handshake goes on).
    public let alpnProtocols: [String]
    let alpnWire: [[UInt8]]

    /// - Parameters:
    ///   - source: the certificate source.
    ///   - alpnProtocols: accepted ALPN protocols; empty disables ALPN selection.
    public init(source: CertificateSource, alpnProtocols: [String] = ["http/1.1"],
                minimumVersion: TLSVersion = .tls12, maximumVersion: TLSVersion = .tls13) throws {
        OpenSSL.clearErrors()
        guard let ctx = SSL_CTX_new(TLS_server_method()) else { throw TLSError.configuration("SSL_CTX_new failed") }
        self.ctx = ctx
        self.source = source
        self.alpnProtocols = alpnProtocols
        self.alpnWire = try alpnProtocols.map { Array(try alpnWireFormat([$0]).dropFirst()) }
        try configureCommon(ctx, minimum: minimumVersion, maximum: maximumVersion)

        switch source {
        case .authority:
            guard harrec_SSL_CTX_set_tlsext_servername_callback(ctx, { ssl, alert, _ in
                guard let ssl, let raw = SSL_get_ex_data(ssl, 0) else { return SSL_TLSEXT_ERR_ALERT_FATAL }
                return Unmanaged<TLSEngine>.fromOpaque(raw).takeUnretainedValue().selectCertificate(alert: alert)
            }) == 1 else {
                throw TLSError.configuration("cannot install the servername callback")
            }
        case .leaf(let leaf):
            guard SSL_CTX_use_certificate(ctx, leaf.certificate) == 1,
                  SSL_CTX_use_PrivateKey(ctx, leaf.key.pointer) == 1 else {
                throw TLSError.configuration("cannot use the leaf certificate")
            }
        case .files(let chain, let key):
            guard SSL_CTX_use_certificate_chain_file(ctx, chain) == 1 else {
                throw TLSError.configuration("cannot load certificate chain \(chain)")
            }
            guard SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) == 1 else {
                throw TLSError.configuration("cannot load private key \(key)")
            }
            guard SSL_CTX_check_private_key(ctx) == 1 else {
                throw TLSError.configuration("private key \(key) does not match \(chain)")
            }
        }

        if !alpnProtocols.isEmpty {
            SSL_CTX_set_alpn_select_cb(ctx, { ssl, out, outLength, input, inputLength, arg in
                guard let arg, let out, let outLength, let input else { return SSL_TLSEXT_ERR_NOACK }
                let context = Unmanaged<TLSServerContext>.fromOpaque(arg).takeUnretainedValue()
                // A connection's own list (`TLSEngine.acceptALPN`) wins over the context's.
                let engine = ssl.flatMap { SSL_get_ex_data($0, 0) }.map { Unmanaged<TLSEngine>.fromOpaque($0).takeUnretainedValue() }
                let accepted = engine?.alpnOverride ?? context.alpnWire
                let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
                // Server preference order; point into the client's list (valid for the callback).
                for wanted in accepted {
                    var index = 0
                    while index < offered.count {
                        let length = Int(offered[index])
                        let start = index + 1
                        guard length > 0, start + length <= offered.count else { break }
                        if length == wanted.count, offered[start..<(start + length)].elementsEqual(wanted) {
                            out.pointee = input + start
                            outLength.pointee = UInt8(length)
                            return SSL_TLSEXT_ERR_OK
                        }
                        index = start + length
                    }
                }
                return SSL_TLSEXT_ERR_NOACK
            }, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    /// A context issuing leaves from `authority` by SNI.
    public convenience init(certificateAuthority authority: CertificateAuthority, alpnProtocols: [String] = ["http/1.1"]) throws {
        try self.init(source: .authority(authority), alpnProtocols: alpnProtocols)
    }

    deinit { SSL_CTX_free(ctx) }
}

/// Client-side configuration (one per proxy, shared by all upstream connections): trust,
/// ALPN, versions. Thread-safe once made.
public final class TLSClientContext: @unchecked Sendable {
    /// How the server certificate is checked.
    public enum Verification: Equatable, Sendable {
        /// The system trust store (SSL_CTX_set_default_verify_paths) plus PEM anchor files
        /// (`--upstream-ca`), with hostname/IP verification.
        case systemTrustStore(additionalAnchorFiles: [String])
        /// Only these PEM anchor files (tests), with hostname/IP verification.
        case anchorsOnly([String])
        /// No verification at all (`--insecure-upstream`).
        case none
    }

    let ctx: OpaquePointer  // SSL_CTX*
    /// The verification mode.
    public let verification: Verification
    /// ALPN protocols offered.
    public let alpnProtocols: [String]

    public init(verification: Verification = .systemTrustStore(additionalAnchorFiles: []), alpnProtocols: [String] = ["http/1.1"],
                minimumVersion: TLSVersion = .tls12, maximumVersion: TLSVersion = .tls13) throws {
        OpenSSL.clearErrors()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw TLSError.configuration("SSL_CTX_new failed") }
        self.ctx = ctx
        self.verification = verification
        self.alpnProtocols = alpnProtocols
        try configureCommon(ctx, minimum: minimumVersion, maximum: maximumVersion)

        var anchors: [String] = []
        switch verification {
        case .systemTrustStore(let files):
            guard SSL_CTX_set_default_verify_paths(ctx) == 1 else {
                throw TLSError.configuration("cannot load the system trust store")
            }
            anchors = files
        case .anchorsOnly(let files):
            anchors = files
        case .none:
            break
        }
        for file in anchors {
            guard SSL_CTX_load_verify_locations(ctx, file, nil) == 1 else {
                throw TLSError.configuration("cannot load CA file \(file)")
            }
        }
        SSL_CTX_set_verify(ctx, verification == .none ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nil)

        // Client-side session cache, kept by the context itself (keyed by server name).
        _ = harrec_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(ctx) { ssl, session in
            guard let ssl, let session, let raw = SSL_get_ex_data(ssl, 0) else { return 0 }
            return Unmanaged<TLSEngine>.fromOpaque(raw).takeUnretainedValue().keepSession(session) ? 1 : 0
        }

        if !alpnProtocols.isEmpty {
            let wire = try alpnWireFormat(alpnProtocols)
            guard SSL_CTX_set_alpn_protos(ctx, wire, UInt32(wire.count)) == 0 else {  // 0 = success here
                throw TLSError.configuration("cannot set ALPN protocols")
            }
        }
    }

    /// True unless verification is off.
    public var verifiesPeer: Bool { verification != .none }

    /// Sessions kept for resumption, per server name. A proxy opens many connections to the same
    /// few hosts; resuming skips the full handshake and the certificate chain verification.
    public static let sessionCacheCapacity = 1_024
    private let sessions = Mutex<[String: CachedSession]>([:])

    /// An `SSL_SESSION*` the cache holds one reference to. OpenSSL sessions are reference-counted
    /// with atomic counts and not changed once established, so a handle may cross threads.
    private struct CachedSession: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// How many server names have a session to resume.
    public var cachedSessionCount: Int { sessions.withLock { $0.count } }

    /// Takes over one reference to `session` (from the new-session callback).
    func storeSession(_ session: OpaquePointer, for name: String) {
        let replaced: CachedSession? = sessions.withLock { cache in
            if cache[name] == nil, cache.count >= Self.sessionCacheCapacity, let victim = cache.first {
                // Any entry will do: the cache only has to stay bounded.
                cache[victim.key] = nil
                SSL_SESSION_free(victim.value.pointer)
            }
            let old = cache[name]
            cache[name] = CachedSession(pointer: session)
            return old
        }
        if let replaced { SSL_SESSION_free(replaced.pointer) }
    }

    /// Offers the cached session for `name` on a new connection (SSL_set_session adds its own
    /// reference, so the cache keeps one).
    func offerSession(on ssl: OpaquePointer, for name: String) {
        sessions.withLock { cache in
            if let session = cache[name] { _ = SSL_set_session(ssl, session.pointer) }
        }
    }

    deinit {
        sessions.withLock { cache in
            for session in cache.values { SSL_SESSION_free(session.pointer) }
            cache.removeAll()
        }
        SSL_CTX_free(ctx)
    }
}
