#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import ProxyCore
import Recording
import TLS
import WebSocket
import XCTest

/// `TLSLayer` against real OpenSSL peers in memory, and `UpstreamPool`'s decisions.
final class TLSLayerTests: XCTestCase {
    var authority: TemporaryAuthority!

    override func setUpWithError() throws { authority = try TemporaryAuthority("tlslayer") }
    override func tearDown() { authority.remove() }

    /// A client layer and a server layer: what one sends, fed to the other, until both are quiet.
    /// Returns everything each side received.
    private func pump(_ client: inout TLSLayer, _ server: inout TLSLayer, first: [UInt8],
                      chunk: Int = .max) -> (toClient: TLSLayer.Received, toServer: TLSLayer.Received) {
        var toServer = TLSLayer.Received(), toClient = TLSLayer.Received()
        var forServer = first + client.flush(), forClient = server.flush()
        func merge(_ into: inout TLSLayer.Received, _ r: TLSLayer.Received) {
            into.plaintext += r.plaintext
            into.handshakeCompleted = into.handshakeCompleted || r.handshakeCompleted
            into.closed = into.closed || r.closed
            into.failure = into.failure ?? r.failure
        }
        /// Delivers `bytes` to `layer` in runs of `chunk` (the layer must not care where records
        /// are split); returns what it sends back.
        func deliver(_ bytes: [UInt8], to layer: inout TLSLayer, at time: Double, into received: inout TLSLayer.Received) -> [UInt8] {
            var reply: [UInt8] = []
            for start in stride(from: 0, to: bytes.count, by: min(chunk, max(bytes.count, 1))) {
                let r = Array(bytes[start..<min(start + chunk, bytes.count)]).withUnsafeBytes { layer.receive($0, at: time) }
                reply += r.output
                merge(&received, r)
            }
            return reply
        }
        var rounds = 0
        while (!forServer.isEmpty || !forClient.isEmpty) && rounds < 1000 {
            rounds += 1
            forClient += deliver(forServer, to: &server, at: 2, into: &toServer)
            forServer = server.flush()
            forServer += deliver(forClient, to: &client, at: 3, into: &toClient)
            forClient = client.flush()
        }
        return (toClient, toServer)
    }

    private func layers() throws -> (TLSLayer, TLSLayer) {
        let server = try TLSLayer.server(context: TLSServerContext(source: .authority(authority.ca)),
                                         fallbackServerName: "api.test", at: 1)
        let client = try TLSLayer.client(context: TLSClientContext(verification: .anchorsOnly([authority.ca.certificatePath])),
                                         serverName: "api.test", at: 1)
        return (client, server)
    }

