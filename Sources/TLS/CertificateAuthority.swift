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

    struct CacheState {
        var leaves: LRUCache<String, LeafCertificate>
        var signings = 0
    }
    let state: Mutex<CacheState>

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
        self.notAfter = X509Util.time(X509_get0_notAfter(certificate)) ?? unixTime()
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
            let now = unixTime()
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
}
