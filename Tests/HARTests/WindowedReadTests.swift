import Foundation
import XCTest
import Synchronization
@testable import HAR

extension PositionalReader {
    /// `bytes` read as a file is, in `pread`'s pieces; `reads` counts the calls.
    static func memory(_ bytes: [UInt8], reads: Counter? = nil) -> PositionalReader {
        PositionalReader(count: bytes.count, read: { offset, buffer in
            reads?.add()
            let n = max(0, min(buffer.count, bytes.count - offset))
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            return n
        }, close: {})
    }

    final class Counter: @unchecked Sendable {
        private(set) var count = 0
        func add() { count += 1 }
    }
}

/// A HAR read a window at a time (a file that cannot be mapped whole) reads exactly what the same
/// bytes read in memory: `EntriesStream` finds `EntriesScanner`'s layout however the bytes are
/// cut, and the document built on it parses the same entries and reports the same errors.
final class WindowedReadTests: XCTestCase {
    /// The stream's layout of `bytes` fed in pieces cut at `cuts`.
    private func streamed(_ bytes: [UInt8], cuts: [Int]) -> EntriesScanner.Layout? {
        var stream = EntriesStream()
        var start = 0
        bytes.withUnsafeBufferPointer { p in
            for cut in cuts.sorted() + [bytes.count] where cut >= start {
                stream.feed(UnsafeBufferPointer(rebasing: p[start..<cut]))
                start = cut
            }
        }
        return stream.finish()
    }

    private func assertSameLayout(_ bytes: [UInt8], _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = bytes.withUnsafeBufferPointer { EntriesScanner.scan($0, parallel: false) }
        let layout = { (l: EntriesScanner.Layout?) in l.map { "\($0.arrayStart) \($0.arrayEnd) \($0.entries)" } ?? "nil" }
        XCTAssertEqual(layout(streamed(bytes, cuts: [])), layout(expected), "\(label): one piece", file: file, line: line)
        XCTAssertEqual(layout(streamed(bytes, cuts: Array(0..<bytes.count))), layout(expected), "\(label): byte by byte",
                       file: file, line: line)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4 {
            let cuts = (0..<5).map { _ in Int.random(in: 0...bytes.count, using: &generator) }
            XCTAssertEqual(layout(streamed(bytes, cuts: cuts)), layout(expected), "\(label): cut at \(cuts)", file: file, line: line)
        }
    }

    private static let creator = #""version": "1.2", "creator": {"name": "t", "version": "1"}"#

    /// Documents of every shape the scan meets: ordinary ones, awkward strings and values, and the
    /// ones it gives up on (nil), each cut everywhere.
    static let shapes: [String] = [
        #"{"log": {\#(creator), "entries": []}}"#,
        #"  {"log":{"entries":[{"a":1} , {"b":"]}\"["},[1,2],"s",true,12.5e3 ],"x":{"y":[]}}}  "#,
        #"{"x": [1, {"a": "]"}], "log": {"entries": [{"c": "\\"}, {}], \#(creator), "comment": "[{"}, "tail": null}"#,
        #"{"logs": 1, "log": {"entriesX": [], "entries": [{"k": "v\\\"}"}]}}"#,
        #"{"log": {\#(creator), "entries": [{}], "entries": [{}, {}]}}"#,
        #"{"log": {\#(creator), "entri\u0065s": [{}]}}"#,
        #"{"l\u006fg": {"entries": []}}"#,
        #"{"log": {\#(creator)}}"#,
        #"{"log": {\#(creator), "entries": 5}}"#,
        #"{"log": {"entries": []}, "log": {"entries": []}}"#,
        #"{"log": [], "x": 1}"#,
        #"{"log": {"entries": [1,]}}"#,
        #"{"log": {"entries": [,1]}}"#,
        #"{"log": {"entries": [{}] }} x"#,
        #"{"log": {"entries": [{}]}"#,
        #"{"log": {"entries": [{"a": "unterminated}]}}"#,
        #"{"log": {"entries": [tru"e, 5]}}"#,
        #"{"log": {"entries": [{}]},}"#,
        #"{"log": {"entries": [{}]} "x": 1}"#,
        #"{"log" {"entries": []}}"#,
        #"{"a": 1 "log": {"entries": []}}"#,
        #"[{"log": {"entries": []}}]"#,
        #"{}"#,
        "",
        "   ",
        #"{"log": {"entries": [{"a": "\"#,
        #"{"log": {"entries": [{}, 7"#,
    ]

    func testTheStreamFindsTheScannersLayoutHoweverTheBytesAreCut() {
        for (k, text) in Self.shapes.enumerated() { assertSameLayout(Array(text.utf8), "shape \(k)") }
        assertSameLayout(makeSampleLog(entryCount: 9).serialize(pretty: true), "pretty sample")
        assertSameLayout(makeSampleLog(entryCount: 4).serialize(pretty: false), "compact sample")
    }

