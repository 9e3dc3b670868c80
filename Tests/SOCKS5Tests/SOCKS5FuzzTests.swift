import TestSupport
import XCTest
@testable import SOCKS5

final class SOCKS5FuzzTests: XCTestCase {

    /// Mostly-plausible input: valid prefixes with random mutations, so the fuzzer gets deep.
    private func makeInput(_ rng: inout SplitMix64) -> [UInt8] {
        func rand(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        var out: [UInt8] = []
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            out = rand(Int.random(in: 0...700, using: &rng))
        case 1:
            out = [5, 1, 0] + [5, 1, 0, UInt8.random(in: 0...5, using: &rng)] + rand(Int.random(in: 0...300, using: &rng))
        case 2:
            let u = UInt8.random(in: 0...255, using: &rng), p = UInt8.random(in: 0...255, using: &rng)
            out = [5, 2, 0, 2, 1, u] + rand(Int(u)) + [p] + rand(Int(p))
                + [5, 1, 0, 3, UInt8.random(in: 0...255, using: &rng)] + rand(Int.random(in: 0...260, using: &rng))
        default:
            out = [5, 1, 0, 5, 1, 0, 4] + rand(18) + rand(Int.random(in: 0...50, using: &rng))
        }
        // Flip a few bytes.
        for _ in 0..<Int.random(in: 0...3, using: &rng) where !out.isEmpty {
            out[Int.random(in: 0..<out.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        }
        return out
    }

    func testSeededFuzz20k() {
        var rng = SplitMix64(seed: 0x5EED_50C5)
        let credentials = SOCKS5Credentials(username: "u", password: "p")
        var outcomes: [String: Int] = [:]
        for iteration in 0..<20_000 {
            let input = makeInput(&rng)
            let withCreds = Bool.random(using: &rng)
            let sendEOF = Int.random(in: 0..<4, using: &rng) == 0
            var hs = SOCKS5ServerHandshake(credentials: withCreds ? credentials : nil)
            var events: [SOCKS5Event] = []
            var i = 0
            while i < input.count {
                let n = min(input.count - i, Int.random(in: 1...64, using: &rng))
                hs.feed(Array(input[i..<(i + n)]))
                i += n
                while let e = hs.next() {
                    events.append(e)
                    XCTAssertLessThanOrEqual(events.count, 4, "iteration \(iteration)")
                    if events.count > 4 { return }
                }
                if [.greeting, .authenticating, .awaitingRequest].contains(hs.state) {
                    XCTAssertLessThanOrEqual(hs.bufferedByteCount, SOCKS5Limits.maxHandshakeMessageBytes, "iteration \(iteration)")
                }
            }
            if sendEOF {
                hs.finish()
                while let e = hs.next() { events.append(e) }
                XCTAssertEqual(hs.state, .failed, "iteration \(iteration)")
            }
            var sawFail = false
            for (k, e) in events.enumerated() {
                switch e {
                case .fail(let reply, let reason):
                    sawFail = true
                    XCTAssertEqual(k, events.count - 1, "fail is the last event (iteration \(iteration))")
                    XCTAssertLessThanOrEqual(reply.count, 22)
                    XCTAssertFalse(reason.isEmpty)
                    XCTAssertTrue(reason.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F },
                                  "reason must be printable one-line ASCII: \(reason.debugDescription)")
                case .connect(let t):
                    XCTAssertNotEqual(t.port, 0)
                    XCTAssertEqual(hs.state == .awaitingConnect || hs.state == .failed, true)
                case .send(let b):
                    XCTAssertEqual(b.count, 2)
                }
            }
            if sawFail { XCTAssertEqual(hs.state, .failed) }
            XCTAssertNil(hs.next())
            let key: String
            switch events.last {
            case .fail?: key = "fail"
            case .connect?: key = "connect"
            case .send?: key = "send"
            case nil: key = "need-more"
            }
            outcomes[key, default: 0] += 1
        }
        // The generator must actually reach every outcome.
        for key in ["fail", "connect", "send", "need-more"] {
            XCTAssertGreaterThan(outcomes[key, default: 0], 50, "outcome \(key): \(outcomes)")
        }
    }
}
