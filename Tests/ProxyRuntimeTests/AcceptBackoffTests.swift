@testable import ProxyRuntime
import XCTest

final class AcceptBackoffTests: XCTestCase {
    /// Failures double the pause up to the maximum; one line per second at most, with a count.
    func testDelayDoublesToTheMaximumAndLogsOncePerSecond() {
        var backoff = AcceptBackoff()
        var now = 100.0
        var lines: [String] = []
        var delays: [Double] = []
        for _ in 0..<40 {
            if let line = backoff.failed(at: now, reason: "Too many open files") { lines.append(line) }
            delays.append(backoff.delay)
            XCTAssertFalse(backoff.shouldResume(at: now))
            now = backoff.pausedUntil!
            XCTAssertTrue(backoff.shouldResume(at: now))
            backoff.resumed()
        }
        XCTAssertEqual(Array(delays.prefix(4)), [0.01, 0.02, 0.04, 0.08])
        XCTAssertEqual(delays.last, AcceptBackoff.maximumDelay)
        XCTAssertEqual(delays.max(), AcceptBackoff.maximumDelay)
        // 40 failures over about 33 seconds: far fewer lines than failures, never two within a second.
        let elapsed = now - 100
        XCTAssertLessThanOrEqual(Double(lines.count), elapsed / AcceptBackoff.logInterval + 1)
        XCTAssertTrue(lines[0].hasPrefix("harrec: accept failed: Too many open files;"), lines[0])
        XCTAssertTrue(lines[1].contains("times since the last report"), lines[1])
        XCTAssertTrue(lines.allSatisfy { $0.contains("ulimit -n") })
    }

    func testASuccessfulAcceptStartsOver() {
        var backoff = AcceptBackoff()
        _ = backoff.failed(at: 0, reason: "x")
        _ = backoff.failed(at: 1, reason: "x")
        XCTAssertEqual(backoff.delay, 0.02)
        backoff.resumed()
        backoff.accepted()
        _ = backoff.failed(at: 2, reason: "x")
        XCTAssertEqual(backoff.delay, AcceptBackoff.initialDelay)
        XCTAssertNil(AcceptBackoff().pausedUntil)
        XCTAssertFalse(AcceptBackoff().shouldResume(at: 1e9))
    }
}
