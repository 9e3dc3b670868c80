import XCTest
@testable import Redaction

/// `ValueCollector.truncate(to:)`: what a dropped attempt (strict JSON that did not parse)
/// collected goes, and the index still finds every value collected before it.
final class ValueCollectorTests: XCTestCase {
    func testTruncateForgetsTheLastValuesAndKeepsTheIndexSound() {
        var collector = ValueCollector()
        // Enough values to grow the index several times, before and after the mark.
        for k in 0..<300 { XCTAssertEqual(collector.index(.secret, "before-\(k)"), k) }
        let mark = collector.mark
        for k in 0..<500 { XCTAssertEqual(collector.index(.secret, "after-\(k)"), 300 + k) }
        collector.chase(.secret, "chased")
        collector.reserve(.secret, 7)
        collector.truncate(to: mark)
        XCTAssertEqual(collector.values.count, 300)
        XCTAssertTrue(collector.chased.isEmpty)
        XCTAssertTrue(collector.reserved.isEmpty)
        // Earlier values keep their indexes; a forgotten value is new again, numbered after them.
        for k in 0..<300 { XCTAssertEqual(collector.index(.secret, "before-\(k)"), k) }
        XCTAssertEqual(collector.index(.secret, "after-499"), 300)
        XCTAssertEqual(collector.index(.email, "before-1"), 301, "another kind is another value")
        XCTAssertEqual(collector.values.count, 302)
    }

    func testTruncateToTheCurrentMarkChangesNothing() {
        var collector = ValueCollector()
        _ = collector.index(.secret, "a")
        collector.truncate(to: collector.mark)
        XCTAssertEqual(collector.index(.secret, "a"), 0)
        XCTAssertEqual(collector.values.count, 1)
    }
}
