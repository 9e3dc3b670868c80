@testable import HARReplay
import HARScenarios
import HTTP1
@testable import ProxyCore
import WebSocket
import XCTest

/// A recorded conversation replayed to a client: server messages after the client message that
/// preceded them, client messages matched in order, the close replayed and always answered.
final class WebSocketReplayTests: XCTestCase {
    typealias Message = RecordedConversation.Message

    private func server(_ text: String, at time: Double? = nil) -> Message {
        Message(fromClient: false, opcode: WebSocketOpcode.text, data: Array(text.utf8), time: time)
    }

    private func client(_ text: String, at time: Double? = nil) -> Message {
        Message(fromClient: true, opcode: WebSocketOpcode.text, data: Array(text.utf8), time: time)
    }

    private func masked(_ text: String, opcode: UInt8 = WebSocketOpcode.text) -> [UInt8] {
        WebSocketFrameEncoder.frame(opcode: opcode, payload: Array(text.utf8), maskKey: 0x1234_5678)
    }

    /// The server frames in `bytes`, as (opcode, payload text).
    private func frames(_ bytes: [UInt8]) -> [String] {
        var parser = WebSocketParser(direction: .serverToClient, deflate: nil)
        parser.feed(bytes)
        var out: [String] = []
        while let event = parser.next() {
            switch event {
            case .message(_, let data, _, _, _, _): out.append(String(decoding: data, as: UTF8.self))
            case .close(let code, let reason): out.append("close \(code.map(String.init) ?? "-") \(reason)")
            case .pong(let payload): out.append("pong \(String(decoding: payload, as: UTF8.self))")
            case .ping: out.append("ping")
            case .protocolError(let reason): out.append("error \(reason)")
            }
        }
        return out
    }

