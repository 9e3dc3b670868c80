import XCTest
@testable import Redaction

/// Wallet seed phrases: 12 or more BIP-39 words in a row are one secret, in text and across
/// lines, and as a bare value of lowercase words when it is one phrase of a length BIP-39 has
/// (12 to 24 words); fewer, or a run broken by a word off the list, stays.
final class SeedPhraseTests: XCTestCase {
    static let twelve = "legal winner thank year wave sausage worth useful legal winner thank yellow"

    func testSeedPhrasesWhereverTheyStand() {
        XCTAssertEqual(body(#"{"data": "\#(Self.twelve)"}"#), #"{"data": "redacted-1"}"#, "a bare value (lowercase prose)")
        XCTAssertEqual(body(#"{"data": "\#(Self.twelve) \#(Self.twelve)"}"#), #"{"data": "redacted-1"}"#, "24 words")
        XCTAssertEqual(body(#"{"note": "Seed: \#(Self.twelve)"}"#), #"{"note": "Seed: redacted-1"}"#)
        XCTAssertEqual(scanned("Backup: \(Self.twelve). Keep it safe"), "Backup: redacted-1. Keep it safe")
        let lines = Self.twelve.split(separator: " ").joined(separator: "\n")
        XCTAssertEqual(scanned("words:\n\(lines)\n"), "words:\nredacted-1\n")
        let twentyFour = Self.twelve + " " + Self.twelve
        XCTAssertEqual(scanned("x \(twentyFour) y"), "x redacted-1 y")
        for text in ["Backup: \(Self.twelve).", #"{"data": "\#(Self.twelve)"}"#] {
            XCTAssertEqual(body(body(text)), body(text), "a second run changes nothing")
        }
    }

    func testProseIsNoSeedPhrase() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        let eleven = Self.twelve.split(separator: " ").dropLast().joined(separator: " ")
        for text in [eleven, "legal winner thank year wave sausage worth useful legal winner thank zzzz yellow",
                     "legal winner thank year wave sausage worth useful legal-winner thank yellow now",
                     "the quick brown fox jumps over the lazy dog and then it runs away from the farm",
                     "Legal winner thank year wave sausage worth useful legal winner thank yellowish"] {
            XCTAssertEqual(scanned(text, config: config), text, text)
            XCTAssertEqual(body(#"{"d": "\#(text)"}"#, config: config), #"{"d": "\#(text)"}"#, text)
        }
    }
}
