import COpenSSLShims
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure to create, load or use the CA. The message is one line and never contains key
/// material.
public struct CertificateAuthorityError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The install's local certificate authority: creates it on first use in a private directory,
/// loads it afterwards, and issues leaf certificates for intercepted hosts.
///
/// Files in `directory` (created 0700):
/// - `harrec-ca.pem`: the CA certificate (public, 0644).
/// - `harrec-ca-key.pem`: the CA private key (PKCS#8 PEM, 0600, created with O_EXCL).
///
/// Thread-safe: leaf issuance may run on any thread.
public final class CertificateAuthority: @unchecked Sendable {
    /// Key algorithm of a new CA.
    public enum KeyType: String, Sendable, CaseIterable {
        case ecdsaP256 = "ecdsa-p256"
        case rsa2048 = "rsa-2048"
    }

    /// File name of the CA certificate inside the CA directory.
    public static let certificateFileName = "harrec-ca.pem"
    /// File name of the CA private key inside the CA directory.
    public static let keyFileName = "harrec-ca-key.pem"
    /// Validity of a new CA: ten years (3,652 days covers the leap days).
    public static let caValidityDays = 3_652
    /// Leaf validity cap: Apple platforms reject TLS server certificates valid for more than
    /// 398 days; 397 stays clear of rounding (what mitmproxy also uses).
    public static let leafValidityDays = 397
    /// Leaves and the CA start 2 days in the past so that clients with a slow clock accept them.
    public static let backdateSeconds = 2 * 86_400
    /// Hosts whose leaf is kept. Each entry is ~1 KiB of DER plus an X509 object; 1,024 covers
    /// a long browsing session, and a miss only costs one ECDSA signature (~0.1 ms).
    public static let leafCacheCapacity = 1_024
    /// Random serial numbers are this many bytes (the top bit cleared so the INTEGER is
    /// positive, the next one set so it always has 16 bytes): 126 random bits, above the 64 that
    /// CA/Browser Forum rules require.
    static let serialNumberBytes = 16
    /// X.520 ub-common-name: a CN is at most 64 characters.
    static let maximumCommonNameLength = 64
    /// Longest DNS name accepted for a leaf (RFC 1035).
    static let maximumHostLength = 253

    /// The directory holding the CA files.
    public let directory: String
    /// Path of the CA certificate (PEM).
    public let certificatePath: String
    /// Path of the CA private key (PEM, 0600).
    public let keyPath: String
    /// The CA's key algorithm.
    public let keyType: KeyType
    /// True when `loadOrCreate` created a new CA rather than loading one.
    public let wasCreated: Bool
    /// The CA certificate as PEM text.
    public let certificatePEM: String
    /// The CA certificate as DER bytes.
    public let certificateDER: [UInt8]
    /// SHA-256 of the DER certificate: uppercase hex pairs joined by colons (as `openssl x509
    /// -fingerprint -sha256` prints it).
    public let fingerprintSHA256: String
    /// The subject's common name, e.g. `harrec CA (myhost, 2025-01-31)`.
    public let subjectCommonName: String

    let certificate: OpaquePointer  // X509*
    let privateKey: OpaquePointer   // EVP_PKEY*
    /// The CA's notAfter as seconds since the epoch; leaves never outlive it.
    let notAfter: Int

    private struct CacheState {
        var leaves: LRUCache<String, LeafCertificate>
        var signings = 0
    }
    private let state: Mutex<CacheState>

    private init(directory: String, certificate: OpaquePointer, privateKey: OpaquePointer, created: Bool) throws {
        self.directory = directory
        self.certificatePath = directory + "/" + Self.certificateFileName
        self.keyPath = directory + "/" + Self.keyFileName
        self.certificate = certificate
        self.privateKey = privateKey
        self.wasCreated = created
        self.keyType = EVP_PKEY_get_base_id(privateKey) == EVP_PKEY_RSA ? .rsa2048 : .ecdsaP256
        self.certificatePEM = try X509Util.pem(certificate)
        self.certificateDER = try X509Util.der(certificate)
        self.fingerprintSHA256 = try X509Util.fingerprintSHA256(certificate)
        self.subjectCommonName = X509Util.commonName(X509_get_subject_name(certificate)) ?? ""
        self.notAfter = X509Util.time(X509_get0_notAfter(certificate)) ?? Int(Glibc.time(nil))
        self.state = Mutex(CacheState(leaves: LRUCache(capacity: Self.leafCacheCapacity)))
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
    }

