import HTTP1
import HTTP2
@testable import ProxyCore
import Recording
import TLS
import XCTest

/// ALPN chosen by the upstream first, and HTTP/2 through the whole session: real OpenSSL engines
/// on both ends in memory, with real nghttp2 connections over them.
final class HTTP2InterceptionTests: XCTestCase {
    var temporary: TemporaryAuthority!
    var authority: CertificateAuthority { temporary.ca }

    override func setUpWithError() throws { temporary = try TemporaryAuthority("h2-intercept") }
    override func tearDown() { temporary.remove() }

    func makePlaybook(http2: Bool = true) throws -> Playbook {
        var configuration = ProxyConfiguration()
        configuration.http2 = http2
        configuration.interception = TLSInterception(
            serverContext: try TLSServerContext(source: .authority(authority)),
            clientContext: try TLSClientContext(verification: .anchorsOnly([authority.certificatePath])))
        return Playbook(configuration: configuration)
    }

    /// The two TLS ends and, once set, HTTP/2 connections over them.
    final class Ends {
        let client: TLSEngine
        let origin: TLSEngine
        var h2Client: HTTP2Connection?
        var h2Origin: HTTP2Connection?
        var clientPlain: [UInt8] = []
        var originPlain: [UInt8] = []
        var clientEvents: [HTTP2Event] = []
        var originEvents: [HTTP2Event] = []

        init(client: TLSEngine, origin: TLSEngine) {
            self.client = client
            self.origin = origin
        }
    }

    func makeEnds(clientOffers: [String], originAccepts: [String], originAuthority: CertificateAuthority? = nil) throws -> Ends {
        let client = try TLSEngine.client(context: TLSClientContext(verification: .anchorsOnly([authority.certificatePath])),
                                          serverName: "origin.test", alpnProtocols: clientOffers)
        let leaf = try (originAuthority ?? authority).issueLeaf(for: "origin.test")
        let origin = try TLSEngine.server(context: TLSServerContext(source: .leaf(leaf), alpnProtocols: originAccepts))
        return Ends(client: client, origin: origin)
    }

    /// Moves bytes between the ends and the session until quiet.
    func pump(_ p: Playbook, _ ends: Ends, pending: [ProxyCommand] = []) throws {
        var queue = pending
        for _ in 0..<500 {
            var progressed = false
            for command in queue {
                switch command {
                case .sendToClient(let bytes): ends.client.feedNetwork(bytes); progressed = true
                case .sendToUpstream(1, let bytes): ends.origin.feedNetwork(bytes); progressed = true
                default: break
                }
            }
            queue = []
            while let event = ends.client.next() {
                if case .plaintext(let bytes) = event {
                    if let h2 = ends.h2Client { try bytes.withUnsafeBytes { try h2.receive($0) } } else { ends.clientPlain += bytes }
                }
            }
            while let event = ends.origin.next() {
                if case .plaintext(let bytes) = event {
                    if let h2 = ends.h2Origin { try bytes.withUnsafeBytes { try h2.receive($0) } } else { ends.originPlain += bytes }
                }
            }
            if let h2 = ends.h2Client {
                while let event = h2.nextEvent() {
                    ends.clientEvents.append(event)
                    if case .data(let id, let bytes) = event { h2.consumed(bytes.count, on: id) }
                }
                if ends.client.state == .established {
                    let out = h2.takeOutput()
                    if !out.isEmpty { ends.client.writePlaintext(out); progressed = true }
                }
            }
            if let h2 = ends.h2Origin {
                while let event = h2.nextEvent() {
                    ends.originEvents.append(event)
                    if case .data(let id, let bytes) = event { h2.consumed(bytes.count, on: id) }
                }
                if ends.origin.state == .established {
                    let out = h2.takeOutput()
                    if !out.isEmpty { ends.origin.writePlaintext(out); progressed = true }
                }
            }
            if ends.client.hasNetworkOutput { queue += p.client(ends.client.takeNetworkOutput()); progressed = true }
            if ends.origin.hasNetworkOutput { queue += p.upstream(1, ends.origin.takeNetworkOutput()); progressed = true }
            if !progressed && queue.isEmpty { return }
        }
        XCTFail("never quiet")
    }

