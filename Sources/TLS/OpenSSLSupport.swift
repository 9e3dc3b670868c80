import COpenSSLShims

/// Helpers over OpenSSL's per-thread error queue and memory BIOs.
enum OpenSSL {
    /// Longest single error string read from OpenSSL (ERR_error_string_n truncates to this).
    static let errorStringLength = 256
    /// At most this many queued errors are put into one message; the rest are dropped (cleared).
    static let maximumErrorsPerMessage = 8

    /// Empties the calling thread's error queue so that an earlier failure (maybe of another
    /// connection on the same thread) cannot show up in the next message.
    static func clearErrors() { ERR_clear_error() }

    /// One queued error, decoded.
    struct QueuedError {
        var code: UInt
        var text: String
        var library: Int32 { harrec_ERR_GET_LIB(code) }
        var reason: Int32 { harrec_ERR_GET_REASON(code) }
    }

    /// Removes every queued error and returns (up to a limit) their codes and texts.
    static func drainErrors() -> [QueuedError] {
        var errors: [QueuedError] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            guard errors.count < maximumErrorsPerMessage else { continue }
            var buffer = [CChar](repeating: 0, count: errorStringLength)
            ERR_error_string_n(code, &buffer, buffer.count)
            errors.append(QueuedError(code: code, text: stringFromCString(buffer)))
        }
        return errors
    }

    /// The drained error queue as one line: `context: error1; error2`.
    static func errorMessage(_ context: String) -> String {
        let errors = drainErrors()
        if errors.isEmpty { return context }
        return context + ": " + errors.map(\.text).joined(separator: "; ")
    }

    /// The bytes held by a memory BIO.
    static func memoryBIOBytes(_ bio: OpaquePointer) -> [UInt8] {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = harrec_BIO_get_mem_data(bio, &pointer)
        guard length > 0, let pointer else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    /// Runs `body` with a new memory BIO and frees it afterwards.
    static func withMemoryBIO<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        guard let bio = BIO_new(BIO_s_mem()) else {
            throw CertificateAuthorityError(errorMessage("cannot allocate a memory BIO"))
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// A NUL-terminated C string in a buffer, decoded as UTF-8 (invalid bytes replaced).
func stringFromCString(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}

/// A C string owned by OpenSSL, decoded and (when `free` is set) released.
func stringFromOpenSSL(_ pointer: UnsafePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(cString: pointer)
}

/// Message digests from OpenSSL, for protocol fields that need one.
public enum Digest {
    /// SHA-1 (RFC 3174), as `Sec-WebSocket-Accept` needs (RFC 6455 §4.2.2); not for security.
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha1(), nil)
        }
        precondition(ok == 1, "EVP_Digest(SHA-1) failed")
        return Array(digest.prefix(Int(length)))
    }
}
