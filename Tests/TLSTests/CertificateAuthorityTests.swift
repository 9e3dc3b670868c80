import Foundation
import TestSupport
import XCTest
@testable import TLS

final class CertificateAuthorityTests: XCTestCase {
    func makeCA(_ keyType: CertificateAuthority.KeyType = .ecdsaP256) throws -> (CertificateAuthority, String) {
        let directory = try makeTemporaryDirectory(self) + "/home/.harrec"
        return (try CertificateAuthority.loadOrCreate(directory: directory, keyType: keyType), directory)
    }

    func x509Text(_ pem: String) throws -> String {
        let path = try makeTemporaryDirectory(self) + "/cert.pem"
        try writeText(pem, to: path)
        let result = try runCommand("openssl", ["x509", "-in", path, "-noout", "-text", "-serial", "-dates", "-fingerprint", "-sha256"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func line(_ text: String, after marker: String) -> String? {
        let lines = text.components(separatedBy: "\n")
        guard let index = lines.firstIndex(where: { $0.contains(marker) }), index + 1 < lines.count else { return nil }
        return lines[index + 1].trimmingCharacters(in: .whitespaces)
    }

    func value(_ text: String, prefix: String) -> String? {
        text.components(separatedBy: "\n").first { $0.hasPrefix(prefix) }
    }

    func testCreatesDirectoryAndFilesWithModes() throws {
        let (ca, directory) = try makeCA()
        XCTAssertTrue(ca.wasCreated)
        XCTAssertEqual(fileMode(directory), 0o700)
        XCTAssertEqual(fileMode(ca.certificatePath), 0o644)
        XCTAssertEqual(fileMode(ca.keyPath), 0o600)
        XCTAssertEqual(ca.certificatePath, directory + "/harrec-ca.pem")
        XCTAssertEqual(ca.keyPath, directory + "/harrec-ca-key.pem")
        XCTAssertTrue(try String(contentsOfFile: ca.keyPath, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertEqual(try String(contentsOfFile: ca.certificatePath, encoding: .utf8), ca.certificatePEM)
        XCTAssertEqual(ca.keyType, .ecdsaP256)
        XCTAssertFalse(FileManager.default.fileExists(atPath: ca.certificatePath + ".tmp-\(getpid())"))

        let again = try CertificateAuthority.loadOrCreate(directory: directory)
        XCTAssertFalse(again.wasCreated)
        XCTAssertEqual(again.fingerprintSHA256, ca.fingerprintSHA256)
        XCTAssertEqual(again.certificateDER, ca.certificateDER)
        XCTAssertEqual(again.subjectCommonName, ca.subjectCommonName)
    }

    func testCACertificateFields() throws {
        let (ca, _) = try makeCA()
        let text = try x509Text(ca.certificatePEM)
        XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
        XCTAssertTrue(text.contains("Signature Algorithm: ecdsa-with-SHA256"), text)
        XCTAssertTrue(text.contains("X509v3 Basic Constraints: critical"), text)
        XCTAssertEqual(line(text, after: "X509v3 Basic Constraints"), "CA:TRUE, pathlen:0")
        XCTAssertTrue(text.contains("X509v3 Key Usage: critical"), text)
        XCTAssertEqual(line(text, after: "X509v3 Key Usage"), "Certificate Sign, CRL Sign")
        XCTAssertTrue(text.contains("X509v3 Subject Key Identifier"), text)
        XCTAssertTrue(text.contains("ASN1 OID: prime256v1"), text)

        // Subject: harrec CA (HOST, YYYY-MM-DD), O = harrec; self-issued.
        let subject = try XCTUnwrap(text.components(separatedBy: "\n").first { $0.contains("Subject: ") })
        XCTAssertNotNil(subject.range(of: #"Subject: CN = "harrec CA \([^,]+, \d{4}-\d{2}-\d{2}\)", O = harrec"#, options: .regularExpression), subject)
        XCTAssertTrue(text.contains(subject.replacingOccurrences(of: "Subject:", with: "Issuer:")))
        XCTAssertTrue(ca.subjectCommonName.hasPrefix("harrec CA ("))
        XCTAssertLessThanOrEqual(ca.subjectCommonName.count, 64)

        // Ten-year validity.
        let notBefore = try XCTUnwrap(opensslDate(try XCTUnwrap(value(text, prefix: "notBefore="))))
        let notAfter = try XCTUnwrap(opensslDate(try XCTUnwrap(value(text, prefix: "notAfter="))))
        let days = notAfter.timeIntervalSince(notBefore) / 86_400
        XCTAssertEqual(days, 3_652, accuracy: 0.01)
        XCTAssertLessThan(notBefore, Date())

        // Serial: 16 random bytes (126 random bits).
        let serial = try XCTUnwrap(value(text, prefix: "serial=")).dropFirst("serial=".count)
        XCTAssertEqual(serial.count, 32, String(serial))

        // Fingerprint matches the openssl CLI.
        let fingerprint = try XCTUnwrap(value(text, prefix: "sha256 Fingerprint=")).dropFirst("sha256 Fingerprint=".count)
        XCTAssertEqual(String(fingerprint), ca.fingerprintSHA256)
        XCTAssertEqual(ca.fingerprintSHA256.count, 32 * 3 - 1)

        // The DER form is the same certificate.
        let derPath = try makeTemporaryDirectory(self) + "/ca.der"
        try Data(ca.certificateDER).write(to: URL(fileURLWithPath: derPath))
        let der = try runCommand("openssl", ["x509", "-inform", "DER", "-in", derPath, "-noout", "-fingerprint", "-sha256"])
        XCTAssertEqual(der.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "sha256 Fingerprint=" + ca.fingerprintSHA256)
    }

    func testRSACA() throws {
        let (ca, directory) = try makeCA(.rsa2048)
        XCTAssertEqual(ca.keyType, .rsa2048)
        let text = try x509Text(ca.certificatePEM)
        XCTAssertTrue(text.contains("Public-Key: (2048 bit)"), text)
        XCTAssertTrue(text.contains("Signature Algorithm: sha256WithRSAEncryption"), text)
        let leaf = try ca.issueLeaf(for: "rsa.example")
        try assertVerifies(leaf, ca: ca, host: "rsa.example")
        XCTAssertEqual(try CertificateAuthority.loadOrCreate(directory: directory).keyType, .rsa2048)
    }

    func keyLines(_ ca: CertificateAuthority) throws -> [String] {
        try String(contentsOfFile: ca.keyPath, encoding: .utf8).components(separatedBy: "\n").filter { !$0.isEmpty && !$0.hasPrefix("-----") }
    }

    func assertNoKeyMaterial(_ message: String, _ lines: [String], file: StaticString = #filePath, line: UInt = #line) {
        for keyLine in lines {
            XCTAssertFalse(message.contains(keyLine), "error leaks key material: \(message)", file: file, line: line)
            XCTAssertFalse(message.contains(String(keyLine.prefix(16))), "error leaks key material: \(message)", file: file, line: line)
        }
        XCTAssertFalse(message.contains("PRIVATE KEY-----"), file: file, line: line)
    }

    func loadError(_ directory: String) -> String? {
        do {
            _ = try CertificateAuthority.loadOrCreate(directory: directory)
            return nil
        } catch {
            return "\(error)"
        }
    }

    func testRefusesGroupOrWorldReadableKey() throws {
        let (ca, directory) = try makeCA()
        let lines = try keyLines(ca)
        for mode in [0o644, 0o640, 0o604, 0o660, 0o700 | 0o020] {
            XCTAssertEqual(chmod(ca.keyPath, mode_t(mode)), 0)
            let message = try XCTUnwrap(loadError(directory), "mode \(String(mode, radix: 8)) accepted")
            XCTAssertTrue(message.contains("chmod 600 \(ca.keyPath)"), message)
            XCTAssertTrue(message.contains(ca.keyPath), message)
            assertNoKeyMaterial(message, lines)
        }
        XCTAssertTrue(loadError(directory)?.contains("mode 0720") ?? false)
        XCTAssertEqual(chmod(ca.keyPath, 0o400), 0)
        XCTAssertNil(loadError(directory), "0400 is fine")
        XCTAssertEqual(chmod(ca.keyPath, 0o600), 0)
        XCTAssertNil(loadError(directory))
    }

    func testKeyNeverInErrors() throws {
        let (ca, directory) = try makeCA()
        let original = try String(contentsOfFile: ca.keyPath, encoding: .utf8)
        let lines = try keyLines(ca)

        // A truncated key.
        try Data(original.utf8.prefix(original.utf8.count / 2)).write(to: URL(fileURLWithPath: ca.keyPath))
        var message = try XCTUnwrap(loadError(directory))
        XCTAssertTrue(message.contains("cannot read the CA key"), message)
        assertNoKeyMaterial(message, lines)

        // A corrupted body.
        try Data(original.replacingOccurrences(of: "A", with: "%").utf8).write(to: URL(fileURLWithPath: ca.keyPath))
        message = try XCTUnwrap(loadError(directory))
        assertNoKeyMaterial(message, lines)

        // Another valid key that does not match the certificate.
        let other = try CertificateAuthority.loadOrCreate(directory: try makeTemporaryDirectory(self) + "/other")
        let otherKey = try String(contentsOfFile: other.keyPath, encoding: .utf8)
        try Data(otherKey.utf8).write(to: URL(fileURLWithPath: ca.keyPath))
        message = try XCTUnwrap(loadError(directory))
        XCTAssertTrue(message.contains("does not match"), message)
        assertNoKeyMaterial(message, lines)
        assertNoKeyMaterial(message, try keyLines(other))

        // An encrypted key fails instead of prompting.
        let encrypted = try runCommand("openssl", ["pkey", "-in", other.keyPath, "-aes256", "-passout", "pass:secret"])
        XCTAssertEqual(encrypted.status, 0, encrypted.stderr)
        try Data(encrypted.stdout.utf8).write(to: URL(fileURLWithPath: ca.keyPath))
        message = try XCTUnwrap(loadError(directory))
        XCTAssertTrue(message.contains("cannot read the CA key"), message)

        // The CA object's description never includes the key either.
        XCTAssertFalse("\(ca)".contains("PRIVATE"))
        XCTAssertEqual(fileMode(ca.keyPath), 0o600)
    }

    func testHalfCreatedDirectoryIsAnError() throws {
        let (ca, directory) = try makeCA()
        let key = try Data(contentsOf: URL(fileURLWithPath: ca.keyPath))
        XCTAssertEqual(unlink(ca.certificatePath), 0)
        XCTAssertTrue(loadError(directory)?.contains("certificate \(ca.certificatePath) is missing") ?? false)
        try writeText(ca.certificatePEM, to: ca.certificatePath)
        XCTAssertEqual(unlink(ca.keyPath), 0)
        XCTAssertTrue(loadError(directory)?.contains("key \(ca.keyPath) is missing") ?? false)
        XCTAssertFalse(loadError(directory)?.contains(String(decoding: key, as: UTF8.self)) ?? true)

        // A file where the directory should be.
        let file = try makeTemporaryDirectory(self) + "/file"
        try writeText("x", to: file)
        XCTAssertTrue(loadError(file)?.contains("not a directory") ?? false)
    }

    // MARK: - Leaves

    func assertVerifies(_ leaf: LeafCertificate, ca: CertificateAuthority, host: String? = nil, ip: String? = nil,
                        file: StaticString = #filePath, line: UInt = #line) throws {
        let directory = try makeTemporaryDirectory(self)
        try writeText(ca.certificatePEM, to: directory + "/ca.pem")
        try writeText(leaf.certificatePEM, to: directory + "/leaf.pem")
        var arguments = ["verify", "-x509_strict", "-purpose", "sslserver", "-CAfile", directory + "/ca.pem"]
        if let host { arguments += ["-verify_hostname", host] }
        if let ip { arguments += ["-verify_ip", ip] }
        let result = try runCommand("openssl", arguments + [directory + "/leaf.pem"])
        XCTAssertEqual(result.status, 0, result.output, file: file, line: line)
        XCTAssertTrue(result.stdout.contains(": OK"), result.output, file: file, line: line)
    }

    func testLeafForDNSName() throws {
        let (ca, _) = try makeCA()
        let before = Date()
        let leaf = try ca.issueLeaf(for: "WWW.Example.com.")
        XCTAssertEqual(leaf.host, "www.example.com")
        try assertVerifies(leaf, ca: ca, host: "www.example.com")
        let text = try x509Text(leaf.certificatePEM)
        XCTAssertTrue(text.contains("Version: 3 (0x2)"), text)
        XCTAssertTrue(text.contains("Signature Algorithm: ecdsa-with-SHA256"), text)
        XCTAssertTrue(text.contains("Subject: CN = www.example.com\n"), text)
        // openssl quotes a CN that contains a comma.
        XCTAssertTrue(text.contains("Issuer: CN = \"\(ca.subjectCommonName)\", O = harrec"), text)
        XCTAssertEqual(line(text, after: "X509v3 Subject Alternative Name"), "DNS:www.example.com")
        XCTAssertEqual(line(text, after: "X509v3 Extended Key Usage"), "TLS Web Server Authentication")
        XCTAssertTrue(text.contains("X509v3 Key Usage: critical"), text)
        XCTAssertEqual(line(text, after: "X509v3 Key Usage"), "Digital Signature")
        XCTAssertTrue(text.contains("X509v3 Basic Constraints: critical"), text)
        XCTAssertEqual(line(text, after: "X509v3 Basic Constraints"), "CA:FALSE")
        XCTAssertTrue(text.contains("X509v3 Authority Key Identifier"), text)
        XCTAssertTrue(text.contains("X509v3 Subject Key Identifier"), text)
        let serial = try XCTUnwrap(value(text, prefix: "serial=")).dropFirst("serial=".count)
        XCTAssertEqual(serial.count, 32)

        // Validity: backdated 2 days, at most 397 days.
        let notBefore = try XCTUnwrap(opensslDate(try XCTUnwrap(value(text, prefix: "notBefore="))))
        let notAfter = try XCTUnwrap(opensslDate(try XCTUnwrap(value(text, prefix: "notAfter="))))
        XCTAssertEqual(before.timeIntervalSince(notBefore), 2 * 86_400, accuracy: 120)
        XCTAssertLessThanOrEqual(notAfter.timeIntervalSince(notBefore), 397 * 86_400)
        XCTAssertGreaterThan(notAfter.timeIntervalSince(notBefore), 396 * 86_400)

        // The AKI of the leaf is the SKI of the CA.
        let caText = try x509Text(ca.certificatePEM)
        let ski = try XCTUnwrap(line(caText, after: "X509v3 Subject Key Identifier"))
        XCTAssertTrue(line(text, after: "X509v3 Authority Key Identifier")?.contains(ski) ?? false, text)
    }

    func testLeafForIPLiterals() throws {
        let (ca, _) = try makeCA()
        let cases: [(String, String, String)] = [
            ("127.0.0.1", "127.0.0.1", "IP Address:127.0.0.1"),
            ("::1", "::1", "IP Address:0:0:0:0:0:0:0:1"),
            ("[2001:DB8::1]", "2001:db8::1", "IP Address:2001:DB8:0:0:0:0:0:1"),
        ]
        for (input, normalized, san) in cases {
            let leaf = try ca.issueLeaf(for: input)
            XCTAssertEqual(leaf.host, normalized)
            let text = try x509Text(leaf.certificatePEM)
            XCTAssertEqual(line(text, after: "X509v3 Subject Alternative Name"), san, input)
            XCTAssertTrue(text.contains("Subject: CN = \(normalized)\n"), text)
            try assertVerifies(leaf, ca: ca, ip: normalized)
        }
    }

    func testLongHostNameTruncatesCommonNameOnly() throws {
        let (ca, _) = try makeCA()
        let host = (0..<4).map { String(repeating: Character(String($0)), count: 40) }.joined(separator: ".") + ".example"
        let leaf = try ca.issueLeaf(for: host)
        let text = try x509Text(leaf.certificatePEM)
        XCTAssertTrue(text.contains("Subject: CN = \(host.prefix(64))\n"), text)
        XCTAssertEqual(line(text, after: "X509v3 Subject Alternative Name"), "DNS:" + host)
        try assertVerifies(leaf, ca: ca, host: host)
    }

    func testRejectsBadHosts() throws {
        let (ca, _) = try makeCA()
        for host in ["", "a b", "a..b", "x.com,DNS:evil.com", "bad\r\nhost", String(repeating: "a", count: 64) + ".com",
                     String(repeating: "a.", count: 130) + "com", "[]", "host/path"] {
            XCTAssertThrowsError(try ca.issueLeaf(for: host), host) { error in
                XCTAssertFalse("\(error)".unicodeScalars.contains { $0.value < 0x20 }, "\(error)")
            }
        }
        XCTAssertEqual(ca.signingCount, 0)
    }

    func testOneLeafKeyPerProcess() throws {
        let (ca, _) = try makeCA()
        let (other, _) = try makeCA()
        let directory = try makeTemporaryDirectory(self)
        var keys = Set<String>()
        for (index, leaf) in [try ca.issueLeaf(for: "a.example"), try ca.issueLeaf(for: "b.example"), try other.issueLeaf(for: "c.example")].enumerated() {
            try writeText(leaf.certificatePEM, to: directory + "/\(index).pem")
            let result = try runCommand("openssl", ["x509", "-in", directory + "/\(index).pem", "-noout", "-pubkey"])
            keys.insert(result.stdout)
        }
        XCTAssertEqual(keys.count, 1)
        XCTAssertTrue(keys.first?.contains("BEGIN PUBLIC KEY") ?? false)
    }

    func testLeafCacheHitsCostNoSigning() throws {
        let (ca, _) = try makeCA()
        let first = try ca.issueLeaf(for: "cache.example")
        XCTAssertEqual(ca.signingCount, 1)
        let second = try ca.issueLeaf(for: "CACHE.example")
        XCTAssertTrue(first === second)
        XCTAssertEqual(ca.signingCount, 1)
        XCTAssertEqual(ca.cachedLeafCount, 1)
    }

    func testLeafCacheIsBoundedLRU() throws {
        let (ca, _) = try makeCA()
        let capacity = CertificateAuthority.leafCacheCapacity
        for index in 0..<capacity { _ = try ca.issueLeaf(for: "h\(index).example") }
        XCTAssertEqual(ca.cachedLeafCount, capacity)
        _ = try ca.issueLeaf(for: "h0.example")  // touch: now most recent
        XCTAssertEqual(ca.signingCount, capacity)
        _ = try ca.issueLeaf(for: "new.example")  // evicts h1, the least recent
        XCTAssertEqual(ca.cachedLeafCount, capacity)
        XCTAssertEqual(Array(ca.cachedHosts.prefix(2)), ["new.example", "h0.example"])
        XCTAssertFalse(ca.cachedHosts.contains("h1.example"))
        _ = try ca.issueLeaf(for: "h0.example")
        XCTAssertEqual(ca.signingCount, capacity + 1)
        _ = try ca.issueLeaf(for: "h1.example")  // was evicted: signs again
        XCTAssertEqual(ca.signingCount, capacity + 2)
    }

    func testConcurrentIssuance() throws {
        let (ca, _) = try makeCA()
        let hosts = (0..<40).map { "c\($0).example" }
        let fingerprints = Mutex_([String: Set<String>]())
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<100 {
                let host = hosts[(worker * 7 + round) % hosts.count]
                guard let leaf = try? ca.issueLeaf(for: host) else { return }
                _ = fingerprints.with { $0[host, default: []].insert(leaf.fingerprintSHA256) }
            }
        }
        XCTAssertEqual(ca.signingCount, hosts.count)
        let seen = fingerprints.with { $0 }
        XCTAssertEqual(seen.count, hosts.count)
        // Every thread got the one cached leaf for a host (a racing duplicate is discarded).
        XCTAssertTrue(seen.values.allSatisfy { $0.count == 1 }, "\(seen)")
    }

    func testLRUCacheUnit() {
        var cache = LRUCache<String, Int>(capacity: 3)
        XCTAssertNil(cache.insert(1, forKey: "a"))
        cache.insert(2, forKey: "b")
        cache.insert(3, forKey: "c")
        XCTAssertEqual(cache.keysByRecency, ["c", "b", "a"])
        XCTAssertEqual(cache.value(forKey: "a"), 1)
        XCTAssertEqual(cache.keysByRecency, ["a", "c", "b"])
        XCTAssertEqual(cache.insert(4, forKey: "d"), "b")
        XCTAssertNil(cache.value(forKey: "b"))
        XCTAssertEqual(cache.insert(30, forKey: "c"), nil)
        XCTAssertEqual(cache.value(forKey: "c"), 30)
        XCTAssertEqual(cache.keysByRecency, ["c", "d", "a"])
        XCTAssertEqual(cache.count, 3)
        var one = LRUCache<Int, Int>(capacity: 1)
        for index in 0..<10 { one.insert(index, forKey: index) }
        XCTAssertEqual(one.keysByRecency, [9])
        // Random operations against a reference model.
        var rng = SplitMix64(seed: 7)
        var model: [Int] = []  // most recent first
        var lru = LRUCache<Int, Int>(capacity: 5)
        for _ in 0..<5_000 {
            let key = Int.random(in: 0..<12, using: &rng)
            if Bool.random(using: &rng) {
                lru.insert(key, forKey: key)
                model.removeAll { $0 == key }
                model.insert(key, at: 0)
                if model.count > 5 { model.removeLast() }
            } else {
                let found = lru.value(forKey: key)
                XCTAssertEqual(found, model.contains(key) ? key : nil)
                if model.contains(key) { model.removeAll { $0 == key }; model.insert(key, at: 0) }
            }
            XCTAssertEqual(lru.keysByRecency, model)
        }
    }
}

/// A tiny lock for test bookkeeping.
final class Mutex_<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func with<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