    // MARK: - Loading and creation

    /// Loads the CA from `directory`, or creates the directory (0700), a new key (0600, O_EXCL)
    /// and a self-signed CA certificate (0644) when neither file exists.
    ///
    /// Refuses a key file that group or others can read or write (the message says
    /// `chmod 600 PATH`), a key that does not match the certificate, and a directory that holds
    /// only one of the two files.
    public static func loadOrCreate(directory: String, keyType: KeyType = .ecdsaP256) throws -> CertificateAuthority {
        OpenSSL.clearErrors()
        let directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try ensureDirectory(directory)
        let certificatePath = directory + "/" + certificateFileName
        let keyPath = directory + "/" + keyFileName
        let haveKey = pathExists(keyPath)
        let haveCertificate = pathExists(certificatePath)
        switch (haveKey, haveCertificate) {
        case (true, true):
            return try load(directory: directory, certificatePath: certificatePath, keyPath: keyPath)
        case (false, false):
            return try create(directory: directory, keyType: keyType, certificatePath: certificatePath, keyPath: keyPath)
        case (true, false):
            throw CertificateAuthorityError(
                "CA key \(keyPath) exists but the certificate \(certificatePath) is missing; "
                + "remove the key to create a new CA")
        case (false, true):
            throw CertificateAuthorityError(
                "CA certificate \(certificatePath) exists but the key \(keyPath) is missing; "
                + "remove the certificate to create a new CA")
        }
    }