    /// Handshake, data both ways (written before the handshake ends, and gathered over several
    /// writes), byte-by-byte delivery, then close_notify.
    func testHandshakeDataAndCloseBothWays() throws {
        for chunk in [Int.max, 1, 7] {
            var (client, server) = try layers()
            XCTAssertEqual(client.state, .handshaking)
            client.write(Array("GET / HTTP/1.1\r\n".utf8))
            client.write(Array("Host: api.test\r\n\r\n".utf8))
            XCTAssertTrue(client.hasPendingPlaintext)
            let hello = client.flush()
            XCTAssertFalse(hello.isEmpty, "a client layer has its ClientHello ready at once")
            XCTAssertFalse(client.hasPendingPlaintext)
            var (toClient, toServer) = pump(&client, &server, first: hello, chunk: chunk)
            XCTAssertTrue(toServer.handshakeCompleted && toClient.handshakeCompleted, "chunk \(chunk)")
            XCTAssertEqual(client.state, .established)
            XCTAssertEqual(server.state, .established)
            XCTAssertEqual(client.startedAt, 1)
            XCTAssertEqual(client.establishedAt, 3, "the instant of the receive that completed it")
            XCTAssertEqual(String(decoding: toServer.plaintext, as: UTF8.self), "GET / HTTP/1.1\r\nHost: api.test\r\n\r\n",
                           "plaintext written during the handshake is sent after it (chunk \(chunk))")

            server.write(Array("HTTP/1.1 200 OK\r\n".utf8))
            server.write(Array("Content-Length: 0\r\n\r\n".utf8))
            (toClient, toServer) = pump(&client, &server, first: [], chunk: chunk)
            XCTAssertEqual(String(decoding: toClient.plaintext, as: UTF8.self), "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            XCTAssertNil(toClient.failure)

            let closing = client.close()
            XCTAssertFalse(closing.isEmpty, "close_notify")
            XCTAssertEqual(client.state, .closing)
            (toClient, toServer) = pump(&client, &server, first: closing, chunk: chunk)
            XCTAssertTrue(toServer.closed, "the server saw close_notify (chunk \(chunk))")
            XCTAssertNil(toServer.failure)
        }
    }

    /// A peer that speaks no TLS: a failure, no plaintext, and nothing more after it.
    func testGarbageFails() throws {
        var (_, server) = try layers()
        let garbage = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let received = garbage.withUnsafeBytes { server.receive($0, at: 5) }
        XCTAssertNotNil(received.failure)
        XCTAssertTrue(received.plaintext.isEmpty)
        XCTAssertEqual(server.state, .failed)
        XCTAssertFalse(server.handshakeDone)
        XCTAssertNil(server.establishedAt)
        let more = Array(repeating: UInt8(0x16), count: 64).withUnsafeBytes { server.receive($0, at: 6) }
        XCTAssertNil(more.failure, "a failed layer reports its failure once")
        XCTAssertTrue(more.plaintext.isEmpty && !more.handshakeCompleted && !more.closed)
    }

    /// A client that distrusts the leaf (another CA) fails its side with the reason, and the
    /// server side sees the client's alert as a failure too.
    func testUntrustedLeafFailsBothSides() throws {
        let otherAuthority = try TemporaryAuthority("tlslayer-other")
        defer { otherAuthority.remove() }
        let other = otherAuthority.ca
        var server = try TLSLayer.server(context: TLSServerContext(source: .authority(authority.ca)),
                                         fallbackServerName: "api.test", at: 1)
        var client = try TLSLayer.client(context: TLSClientContext(verification: .anchorsOnly([other.certificatePath])),
                                         serverName: "api.test", at: 1)
        let (toClient, toServer) = pump(&client, &server, first: client.flush())
        XCTAssertNotNil(toClient.failure, "the client rejects a leaf from a CA it does not trust")
        XCTAssertEqual(client.state, .failed)
        XCTAssertNotNil(toServer.failure, "the server sees the client's alert")
        XCTAssertEqual(toServer.failure?.kind, .peerAlert)
    }

    /// Plaintext written and then discarded (its connection replaced) is never sent.
    func testDiscardedPlaintextIsNotSent() throws {
        var (client, server) = try layers()
        _ = pump(&client, &server, first: client.flush())
        client.write(Array("dropped".utf8))
        client.discardPending()
        XCTAssertFalse(client.hasPendingPlaintext)
        XCTAssertTrue(client.flush().isEmpty)
        client.write(Array("kept".utf8))
        let (_, toServer) = pump(&client, &server, first: client.flush())
        XCTAssertEqual(String(decoding: toServer.plaintext, as: UTF8.self), "kept")
    }
}

final class UpstreamPoolTests: XCTestCase {
    let target = ProxyTarget(host: "api.test", port: 80)
    let details = UpstreamConnection(remoteIP: "127.0.0.1", dnsStart: 1, dnsEnd: 2, connectStart: 2, connectEnd: 3)

    func testOpenConnectReuseAndClose() {
        let pool = UpstreamPool(sessionID: 7)
        XCTAssertEqual(pool.reuse(for: target), .none)
        XCTAssertNil(pool.close(), "nothing to close")
        XCTAssertEqual(pool.open(to: target, at: 1), .openUpstream(1, host: "api.test", port: 80))
        XCTAssertTrue(pool.isActive(1))
        XCTAssertEqual(pool.reuse(for: target), .none, "not connected yet")
        XCTAssertFalse(pool.connected(2, details), "a report about another connection is stale")
        XCTAssertTrue(pool.connected(1, details))
        XCTAssertEqual(pool.reuse(for: target), .ready)
        XCTAssertEqual(pool.reuse(for: ProxyTarget(host: "other.test", port: 80)), .none)
        XCTAssertEqual(pool.close(), .closeUpstream(1))
        XCTAssertNil(pool.active)
        XCTAssertEqual(pool.open(to: target, at: 5), .openUpstream(2, host: "api.test", port: 80), "ids are never reused")
        pool.forget()
        XCTAssertNil(pool.close(), "a forgotten connection needs no close")
    }

    /// The first exchange on a connection pays for its setup; later ones carry only its address
    /// and id.
    func testFirstExchangeClaimsTheSetupTimings() {
        let pool = UpstreamPool(sessionID: 7)
        _ = pool.open(to: target, at: 1)
        _ = pool.connected(1, details)
        var first = Flow(id: 1, clientAddress: "c", request: RecordedRequest(method: "GET", url: "http://api.test/", httpVersion: "HTTP/1.1", fields: [], headSize: 0),
                         instants: FlowInstants(requestStart: 4))
        var second = first
        pool.assign(&first)
        pool.assign(&second)
        XCTAssertEqual(first.instants.dnsStart, 1)
        XCTAssertEqual(first.instants.connectEnd, 3)
        XCTAssertEqual(first.serverIPAddress, "127.0.0.1")
        XCTAssertEqual(first.connectionID, "7-1")
        XCTAssertNil(second.instants.dnsStart)
        XCTAssertNil(second.instants.connectStart)
        XCTAssertEqual(second.connectionID, "7-1")
        XCTAssertEqual(pool.active?.exchangesCarried, 2)
    }

