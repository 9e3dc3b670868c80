import TestSupport
import XCTest
@testable import HAR

final class JSONFuzzTests: XCTestCase {
    /// 10k seeded mutations of valid documents: the parser must never crash, errors must carry a
    /// position inside the input, and whatever parses must survive write -> parse unchanged.
    func testMutatedDocumentsNeverCrash() throws {
        let seeds: [[UInt8]] = [
            utf8(#"{"log": {"version": "1.2", "entries": [{"time": 1.5, "x": [true, false, null, -0.5e-3]}]}}"#),
            utf8(#"["caf\u00e9", "\ud83d\ude00", "tab\tescaped", {"": {}}, [[[]]], 123456789012345678901234567890]"#),
            utf8("{\"a\":\"caf\u{E9} \u{1F600}\",\"b\":[1,2,3],\"c\":{\"d\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}}"),
            JSONWriter.serialize(try JSONParser.parse(makeSampleLog(entryCount: 1).serialize(pretty: false)), pretty: true),
        ]
        let interesting: [UInt8] = Array("{}[]\",:\\/-+.eE0123456789tfnul \t\n\r\u{7F}".utf8) + [0x00, 0x80, 0xC3, 0xE2, 0xED, 0xF0, 0xFF]
        var rng = SplitMix64(seed: 0x4841_5221)
        var parsedCount = 0
        for round in 0..<10_000 {
            var doc = seeds[round % seeds.count]
            let mutations = 1 + Int(rng.next() % 4)
            for _ in 0..<mutations {
                guard !doc.isEmpty else { break }
                let at = Int(rng.next() % UInt64(doc.count))
                switch rng.next() % 6 {
                case 0: doc[at] = interesting[Int(rng.next() % UInt64(interesting.count))]
                case 1: doc.insert(interesting[Int(rng.next() % UInt64(interesting.count))], at: at)
                case 2: doc.remove(at: at)
                case 3: doc.removeSubrange(at..<doc.count)
                case 4: doc[at] = UInt8(truncatingIfNeeded: rng.next())
                default:
                    let end = min(doc.count, at + 1 + Int(rng.next() % 16))
                    doc.insert(contentsOf: doc[at..<end], at: at)
                }
            }
            do {
                let value = try JSONParser.parse(doc)
                parsedCount += 1
                for pretty in [true, false] {
                    let written = JSONWriter.serialize(value, pretty: pretty)
                    XCTAssertEqual(try JSONParser.parse(written), value, "round \(round)")
                }
            } catch {
                XCTAssertLessThanOrEqual(error.offset, doc.count)
                XCTAssertGreaterThanOrEqual(error.line, 1)
                XCTAssertGreaterThanOrEqual(error.column, 1)
                XCTAssertFalse(error.reason.isEmpty)
                XCTAssertFalse(error.reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
            }
        }
        print("fuzz: \(parsedCount) of 10000 mutated documents still parsed")
        XCTAssertGreaterThan(parsedCount, 100)
    }

    /// HAR-level: the lenient reader and the validator must survive the same mutations.
    func testMutatedHARsNeverCrashReaderOrValidator() {
        let seed = makeSampleLog(entryCount: 2).serialize(pretty: false)
        var rng = SplitMix64(seed: 7)
        for _ in 0..<1_000 {
            var doc = seed
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let at = Int(rng.next() % UInt64(doc.count))
                doc[at] = UInt8(truncatingIfNeeded: rng.next() % 128)
            }
            _ = HARValidator.validate(bytes: doc)
            if let log = try? HARLog.parse(doc) {
                XCTAssertNoThrow(try HARLog.parse(log.serialize()))
            }
        }
    }
}
