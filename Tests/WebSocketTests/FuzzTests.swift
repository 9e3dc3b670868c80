import TestSupport
import XCTest
@testable import WebSocket

/// Seeded fuzzing: valid conversations, mutated (bit flips, cuts, insertions, duplicated
/// spans), parsed at random split points. Checks: no crash, bounded buffering, recorded data
/// within the cap, nothing after a protocol error, printable errors (see `parse`).
final class FuzzTests: XCTestCase {
    func testTwentyThousandMutatedInputs() throws {
        var rng = SplitMix64(seed: 0x5EED_1234)
        let limits = WebSocketLimits(maxRecordedMessageBytes: 2048, maxInflatedMessageBytes: 16384)
        var errors = 0, messages = 0
        for round in 0..<20_000 {
            let direction: WebSocketDirection = rng.next() & 1 == 0 ? .clientToServer : .serverToClient
            let compressed = rng.next() % 3 != 0
            let takeover = rng.next() & 1 == 0
            let bits = Int.random(in: 9...15, using: &rng)
            let deflater = compressed ? WebSocketDeflater(windowBits: bits, contextTakeover: takeover) : nil
            let params = compressed ? PerMessageDeflate(clientNoContextTakeover: !takeover, serverNoContextTakeover: !takeover,
                                                        clientMaxWindowBits: bits, serverMaxWindowBits: bits) : nil
            var input: [UInt8] = []
            for i in 0..<Int.random(in: 1...6, using: &rng) {
                switch rng.next() % 6 {
                case 0:
                    input += controlFrame(direction, opcode: UInt8([8, 9, 10][Int(rng.next() % 3)]),
                                          (0..<Int(rng.next() % 20)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, seed: i)
                case 1:
                    let n = Int(rng.next() % 20_000)
                    input += wire(direction, opcode: 2, [UInt8](repeating: UInt8(truncatingIfNeeded: rng.next()), count: n),
                                  deflater: rng.next() & 1 == 0 ? deflater : nil, fragmentSize: Int(rng.next() % 5000) + 1, seed: i)
                default:
                    let n = Int(rng.next() % 300)
                    let payload = (0..<n).map { _ in UInt8.random(in: 0x20...0x7A, using: &rng) }
                    input += wire(direction, opcode: 1, payload, deflater: rng.next() & 1 == 0 ? deflater : nil,
                                  fragmentSize: Int(rng.next() % 64) + 1, seed: i)
                }
            }
            // Mutations.
            for _ in 0..<Int(rng.next() % 4) where !input.isEmpty {
                let at = Int(rng.next() % UInt64(input.count))
                switch rng.next() % 5 {
                case 0: input[at] ^= UInt8(1) << UInt8(rng.next() % 8)
                case 1: input.removeSubrange(at..<min(input.count, at + Int(rng.next() % 16)))
                case 2: input.insert(contentsOf: (0..<Int(rng.next() % 16)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
                case 3: input[at] = UInt8(truncatingIfNeeded: rng.next())
                default: input.removeSubrange(at...)
                }
            }
            let cuts = (0..<Int(rng.next() % 8)).map { _ in Int(rng.next() % UInt64(input.count + 1)) }.sorted()
            var violations: [String] = []
            let run = parse(input, direction: direction, deflate: params, limits: limits, cuts: cuts, violations: &violations)
            if !violations.isEmpty {
                XCTFail("round \(round): \(violations.joined(separator: "; "))")
                return
            }
            for e in run.events + [run.finish].compactMap({ $0 }) {
                if case .protocolError = e { errors += 1 }
                if case .message = e { messages += 1 }
            }
        }
        // The mix exercises both the happy and the failing paths.
        XCTAssertGreaterThan(errors, 1000)
        XCTAssertGreaterThan(messages, 10_000)
    }
}
