#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import ProxyCore
import Recording
import TLS
import XCTest

/// TLS interception through the sans-IO session, with real OpenSSL engines on both ends in
/// memory: a client that trusts the harrec CA, and an origin serving a leaf from the same CA.
final class InterceptionTests: XCTestCase {
    var temporary: TemporaryAuthority!
    var authority: CertificateAuthority { temporary.ca }

    override func setUpWithError() throws { temporary = try TemporaryAuthority("intercept") }
    override func tearDown() { temporary.remove() }

    func makePlaybook(intercept: Bool = true) throws -> Playbook {
        var configuration = ProxyConfiguration()
        configuration.interception = TLSInterception(
            serverContext: try TLSServerContext(source: .authority(authority)),
            clientContext: try TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
            shouldIntercept: { _ in intercept })
        return Playbook(configuration: configuration)
    }

    /// NextLayer on real ClientHellos: intercepted or relayed by the policy, with the leaf to sign
    /// first when it is not cached; HTTP and other bytes inside a tunnel.
    func testNextLayerDecidesWhatATunnelCarries() throws {
        let hello = try TLSEngine.client(context: TLSClientContext(verification: .none), serverName: "fresh.test")
            .takeNetworkOutput()
        let target = ProxyTarget(host: "fresh.test", port: 443)
        func interception(_ intercept: Bool, authority: CertificateAuthority?) throws -> TLSInterception {
            TLSInterception(serverContext: try TLSServerContext(source: .authority(self.authority)),
                            clientContext: try TLSClientContext(verification: .none), authority: authority,
                            shouldIntercept: { names in intercept && names == ["fresh.test:443", "fresh.test:443"] })
        }
        XCTAssertEqual(NextLayer.tunnelContent(hello, target: target, interception: try interception(true, authority: authority)),
                       .intercept(serverName: "fresh.test", leafToSign: "fresh.test"))
        XCTAssertEqual(NextLayer.tunnelContent(hello, target: target, interception: try interception(true, authority: nil)),
                       .intercept(serverName: "fresh.test", leafToSign: nil))
        XCTAssertEqual(NextLayer.tunnelContent(hello, target: target, interception: try interception(false, authority: authority)), .opaque)
        XCTAssertEqual(NextLayer.tunnelContent(hello, target: target, interception: nil), .opaque)
        XCTAssertEqual(NextLayer.tunnelContent(Array(hello.prefix(20)), target: target, interception: try interception(true, authority: nil)),
                       .needMoreData)
        XCTAssertEqual(NextLayer.tunnelContent(Array("GET / HTTP/1.1\r\n".utf8), target: target, interception: nil), .http)
        XCTAssertEqual(NextLayer.tunnelContent(Array("SSH-2.0-x".utf8), target: target, interception: nil), .opaque)
        XCTAssertEqual(NextLayer.connectionProtocol(firstByte: 0x05), .socks5)
        XCTAssertEqual(NextLayer.connectionProtocol(firstByte: 0x04), .socks5, "SOCKS4 is refused by the SOCKS5 layer, with a reason")
        XCTAssertEqual(NextLayer.connectionProtocol(firstByte: UInt8(ascii: "G")), .http)
    }

    /// Moves bytes between the client engine, the session and the origin engine until quiet.
    func pump(_ p: Playbook, client: TLSEngine, origin: TLSEngine, pending: [ProxyCommand]) -> (clientPlain: [UInt8], originPlain: [UInt8]) {
        var queue = pending
        var clientPlain: [UInt8] = []
        var originPlain: [UInt8] = []
        for _ in 0..<200 {
            var progressed = false
            for command in queue {
                switch command {
                case .sendToClient(let bytes): client.feedNetwork(bytes); progressed = true
                case .sendToUpstream(1, let bytes): origin.feedNetwork(bytes); progressed = true
                default: break
                }
            }
            queue = []
            while let event = client.next() { if case .plaintext(let b) = event { clientPlain += b } }
            while let event = origin.next() { if case .plaintext(let b) = event { originPlain += b } }
            if client.hasNetworkOutput { queue += p.client(client.takeNetworkOutput()); progressed = true }
            if origin.hasNetworkOutput { queue += p.upstream(1, origin.takeNetworkOutput()); progressed = true }
            if !progressed && queue.isEmpty { break }
        }
        return (clientPlain, originPlain)
    }

