import COpenSSLShims
import Foundation
import TestSupport
import XCTest
@testable import TLS

/// Moves bytes between two engines until both are quiet, collecting their events.
final class EnginePair {
    let client: TLSEngine
    let server: TLSEngine
    var clientEvents: [TLSEvent] = []
    var serverEvents: [TLSEvent] = []
    /// Largest piece moved at a time (to exercise partial records).
    var segment = Int.max

    init(client: TLSEngine, server: TLSEngine) {
        self.client = client
        self.server = server
    }

    func pump(maxRounds: Int = 10_000) {
        for _ in 0..<maxRounds {
            let toServer = client.takeNetworkOutput()
            let toClient = server.takeNetworkOutput()
            if toServer.isEmpty, toClient.isEmpty { break }
            for piece in pieces(toServer) { server.feedNetwork(piece) }
            for piece in pieces(toClient) { client.feedNetwork(piece) }
            while let event = client.next() { clientEvents.append(event) }
            while let event = server.next() { serverEvents.append(event) }
        }
        while let event = client.next() { clientEvents.append(event) }
        while let event = server.next() { serverEvents.append(event) }
    }

    private func pieces(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        guard segment < bytes.count else { return bytes.isEmpty ? [] : [bytes[...]] }
        return stride(from: 0, to: bytes.count, by: segment).map { bytes[$0..<min(bytes.count, $0 + segment)] }
    }

    /// Plaintext received so far, concatenated, and removed from the event lists.
    func takeClientPlaintext() -> [UInt8] { Self.takePlaintext(&clientEvents) }
    func takeServerPlaintext() -> [UInt8] { Self.takePlaintext(&serverEvents) }

    private static func takePlaintext(_ events: inout [TLSEvent]) -> [UInt8] {
        var bytes: [UInt8] = []
        events.removeAll { event in
            if case .plaintext(let data) = event { bytes += data; return true }
            return false
        }
        return bytes
    }
}

func failure(_ events: [TLSEvent]) -> TLSError? {
    for case .failed(let error) in events { return error }
    return nil
}

func completion(_ events: [TLSEvent]) -> (alpn: String?, version: String, cipher: String)? {
    for case .handshakeCompleted(let alpn, let version, let cipher) in events { return (alpn, version, cipher) }
    return nil
}

func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var rng = SplitMix64(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
        var word = rng.next()
        for _ in 0..<8 where index < count {
            bytes[index] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            index += 1
        }
    }
    return bytes
}

