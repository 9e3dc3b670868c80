import HTTP1
import XCTest

/// Runs every case of Fixtures/http1/{requests,responses}.md through the DecoderVerifier.
final class CorpusTests: XCTestCase {
    func testRequestCorpus() throws {
        try run(file: "requests.md", HTTP1RequestDecoder.self, minimumCases: 60)
    }

    func testResponseCorpus() throws {
        try run(file: "responses.md", HTTP1ResponseDecoder.self, minimumCases: 40)
    }

    func run<D: VerifiableDecoder>(file: String, _ type: D.Type, minimumCases: Int) throws {
        let cases = try Corpus.load(file)
        XCTAssertGreaterThanOrEqual(cases.count, minimumCases, "corpus \(file) lost cases")
        var names = Set<String>()
        var failures: [String] = []
        for (index, c) in cases.enumerated() {
            XCTAssertTrue(names.insert(c.name).inserted, "duplicate case name \(c.name)")
            XCTAssertFalse(c.input.isEmpty, "\(file):\(c.line) \(c.name) has no input")
            failures += DecoderVerifier.verify(type, name: "\(file):\(c.line) \(c.name)", input: c.input,
                                               expected: c.expected, options: c.options,
                                               seed: UInt64(index + 1) &* 0x1234_5678_9ABC)
            // Many messages in one buffer: a case that ends cleanly between messages must decode
            // the same way three times over.
            if isRepeatable(c) {
                var options = c.options
                options.methods = c.options.methods + c.options.methods + c.options.methods
                failures += DecoderVerifier.verify(type, name: "\(file):\(c.line) \(c.name) ×3",
                                                   input: c.input + c.input + c.input,
                                                   expected: c.expected + c.expected + c.expected,
                                                   options: options, seed: UInt64(index + 7), randomRounds: 2)
            }
        }
        if !failures.isEmpty {
            XCTFail("\(failures.count) corpus failures:\n" + failures.joined(separator: "\n"))
        }
    }

    func isRepeatable(_ c: CorpusCase) -> Bool {
        guard let last = c.expected.last, last == "end" || last.hasPrefix("trailer ") else { return false }
        return !c.expected.contains(where: {
            $0.hasPrefix("error") || $0.hasPrefix("leftover") || $0 == "stopped" || $0.contains("framing=until-close")
        })
    }
}
