import XCTest
@testable import WebSocket

/// Frames captured from python `websockets` peers with compression on
/// (Fixtures/websocket/capture.py): both directions of a real conversation.
final class PythonWebSocketsFixtureTests: XCTestCase {
    private func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let fixture = try loadFixtureJSON(name)
        let header = try XCTUnwrap(fixture["extensions"] as? String)
        let deflate = try XCTUnwrap(try PerMessageDeflate(extensionHeader: header), "permessage-deflate agreed", file: file, line: line)
        func messages(_ key: String) throws -> [WebSocketEvent] {
            try XCTUnwrap(fixture[key] as? [[String: Any]]).map { m in
                let opcode = UInt8(m["opcode"] as? Int ?? 0)
                // websockets compresses every message, the empty one included.
                return .message(opcode: opcode, data: base64Bytes(m["data"] as? String ?? ""), compressed: true,
                                textValid: true, truncated: false, note: nil)
            }
        }
        let clientMessages = try messages("clientMessages")
        let serverMessages = try messages("serverMessages")
        // The client sends a message and waits for the reply, then pings and closes.
        let c2s = hexBytes(try XCTUnwrap(fixture["clientToServer"] as? String))
        let s2c = hexBytes(try XCTUnwrap(fixture["serverToClient"] as? String))
        verify(c2s, direction: .clientToServer, deflate: deflate,
               expected: clientMessages + [.ping(Array("ping-1".utf8)), .close(code: 1000, reason: "bye")],
               repeatable: false, file: file, line: line)
        verify(s2c, direction: .serverToClient, deflate: deflate,
               expected: serverMessages + [.pong(Array("ping-1".utf8)), .close(code: 1000, reason: "bye")],
               repeatable: false, file: file, line: line)
    }

    func testDefaultNegotiation() throws {
        try check("python-websockets-default.json")
    }

    func testNoContextTakeoverAndSmallWindows() throws {
        let fixture = try loadFixtureJSON("python-websockets-no-context-takeover.json")
        let deflate = try PerMessageDeflate(extensionHeader: fixture["extensions"] as? String ?? "")
        XCTAssertEqual(deflate, PerMessageDeflate(clientNoContextTakeover: true, serverNoContextTakeover: true,
                                                  clientMaxWindowBits: 9, serverMaxWindowBits: 10))
        try check("python-websockets-no-context-takeover.json")
    }
}