final class TLSEngineTests: XCTestCase {
    var ca: CertificateAuthority!
    var directory: String!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory(self)
        ca = try CertificateAuthority.loadOrCreate(directory: directory + "/ca")
    }

    func trustingClient(alpn: [String] = ["http/1.1"], maximum: TLSVersion = .tls13) throws -> TLSClientContext {
        try TLSClientContext(verification: .systemTrustStore(additionalAnchorFiles: [ca.certificatePath]), alpnProtocols: alpn,
                             maximumVersion: maximum)
    }

    func makePair(_ client: TLSClientContext, serverName: String, server: TLSServerContext? = nil, fallback: String? = nil) throws -> EnginePair {
        let serverContext = try server ?? TLSServerContext(certificateAuthority: ca)
        let pair = EnginePair(client: try TLSEngine.client(context: client, serverName: serverName),
                              server: try TLSEngine.server(context: serverContext, fallbackServerName: fallback))
        pair.pump()
        return pair
    }

    func testClientResumesItsSessionOnTheNextConnectionToTheSameName() throws {
        let clientContext = try trustingClient()
        let serverContext = try TLSServerContext(certificateAuthority: ca)
        for version in [TLSVersion.tls13, .tls12] {
            let client = version == .tls13 ? clientContext : try trustingClient(maximum: .tls12)
            let first = try makePair(client, serverName: "resume.example", server: serverContext)
            first.server.writePlaintext([1])  // TLS 1.3 tickets arrive after the handshake
            first.pump()
            XCTAssertFalse(first.client.sessionWasReused)
            XCTAssertEqual(client.cachedSessionCount, 1, "\(version)")
            let second = try makePair(client, serverName: "resume.example", server: serverContext)
            XCTAssertNotNil(completion(second.clientEvents), "\(second.clientEvents)")
            XCTAssertTrue(second.client.sessionWasReused, "\(version): the second connection resumes")
            let other = try makePair(client, serverName: "other.example", server: serverContext)
            XCTAssertFalse(other.client.sessionWasReused, "\(version): sessions are per server name")
        }
    }

    func testHandshakeDataBothWaysAndCloseNotify() throws {
        let pair = try makePair(try trustingClient(), serverName: "app.example")
        let client = try XCTUnwrap(completion(pair.clientEvents), "\(pair.clientEvents)")
        let server = try XCTUnwrap(completion(pair.serverEvents), "\(pair.serverEvents)")
        XCTAssertEqual(client.version, "TLSv1.3")
        XCTAssertEqual(server.version, "TLSv1.3")
        XCTAssertEqual(client.alpn, "http/1.1")
        XCTAssertEqual(server.alpn, "http/1.1")
        XCTAssertEqual(client.cipher, server.cipher)
        XCTAssertTrue(client.cipher.hasPrefix("TLS_"), client.cipher)
        XCTAssertEqual(pair.server.serverName, "app.example")
        XCTAssertEqual(pair.server.servedCertificate?.host, "app.example")
        XCTAssertEqual(pair.client.state, .established)
        XCTAssertEqual(pair.server.state, .established)
        pair.clientEvents.removeAll()
        pair.serverEvents.removeAll()

        // 1 MiB each way.
        let up = randomBytes(1 << 20, seed: 1)
        let down = randomBytes(1 << 20, seed: 2)
        pair.client.writePlaintext(up)
        pair.server.writePlaintext(down)
        pair.pump()
        XCTAssertEqual(pair.takeServerPlaintext() == up, true, "1 MiB upstream byte-exact")
        XCTAssertEqual(pair.takeClientPlaintext() == down, true, "1 MiB downstream byte-exact")

        // 1-byte writes, interleaved, delivered 1 byte of ciphertext at a time.
        pair.segment = 1
        var expectedUp: [UInt8] = [], expectedDown: [UInt8] = []
        for index in 0..<300 {
            let a = UInt8(truncatingIfNeeded: index), b = UInt8(truncatingIfNeeded: 255 - index)
            pair.client.writePlaintext([a])
            pair.server.writePlaintext([b])
            expectedUp.append(a)
            expectedDown.append(b)
            if index % 37 == 0 { pair.pump() }
        }
        pair.pump()
        XCTAssertEqual(pair.takeServerPlaintext(), expectedUp)
        XCTAssertEqual(pair.takeClientPlaintext(), expectedDown)
        pair.segment = Int.max

        // close_notify both ways.
        pair.client.close()
        pair.pump()
        XCTAssertEqual(pair.serverEvents, [.closed])
        XCTAssertTrue(pair.server.receivedCloseNotify)
        XCTAssertTrue(pair.client.sentCloseNotify)
        pair.server.close()
        pair.pump()
        XCTAssertEqual(pair.clientEvents, [.closed])
        XCTAssertEqual(pair.client.state, .closing)
        // Writes after close are dropped.
        pair.client.writePlaintext([1, 2, 3])
        XCTAssertFalse(pair.client.hasNetworkOutput)
    }

    func testTLS12AndPlaintextBeforeHandshake() throws {
        let client = try TLSEngine.client(context: try trustingClient(maximum: .tls12), serverName: "old.example")
        client.writePlaintext(Array("GET / HTTP/1.1\r\n\r\n".utf8))  // held until the handshake completes
        let pair = EnginePair(client: client, server: try TLSEngine.server(context: try TLSServerContext(certificateAuthority: ca)))
        pair.pump()
        XCTAssertEqual(completion(pair.clientEvents)?.version, "TLSv1.2")
        XCTAssertEqual(completion(pair.serverEvents)?.alpn, "http/1.1")
        XCTAssertEqual(String(decoding: pair.takeServerPlaintext(), as: UTF8.self), "GET / HTTP/1.1\r\n\r\n")
    }

    func testWrongHostRejected() throws {
        let server = try TLSServerContext(source: .leaf(try ca.issueLeaf(for: "a.example")))
        let pair = try makePair(try trustingClient(), serverName: "b.example", server: server)
        let error = try XCTUnwrap(failure(pair.clientEvents), "\(pair.clientEvents)")
        XCTAssertEqual(error.kind, .certificateVerifyFailed)
        XCTAssertEqual(error.message, "certificate verify failed: hostname mismatch")
        XCTAssertEqual(error.verifyResult, Int(X509_V_ERR_HOSTNAME_MISMATCH))
        // The client told the server why.
        let serverError = try XCTUnwrap(failure(pair.serverEvents), "\(pair.serverEvents)")
        XCTAssertEqual(serverError.kind, .peerAlert)
        XCTAssertNotNil(serverError.alert)
        XCTAssertNil(completion(pair.clientEvents))
        XCTAssertEqual(pair.client.state, .failed)
    }

    func testUntrustedCARejected() throws {
        // Only the system store: the harrec CA is not in it.
        let client = try TLSClientContext(verification: .systemTrustStore(additionalAnchorFiles: []))
        let pair = try makePair(client, serverName: "app.example")
        let error = try XCTUnwrap(failure(pair.clientEvents))
        XCTAssertEqual(error.kind, .certificateVerifyFailed)
        // The CA follows the leaf in the chain, so the client finds a self-signed root it does not
        // trust (not a missing issuer).
        XCTAssertEqual(error.message, "certificate verify failed: self-signed certificate in certificate chain")
        // The server sees the client's unknown_ca alert: the "install the CA" case.
        let serverError = try XCTUnwrap(failure(pair.serverEvents))
        XCTAssertEqual(serverError.kind, .peerAlert)
        XCTAssertEqual(serverError.alert, 48)
        XCTAssertEqual(serverError.message, "peer sent TLS alert unknown CA (48)")
        XCTAssertTrue(serverError.opensslErrors.joined().contains("alert unknown ca"), "\(serverError.opensslErrors)")

        // Another CA's anchors only.
        let other = try CertificateAuthority.loadOrCreate(directory: directory + "/other")
        let pair2 = try makePair(try TLSClientContext(verification: .anchorsOnly([other.certificatePath])), serverName: "app.example")
        XCTAssertEqual(failure(pair2.clientEvents)?.message, "certificate verify failed: self-signed certificate in certificate chain")
    }

    func testVerificationOffAcceptsAnything() throws {
        let server = try TLSServerContext(source: .leaf(try ca.issueLeaf(for: "a.example")))
        let pair = try makePair(try TLSClientContext(verification: .none), serverName: "something-else.example", server: server)
        XCTAssertNotNil(completion(pair.clientEvents), "\(pair.clientEvents)")
        XCTAssertNil(failure(pair.clientEvents))
    }

    func testALPN() throws {
        let h2Only = try makePair(try trustingClient(alpn: ["h2"]), serverName: "app.example")
        XCTAssertNotNil(completion(h2Only.clientEvents), "an h2-only offer still completes: \(h2Only.clientEvents)")
        XCTAssertNil(completion(h2Only.clientEvents)?.alpn ?? nil)
        XCTAssertNil(completion(h2Only.serverEvents)?.alpn ?? nil)

        let both = try makePair(try trustingClient(alpn: ["h2", "http/1.1"]), serverName: "app.example")
        XCTAssertEqual(completion(both.clientEvents)?.alpn, "http/1.1")

        let none = try makePair(try trustingClient(alpn: []), serverName: "app.example")
        XCTAssertNotNil(completion(none.serverEvents))
        XCTAssertNil(completion(none.serverEvents)?.alpn ?? nil)
    }

    /// Per connection: a client engine offers its own list (what a proxy's client offered), and a
    /// server engine accepts its own list (what the upstream chose), whatever the contexts say.
    func testPerConnectionALPN() throws {
        let serverContext = try TLSServerContext(certificateAuthority: ca, alpnProtocols: ["h2", "http/1.1"])
        func negotiate(offer: [String]?, accept: [String]?) throws -> (client: String?, server: String?) {
            let client = try TLSEngine.client(context: try trustingClient(alpn: ["http/1.1"]), serverName: "app.example", alpnProtocols: offer)
            let server = try TLSEngine.server(context: serverContext)
            if let accept { try server.acceptALPN(accept) }
            let pair = EnginePair(client: client, server: server)
            pair.pump()
            XCTAssertNotNil(completion(pair.clientEvents), "offer \(String(describing: offer)), accept \(String(describing: accept)): \(pair.clientEvents)")
            return (completion(pair.clientEvents)?.alpn ?? nil, completion(pair.serverEvents)?.alpn ?? nil)
        }
        var result = try negotiate(offer: nil, accept: nil)
        XCTAssertEqual(result.client, "http/1.1", "the context's offer")
        result = try negotiate(offer: ["h2", "http/1.1"], accept: nil)
        XCTAssertEqual(result.client, "h2", "the connection's offer, the server context's preference")
        XCTAssertEqual(result.server, "h2")
        result = try negotiate(offer: ["h2", "http/1.1"], accept: ["http/1.1"])
        XCTAssertEqual(result.client, "http/1.1", "the upstream chose HTTP/1.1, so the client gets it")
        result = try negotiate(offer: ["h2", "http/1.1"], accept: ["h2"])
        XCTAssertEqual(result.client, "h2")
        result = try negotiate(offer: ["h2", "http/1.1"], accept: [])
        XCTAssertNil(result.client, "the upstream chose nothing: no ALPN")
        result = try negotiate(offer: [], accept: nil)
        XCTAssertNil(result.client, "an empty offer offers nothing")
        XCTAssertThrowsError(try TLSEngine.client(context: try trustingClient(), serverName: "app.example",
                                                  alpnProtocols: [String(repeating: "x", count: 300)]))
    }

    func testIPLiteralUsesFallbackHostAndIPSAN() throws {
        let pair = try makePair(try trustingClient(), serverName: "127.0.0.1", fallback: "127.0.0.1")
        XCTAssertNotNil(completion(pair.clientEvents), "\(pair.clientEvents)")
        XCTAssertNil(pair.server.serverName, "no SNI for an IP literal")
        XCTAssertEqual(pair.server.servedCertificate?.host, "127.0.0.1")

        let v6 = try makePair(try trustingClient(), serverName: "[::1]", fallback: "::1")
        XCTAssertNotNil(completion(v6.clientEvents), "\(v6.clientEvents)")

        // An IP mismatch is caught.
        let wrong = try makePair(try trustingClient(), serverName: "127.0.0.2", fallback: "127.0.0.1")
        XCTAssertEqual(failure(wrong.clientEvents)?.message, "certificate verify failed: IP address mismatch")

        // No SNI and no fallback: no certificate, a clear error.
        let missing = try makePair(try trustingClient(), serverName: "127.0.0.1")
        let error = try XCTUnwrap(failure(missing.serverEvents))
        XCTAssertEqual(error.kind, .certificateUnavailable)
        XCTAssertEqual(error.message, "client sent no SNI and no target host is known")
        XCTAssertNotNil(failure(missing.clientEvents))
    }

    func testErrorsDoNotLeakAcrossConnections() throws {
        // Leave junk in this thread's OpenSSL error queue, as another connection might.
        let junk = Array("not a certificate".utf8)
        junk.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            XCTAssertNil(PEM_read_bio_X509(bio, nil, nil, nil))
            BIO_free(bio)
        }
        XCTAssertNotEqual(ERR_peek_error(), 0)
        let good = try makePair(try trustingClient(), serverName: "app.example")
        XCTAssertNotNil(completion(good.clientEvents))
        XCTAssertEqual(ERR_peek_error(), 0)

        // A failure's message names only its own errors.
        junk.withUnsafeBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            _ = PEM_read_bio_X509(bio, nil, nil, nil)
            BIO_free(bio)
        }
        XCTAssertNotEqual(ERR_peek_error(), 0)
        let server = try TLSEngine.server(context: try TLSServerContext(certificateAuthority: ca))
        server.feedNetwork(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let error = try XCTUnwrap(failure([server.next()].compactMap { $0 }))
        XCTAssertEqual(error.kind, .protocolError)
        XCTAssertTrue(error.message.hasPrefix("TLS handshake failed: "), error.message)
        XCTAssertTrue(error.message.contains("http request") || error.message.contains("wrong version number"), error.message)
        XCTAssertFalse(error.message.contains("PEM"), error.message)
        XCTAssertEqual(ERR_peek_error(), 0)
        XCTAssertNil(server.next())
        server.feedNetwork([1, 2, 3])  // ignored after failure
        XCTAssertNil(server.next())
    }

    func testGarbageAndTruncation() throws {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<200 {
            let server = try TLSEngine.server(context: try TLSServerContext(certificateAuthority: ca))
            var bytes = (0..<Int.random(in: 1...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if Bool.random(using: &rng) { bytes[0] = 22 }
            server.feedNetwork(bytes)
            server.feedNetworkEOF()
            var events: [TLSEvent] = []
            while let event = server.next() { events.append(event) }
            XCTAssertNotNil(failure(events), "\(events)")
        }
        // A real ClientHello cut short, then EOF.
        let client = try TLSEngine.client(context: try trustingClient(), serverName: "app.example")
        let hello = client.takeNetworkOutput()
        let server = try TLSEngine.server(context: try TLSServerContext(certificateAuthority: ca))
        server.feedNetwork(hello.prefix(hello.count / 2))
        XCTAssertNil(server.next())
        server.feedNetworkEOF()
        XCTAssertEqual(server.next(), .failed(TLSError(kind: .unexpectedEOF, message: "connection closed during the TLS handshake")))

        // The parser sees the same ClientHello our client sends.
        guard case .clientHello(let info) = ClientHelloParser.parse(hello) else { return XCTFail("parser rejects our hello") }
        XCTAssertEqual(info.serverName, "app.example")
        XCTAssertEqual(info.alpnProtocols, ["http/1.1"])
    }

    func testEOFAfterHandshakeWithoutCloseNotify() throws {
        let pair = try makePair(try trustingClient(), serverName: "app.example")
        pair.server.feedNetworkEOF()
        XCTAssertEqual(failure([pair.server.next()].compactMap { $0 })?.kind, .unexpectedEOF)
        // After close_notify, EOF is normal.
        let clean = try self.makePair(try trustingClient(), serverName: "app.example")
        clean.client.close()
        clean.pump()
        clean.server.feedNetworkEOF()
        XCTAssertNil(clean.server.next())
    }

    func testFixedCertificateFiles() throws {
        let pki = try makeTestPKI()
        let server = try TLSServerContext(source: .files(certificateChain: pki + "/server.pem", privateKey: pki + "/server-key.pem"))
        let client = try TLSClientContext(verification: .anchorsOnly([pki + "/ca.pem"]))
        let ok = try makePair(client, serverName: "localhost", server: server)
        XCTAssertNotNil(completion(ok.clientEvents), "\(ok.clientEvents)")
        XCTAssertThrowsError(try TLSServerContext(source: .files(certificateChain: pki + "/server.pem", privateKey: pki + "/ca-key.pem"))) {
            XCTAssertTrue("\($0)".contains("key values mismatch") || "\($0)".contains("does not match"), "\($0)")
        }
        XCTAssertThrowsError(try TLSClientContext(verification: .anchorsOnly([pki + "/missing.pem"]))) {
            XCTAssertTrue("\($0)".hasPrefix("cannot load CA file \(pki)/missing.pem"), "\($0)")
        }
    }

    func makeTestPKI() throws -> String {
        let out = try makeTemporaryDirectory(self) + "/pki"
        let result = try runCommand(packageRoot + "/certs/make-test-pki.sh", [out])
        XCTAssertEqual(result.status, 0, result.output)
        XCTAssertEqual(fileMode(out + "/server-key.pem"), 0o600)
        return out
    }
}
