import XCTest
@testable import Redaction
final class PlaceholderSmokeTests: XCTestCase { func testNothing() { XCTAssertTrue(Placeholder.isPlaceholder("redacted-1")) } }
