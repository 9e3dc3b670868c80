@testable import ProxyCore
import SOCKS5
import XCTest

/// The SOCKS5 layer on its own: negotiation, the CONNECT with early data, and the reply that
/// takes the handshake to `.done` or `.failed`.
final class SOCKS5LayerTests: XCTestCase {
    private func receive(_ layer: inout SOCKS5Layer, _ bytes: [UInt8]) -> [SOCKS5Layer.Output] {
        bytes.withUnsafeBytes { layer.receive($0) }
    }

    private let connectRequest: [UInt8] = [5, 1, 0, 3, 6] + Array("a.test".utf8) + [0, 80]

    func testNoAuthConnectReachesDoneWithTheSuccessReply() {
        var layer = SOCKS5Layer(credentials: nil)
        XCTAssertEqual(receive(&layer, [5, 1, 0]), [.send([5, 0])])
        XCTAssertEqual(layer.state, .negotiating)
        // The request and the first tunnel bytes in one read: the early data goes with the connect.
        XCTAssertEqual(receive(&layer, connectRequest + Array("GET /".utf8)),
                       [.connect(ProxyTarget(host: "a.test", port: 80), earlyData: Array("GET /".utf8))])
        XCTAssertEqual(layer.state, .connecting(ProxyTarget(host: "a.test", port: 80)))
        XCTAssertEqual(layer.connected(), SOCKS5ServerHandshake.reply(.succeeded))
        XCTAssertEqual(layer.state, .done(ProxyTarget(host: "a.test", port: 80)))
        // Later bytes are the tunnel's, not the layer's.
        XCTAssertEqual(receive(&layer, [5, 1, 0]), [])
        XCTAssertEqual(layer.connected(), [], "one reply only")
    }

    func testByteByByteNegotiationGivesTheSameOutputs() {
        var whole = SOCKS5Layer(credentials: nil)
        var split = SOCKS5Layer(credentials: nil)
        let input: [UInt8] = [5, 1, 0] + connectRequest
        var outputs: [SOCKS5Layer.Output] = []
        for byte in input { outputs += receive(&split, [byte]) }
        XCTAssertEqual(outputs, receive(&whole, input))
        XCTAssertEqual(split.state, whole.state)
    }

    func testAFailedConnectRepliesWithItsCodeAndEndsFailed() {
        let cases: [(UpstreamFailure.Kind, SOCKS5ReplyCode)] = [
            (.refused, .connectionRefused), (.unreachable, .hostUnreachable), (.dns, .hostUnreachable),
            (.timeout, .hostUnreachable), (.networkUnreachable, .networkUnreachable),
            (.notAllowed, .connectionNotAllowed), (.addressFamily, .addressTypeNotSupported),
            (.reset, .generalFailure), (.other, .generalFailure),
        ]
        for (kind, code) in cases {
            var layer = SOCKS5Layer(credentials: nil)
            _ = receive(&layer, [5, 1, 0] + connectRequest)
            XCTAssertEqual(layer.connectFailed(kind), SOCKS5ServerHandshake.reply(code), "\(kind)")
            XCTAssertEqual(layer.state, .failed)
            XCTAssertEqual(layer.connected(), [], "no success after a failure")
        }
    }

    func testWrongPasswordIsRefusedWithoutNamingIt() {
        var layer = SOCKS5Layer(credentials: ProxyCredentials(username: "user", password: "s3cret-pw"))
        XCTAssertEqual(receive(&layer, [5, 1, 2]), [.send([5, 2])])
        let outputs = receive(&layer, [1, 4] + Array("user".utf8) + [5] + Array("wrong".utf8))
        guard case .refuse(let reply, let reason)? = outputs.last else { return XCTFail("\(outputs)") }
        XCTAssertEqual(reply, [1, 1])
        XCTAssertFalse(reason.contains("s3cret-pw") || reason.contains("wrong"), reason)
        XCTAssertEqual(layer.state, .failed)
    }

    func testAClientThatHangsUpMidHandshakeIsRefusedWithNoReply() {
        var layer = SOCKS5Layer(credentials: nil)
        _ = receive(&layer, [5, 1])
        guard case .refuse(let reply, _)? = layer.clientClosed().last else { return XCTFail("no refusal") }
        XCTAssertEqual(reply, [])
        XCTAssertEqual(layer.state, .failed)
    }
}

/// The relay's half-closes: each end is forwarded once, and the relay ends with the second.
final class TunnelRelayTests: XCTestCase {
    func testEachDirectionEndsOnItsOwnAndTheSecondEndFinishes() {
        var relay = TunnelRelay(upstreamID: 3)
        XCTAssertEqual(relay.clientEnded(), .halfCloseUpstream)
        XCTAssertFalse(relay.clientToUpstreamOpen)
        XCTAssertTrue(relay.upstreamToClientOpen)
        XCTAssertEqual(relay.upstreamEnded(), .finish)

        var other = TunnelRelay(upstreamID: 3)
        XCTAssertEqual(other.upstreamEnded(), .halfCloseClient)
        XCTAssertEqual(other.clientEnded(), .finish)
    }
}
