import XCTest
import TextEncodings
@testable import HAR

/// `HARDeferredBody`: windows are the same whatever pieces the source hands over, each ends
/// right after a cut byte (or at the end), they add up to the body, and the base64 written a
/// window at a time is the base64 of the whole.
final class DeferredBodyWindowTests: XCTestCase {
    private func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            // Mostly printable, so cuts are sparse and windows grow past their size.
            let b = UInt8(truncatingIfNeeded: state >> 33)
            return b % 16 == 0 ? b % 0x20 : 0x20 + b % 0x5F
        }
    }

    func testWindowsDoNotDependOnPieces() throws {
        for (count, window) in [(0, 4), (1, 4), (10_000, 64), (10_000, 1), (4_097, 4_096), (50_000, 100_000)] {
            let body = bytes(count, seed: UInt64(count + window))
            var expected: [[UInt8]]?
            for piece in [1, 3, 64, 1_000, 1 << 20] {
                let deferred = HARDeferredBody(bytes: body, pieceSize: piece)
                deferred.windowBytes = window
                var windows: [[UInt8]] = []
                try deferred.forEachWindow { w, offset in
                    XCTAssertEqual(offset, windows.reduce(0) { $0 + $1.count })
                    windows.append(w)
                }
                XCTAssertEqual(Array(windows.joined()), body, "count \(count), window \(window), piece \(piece)")
                for w in windows.dropLast() {
                    XCTAssertGreaterThanOrEqual(w.count, window)
                    XCTAssertTrue(HARDeferredBody.controlBytes[Int(w.last!)], "a window ends after a cut byte")
                    XCTAssertFalse(w.dropLast().suffix(max(0, w.count - window)).contains { HARDeferredBody.controlBytes[Int($0)] },
                                   "at the first cut byte past its size")
                }
                if let expected { XCTAssertEqual(windows, expected, "piece \(piece)") } else { expected = windows }
                var base64: [UInt8] = []
                try deferred.writeBase64 { base64 += $0 }
                XCTAssertEqual(String(decoding: base64, as: UTF8.self), Base64.encode(body))
                XCTAssertEqual(try deferred.base64Text(), Base64.encode(body))
            }
        }
    }

    func testASourceThatHandsOverTooFewBytesFails() {
        let short = HARDeferredBody(count: 10, prefix: []) { piece in try piece([1, 2, 3]) }
        XCTAssertThrowsError(try short.writeBase64 { _ in })
        var w = JSONWriter(pretty: false)
        w.keepsDeferredBodies = true
        w.beginObject()
        w.key("text")
        w.deferredString(short)
        w.endObject()
        XCTAssertEqual(w.takeDeferredBodies().map(\.offset), [9], "a place after the opening quote")
        XCTAssertEqual(w.finish(), Array(#"{"text":""}"#.utf8))
    }
}
