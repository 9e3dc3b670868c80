import TestSupport
import XCTest
import HAR
@testable import Redaction

/// `LowercaseProse`: JSON strings of only lowercase letters and spaces skip the text scan unless
/// they hold a trigger word. A trigger missing from the list would let a secret through
/// unscanned, so the list is checked against the pair table and against the scan itself.
final class LowercaseProseTests: XCTestCase {
    private let prose = LowercaseProse()

    private func mayHold(_ text: String) -> Bool {
        var copy = text
        return copy.withUTF8 { prose.mayHoldTrigger($0) }
    }

    func testTheTriggers() {
        XCTAssertFalse(prose.alwaysScan)
        XCTAssertEqual(prose.triggers.map { String(decoding: $0, as: UTF8.self) }.sorted(), ["basic", "bearer", "dapi"])
        XCTAssertTrue(LowercaseProse(triggers: [Array("abc".utf8)]).alwaysScan, "under four bytes")
        XCTAssertTrue(LowercaseProse(triggers: ["abcd", "bcde", "cdef"].map { Array($0.utf8) }).alwaysScan, "three first bytes")
    }

    /// Every length around the eight-byte step, the trigger at every position, and borrows from
    /// a first byte right before another.
    func testMayHoldTriggerFindsEveryPosition() {
        for length in 0..<40 {
            let filler = String(repeating: "x", count: length)
            XCTAssertFalse(mayHold(filler))
            for trigger in ["bearer", "basic", "dapi"] where trigger.count <= length {
                for at in 0...(length - trigger.count) {
                    var chars = Array(filler)
                    chars.replaceSubrange(at..<at + trigger.count, with: Array(trigger))
                    XCTAssertTrue(mayHold(String(chars)), "\(trigger) at \(at) of \(length)")
                }
            }
        }
        XCTAssertTrue(mayHold("xxxxxxbdbdbdbdapix"))
        XCTAssertTrue(mayHold("bbbbbbbbbbbbbbbasic"))
        XCTAssertFalse(mayHold("the bees bank in a dappled dale by a bay"))
    }

    /// In the pair table, a pair of lowercase letters or spaces (or one at the end of the text)
    /// starts only detectors that need a capital, a digit or a symbol later on (the JWT's `eyJ`,
    /// ipv6's colons), or the ones whose words are the triggers (`bearer`/`basic`, key formats).
    func testPairTableStartsNothingElseInLowercaseProse() {
        let table = RedactionEngine.makePairTable(internalSuffixes: [])
        // A one-time code starts at its word (`code`, `otp`, `passcode`) and needs digits after it;
        // a name after its cue (`hi`, `customer`) is capitalized.
        let allowed: Detectors = [.jwt, .bearer, .keyFormat, .ipv6, .oneTimeCode, .nameInText]
        let prose = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
        for first in prose {
            for second in prose + [0] {
                let families = Detectors(rawValue: table[Int(first) << 8 | Int(second)])
                XCTAssertTrue(allowed.isSuperset(of: families), "\(first) \(second): \(families.rawValue)")
            }
        }
    }

    /// The scan itself, on lowercase prose built from every key format's lowercase start, the
    /// scheme words and runs of hex letters: whatever it changes, `mayHoldTrigger` must have let
    /// through. Each trigger's case occurs, so the test would see one that was missing.
    func testTheScanChangesNoProseWithoutATrigger() {
        var words = ["lorem", "ipsum", "dolor", "sit", "amet", "sed", "do", "bearer", "basic", "ey", "fe", "fc", "fd",
                     "hooks", "discord", "key", "secret", "be", "ba", "da", "dap", "dapi"]
        for format in KeyFormats.all {
            let start = format.prefix.prefix { $0 >= 0x61 && $0 <= 0x7A }
            if !start.isEmpty { words.append(String(decoding: start, as: UTF8.self)) }
        }
        var rng = SplitMix64(seed: 12)
        func letters(_ alphabet: String, _ count: Int) -> String {
            String((0..<count).map { _ in alphabet.randomElement(using: &rng)! })
        }
        // `basic` and base64 of lowercase letters that decodes to printable text with a colon.
        var basic = ""
        while basic.isEmpty {
            let candidate = letters("abcdefghijklmnopqrstuvwxyz", 12)
            if let decoded = Data(base64Encoded: candidate), let text = String(data: decoded, encoding: .utf8),
               text.contains(":"), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
                basic = "basic " + candidate
            }
        }
        let engine = RedactionEngine()
        var changedBy: [String: Int] = [:]
        for round in 0..<6_000 {
            var parts: [String] = []
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: parts.append(letters("abcdef", Int.random(in: 28...36, using: &rng)))
                case 1: parts.append(letters("abcdefghijklmnopqrstuvwxyz", Int.random(in: 8...60, using: &rng)))
                default: parts.append(words.randomElement(using: &rng)!)
                }
            }
            var text = parts.joined(separator: Int.random(in: 0..<4, using: &rng) == 0 ? "" : " ")
            if round % 500 == 0 { text = basic }
            if round % 500 == 1 { text = "see dapi" + letters("abcdef", 32) + " here" }
            let changed = engine.standalone { $0.scanText(text, .body, { "" }) } != nil
            if changed {
                XCTAssertTrue(mayHold(text), "the scan changed \(text), which skips it")
                for trigger in ["bearer", "basic", "dapi"] where text.contains(trigger) { changedBy[trigger, default: 0] += 1 }
            }
        }
        for trigger in ["bearer", "basic", "dapi"] {
            XCTAssertGreaterThan(changedBy[trigger] ?? 0, 0, "no text the scan changed held \(trigger)")
        }
    }

    /// A rules file's patterns may match anything, lowercase prose included: with patterns the
    /// shortcut is off.
    func testPatternsStillMatchLowercaseProse() throws {
        let config = try configuration(rules: #"{"patterns": [{"name": "codeword", "regex": "swordfish"}]}"#)
        let out = body(#"{"note": "the swordfish flies at dawn"}"#, config: config)
        XCTAssertFalse(out.contains("swordfish"), out)
    }

    /// Through a body: prose strings with a trigger are still scanned; without one they are
    /// kept as they are, and so are their neighbours' findings.
    func testBodiesStillRedactTriggeredProse() {
        let hex = "abcdefabcdefabcdefabcdefabcdefab"
        let out = body(#"{"a": "use bearer abcdefghijkl please", "b": "dapi\#(hex) here", "c": "plain words only", "d": "x@corp.com"}"#)
        XCTAssertFalse(out.contains("abcdefghijkl"), out)
        XCTAssertFalse(out.contains(hex), out)
        XCTAssertTrue(out.contains("plain words only"), out)
        XCTAssertFalse(out.contains("x@corp.com"), out)
    }
}