    func connect(_ p: Playbook) {
        p.client("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        p.connected(1)
    }

    func testH2ClientAndH2OriginSpeakH2EndToEnd() throws {
        let p = try makePlaybook()
        connect(p)
        let ends = try makeEnds(clientOffers: ["h2", "http/1.1"], originAccepts: ["h2", "http/1.1"])
        ends.h2Client = try HTTP2Connection(role: .client)
        ends.h2Origin = try HTTP2Connection(role: .server)
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(ends.origin.negotiatedALPN, "h2", "the upstream was offered the client's list")
        XCTAssertEqual(ends.client.negotiatedALPN, "h2", "the client got what the upstream chose")
        let sid = try ends.h2Client!.sendRequest([
            HTTPField(name: ":method", value: "GET"), HTTPField(name: ":scheme", value: "https"),
            HTTPField(name: ":authority", value: "origin.test"), HTTPField(name: ":path", value: "/h2?x=1"),
            HTTPField(name: "accept", value: "application/json")], endStream: true)
        try pump(p, ends)
        guard case .headers(let oid, let fields, true)? = ends.originEvents.first else {
            return XCTFail("the origin got no request: \(ends.originEvents)")
        }
        XCTAssertTrue(fields.contains(HTTPField(name: ":path", value: "/h2?x=1")))
        try ends.h2Origin!.sendResponse([HTTPField(name: ":status", value: "200"), HTTPField(name: "content-type", value: "application/json")],
                                        on: oid, endStream: false)
        ends.h2Origin!.sendData(Array("{\"ok\":true}".utf8), on: oid, end: true)
        try pump(p, ends)
        XCTAssertEqual(streamData(ends.clientEvents, sid), Array("{\"ok\":true}".utf8))
        XCTAssertEqual(p.sink.flows.count, 1)
        let flow = p.sink.flows[0]
        XCTAssertEqual(flow.request.url, "https://origin.test/h2?x=1")
        XCTAssertEqual(flow.request.httpVersion, "http/2.0")
        XCTAssertEqual(flow.response?.status, 200)
        XCTAssertNotNil(flow.instants.tlsStart, "the first stream carries the connection's setup")
        XCTAssertEqual(flow.connectionID, "7-1")
    }

    func testH2ClientGetsHTTP1WhenTheOriginOnlySpeaksHTTP1() throws {
        let p = try makePlaybook()
        connect(p)
        let ends = try makeEnds(clientOffers: ["h2", "http/1.1"], originAccepts: ["http/1.1"])
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(ends.origin.negotiatedALPN, "http/1.1")
        XCTAssertEqual(ends.client.negotiatedALPN, "http/1.1", "one protocol end to end")
        ends.client.writePlaintext(Array("GET /one HTTP/1.1\r\nHost: origin.test\r\n\r\n".utf8))
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(text(ends.originPlain), "GET /one HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        ends.origin.writePlaintext(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        try pump(p, ends, pending: p.upstream(1, ends.origin.takeNetworkOutput()))
        XCTAssertEqual(text(ends.clientPlain), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        XCTAssertEqual(p.sink.flows.first?.request.httpVersion, "HTTP/1.1")
    }

    func testWithoutHTTP2TheUpstreamIsOfferedHTTP1Only() throws {
        let p = try makePlaybook(http2: false)
        connect(p)
        let ends = try makeEnds(clientOffers: ["h2", "http/1.1"], originAccepts: ["h2", "http/1.1"])
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(ends.origin.negotiatedALPN, "http/1.1")
        XCTAssertEqual(ends.client.negotiatedALPN, "http/1.1")
    }

    /// The client's hello waits on the upstream; when the upstream fails its handshake, the
    /// client is still answered (HTTP/1.1) and its request gets the 502 with the reason.
    func testUpstreamFailureWhileTheHelloWaitsGivesA502OverHTTP1() throws {
        let p = try makePlaybook()
        connect(p)
        let other = try TemporaryAuthority("h2-other")
        defer { other.remove() }
        let ends = try makeEnds(clientOffers: ["h2", "http/1.1"], originAccepts: ["h2", "http/1.1"], originAuthority: other.ca)
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(ends.client.state, .established)
        XCTAssertEqual(ends.client.negotiatedALPN, "http/1.1")
        ends.client.writePlaintext(Array("GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n".utf8))
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertTrue(text(ends.clientPlain).hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), text(ends.clientPlain))
        XCTAssertTrue(p.sink.flows.first?.error?.hasPrefix("upstream certificate verify failed") == true,
                      p.sink.flows.first?.error ?? "no flow")
    }

    /// The upstream's handshake must finish within the connect limit while the hello waits.
    func testSilentUpstreamWhileTheHelloWaitsTimesOut() throws {
        let p = try makePlaybook()
        connect(p)
        let ends = try makeEnds(clientOffers: ["h2", "http/1.1"], originAccepts: ["h2"])
        let commands = p.client(ends.client.takeNetworkOutput())
        XCTAssertFalse(commands.contains { if case .sendToClient = $0 { return true }; return false },
                       "the client's hello is not answered before the upstream's handshake")
        XCTAssertTrue(commands.contains { if case .sendToUpstream(1, _) = $0 { return true }; return false })
        p.advance(ProxyTimeouts().upstreamConnect + 1)
        // The origin's bytes were never delivered: the upstream timed out, the client is answered.
        var queue = p.tick()
        XCTAssertTrue(queue.contains(.closeUpstream(1)))
        for _ in 0..<50 {
            if ends.client.hasNetworkOutput { queue = p.client(ends.client.takeNetworkOutput()) }
            for case .sendToClient(let bytes) in queue { ends.client.feedNetwork(bytes) }
            while ends.client.next() != nil {}
            if !ends.client.hasNetworkOutput { break }
        }
        XCTAssertEqual(ends.client.state, .established)
        XCTAssertEqual(ends.client.negotiatedALPN, "http/1.1")
    }

    /// Cleartext h2 with prior knowledge in a tunnel, with an origin that sends its SETTINGS before
    /// the client speaks (as Go's does): the SETTINGS wait for the client's preface, then both
    /// sides speak h2 through the layer.
    func testH2CPriorKnowledgeWithTheServerSpeakingFirst() throws {
        let p = Playbook()
        p.client("CONNECT origin.test:8080 HTTP/1.1\r\nHost: origin.test:8080\r\n\r\n")
        p.connected(1)
        let client = try HTTP2Connection(role: .client), origin = try HTTP2Connection(role: .server)
        let early = p.upstream(1, origin.takeOutput())
        XCTAssertTrue(clientBytes(early).isEmpty, "the origin's SETTINGS are held, not relayed")
        let sid = try client.sendRequest([HTTPField(name: ":method", value: "GET"), HTTPField(name: ":scheme", value: "http"),
                                          HTTPField(name: ":authority", value: "origin.test:8080"),
                                          HTTPField(name: ":path", value: "/plain")], endStream: true)
        var queue = p.client(client.takeOutput())
        var clientEvents: [HTTP2Event] = [], answered = false
        for _ in 0..<50 {
            for case .sendToUpstream(1, let bytes) in queue { try bytes.withUnsafeBytes { try origin.receive($0) } }
            for case .sendToClient(let bytes) in queue { try bytes.withUnsafeBytes { try client.receive($0) } }
            queue = []
            while let event = origin.nextEvent() {
                if case .headers(let oid, _, true) = event, !answered {
                    answered = true
                    try origin.sendResponse([HTTPField(name: ":status", value: "200")], on: oid, endStream: false)
                    origin.sendData(Array("cleartext".utf8), on: oid, end: true)
                }
            }
            while let event = client.nextEvent() { clientEvents.append(event) }
            let toOrigin = origin.takeOutput(), toClient = client.takeOutput()
            if toOrigin.isEmpty && toClient.isEmpty { break }
            if !toOrigin.isEmpty { queue += p.upstream(1, toOrigin) }
            if !toClient.isEmpty { queue += p.client(toClient) }
        }
        XCTAssertEqual(streamData(clientEvents, sid), Array("cleartext".utf8))
        XCTAssertEqual(p.sink.flows.first?.request.url, "http://origin.test:8080/plain")
        XCTAssertEqual(p.sink.flows.first?.response?.httpVersion, "http/2.0")
    }

    func testOnlyWhatMayBeAnHTTP2SettingsFrameIsHeld() {
        XCTAssertTrue(NextLayer.mayBeHTTP2Settings([0, 0, 12, 4, 0, 0, 0, 0, 0]))
        XCTAssertTrue(NextLayer.mayBeHTTP2Settings([0, 0]), "too short to tell")
        XCTAssertFalse(NextLayer.mayBeHTTP2Settings(Array("SSH-2.0-OpenSSH\r\n".utf8)), "banners are relayed at once")
        XCTAssertFalse(NextLayer.mayBeHTTP2Settings([0, 0, 12, 4, 1, 0, 0, 0, 0]), "a SETTINGS ACK is not a server preface")
        XCTAssertFalse(NextLayer.mayBeHTTP2Settings([0, 0, 7, 4, 0, 0, 0, 0, 0]), "SETTINGS lengths are multiples of 6")
        XCTAssertEqual(TunnelSniffer.classify(TunnelSniffer.http2Preface), .http2PriorKnowledge)
        XCTAssertEqual(TunnelSniffer.classify(Array(TunnelSniffer.http2Preface.prefix(10))), .needMoreData)
        XCTAssertEqual(TunnelSniffer.classify(Array("PRI * HTTP/1.1\r\n\r\n".utf8) + [UInt8](repeating: 0, count: 10)), .http)
    }

    /// An HTTP/1.1 client of an origin that speaks only h2 (it accepts the handshake without ALPN
    /// and sends its SETTINGS at once, as gRPC servers do): the request goes out as an h2 stream
    /// and the response comes back as HTTP/1.1, chunked since it has no length.
    func testHTTP1ClientOfAnH2OnlyOriginIsTranslated() throws {
        let p = try makePlaybook()
        connect(p)
        let ends = try makeEnds(clientOffers: ["http/1.1"], originAccepts: ["h2"])
        ends.h2Origin = try HTTP2Connection(role: .server)
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        XCTAssertEqual(ends.client.negotiatedALPN, "http/1.1")
        XCTAssertNil(ends.origin.negotiatedALPN, "no protocol in common; the origin speaks h2 anyway")
        ends.client.writePlaintext(Array("POST /rpc HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5\r\nTE: trailers\r\n\r\nhello".utf8))
        try pump(p, ends, pending: p.client(ends.client.takeNetworkOutput()))
        guard case .headers(let oid, let fields, false)? = ends.originEvents.first(where: { if case .headers = $0 { return true }; return false }) else {
            return XCTFail("no h2 request at the origin: \(ends.originEvents)")
        }
        XCTAssertEqual(fields, [HTTPField(name: ":method", value: "POST"), HTTPField(name: ":scheme", value: "https"),
                                HTTPField(name: ":authority", value: "origin.test"), HTTPField(name: ":path", value: "/rpc"),
                                HTTPField(name: "content-length", value: "5"), HTTPField(name: "te", value: "trailers")])
        XCTAssertEqual(streamData(ends.originEvents, oid), Array("hello".utf8))
        try ends.h2Origin!.sendResponse([HTTPField(name: ":status", value: "200"), HTTPField(name: "content-type", value: "application/grpc")],
                                        on: oid, endStream: false)
        ends.h2Origin!.sendData(Array("world".utf8), on: oid, end: true, trailers: [HTTPField(name: "grpc-status", value: "0")])
        try pump(p, ends)
        XCTAssertEqual(text(ends.clientPlain),
                       "HTTP/1.1 200 OK\r\ncontent-type: application/grpc\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nworld\r\n0\r\ngrpc-status: 0\r\n\r\n")
        let flow = try XCTUnwrap(p.sink.flows.first)
        XCTAssertEqual(flow.request.httpVersion, "HTTP/1.1")
        XCTAssertEqual(flow.response?.httpVersion, "http/2.0")
        XCTAssertEqual(flow.response?.headSize, -1)
        XCTAssertEqual(flow.response?.trailers, [RecordedField(name: "grpc-status", value: "0")])
        XCTAssertNil(flow.error)
    }
}