    func testInterceptedExchangeIsRecordedAsHTTPS() throws {
        let p = try makePlaybook()
        assertTranscript(p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n"), ["open 1 origin.test:443"])
        p.connected(1)
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
                                                serverName: "origin.test")
        let originEngine = try TLSEngine.server(context: TLSServerContext(source: .leaf(authority.issueLeaf(for: "origin.test"))))
        _ = pump(p, client: clientEngine, origin: originEngine, pending: p.client(clientEngine.takeNetworkOutput()))
        XCTAssertEqual(clientEngine.state, .established, "the client trusts the harrec leaf")
        XCTAssertEqual(originEngine.state, .established, "harrec verified the origin")
        XCTAssertEqual(clientEngine.negotiatedALPN, "http/1.1")

        clientEngine.writePlaintext(Array("GET /secret?x=1 HTTP/1.1\r\nHost: origin.test\r\n\r\n".utf8))
        var (_, originPlain) = pump(p, client: clientEngine, origin: originEngine, pending: p.client(clientEngine.takeNetworkOutput()))
        XCTAssertEqual(text(originPlain), "GET /secret?x=1 HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        originEngine.writePlaintext(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
        let (clientPlain, _) = pump(p, client: clientEngine, origin: originEngine, pending: p.upstream(1, originEngine.takeNetworkOutput()))
        XCTAssertEqual(text(clientPlain), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        originPlain = []

        XCTAssertEqual(p.sink.flows.count, 1)
        let flow = p.sink.flows[0]
        XCTAssertEqual(flow.request.url, "https://origin.test/secret?x=1")
        XCTAssertEqual(flow.response?.body.bytes, Array("hello".utf8))
        XCTAssertNotNil(flow.instants.tlsStart)
        XCTAssertNotNil(flow.instants.tlsEnd)
        let timings = HARExport.entry(from: flow).timings
        XCTAssertGreaterThanOrEqual(timings.ssl ?? -1, 0)
        XCTAssertGreaterThanOrEqual(timings.connect ?? -1, timings.ssl ?? 0, "ssl is included in connect")
    }

    func testUntrustedOriginGets502WithTheVerifyError() throws {
        let p = try makePlaybook()
        p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        p.connected(1)
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
                                                serverName: "origin.test")
        // The origin's certificate comes from a different CA than the one harrec trusts.
        let otherAuthority = try TemporaryAuthority("intercept-other")
        defer { otherAuthority.remove() }
        let other = otherAuthority.ca
        let originEngine = try TLSEngine.server(context: TLSServerContext(source: .leaf(other.issueLeaf(for: "origin.test"))))
        _ = pump(p, client: clientEngine, origin: originEngine, pending: p.client(clientEngine.takeNetworkOutput()))
        XCTAssertEqual(clientEngine.state, .established, "the client side still completes")
        clientEngine.writePlaintext(Array("GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n".utf8))
        let (clientPlain, _) = pump(p, client: clientEngine, origin: originEngine, pending: p.client(clientEngine.takeNetworkOutput()))
        XCTAssertTrue(text(clientPlain).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), text(clientPlain))
        XCTAssertEqual(p.sink.flows.count, 1)
        let error = p.sink.flows[0].error ?? ""
        XCTAssertTrue(error.hasPrefix("upstream certificate verify failed"), error)
        XCTAssertTrue(error.hasSuffix("(host origin.test)"), error)
    }