    /// The stream skips strings eight bytes at a time: escaped quotes and backslashes before
    /// brackets, at every offset, in an entry and in a member around the entries.
    func testEscapesAtEveryOffset() {
        for length in 0..<12 {
            for at in 0...length {
                var value = String(repeating: "x", count: length)
                value.insert(contentsOf: at % 2 == 0 ? #"\"]}"# : #"\\\"}]"#, at: value.index(value.startIndex, offsetBy: at))
                let text = #"{"pre": "\#(value)", "log": {"entries": [{"v": "\#(value)"}, "\#(value)\\"], "post": ["\#(value)"]}}"#
                assertSameLayout(Array(text.utf8), "\(length) \(at)")
            }
        }
    }

    /// Random mutations of a sample (bytes dropped, doubled and replaced by structural bytes):
    /// whatever the scanner makes of them, the stream makes the same.
    func testMutatedDocumentsAgree() {
        let sample = makeSampleLog(entryCount: 3).serialize(pretty: false)
        let structural = Array(#"{}[]",:\ a1"#.utf8)
        var generator = SystemRandomNumberGenerator()
        for round in 0..<300 {
            var bytes = sample
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(bytes[at], at: at)
                default: bytes[at] = structural.randomElement(using: &generator)!
                }
            }
            assertSameLayout(bytes, "mutation \(round)")
        }
    }

    /// A document read by ranges: the same head and entries as in memory, the same errors at the
    /// same lines, and no entry read before it is asked for.
    func testADocumentReadByRangesReadsTheSame() throws {
        let log = makeSampleLog(entryCount: 30)
        for bytes in [log.serialize(pretty: true), [0xEF, 0xBB, 0xBF] + log.serialize(pretty: false)] {
            let reads = PositionalReader.Counter()
            let windowed = try HARLazyDocument(reading: .memory(bytes, reads: reads))
            XCTAssertEqual(windowed.entryCount, 30)
            let afterScan = reads.count
            XCTAssertEqual(try windowed.entry(17), log.entries[17])
            XCTAssertEqual(reads.count, afterScan + 1, "one read for one entry")
            var rebuilt = windowed.head
            rebuilt.entries = try (0..<windowed.entryCount).map { try windowed.entry($0) }
            XCTAssertEqual(rebuilt, try HARLog.parse(bytes))
            let copy = try HARLazyDocument(bytes)
            for i in [0, 5, 29] {
                XCTAssertEqual(windowed.sourceRange(ofEntry: i), copy.sourceRange(ofEntry: i))
                XCTAssertEqual(windowed.entryLeavingOutResponseText(i)?.text, copy.entryLeavingOutResponseText(i)?.text)
            }
        }
        for text in HARLazyReadTestsShapes.errors + Self.shapes {
            let bytes = Array(text.utf8)
            let inMemory = Result { try HARLazyDocument(bytes) }
            let windowed = Result { try HARLazyDocument(reading: .memory(bytes)) }
            switch (inMemory, windowed) {
            case (.success(let a), .success(let b)):
                XCTAssertEqual(a.head, b.head, text)
                XCTAssertEqual(a.entryCount, b.entryCount, text)
                for i in 0..<a.entryCount {
                    XCTAssertEqual("\(Result { try a.entry(i) })", "\(Result { try b.entry(i) })", "\(text) entry \(i)")
                }
            case (.failure(let a), .failure(let b)):
                XCTAssertEqual("\(a)", "\(b)", text)
            default:
                XCTFail("\(text): \(inMemory) against \(windowed)")
            }
        }
    }

    /// A file that shrank under the reader: the entry's read says so, and nothing crashes.
    func testAFileThatChangedIsAnError() throws {
        let bytes = makeSampleLog(entryCount: 3).serialize(pretty: false)
        let cut = Mutex(false)
        let reader = PositionalReader(count: bytes.count, read: { offset, buffer in
            let end = cut.withLock { $0 } ? bytes.count / 2 : bytes.count
            let n = max(0, min(buffer.count, end - offset))
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
            return n
        }, close: {})
        let document = try HARLazyDocument(reading: reader)
        cut.withLock { $0 = true }
        XCTAssertNoThrow(try document.entry(0))
        XCTAssertThrowsError(try document.entry(2)) { error in
            guard case .unreadable(let reason) = error as? HARReadError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("the file changed"), reason)
        }
        XCTAssertNil(document.entryLeavingOutResponseText(2))
    }
}

/// Documents whose errors both readers must report alike.
enum HARLazyReadTestsShapes {
    static let errors = [
        "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\", \"version\": \"1\"},\n\"entries\": [{},\n{\"time\": tru}]}}",
        "{\"log\": {\"entries\": [{}, {}],\n\n\"version\": 1.2.3}}",
        "\u{FEFF}{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\", \"version\": \"1\"},\n\"entries\": [{},\n{\"time\": tru}]}}",
        "\u{FEFF}\u{FEFF}{\"log\": {\"entriesX\": []}}",
    ]
}
