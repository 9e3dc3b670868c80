import ProxyCore
import XCTest

final class TextTests: XCTestCase {
    func testHeaderNamesCompareWithoutASCIICase() {
        XCTAssertTrue("Content-Type".equalsIgnoringASCIICase("content-type"))
        XCTAssertTrue("X-A-VERY-LONG-HEADER-NAME-PAST-SMALL-STRINGS".equalsIgnoringASCIICase("x-a-very-long-header-name-past-small-strings"))
        XCTAssertTrue("".equalsIgnoringASCIICase(""))
        XCTAssertFalse("Content-Type".equalsIgnoringASCIICase("Content-Typf"))
        XCTAssertFalse("Content-Type".equalsIgnoringASCIICase("Content-Type "))
        // Only ASCII letters fold: '[' (0x5B) is not '{' (0x7B), '@' is not '`', and no other script folds.
        XCTAssertFalse("[".equalsIgnoringASCIICase("{"))
        XCTAssertFalse("@".equalsIgnoringASCIICase("`"))
        XCTAssertFalse("É".equalsIgnoringASCIICase("é"))
        XCTAssertTrue("é".equalsIgnoringASCIICase("é"))
        // A bridged or substring-made string takes the same answer as a native one.
        let built = String("xx-Content-Type".dropFirst(3))
        XCTAssertTrue(built.equalsIgnoringASCIICase("CONTENT-TYPE"))
    }
}