    /// The directory part of `path`, or "" for a bare name.
    private static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p` (mode 0755 before the umask, as `FileManager` does); the error text, or nil.
    private static func makeDirectories(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 { return info.st_mode & S_IFMT == S_IFDIR ? nil : "\(path) is not a directory" }
        let parent = parentDirectory(of: path)
        if !parent.isEmpty, parent != path, let failure = makeDirectories(parent) { return failure }
        if mkdir(path, 0o755) != 0 && errno != EEXIST { return "\(path): \(String(cString: strerror(errno)))" }
        return nil
    }

    private struct ReadFailure: Error { let reason: String }

    /// The whole file at `path`.
    private static func readWholeFile(_ path: String) -> Result<[UInt8], ReadFailure> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadFailure(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return .success(bytes) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(reason: String(cString: strerror(errno))))
            }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }

    private static func pathExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func ensureDirectory(_ directory: String) throws {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw CertificateAuthorityError("CA directory \(directory) exists and is not a directory")
            }
            return
        }
        let parent = Self.parentDirectory(of: directory)
        if !parent.isEmpty, parent != directory, !pathExists(parent) {
            if let failure = makeDirectories(parent) {
                throw CertificateAuthorityError("cannot create \(parent): \(failure)")
            }
        }
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw CertificateAuthorityError("cannot create CA directory \(directory): \(String(cString: strerror(errno)))")
        }
        // mkdir applies the umask; make the mode exact.
        if chmod(directory, 0o700) != 0 {
            throw CertificateAuthorityError("cannot chmod 700 \(directory): \(String(cString: strerror(errno)))")
        }
    }

    private static func load(directory: String, certificatePath: String, keyPath: String) throws -> CertificateAuthority {
        // The key file: a regular file of ours, not readable by anyone else.
        let fd = open(keyPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw CertificateAuthorityError("cannot open CA key \(keyPath): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CertificateAuthorityError("cannot stat CA key \(keyPath): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CertificateAuthorityError("CA key \(keyPath) is not a regular file")
        }
        let permissions = info.st_mode & 0o777
        if permissions & 0o077 != 0 {
            throw CertificateAuthorityError(
                "refusing to use CA key \(keyPath): it is accessible by group or others (mode "
                + String(permissions, radix: 8).leftPadded(to: 4) + "); fix it with: chmod 600 \(keyPath)")
        }
        if info.st_uid != geteuid() {
            throw CertificateAuthorityError(
                "refusing to use CA key \(keyPath): it is owned by uid \(info.st_uid), not by this user (uid \(geteuid()))")
        }
        var keyBytes = try readAll(fd: fd, path: keyPath)
        defer { keyBytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }

        guard let key = keyBytes.withUnsafeBytes({ raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // A passphrase callback that refuses: an encrypted key fails instead of prompting.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }) else {
            // OpenSSL's reasons name the failing decoder, never the key bytes.
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot read the CA key \(keyPath) (not an unencrypted PEM private key)"))
        }
        let certificateBytes: [UInt8]
        switch readWholeFile(certificatePath) {
        case .success(let bytes):
            certificateBytes = bytes
        case .failure(let failure):
            EVP_PKEY_free(key)
            throw CertificateAuthorityError("cannot read CA certificate \(certificatePath): \(failure.reason)")
        }
        guard let certificate = certificateBytes.withUnsafeBytes({ raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }) else {
            EVP_PKEY_free(key)
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot parse CA certificate \(certificatePath)"))
        }
        guard X509_check_private_key(certificate, key) == 1 else {
            OpenSSL.clearErrors()
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw CertificateAuthorityError("CA key \(keyPath) does not match the certificate \(certificatePath)")
        }
        return try CertificateAuthority(directory: directory, certificate: certificate, privateKey: key, created: false)
    }

    private static func readAll(fd: Int32, path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw CertificateAuthorityError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            // A PEM key is a few KiB; a huge file is not one.
            if bytes.count > 1 << 20 { throw CertificateAuthorityError("\(path) is larger than 1 MiB") }
        }
        chunk.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        return bytes
    }

    private static func create(directory: String, keyType: KeyType, certificatePath: String, keyPath: String) throws -> CertificateAuthority {
        let key = try generateKey(keyType)
        guard let certificate = X509_new() else {
            EVP_PKEY_free(key)
            throw CertificateAuthorityError(OpenSSL.errorMessage("X509_new failed"))
        }
        do {
            let now = Int(Glibc.time(nil))
            let notBefore = now - backdateSeconds
            try X509Util.setBasics(certificate, publicKey: key, notBefore: notBefore,
                                   notAfter: notBefore + caValidityDays * 86_400)
            let name = try X509Util.name(commonName: caCommonName(now: now), organization: "harrec")
            defer { X509_NAME_free(name) }
            guard X509_set_subject_name(certificate, name) == 1, X509_set_issuer_name(certificate, name) == 1 else {
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the CA name"))
            }
            try X509Util.addExtension(certificate, issuer: certificate, NID_basic_constraints, "critical,CA:TRUE,pathlen:0")
            try X509Util.addExtension(certificate, issuer: certificate, NID_key_usage, "critical,keyCertSign,cRLSign")
            try X509Util.addExtension(certificate, issuer: certificate, NID_subject_key_identifier, "hash")
            try X509Util.addExtension(certificate, issuer: certificate, NID_authority_key_identifier, "keyid:always")
            try X509Util.sign(certificate, key)
            try writeKey(key, to: keyPath)
            do {
                try writePublicFile(X509Util.pem(certificate), to: certificatePath)
            } catch {
                unlink(keyPath)  // no half-created CA left behind
                throw error
            }
        } catch {
            X509_free(certificate)
            EVP_PKEY_free(key)
            throw error
        }
        return try CertificateAuthority(directory: directory, certificate: certificate, privateKey: key, created: true)
    }

    /// `harrec CA (HOSTNAME, YYYY-MM-DD)`, the hostname shortened so the CN fits 64 characters.
    static func caCommonName(now: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var host = gethostname(&buffer, buffer.count - 1) == 0 ? stringFromCString(buffer) : "localhost"
        host = String(host.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "(" && $0 != ")" })
        if host.isEmpty { host = "localhost" }
        var seconds = time_t(now)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ n: Int, _ width: Int) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let date = "\(padded(Int(parts.tm_year) + 1900, 4))-\(padded(Int(parts.tm_mon) + 1, 2))-\(padded(Int(parts.tm_mday), 2))"
        let fixed = "harrec CA (, \(date))".count
        host = String(host.prefix(maximumCommonNameLength - fixed))
        return "harrec CA (\(host), \(date))"
    }

    static func generateKey(_ type: KeyType) throws -> OpaquePointer {
        OpenSSL.clearErrors()
        let key: OpaquePointer?
        switch type {
        case .ecdsaP256: key = harrec_EVP_EC_gen("P-256")
        case .rsa2048: key = harrec_EVP_RSA_gen(2048)
        }
        guard let key else { throw CertificateAuthorityError(OpenSSL.errorMessage("key generation failed")) }
        return key
    }

    /// Writes the key as PKCS#8 PEM to a new file (O_EXCL, 0600), straight from OpenSSL's buffer.
    private static func writeKey(_ key: OpaquePointer, to path: String) throws {
        try OpenSSL.withMemoryBIO { bio in
            guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot encode the CA key"))
            }
            var pointer: UnsafeMutablePointer<CChar>? = nil
            let length = harrec_BIO_get_mem_data(bio, &pointer)
            guard length > 0, let pointer else { throw CertificateAuthorityError("cannot encode the CA key") }
            defer { OPENSSL_cleanse(pointer, Int(length)) }
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw CertificateAuthorityError("cannot create CA key \(path): \(String(cString: strerror(errno)))")
            }
            var ok = fchmod(fd, 0o600) == 0
            ok = ok && writeAll(fd: fd, UnsafeRawBufferPointer(start: pointer, count: Int(length)))
            ok = ok && fsync(fd) == 0
            let reason = String(cString: strerror(errno))
            close(fd)
            if !ok {
                unlink(path)
                throw CertificateAuthorityError("cannot write CA key \(path): \(reason)")
            }
        }
    }

    /// Writes a public file (0644) atomically: a temporary file next to it, then rename.
    private static func writePublicFile(_ text: String, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CertificateAuthorityError("cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        var ok = fchmod(fd, 0o644) == 0
        ok = ok && bytes.withUnsafeBytes { writeAll(fd: fd, $0) }
        ok = ok && fsync(fd) == 0
        let reason = String(cString: strerror(errno))
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CertificateAuthorityError("cannot write \(path): \(reason)")
        }
    }

    private static func writeAll(fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    // MARK: - Leaf issuance

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
            let notBefore = Int(Glibc.time(nil)) - Self.backdateSeconds
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

/// Thin wrappers over OpenSSL's X509 API.
enum X509Util {
    static func setBasics(_ certificate: OpaquePointer, publicKey: OpaquePointer, notBefore: Int, notAfter: Int) throws {
        guard X509_set_version(certificate, 2) == 1 else {  // 2 = v3
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the certificate version"))
        }
        try setRandomSerial(certificate)
        guard ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter)) != nil else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the validity"))
        }
        guard X509_set_pubkey(certificate, publicKey) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the public key"))
        }
    }

    static func setRandomSerial(_ certificate: OpaquePointer) throws {
        var bytes = [UInt8](repeating: 0, count: CertificateAuthority.serialNumberBytes)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("RAND_bytes failed"))
        }
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("BN_bin2bn failed"))
        }
        defer { BN_free(number) }
        guard let integer = BN_to_ASN1_INTEGER(number, nil) else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("BN_to_ASN1_INTEGER failed"))
        }
        defer { ASN1_INTEGER_free(integer) }
        guard X509_set_serialNumber(certificate, integer) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set the serial number"))
        }
    }

    /// A new X509_NAME with CN and optionally O (UTF-8). The caller frees it.
    static func name(commonName: String, organization: String?) throws -> OpaquePointer {
        guard let name = X509_NAME_new() else { throw CertificateAuthorityError(OpenSSL.errorMessage("X509_NAME_new failed")) }
        var entries = [("CN", commonName)]
        if let organization { entries.append(("O", organization)) }
        for (field, value) in entries {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                X509_NAME_free(name)
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot set \(field) in the certificate name"))
            }
        }
        return name
    }

    static func addExtension(_ certificate: OpaquePointer, issuer: OpaquePointer, _ nid: Int32, _ value: String) throws {
        guard harrec_X509_add_ext_conf(certificate, issuer, nid, value) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot add extension \(stringFromOpenSSL(OBJ_nid2sn(nid))) \(value)"))
        }
    }

    /// subjectAltName with one DNS or IP entry, built as GENERAL_NAMEs (never as config text, so
    /// a host cannot inject other entries).
    static func addSubjectAltName(_ certificate: OpaquePointer, _ target: LeafTarget) throws {
        guard let names = harrec_sk_GENERAL_NAME_new_null() else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot allocate subjectAltName"))
        }
        defer { GENERAL_NAMES_free(names) }
        guard let entry = GENERAL_NAME_new() else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot allocate subjectAltName"))
        }
        if target.isIP {
            guard let octets = a2i_IPADDRESS(target.name) else {
                GENERAL_NAME_free(entry)
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot encode IP \(target.name)"))
            }
            GENERAL_NAME_set0_value(entry, GEN_IPADD, UnsafeMutableRawPointer(octets))
        } else {
            guard let text = ASN1_IA5STRING_new() else {
                GENERAL_NAME_free(entry)
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot allocate a DNS name"))
            }
            let bytes = Array(target.name.utf8)
            guard ASN1_STRING_set(text, bytes, Int32(bytes.count)) == 1 else {
                ASN1_IA5STRING_free(text)
                GENERAL_NAME_free(entry)
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot encode the DNS name"))
            }
            GENERAL_NAME_set0_value(entry, GEN_DNS, UnsafeMutableRawPointer(text))
        }
        guard harrec_sk_GENERAL_NAME_push(names, entry) > 0 else {
            GENERAL_NAME_free(entry)
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot build subjectAltName"))
        }
        guard X509_add1_ext_i2d(certificate, NID_subject_alt_name, UnsafeMutableRawPointer(names), 0, UInt(X509V3_ADD_DEFAULT)) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot add subjectAltName"))
        }
    }

    static func sign(_ certificate: OpaquePointer, _ key: OpaquePointer) throws {
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("signing the certificate failed"))
        }
    }

    static func pem(_ certificate: OpaquePointer) throws -> String {
        try OpenSSL.withMemoryBIO { bio in
            guard PEM_write_bio_X509(bio, certificate) == 1 else {
                throw CertificateAuthorityError(OpenSSL.errorMessage("cannot encode the certificate"))
            }
            return String(decoding: OpenSSL.memoryBIOBytes(bio), as: UTF8.self)
        }
    }

    static func der(_ certificate: OpaquePointer) throws -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(certificate, &out)
        guard length > 0, let out else { throw CertificateAuthorityError(OpenSSL.errorMessage("cannot encode the certificate")) }
        defer { harrec_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    static func fingerprintSHA256(_ certificate: OpaquePointer) throws -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else {
            throw CertificateAuthorityError(OpenSSL.errorMessage("cannot hash the certificate"))
        }
        return digest.prefix(Int(length)).map { byte in
            let text = String(byte, radix: 16, uppercase: true)
            return text.count == 1 ? "0" + text : text
        }.joined(separator: ":")
    }

    static func commonName(_ name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = ASN1_STRING_to_UTF8(&out, data)
        guard length >= 0, let out else { return nil }
        defer { harrec_OPENSSL_free(out) }
        return String(decoding: UnsafeBufferPointer(start: out, count: Int(length)), as: UTF8.self)
    }

    /// An ASN1_TIME as seconds since the epoch.
    static func time(_ value: UnsafePointer<ASN1_TIME>?) -> Int? {
        guard let value else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(value, &parts) == 1 else { return nil }
        return Int(timegm(&parts))
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
