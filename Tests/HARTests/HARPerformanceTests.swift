import Foundation
import XCTest
@testable import HAR

/// Sanity, not timed assertions: large logs complete; durations and throughput are printed.
final class HARPerformanceTests: XCTestCase {
    // Debug builds are 30-60x slower on byte loops: keep the debug run short.
    #if DEBUG
    static let repeats = 1
    static let bodyRepeats = 4
    #else
    static let repeats = 3
    static let bodyRepeats = 48
    #endif

    func testSerializeParseValidate10kEntries() throws {
        var log = makeSampleLog(entryCount: 10_000)
        // A JSON body per entry (~2.5 KiB in release builds) (JSON inside a JSON string: many escapes, as in real HARs).
        let body = String(repeating: "{\"key\": \"value caf\u{E9}\", \"n\": 12345, \"list\": [1, 2, 3]}\n", count: Self.bodyRepeats)
        for i in log.entries.indices where log.entries[i].response.content.encoding == nil {
            log.entries[i].response.content.text = body
            log.entries[i].response.content.size = body.utf8.count
        }
        var bytes: [UInt8] = []
        func time<T>(_ label: String, _ body: () throws -> T) rethrows -> T {
            var best = Double.infinity
            var result: T? = nil
            for _ in 0..<Self.repeats {
                let start = DispatchTime.now().uptimeNanoseconds
                result = try body()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            let mbps = bytes.isEmpty ? "" : String(format: " (%.0f MB/s)", Double(bytes.count) / 1e3 / best)
            print("perf: \(label): \(String(format: "%.1f", best)) ms\(mbps)")
            return result!
        }
        bytes = log.serialize()
        bytes = time("serialize 10k entries, pretty") { log.serialize() }
        print("perf: output \(bytes.count / 1_000_000) MB")
        _ = time("serialize 10k entries, compact") { log.serialize(pretty: false) }
        let json = try time("JSONParser.parse") { try JSONParser.parse(bytes) }
        let parsed = try time("HARLog.parse") { try HARLog.parse(bytes) }
        let problems = time("HARValidator.validate") { HARValidator.validate(json) }
        XCTAssertEqual(parsed.entries.count, 10_000)
        XCTAssertEqual(problems, [])
        let again = parsed.serialize()
        XCTAssertTrue(again == bytes, "parse -> serialize is byte-identical")
    }
}
