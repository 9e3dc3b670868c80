import HAR
import HARGenerator
import XCTest

/// Pages as scenarios: one page's entries (`--page`), a scenario per page (`--scenario-per-page`),
/// for harrec's marks and for Chrome's pages (titled with URLs).
final class HARPagesTests: XCTestCase {
    private func log() -> HARLog {
        var entries = (0..<6).map { HARFactory.entry("GET", "https://api.test/\($0)", second: $0) }
        entries[0].pageref = nil // before the first mark
        entries[1].pageref = "page_1"
        entries[2].pageref = "page_1"
        entries[3].pageref = "page_2"
        entries[4].pageref = "page_3"
        entries[5].pageref = "page_3"
        var log = HARFactory.log(entries)
        log.pages = [HARPage(startedDateTime: "2026-11-30T10:00:00.500Z", id: "page_1", title: "log in"),
                     HARPage(startedDateTime: "2026-11-30T10:00:02.500Z", id: "page_2", title: "https://app.test/inbox?tab=1"),
                     HARPage(startedDateTime: "2026-11-30T10:00:03.500Z", id: "page_3", title: "log in")]
        return log
    }

    func testSelectByTitleThenById() throws {
        let selected = try HARPages.select(log(), page: "https://app.test/inbox?tab=1")
        XCTAssertEqual(selected.entries.map(\.request.url), ["https://api.test/3"])
        XCTAssertEqual(selected.pages?.map(\.id), ["page_2"])
        // Two pages with one title: the first wins; the id picks either.
        XCTAssertEqual(try HARPages.select(log(), page: "log in").entries.map(\.request.url), ["https://api.test/1", "https://api.test/2"])
        XCTAssertEqual(try HARPages.select(log(), page: "page_3").entries.map(\.request.url), ["https://api.test/4", "https://api.test/5"])
    }

    func testUnknownPagesAndPagelessHARsSayWhy() {
        XCTAssertThrowsError(try HARPages.select(log(), page: "checkout")) { error in
            XCTAssertEqual("\(error)", #"no page titled "checkout"; the HAR has "log in" (page_1), "https://app.test/inbox?tab=1" (page_2), "log in" (page_3)"#)
        }
        XCTAssertThrowsError(try HARPages.select(HARFactory.log([]), page: "x")) { error in
            XCTAssertTrue("\(error)".hasPrefix("the HAR has no pages"))
        }
        XCTAssertTrue(HARPages.scenarios(HARFactory.log([])).isEmpty)
    }

    func testAScenarioPerPageWithUniqueNames() {
        let scenarios = HARPages.scenarios(log())
        XCTAssertEqual(scenarios.map(\.name), ["logIn", "httpsAppTestInboxTab1", "logIn2"])
        XCTAssertEqual(scenarios.map { $0.log.entries.count }, [2, 1, 2], "entries before the first mark are in none")
        XCTAssertEqual(scenarios.map(\.title), ["log in", "https://app.test/inbox?tab=1", "log in"])
    }

    func testScenarioNames() {
        XCTAssertEqual(HARPages.scenarioName("Send an attachment!", fallback: "x"), "sendAnAttachment")
        XCTAssertEqual(HARPages.scenarioName("operator answers ✓", fallback: "x"), "operatorAnswers")
        XCTAssertEqual(HARPages.scenarioName("✓✓", fallback: "page4"), "page4")
        XCTAssertEqual(HARPages.scenarioName("2fa code", fallback: "page2"), "page2", "a Swift name cannot start with a digit")
        XCTAssertEqual(HARPages.scenarioName("login", fallback: "x"), "login")
    }
}
