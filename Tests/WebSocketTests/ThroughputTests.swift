import Foundation
import XCTest
@testable import WebSocket

/// Rough parser throughput for the benchmark's case (1 KB text messages, client frames masked,
/// with and without compression), printed for the record. No threshold in debug builds.
final class ThroughputTests: XCTestCase {
    func testOneKilobyteTextMessages() throws {
        let text = Array(String(repeating: "0123456789abcdef ", count: 61).prefix(1024).utf8)
        let count = 20_000
        for compressed in [false, true] {
            let deflater = compressed ? WebSocketDeflater() : nil
            var input: [UInt8] = []
            for i in 0..<count { input += wire(.clientToServer, opcode: 1, text, deflater: deflater, seed: i) }
            var parser = WebSocketParser(direction: .clientToServer, deflate: compressed ? PerMessageDeflate() : nil)
            let start = Date()
            var messages = 0
            var offset = 0
            while offset < input.count {
                let end = min(input.count, offset + 65536)
                input.withUnsafeBytes { parser.feed(UnsafeRawBufferPointer(rebasing: $0[offset..<end])) }
                offset = end
                while let e = parser.next() {
                    if case .message(_, let data, _, let valid, _, _) = e, data.count == 1024, valid { messages += 1 }
                }
            }
            let seconds = Date().timeIntervalSince(start)
            XCTAssertEqual(messages, count)
            print("WebSocketParser: \(compressed ? "compressed" : "plain") 1 KB text: \(Int(Double(count) / seconds)) messages/s")
        }
    }
}
