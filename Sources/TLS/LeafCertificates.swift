import COpenSSLShims
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Leaf certificates: issuance by the CA, the shared leaf key, and the hosts a leaf can name.

extension CertificateAuthority {
    /// How many leaves this CA has signed (cache hits do not sign).
    public var signingCount: Int { state.withLock { $0.signings } }
    /// How many leaves are cached.
    public var cachedLeafCount: Int { state.withLock { $0.leaves.count } }
    /// Cached hosts (normalized), most recently used first.
    var cachedHosts: [String] { state.withLock { $0.leaves.keysByRecency } }

    /// The cached leaf for `host`, without signing; nil when there is none (or the host is not
    /// one a leaf can be issued for). Lets the event loop issue missing leaves elsewhere.
    public func cachedLeaf(for host: String) -> LeafCertificate? {
        guard let target = try? LeafTarget(host) else { return nil }
        return state.withLock { $0.leaves.value(forKey: target.cacheKey) }
    }

    /// Returns a leaf certificate for `host` (a DNS name, or an IPv4/IPv6 literal, optionally in
    /// brackets), from the cache or newly signed. All leaves share one process-wide ECDSA P-256
    /// key.
    ///
    /// The leaf: X.509 v3, CN = host (first 64 characters), SAN DNS or IP entry,
    /// basicConstraints CA:FALSE, keyUsage digitalSignature (critical), EKU serverAuth, AKI, SKI,
    /// random 126-bit serial, notBefore now − 2 days, notAfter at most 397 days later (and not
    /// after the CA's), signed with SHA-256.
    public func issueLeaf(for host: String) throws -> LeafCertificate {
        let target = try LeafTarget(host)
        if let cached = state.withLock({ $0.leaves.value(forKey: target.cacheKey) }) {
            return cached
        }
        let leaf = try sign(target)
        return state.withLock { state in
            // Another thread may have signed the same host meanwhile; keep the first.
            if let existing = state.leaves.value(forKey: target.cacheKey) { return existing }
            state.leaves.insert(leaf, forKey: target.cacheKey)
            state.signings += 1
            return leaf
        }
    }

    private func sign(_ target: LeafTarget) throws -> LeafCertificate {
        OpenSSL.clearErrors()
        let key = try LeafKey.shared.get()
        guard let leaf = X509_new() else { throw CertificateAuthorityError(OpenSSL.errorMessage("X509_new failed")) }
        do {
            let notBefore = unixTime() - Self.backdateSeconds
            let notAfter = min(notBefore + Self.leafValidityDays * 86_400, notAfter)
            try X509Util.setBasics(leaf, publicKey: key.pointer, notBefore: notBefore, notAfter: notAfter)
            let name = try X509Util.name(commonName: String(target.name.prefix(Self.maximumCommonNameLength)), organization: nil)
            defer { X509_NAME_free(name) }
            guard X509_set_subject_name(leaf, name) == 1,
                  X509_set_issuer_name(leaf, X509_get_subject_name(certificate)) == 1 else {
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the leaf names"))
            }
            try X509Util.addExtension(leaf, issuer: certificate, NID_basic_constraints, "critical,CA:FALSE")
            let usage = key.isRSA ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"
            try X509Util.addExtension(leaf, issuer: certificate, NID_key_usage, usage)
            try X509Util.addExtension(leaf, issuer: certificate, NID_ext_key_usage, "serverAuth")
            try X509Util.addExtension(leaf, issuer: certificate, NID_subject_key_identifier, "hash")
            try X509Util.addExtension(leaf, issuer: certificate, NID_authority_key_identifier, "keyid:always")
            try X509Util.addSubjectAltName(leaf, target)
            try X509Util.sign(leaf, privateKey)
        } catch {
            X509_free(leaf)
            throw error
        }
        return LeafCertificate(host: target.name, certificate: leaf, key: key)
    }
}

/// A leaf certificate issued by the CA, with the shared leaf private key. Immutable.
public final class LeafCertificate: @unchecked Sendable {
    /// The normalized host the leaf is for (lowercase DNS name, or the canonical IP text).
    public let host: String
    let certificate: OpaquePointer  // X509*, owned
    let key: LeafKey

    init(host: String, certificate: OpaquePointer, key: LeafKey) {
        self.host = host
        self.certificate = certificate
        self.key = key
    }

    deinit { X509_free(certificate) }

    /// The certificate as PEM text.
    public var certificatePEM: String { (try? X509Util.pem(certificate)) ?? "" }
    /// The certificate as DER bytes.
    public var certificateDER: [UInt8] { (try? X509Util.der(certificate)) ?? [] }
    /// SHA-256 fingerprint, colon-separated uppercase hex.
    public var fingerprintSHA256: String { (try? X509Util.fingerprintSHA256(certificate)) ?? "" }
}

/// The one leaf key pair of this process (ECDSA P-256), made on first use.
final class LeafKey: @unchecked Sendable {
    let pointer: OpaquePointer  // EVP_PKEY*, never freed (lives as long as the process)
    var isRSA: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA }

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    /// Swift initializes globals and static lets once, thread-safely.
    static let shared: Result<LeafKey, CertificateAuthorityError> = {
        do {
            return .success(LeafKey(try CertificateAuthority.generateKey(.ecdsaP256)))
        } catch let error as CertificateAuthorityError {
            return .failure(error)
        } catch {
            return .failure(CertificateAuthorityError("leaf key generation failed"))
        }
    }()
}

/// A validated, normalized leaf host.
struct LeafTarget {
    var name: String
    var isIP: Bool
    var cacheKey: String { name }

    init(_ host: String) throws {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]"), text.count > 2 {
            text = String(text.dropFirst().dropLast())
        }
        if let canonical = LeafTarget.canonicalIP(text) {
            name = canonical
            isIP = true
            return
        }
        text = text.lowercased()
        if text.hasSuffix(".") { text.removeLast() }
        let printable = String(host.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
        guard !text.isEmpty, text.utf8.count <= CertificateAuthority.maximumHostLength else {
            throw CertificateAuthorityError("cannot issue a certificate for host \"\(printable.prefix(80))\": bad length")
        }
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            let ok = !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
            guard ok else {
                throw CertificateAuthorityError("cannot issue a certificate for host \"\(printable.prefix(80))\": not a DNS name or IP address")
            }
        }
        name = text
        isIP = false
    }

    /// The canonical text of an IPv4 or IPv6 literal, or nil.
    static func canonicalIP(_ text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            guard inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return stringFromCString(buffer)
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
            return stringFromCString(buffer)
        }
        return nil
    }
}