    func testOverdueConnect() {
        let pool = UpstreamPool(sessionID: 1)
        _ = pool.open(to: target, at: 10)
        XCTAssertNil(pool.overdueConnect(at: 24, limit: 15))
        XCTAssertEqual(pool.overdueConnect(at: 26, limit: 15)?.id, 1)
        _ = pool.connected(1, details)
        XCTAssertNil(pool.overdueConnect(at: 100, limit: 15), "a ready connection is not connecting")
    }
}

final class WebSocketRelayTests: XCTestCase {
    private func upgradeFlow(_ url: String) -> Flow {
        Flow(id: 42, clientAddress: "c", request: RecordedRequest(method: "GET", url: url, httpVersion: "HTTP/1.1", fields: [], headSize: 0),
             instants: FlowInstants(requestStart: 1))
    }

    /// Streamed (a journal): a start record, each message as it completes (split frames too),
    /// then the flow without messages. Kept: nothing until the end, then one flow with them all.
    func testStreamedAndKeptRecording() {
        let hello = WebSocketFrameEncoder.frame(opcode: 1, payload: Array("hello".utf8), maskKey: 0x01020304)
        let reply = WebSocketFrameEncoder.frame(opcode: 2, payload: [0, 1, 2, 255])
        for streams in [true, false] {
            var configuration = ProxyConfiguration()
            configuration.streamWebSocketMessages = streams
            var relay = WebSocketRelay(upgrade: upgradeFlow("https://chat.test/socket"), extensionHeader: nil, configuration: configuration)
            XCTAssertEqual(relay.flow.request.url, "wss://chat.test/socket")
            XCTAssertEqual(relay.startRecords.count, streams ? 1 : 0)
            XCTAssertEqual(relay.relayed(Array(hello.prefix(3)), from: .clientToServer, at: 2), [], "half a frame is no message")
            let first = relay.relayed(Array(hello.dropFirst(3)), from: .clientToServer, at: 3)
            let second = relay.relayed(reply, from: .serverToClient, at: 4)
            let (records, event) = relay.finish(at: 5, shuttingDown: true)
            guard case .flow(let flow) = records.last, case .webSocketEnded(_, let open, let sent, let received) = event else {
                return XCTFail("the end records the flow and logs the end")
            }
            XCTAssertTrue(open, "stopping without close frames leaves the conversation open")
            XCTAssertEqual(sent, 1)
            XCTAssertEqual(received, 1)
            XCTAssertEqual(flow.instants.end, 5)
            if streams {
                guard case .webSocketMessage(let m1, flowID: 42) = first.first, case .webSocketMessage(let m2, flowID: 42) = second.first else {
                    return XCTFail("streamed messages as they complete: \(first) \(second)")
                }
                XCTAssertEqual(m1.data, Array("hello".utf8))
                XCTAssertEqual(m1.time, 3)
                XCTAssertEqual(m2.data, [0, 1, 2, 255])
                XCTAssertEqual(flow.webSocket?.messages.count, 0)
            } else {
                XCTAssertEqual(first, [])
                XCTAssertEqual(second, [])
                XCTAssertEqual(flow.webSocket?.messages.map(\.data), [Array("hello".utf8), [0, 1, 2, 255]])
            }
        }
    }

    func testBothCloseFramesEndTheConversation() {
        var relay = WebSocketRelay(upgrade: upgradeFlow("http://chat.test/"), extensionHeader: nil, configuration: ProxyConfiguration())
        XCTAssertEqual(relay.flow.request.url, "ws://chat.test/")
        let close = WebSocketFrameEncoder.closePayload(code: 1000, reason: "bye")
        _ = relay.relayed(WebSocketFrameEncoder.frame(opcode: 8, payload: close, maskKey: 7), from: .clientToServer, at: 2)
        _ = relay.relayed(WebSocketFrameEncoder.frame(opcode: 8, payload: close), from: .serverToClient, at: 3)
        let (_, event) = relay.finish(at: 4, shuttingDown: true)
        guard case .webSocketEnded(_, let open, _, _) = event else { return XCTFail("\(event)") }
        XCTAssertFalse(open, "closed by both sides before harrec stopped")
    }
}
