import XCTest
@testable import HAR

/// `EntriesScanner.scan` with a helper scanning from a guessed entry start after the middle must
/// give exactly the layout of one scan from the start: when the guess is an entry start, and when
/// it is a decoy (an object that looks like an entry inside a custom field, or a header object).
final class EntriesScannerTests: XCTestCase {
    private func assertSameLayout(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        bytes.withUnsafeBufferPointer { p in
            let one = EntriesScanner.scan(p, parallel: false)
            // Guesses from every eighth of the input.
            let two = EntriesScanner.scan(p, parallel: true)
            XCTAssertEqual(two?.entries, one?.entries, file: file, line: line)
            XCTAssertEqual(two?.arrayStart, one?.arrayStart, file: file, line: line)
            XCTAssertEqual(two?.arrayEnd, one?.arrayEnd, file: file, line: line)
        }
    }

    /// The guess in a pretty file lands on an entry start, and the layout is the sequential one.
    func testGuessIsAnEntryStartInAPrettyFile() throws {
        let bytes = makeSampleLog(entryCount: 40).serialize(pretty: true)
        let layout = try XCTUnwrap(EntriesScanner.scan(bytes))
        let guess = bytes.withUnsafeBufferPointer { EntriesScanner.SecondHalf.guess($0, from: $0.count / 2) }
        XCTAssertNotNil(guess)
        XCTAssertTrue(layout.entries.contains { $0.lowerBound == guess }, "guess \(guess ?? -1)")
        assertSameLayout(bytes)
        assertSameLayout(makeSampleLog(entryCount: 40).serialize(pretty: false))
    }

    /// Objects that look like entries but are not at the array's level: the helper's work is
    /// dropped and the layout is still the sequential one.
    func testDecoysAfterTheMiddle() throws {
        var log = makeSampleLog(entryCount: 12)
        // A custom field holding an array of entry-like objects, in the second half.
        let decoy: JSONValue = .array((0..<6).map { _ in
            .object([(key: "startedDateTime", value: .string("x")), (key: "request", value: .object([]))])
        })
        for i in 6..<12 { log.entries[i].custom = [(key: "_copies", value: decoy)] }
        // A header's object right after a comma, with an entry key name.
        log.entries[7].request.headers.append(HARHeader(name: "time", value: "1"))
        for pretty in [true, false] {
            let bytes = log.serialize(pretty: pretty)
            assertSameLayout(bytes)
            // Guesses from every position of the second half, one at a time.
            bytes.withUnsafeBufferPointer { p in
                let one = EntriesScanner.scan(p, parallel: false)
                let starts = Set(one?.entries.map(\.lowerBound) ?? [])
                var decoys = 0
                for from in stride(from: p.count / 2, to: p.count, by: 97) {
                    if let guess = EntriesScanner.SecondHalf.guess(p, from: from), !starts.contains(guess) { decoys += 1 }
                }
                // The decoys are there to be met (else this test tests nothing).
                XCTAssertGreaterThan(decoys, 0)
            }
        }
    }

    /// Any input, scanned both ways: the same answer (nil included).
    func testTruncatedAndBrokenInputs() {
        let bytes = makeSampleLog(entryCount: 9).serialize(pretty: true)
        for cut in stride(from: 0, to: bytes.count, by: 113) {
            assertSameLayout(Array(bytes[..<cut]))
            var broken = bytes
            broken[cut] = 0x7D
            assertSameLayout(broken)
        }
    }
}
