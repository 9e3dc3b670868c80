import Foundation
import XCTest
@testable import HAR

/// HARLazyDocument must read exactly what HARLog.parse reads, whether it scans for the entries or
/// falls back to the whole-document parse.
final class HARLazyReadTests: XCTestCase {
    private func assertSameAsFullParse(_ bytes: [UInt8], lazy expectLazy: Bool, file: StaticString = #filePath,
                                       line: UInt = #line) throws {
        let full = try HARLog.parse(bytes)
        let document = try HARLazyDocument(bytes)
        XCTAssertEqual(EntriesScanner.scan(bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes[3...]) : bytes) != nil,
                       expectLazy, "scanner path", file: file, line: line)
        var rebuilt = document.head
        XCTAssertTrue(rebuilt.entries.isEmpty, file: file, line: line)
        rebuilt.entries = try (0..<document.entryCount).map { try document.entry($0) }
        XCTAssertEqual(rebuilt, full, file: file, line: line)
    }

    func testFixturesReadTheSame() throws {
        for name in ["harrec-sample.har", "mitmproxy-12.3.1-sample.har"] {
            try assertSameAsFullParse(try Fixtures.bytes(name), lazy: true)
        }
        let sample = makeSampleLog(entryCount: 7).serialize(pretty: true)
        try assertSameAsFullParse(sample, lazy: true)
        try assertSameAsFullParse(makeSampleLog(entryCount: 3).serialize(pretty: false), lazy: true)
        try assertSameAsFullParse([0xEF, 0xBB, 0xBF] + sample, lazy: true)
    }

    /// A pipeline parses an entry again when it neither kept nor spilled it, after it let the
    /// mapped file's pages go: every entry reads the same each time, from a mapped file (with and
    /// without a BOM, so page offsets shift) and from a copy.
    func testEntriesParseAgainAfterTheirPagesWentAway() throws {
        let log = makeSampleLog(entryCount: 40)
        for prefix in [[], [UInt8]([0xEF, 0xBB, 0xBF])] {
            let bytes = prefix + log.serialize(pretty: true)
            let path = NSTemporaryDirectory() + "harrec-lazy-\(UUID().uuidString).har"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let mapped = try XCTUnwrap(try HARLazyDocument(mappingFile: path))
            let copied = try HARLazyDocument(bytes)
            for document in [mapped, copied] {
                XCTAssertEqual(document.entryCount, 40)
                XCTAssertGreaterThan(document.byteCount(ofEntry: 3), 100)
                let first = try (0..<40).map { try document.entry($0) }
                XCTAssertEqual(first, log.entries)
                document.dropResidentBytes(ofEntries: 0..<20)
                document.dropResidentBytes(ofEntries: 25..<26)
                XCTAssertEqual(try (0..<40).map { try document.entry($0) }, log.entries, "parsed again after a batch's pages went")
                document.dropResidentBytes(ofEntries: 0..<40)
                XCTAssertEqual(try document.entry(39), log.entries[39])
                XCTAssertEqual(try document.entry(7), log.entries[7], "and again")
            }
        }
    }

    func testEntriesAnywhereInTheLogAndAwkwardStrings() throws {
        // entries before other members, strings holding brackets, quotes and escapes.
        let text = #"""
        {"x": [1, {"a": "]"}], "log": {"entries": [ {"startedDateTime": "2026-01-01T00:00:00.000Z", "time": 1,
          "request": {"method": "GET", "url": "http://h/[\"{]", "httpVersion": "HTTP/1.1", "cookies": [],
          "headers": [{"name": "X", "value": "}\\\"]"}], "queryString": [], "headersSize": -1, "bodySize": 0},
          "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
          "content": {"size": 0, "mimeType": "x"}, "redirectURL": "", "headersSize": -1, "bodySize": 0},
          "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}} , {} ],
          "version": "1.2", "creator": {"name": "t", "version": "1"}, "comment": "[{"}, "tail": null}
        """#
        try assertSameAsFullParse(Array(text.utf8), lazy: true)
        try assertSameAsFullParse(Array(#"{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": []}}"#.utf8), lazy: true)
    }

    /// The scanner skips strings 8 bytes at a time: an escaped quote or backslash followed by
    /// brackets, at every offset of a word, must not end a string early.
    func testEscapedQuotesAtEveryOffsetOfAWord() throws {
        var log = makeSampleLog(entryCount: 2)
        for length in 0..<20 {
            for at in 0...length {
                var value = String(repeating: "x", count: length)
                value.insert(contentsOf: at % 2 == 0 ? "\"]}" : "\\\"}]", at: value.index(value.startIndex, offsetBy: at))
                log.entries[0].comment = value
                log.entries[1].comment = value + "\\"
                try assertSameAsFullParse(log.serialize(pretty: false), lazy: true)
            }
        }
    }

    func testUnusualShapesFallBackToTheFullParse() throws {
        let creator = #""version": "1.2", "creator": {"name": "t", "version": "1"}"#
        // Duplicate entries (the last wins), an escaped member name, no entries at all.
        for text in [#"{"log": {\#(creator), "entries": [{}], "entries": [{}, {}]}}"#,
                     #"{"log": {\#(creator), "entri\u0065s": [{}]}}"#,
                     #"{"log": {\#(creator)}}"#,
                     #"{"log": {\#(creator), "entries": 5}}"#] {
            try assertSameAsFullParse(Array(text.utf8), lazy: false)
        }
    }

    func testErrorsPointIntoTheRealFile() throws {
        let text = "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\", \"version\": \"1\"},\n\"entries\": [{},\n{\"time\": tru}]}}"
        let document = try HARLazyDocument(Array(text.utf8))
        XCTAssertEqual(document.entryCount, 2)
        XCTAssertNoThrow(try document.entry(0))
        XCTAssertThrowsError(try document.entry(1)) { error in
            guard case .json(let e) = error as? HARReadError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.line, 3)
            XCTAssertEqual(Array(text.utf8)[e.offset...].prefix(3), Array("tru".utf8)[...].prefix(3))
        }
        // A syntax error after the entries array is reported at its real line too.
        let broken = "{\"log\": {\"entries\": [{}, {}],\n\n\"version\": 1.2.3}}"
        XCTAssertThrowsError(try HARLazyDocument(Array(broken.utf8))) { error in
            guard case .json(let e) = error as? HARReadError else { return XCTFail("\(error)") }
            XCTAssertEqual(e.line, 3)
        }
    }

    /// A mapped file reads what the bytes read, BOM and errors included; what cannot be mapped
    /// (an empty file, a directory) is left to the caller.
    func testMappedFilesReadTheSame() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lazy-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let sample = makeSampleLog(entryCount: 5).serialize(pretty: true)
        for (name, bytes) in [("plain.har", sample), ("bom.har", [0xEF, 0xBB, 0xBF] + sample)] {
            let path = dir.appendingPathComponent(name).path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let document = try XCTUnwrap(try HARLazyDocument(mappingFile: path))
            var rebuilt = document.head
            rebuilt.entries = try (0..<document.entryCount).map { try document.entry($0) }
            XCTAssertEqual(rebuilt, try HARLog.parse(bytes), name)
        }
        let text = "\u{FEFF}{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\", \"version\": \"1\"},\n\"entries\": [{},\n{\"time\": tru}]}}"
        let broken = dir.appendingPathComponent("broken.har").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: broken))
        let fromBytes = try HARLazyDocument(Array(text.utf8))
        let fromFile = try XCTUnwrap(try HARLazyDocument(mappingFile: broken))
        var errors: [String] = []
        for document in [fromBytes, fromFile] {
            XCTAssertThrowsError(try document.entry(1)) { errors.append("\($0)") }
        }
        XCTAssertEqual(errors.count, 2)
        XCTAssertEqual(errors.first, errors.last)
        XCTAssertTrue(errors.first?.contains("line 3") ?? false, "\(errors)")
        let empty = dir.appendingPathComponent("empty.har").path
        try Data().write(to: URL(fileURLWithPath: empty))
        XCTAssertNil(try HARLazyDocument(mappingFile: empty))
        XCTAssertNil(try HARLazyDocument(mappingFile: dir.path))
        XCTAssertNil(try HARLazyDocument(mappingFile: dir.appendingPathComponent("missing.har").path))
    }

    /// Found by `scripts/fuzz` (har-json): with two BOMs and no `entries` member (the scanner's
    /// fallback), the lazy reader stripped both and accepted what `HARLog.parse` rejects.
    func testTwoBOMsAreRejectedByBothReaders() {
        let doc = Array("\u{FEFF}\u{FEFF}{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"x\", \"version\": \"1\"}, \"entriesX\": []}}".utf8)
        XCTAssertThrowsError(try HARLog.parse(doc))
        XCTAssertThrowsError(try HARLazyDocument(doc))
        // One BOM is fine for both.
        let one = Array(doc.dropFirst(3))
        XCTAssertEqual((try? HARLog.parse(one)) == nil, (try? HARLazyDocument(one)) == nil)
    }

    /// An entry parsed alone stands three levels into the document: the nesting limit fails it
    /// exactly where the whole document's parse fails, in memory and read by ranges.
    func testTheNestingLimitHoldsInAnEntryAsInTheWholeDocument() throws {
        var outcomes: [Bool] = []
        for depth in [JSONParser.maximumDepth - 4, JSONParser.maximumDepth - 3] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let text = #"{"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [{"_x": \#(nested)}]}}"#
            let bytes = Array(text.utf8)
            let whole = (try? HARLog.parse(bytes)) != nil
            XCTAssertEqual((try? HARLazyDocument(bytes).entry(0)) != nil, whole, "depth \(depth)")
            XCTAssertEqual((try? HARLazyDocument(reading: .memory(bytes)).entry(0)) != nil, whole, "depth \(depth)")
            outcomes.append(whole)
        }
        XCTAssertEqual(outcomes, [true, false])
    }
}
