import TestSupport
import XCTest
@testable import HAR

final class HARDateTests: XCTestCase {
    func testFormat() {
        XCTAssertEqual(HARDate.format(epochSeconds: 0), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(HARDate.format(epochSeconds: 1_796_104_800.123), "2026-12-01T06:00:00.123Z")
        XCTAssertEqual(HARDate.format(epochSeconds: 951_782_400), "2000-02-29T00:00:00.000Z")
        XCTAssertEqual(HARDate.format(epochSeconds: -0.001), "1969-12-31T23:59:59.999Z")
        XCTAssertEqual(HARDate.format(epochSeconds: -86_400 * 365.0), "1969-01-01T00:00:00.000Z")
        XCTAssertEqual(HARDate.format(epochSeconds: 1_445_412_480.9996), "2015-10-21T07:28:01.000Z", "rounds to the nearest ms")
        XCTAssertEqual(HARDate.format(epochSeconds: .nan), "1970-01-01T00:00:00.000Z")
        XCTAssertEqual(HARDate.format(epochSeconds: .infinity), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(HARDate.format(epochSeconds: -1e300), "0001-01-01T00:00:00.000Z")
    }

    func testParse() {
        XCTAssertEqual(HARDate.parse("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(HARDate.parse("2026-12-01T06:00:00.123Z")!, 1_796_104_800.123, accuracy: 1e-6)
        XCTAssertEqual(HARDate.parse("2026-12-01T07:00:00.123+01:00")!, 1_796_104_800.123, accuracy: 1e-6)
        XCTAssertEqual(HARDate.parse("2026-12-01T00:30:00-0530")!, 1_796_104_800, accuracy: 1e-6)
        XCTAssertEqual(HARDate.parse("2026-12-01T05:58:05.939869+00:00")!, 1_796_104_685.939869, accuracy: 1e-6)
        XCTAssertEqual(HARDate.parse("2009-07-24T19:20:30.45+01:00")!, 1_248_459_630.45, accuracy: 1e-6)
        for bad in ["", "2026-12-01", "2026-12-01T06:00:00", "2026-12-01T06:00:00.Z", "2026-12-01 06:00:00Z",
                    "2026-02-29T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T06:60:00Z", "2026-12-01T06:00:00+25:00",
                    "2026-12-01T06:00:00Zjunk", "26-12-01T06:00:00Z", "2026-12-01T06:00:00.1.2Z"] {
            XCTAssertNil(HARDate.parse(bad), bad)
        }
        XCTAssertNotNil(HARDate.parse("2024-02-29T00:00:00Z"))
    }

    func testFormatParseRoundTrip() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<10_000 {
            let ms = Int64(rng.next() % 253_402_300_800_000) - 62_135_596_800_000  // years 1...9999
            let t = Double(ms) / 1000
            let s = HARDate.format(epochSeconds: t)
            XCTAssertEqual(s.utf8.count, 24)
            XCTAssertEqual(HARDate.parse(s)!, t, accuracy: 0.0005, s)
            XCTAssertEqual(HARDate.format(epochSeconds: HARDate.parse(s)!), s)
        }
    }
}