    private let chat = RecordedConversation(messages: [
        Message(fromClient: false, opcode: WebSocketOpcode.text, data: Array("welcome".utf8), time: 100.0),
        Message(fromClient: true, opcode: WebSocketOpcode.text, data: Array(#"{"type":"subscribe"}"#.utf8), time: 101.0),
        Message(fromClient: false, opcode: WebSocketOpcode.text, data: Array("subscribed".utf8), time: 101.2),
        Message(fromClient: false, opcode: WebSocketOpcode.binary, data: [0, 1, 2], time: 101.5),
        Message(fromClient: true, opcode: WebSocketOpcode.text, data: Array("bye".utf8), time: 103.0),
        Message(fromClient: false, opcode: WebSocketOpcode.close, data: Array("1000 done".utf8), time: 103.1),
        Message(fromClient: true, opcode: WebSocketOpcode.close, data: Array("1000".utf8), time: 103.2),
    ], openedAt: 99.9, subprotocol: nil, leftOpen: false)

    func testServerMessagesFollowTheClientMessagesThatTriggeredThem() {
        let replay = WebSocketReplay(conversation: chat, label: "#1", latency: false)
        XCTAssertEqual(frames(replay.start(at: 0).frames), ["welcome"])
        let subscribed = replay.clientBytes(masked(#"{"type":"subscribe"}"#), at: 1)
        XCTAssertEqual(frames(subscribed.frames), ["subscribed", "\u{0}\u{1}\u{2}"])
        XCTAssertEqual(subscribed.divergences, [])
        // Split across reads, byte by byte.
        var last = WebSocketReplay.Output()
        for byte in masked("bye") { last = replay.clientBytes([byte], at: 2) }
        XCTAssertEqual(frames(last.frames), ["close 1000 done"])
        XCTAssertEqual(replay.state, .closeSent)
        XCTAssertFalse(last.close)
        let closed = replay.clientBytes(WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.close, payload: [3, 232], maskKey: 7), at: 3)
        XCTAssertTrue(closed.close)
        XCTAssertEqual(replay.state, .closed)
    }

    func testDivergencesAreReportedAndTheReplayGoesOn() {
        let replay = WebSocketReplay(conversation: chat, label: "#1", latency: false)
        _ = replay.start(at: 0)
        let out = replay.clientBytes(masked(#"{"type":"unsubscribe"}"#), at: 1)
        XCTAssertEqual(out.divergences, [#"client message 1 differs from the recording: expected text "{"type":"subscribe"}", got text "{"type":"unsubscribe"}""#])
        XCTAssertEqual(frames(out.frames), ["subscribed", "\u{0}\u{1}\u{2}"], "the recorded answer still follows")
        _ = replay.clientBytes(masked("bye"), at: 2)
        let extra = WebSocketReplay(conversation: RecordedConversation(messages: [], openedAt: nil, subprotocol: nil, leftOpen: true),
                                    label: "#2", latency: false)
        XCTAssertEqual(extra.clientBytes(masked("hello?"), at: 0).divergences, [#"client message 1 (text "hello?") is not in the recording"#])
    }

    func testRecordedGapsWithLatency() {
        let replay = WebSocketReplay(conversation: chat, label: "#1", latency: true)
        let opened = replay.start(at: 50)
        XCTAssertEqual(frames(opened.frames), [], "welcome was sent 0.1 s after the open")
        XCTAssertEqual(opened.wakeAt!, 50.1, accuracy: 1e-9)
        XCTAssertEqual(frames(replay.due(at: 50.1).frames), ["welcome"])
        let afterSubscribe = replay.clientBytes(masked(#"{"type":"subscribe"}"#), at: 60)
        XCTAssertEqual(frames(afterSubscribe.frames), [])
        XCTAssertEqual(afterSubscribe.wakeAt!, 60.2, accuracy: 1e-9)
        let first = replay.due(at: 60.2)
        XCTAssertEqual(frames(first.frames), ["subscribed"])
        XCTAssertEqual(first.wakeAt!, 60.5, accuracy: 1e-9)
        XCTAssertEqual(frames(replay.due(at: 60.5).frames), ["\u{0}\u{1}\u{2}"])
    }

    func testAClientCloseIsAnsweredAndPingsArePonged() {
        let replay = WebSocketReplay(conversation: chat, label: "#1", latency: false)
        _ = replay.start(at: 0)
        let pong = replay.clientBytes(WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.ping, payload: Array("p".utf8), maskKey: 1), at: 1)
        XCTAssertEqual(frames(pong.frames), ["pong p"])
        let close = replay.clientBytes(WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.close, payload: [3, 233], maskKey: 1), at: 2)
        XCTAssertEqual(frames(close.frames), ["close 1001 "], "the client's code is echoed when the recording has no answer yet")
        XCTAssertTrue(close.close)
        XCTAssertEqual(frames(WebSocketReplay(conversation: chat, label: "", latency: false).stop().frames), ["close 1001 harrec replay stopped"])
    }

    func testAnUnmaskedClientFrameEndsTheConversation() {
        let replay = WebSocketReplay(conversation: chat, label: "#1", latency: false)
        _ = replay.start(at: 0)
        let out = replay.clientBytes(WebSocketFrameEncoder.frame(opcode: WebSocketOpcode.text, payload: Array("x".utf8)), at: 1)
        XCTAssertEqual(out.divergences.count, 1)
        XCTAssertTrue(out.close)
        XCTAssertEqual(frames(out.frames).last, "close 1002 ")
    }

    func testTheUpgradeIsAnsweredWithTheRFCAcceptAndTheConversation() {
        let entry = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "http", host: "chat.test", path: "/socket"),
            response: MockResponse(status: 101), repeatability: .always))
        let service = ReplayService(entries: [], source: "t", webSockets: ([entry], [chat]))
        var configuration = ProxyConfiguration()
        configuration.replay = service
        let p = Playbook(configuration: configuration)
        let commands = p.client("GET http://chat.test/socket HTTP/1.1\r\nHost: chat.test\r\nUpgrade: websocket\r\n"
                                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let answer = clientBytes(commands)
        let head = text(answer).components(separatedBy: "\r\n\r\n")[0]
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"), head)
        XCTAssertTrue(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), "RFC 6455 §1.3's example")
        let headLength = head.utf8.count + 4
        XCTAssertEqual(frames(Array(answer[headLength...])), ["welcome"])
        let next = p.client(masked(#"{"type":"subscribe"}"#))
        XCTAssertEqual(frames(clientBytes(next)), ["subscribed", "\u{0}\u{1}\u{2}"])
        // A plain GET to the same URL is not the WebSocket's, and an unknown socket gets 599.
        let other = Playbook(configuration: configuration)
        let miss = other.client("GET http://chat.test/other HTTP/1.1\r\nHost: chat.test\r\nUpgrade: websocket\r\n"
                                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        XCTAssertTrue(text(clientBytes(miss)).hasPrefix("HTTP/1.1 599"))
        XCTAssertEqual(service.summary().unmatched, ["GET http://chat.test/other (websocket)"])
    }

    func testACompressingClientIsAcceptedAndItsMessagesInflated() throws {
        let entry = QueueEntry(item: ResponseQueueItem(
            condition: RequestCondition(method: "GET", scheme: "http", host: "chat.test", path: "/socket"),
            response: MockResponse(status: 101), repeatability: .always))
        var configuration = ProxyConfiguration()
        configuration.replay = ReplayService(entries: [], source: "t", webSockets: ([entry], [chat]))
        let p = Playbook(configuration: configuration)
        let answer = clientBytes(p.client("GET http://chat.test/socket HTTP/1.1\r\nHost: chat.test\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n"))
        let head = text(answer).components(separatedBy: "\r\n\r\n")[0]
        XCTAssertTrue(head.contains("\r\nSec-WebSocket-Extensions: permessage-deflate"), head)
        // Two compressed messages sharing the client's context (context takeover), in one write.
        let deflater = try XCTUnwrap(WebSocketDeflater())
        let compressed = WebSocketFrameEncoder.message(opcode: WebSocketOpcode.text, payload: Array(#"{"type":"subscribe"}"#.utf8),
                                                       deflater: deflater, maskKey: { _ in 0x0102_0304 })
            + WebSocketFrameEncoder.message(opcode: WebSocketOpcode.text, payload: Array("bye".utf8), deflater: deflater,
                                            maskKey: { _ in 0x0506_0708 })
        let replies = frames(clientBytes(p.client(compressed)))
        XCTAssertEqual(replies, ["subscribed", "\u{0}\u{1}\u{2}", "close 1000 done"], "matched after inflating: no divergence")
        XCTAssertTrue((configuration.replay as! ReplayService).summary().divergences.isEmpty)
    }
}
