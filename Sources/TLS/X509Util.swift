import COpenSSLShims
import Synchronization
#if canImport(Glibc)
import Glibc
/// Seconds since 1970 (the C library's `time`, which `X509Util.time` hides).
func unixTime() -> Int { Int(Glibc.time(nil)) }
#elseif canImport(Darwin)
import Darwin
/// Seconds since 1970 (the C library's `time`, which `X509Util.time` hides).
func unixTime() -> Int { Int(Darwin.time(nil)) }
#endif

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
