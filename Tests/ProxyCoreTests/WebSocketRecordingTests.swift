import HAR
@testable import ProxyCore
import Recording
import WebSocket
import XCTest

final class WebSocketRecordingTests: XCTestCase {
    let upgrade = "GET http://a.test/chat HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    let switching = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"

    func upgraded(_ configuration: ProxyConfiguration = ProxyConfiguration()) -> Playbook {
        let p = Playbook(configuration: configuration)
        p.client(upgrade)
        p.connected(1)
        let commands = p.upstream(1, switching)
        XCTAssertTrue(text(clientBytes(commands)).hasPrefix("HTTP/1.1 101 "))
        XCTAssertTrue(p.sink.flows.isEmpty, "the entry waits for the conversation to end")
        return p
    }

    func testMessagesBothWaysAreRecordedInOrderAndRelayedUntouched() throws {
        let p = upgraded()
        let hello = WebSocketFrameEncoder.frame(opcode: 1, payload: Array("hello".utf8), maskKey: 0x01020304)
        XCTAssertEqual(upstreamBytes(p.client(hello), 1), hello, "client frames are relayed as they are")
        let reply = WebSocketFrameEncoder.frame(opcode: 2, payload: [0, 1, 2, 255])
        // Split the server frame: the relay forwards each piece, the parser waits for the whole.
        XCTAssertEqual(clientBytes(p.upstream(1, Array(reply.prefix(3)))), Array(reply.prefix(3)))
        XCTAssertEqual(clientBytes(p.upstream(1, Array(reply.dropFirst(3)))), Array(reply.dropFirst(3)))
        p.client(WebSocketFrameEncoder.frame(opcode: 8, payload: WebSocketFrameEncoder.closePayload(code: 1000, reason: "bye"), maskKey: 7))
        p.upstream(1, WebSocketFrameEncoder.frame(opcode: 8, payload: WebSocketFrameEncoder.closePayload(code: 1000, reason: "bye")))
        let log = p.upstreamEOF(1) + p.clientEOF()
        XCTAssertTrue(liveEvents(log).contains {
            if case .webSocketEnded(_, stillOpen: false, sent: 1, received: 1) = $0 { return true } else { return false }
        })

        XCTAssertEqual(p.sink.flows.count, 1)
        let flow = p.sink.flows[0]
        XCTAssertEqual(flow.request.url, "ws://a.test/chat")
        XCTAssertEqual(flow.response?.status, 101)
        let messages = try XCTUnwrap(flow.webSocket?.messages)
        XCTAssertEqual(messages.map(\.direction), [.send, .receive, .send, .receive])
        XCTAssertEqual(messages.map(\.opcode), [1, 2, 8, 8])
        XCTAssertEqual(messages[0].data, Array("hello".utf8))
        XCTAssertEqual(messages[1].data, [0, 1, 2, 255])
        XCTAssertEqual(text(messages[2].data), "1000 bye")
        XCTAssertEqual(flow.webSocket?.isOpen, false)

        let entry = HARExport.entry(from: flow)
        XCTAssertEqual(entry.custom.map(\.key), ["_resourceType", "_webSocketMessages"])
        guard case .array(let items) = entry.custom[1].value else { return XCTFail("no messages array") }
        XCTAssertEqual(items[1]["data"]?.stringValue, "AAEC/w==", "binary data is base64")
        XCTAssertEqual(items[0]["type"]?.stringValue, "send")
        XCTAssertEqual(HARValidator.validate(bytes: HARExport.log(from: [flow], creatorVersion: "t").serialize()), [])
    }

