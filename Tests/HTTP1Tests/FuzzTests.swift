import HTTP1
import TestSupport
import XCTest

/// Seeded mutation fuzzing: corpus inputs, mutated, into both decoders. Each run must end in
/// events or a thrown HTTP1ParseError, within a bounded number of next() calls, with a valid
/// event order and no empty body events.
final class FuzzTests: XCTestCase {
    func testMutatedCorpusNeverCrashesOrHangs() throws {
        let seeds = (try Corpus.load("requests.md") + Corpus.load("responses.md"))
            .map(\.input).filter { $0.count <= 4096 }
        XCTAssertFalse(seeds.isEmpty)
        var rng = SplitMix64(seed: 0xF00D)
        let interesting: [UInt8] = [0x0D, 0x0A, 0x3A, 0x20, 0x09, 0x00, 0x30, 0x3B, 0x22, 0x5C, 0x2C, 0x66, 0xFF, 0x80]
        var outcomes = [0, 0]  // [ended cleanly or waiting, threw]
        for iteration in 0..<20_000 {
            var input = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            if iteration % 10 == 0 {
                input += seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            }
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                mutate(&input, &rng, interesting)
            }
            if iteration % 50 == 0 {
                input = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            }
            let eof = Bool.random(using: &rng)
            let cuts = (0..<Int.random(in: 0...5, using: &rng)).map { _ in Int.random(in: 0...input.count, using: &rng) }.sorted()
            var req = HTTP1RequestDecoder()
            outcomes[run(&req, input, cuts, eof, "request #\(iteration)") ? 1 : 0] += 1
            var res = HTTP1ResponseDecoder()
            for m in ["GET", "HEAD", "CONNECT"].shuffled(using: &rng) { res.expectResponse(toMethod: m) }
            outcomes[run(&res, input, cuts, eof, "response #\(iteration)") ? 1 : 0] += 1
        }
        // Sanity: the mutations neither break everything nor nothing.
        XCTAssertGreaterThan(outcomes[0], 1000)
        XCTAssertGreaterThan(outcomes[1], 1000)
    }

    func mutate(_ input: inout [UInt8], _ rng: inout SplitMix64, _ interesting: [UInt8]) {
        guard !input.isEmpty else { input = [interesting[Int.random(in: 0..<interesting.count, using: &rng)]]; return }
        let i = Int.random(in: 0..<input.count, using: &rng)
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: input[i] = UInt8.random(in: 0...255, using: &rng)
        case 1: input[i] = interesting[Int.random(in: 0..<interesting.count, using: &rng)]
        case 2: input.insert(interesting[Int.random(in: 0..<interesting.count, using: &rng)], at: i)
        case 3: input.remove(at: i)
        case 4: input.removeSubrange(i..<min(input.count, i + Int.random(in: 1...8, using: &rng)))
        case 5:
            let j = min(input.count, i + Int.random(in: 1...16, using: &rng))
            input.insert(contentsOf: input[i..<j], at: j)
        default: input = Array(input[..<i])
        }
    }

    /// Returns true when the decoder threw.
    func run<D: VerifiableDecoder>(_ d: inout D, _ input: [UInt8], _ cuts: [Int], _ eof: Bool, _ label: String) -> Bool {
        var budget = input.count * 3 + 50
        var inMessage = false
        var start = 0
        func drain() -> Bool? {  // nil: keep going, true: threw, false: budget blown
            while true {
                budget -= 1
                if budget < 0 {
                    XCTFail("\(label): no progress on \(renderBytes(input))")
                    return false
                }
                do {
                    guard let e = try d.nextObserved() else { return nil }
                    switch e {
                    case .head:
                        if inMessage { XCTFail("\(label): head inside a message") }
                        inMessage = true
                    case .body(let b):
                        if b.isEmpty { XCTFail("\(label): empty body") }
                        if !inMessage { XCTFail("\(label): body outside a message") }
                    case .end:
                        if !inMessage { XCTFail("\(label): end outside a message") }
                        inMessage = false
                    }
                } catch {
                    XCTAssertFalse(error.message.isEmpty)
                    return true
                }
            }
        }
        for cut in cuts + [input.count] where cut >= start {
            if cut > start { d.feed(Array(input[start..<cut])) }
            start = cut
            if let r = drain() { return r }
        }
        if eof {
            d.finish()
            if let r = drain() { return r }
            if !d.hasStopped && d.bufferedByteCount == 0 && !inMessage { XCTAssertTrue(d.isAtCleanEOF, label) }
        }
        return false
    }
}