    func testClientThatRejectsTheCertificateGetsAHint() throws {
        let p = try makePlaybook()
        p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        p.connected(1)
        // This client trusts nothing harrec can present.
        let otherAuthority = try TemporaryAuthority("intercept-client")
        defer { otherAuthority.remove() }
        let other = otherAuthority.ca
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .anchorsOnly([other.certificatePath])),
                                                serverName: "origin.test")
        let originEngine = try TLSEngine.server(context: TLSServerContext(source: .leaf(authority.issueLeaf(for: "origin.test"))))
        var log: [LiveEvent.Kind] = []
        var queue = p.client(clientEngine.takeNetworkOutput())
        for _ in 0..<20 {
            for command in queue {
                switch command {
                case .sendToClient(let bytes): clientEngine.feedNetwork(bytes)
                case .sendToUpstream(1, let bytes): originEngine.feedNetwork(bytes)
                case .log(let event): log.append(event.kind)
                default: break
                }
            }
            queue = []
            while clientEngine.next() != nil {}
            while originEngine.next() != nil {}
            if clientEngine.hasNetworkOutput { queue += p.client(clientEngine.takeNetworkOutput()) }
            if originEngine.hasNetworkOutput { queue += p.upstream(1, originEngine.takeNetworkOutput()) }
            if queue.isEmpty { break }
        }
        XCTAssertTrue(p.session.isFinished)
        XCTAssertTrue(log.contains {
            if case .clientTLSFailed(host: "origin.test", _, rejectedCertificate: true) = $0 { return true } else { return false }
        }, "\(log)")
        // The tunnel is an entry: no response, the reason with the hint, not refused.
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertEqual(p.sink.flows.first?.request.method, "CONNECT")
        XCTAssertEqual(p.sink.flows.first?.request.url, "https://origin.test:443/")
        XCTAssertNil(p.sink.flows.first?.response)
        XCTAssertEqual(p.sink.flows.first?.refused, false)
        XCTAssertTrue(p.sink.flows.first?.error?.contains("rejected harrec's certificate for origin.test") == true,
                      p.sink.flows.first?.error ?? "")
        XCTAssertTrue(p.sink.flows.first?.error?.contains("harrec ca show") == true)
    }

    func testMissingLeafIsSignedOffTheLoopBeforeTheHandshake() throws {
        var configuration = ProxyConfiguration()
        configuration.interception = TLSInterception(
            serverContext: try TLSServerContext(source: .authority(authority)),
            clientContext: try TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
            authority: authority)
        let p = Playbook(configuration: configuration)
        p.client("CONNECT fresh.test:443 HTTP/1.1\r\nHost: fresh.test:443\r\n\r\n")
        p.connected(1)
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
                                                serverName: "fresh.test")
        let hello = clientEngine.takeNetworkOutput()
        // Split the hello: the session waits for the whole record, then asks for the leaf.
        assertTranscript(p.client(Array(hello.prefix(10))), [])
        assertTranscript(p.client(Array(hello.dropFirst(10))), ["prepare certificate fresh.test"])
        XCTAssertNil(authority.cachedLeaf(for: "fresh.test"))
        _ = try authority.issueLeaf(for: "fresh.test")  // what the runtime does on its queue
        let commands = p.certificatePrepared()
        XCTAssertFalse(clientBytes(commands).isEmpty, "the ServerHello goes out once the leaf exists")
        XCTAssertFalse(upstreamBytes(commands, 1).isEmpty, "and TLS to the upstream starts")
        XCTAssertEqual(authority.signingCount, 1, "no second signing in the handshake")
    }

    func testClientThatHangsUpMidHandshakeGetsAHint() throws {
        let p = try makePlaybook()
        p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        p.connected(1)
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .none), serverName: "origin.test")
        XCTAssertFalse(clientBytes(p.client(clientEngine.takeNetworkOutput())).isEmpty, "harrec answers the hello")
        let commands = p.clientEOF()
        XCTAssertTrue(commands.contains { $0 == .log(LiveEvent(client: "127.0.0.1:50000", .clientAbandonedTLS(host: "origin.test"))) })
        XCTAssertTrue(p.session.isFinished)
    }

    func testIgnoredHostIsRelayedByteForByte() throws {
        let p = try makePlaybook(intercept: false)
        p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        p.connected(1)
        let clientEngine = try TLSEngine.client(context: TLSClientContext(verification: .none), serverName: "origin.test")
        let hello = clientEngine.takeNetworkOutput()
        XCTAssertEqual(upstreamBytes(p.client(hello), 1), hello, "the ClientHello goes upstream untouched")
    }
}