    /// With a journal, messages are recorded one by one as they complete (commands in the
    /// transcript), and the conversation's final flow carries none.
    func testStreamedMessagesAreRecordCommandsAsTheyComplete() {
        var configuration = ProxyConfiguration()
        configuration.streamWebSocketMessages = true
        let p = Playbook(configuration: configuration)
        p.client(upgrade)
        p.connected(1)
        XCTAssertTrue(transcript(p.upstream(1, switching)).contains("record websocket start ws://a.test/chat"))
        let hello = WebSocketFrameEncoder.frame(opcode: 1, payload: Array("hello".utf8), maskKey: 0x01020304)
        // Half a frame completes no message; the rest does.
        XCTAssertFalse(transcript(p.client(Array(hello.prefix(4)))).contains { $0.hasPrefix("record") })
        XCTAssertEqual(transcript(p.client(Array(hello.dropFirst(4)))).filter { $0.hasPrefix("record") },
                       ["record websocket send hello"])
        XCTAssertEqual(transcript(p.upstream(1, WebSocketFrameEncoder.frame(opcode: 1, payload: Array("hi".utf8))))
                        .filter { $0.hasPrefix("record") }, ["record websocket receive hi"])
        p.upstreamEOF(1)
        p.clientEOF()
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertEqual(p.sink.flows.first?.webSocket?.messages.count, 0, "the messages went out one by one")
    }

    /// A client that sent its end before the 101 has nothing left to relay: the upstream's end
    /// finishes the session at once instead of waiting for the idle limit.
    func testUpgradeAfterTheClientsEndFinishesOnTheUpstreamsEnd() {
        let p = Playbook()
        p.client(upgrade)
        p.clientEOF()
        p.connected(1)
        p.upstream(1, switching)
        XCTAssertFalse(p.session.isFinished)
        XCTAssertFalse(p.session.wantsClientData, "the client's direction has ended")
        p.upstreamEOF(1)
        XCTAssertTrue(p.session.isFinished)
    }

    func testShutdownWritesAnOpenConversation() {
        let p = upgraded()
        p.client(WebSocketFrameEncoder.frame(opcode: 1, payload: Array("still here".utf8), maskKey: 9))
        p.beginShutdown()
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertEqual(p.sink.flows.first?.webSocket?.isOpen, true)
        XCTAssertEqual(p.sink.flows.first?.webSocket?.messages.count, 1)
    }

    func testControlFramesOnlyWhenAsked() {
        let plain = upgraded()
        plain.upstream(1, WebSocketFrameEncoder.frame(opcode: 9, payload: Array("p".utf8)))
        plain.client(WebSocketFrameEncoder.frame(opcode: 10, payload: Array("p".utf8), maskKey: 3))
        plain.clientEOF()
        plain.upstreamEOF(1)
        XCTAssertEqual(plain.sink.flows.first?.webSocket?.messages.count, 0)

        var configuration = ProxyConfiguration()
        configuration.recordWebSocketControlFrames = true
        let withControl = upgraded(configuration)
        withControl.upstream(1, WebSocketFrameEncoder.frame(opcode: 9, payload: Array("p".utf8)))
        withControl.client(WebSocketFrameEncoder.frame(opcode: 10, payload: Array("p".utf8), maskKey: 3))
        withControl.clientEOF()
        withControl.upstreamEOF(1)
        XCTAssertEqual(withControl.sink.flows.first?.webSocket?.messages.map(\.opcode), [9, 10])
    }

    func testProtocolViolationIsNotedAndRelayingGoesOn() {
        let p = upgraded()
        let unmasked = WebSocketFrameEncoder.frame(opcode: 1, payload: Array("x".utf8))
        XCTAssertEqual(upstreamBytes(p.client(unmasked), 1), unmasked)
        XCTAssertEqual(upstreamBytes(p.client([1, 2, 3]), 1), [1, 2, 3])
        p.clientEOF()
        p.upstreamEOF(1)
        XCTAssertEqual(p.sink.flows.first?.webSocket?.problems.count, 1)
    }

    func testNonWebSocketUpgradeIsRecordedAtOnce() {
        let p = Playbook()
        p.client("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
        p.connected(1)
        p.upstream(1, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n")
        XCTAssertEqual(p.sink.flows.count, 1)
        XCTAssertNil(p.sink.flows.first?.webSocket)
    }
}
