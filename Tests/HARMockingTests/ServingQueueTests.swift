import HARScenarios
import XCTest

/// The queue HARMocking and `harrec replay` share: its index must pick exactly what a scan of the
/// whole queue in order would pick.
final class ServingQueueTests: XCTestCase {
    /// The rule written the slow way: of the entries that match and have uses left, the first in
    /// queue order, unless it allows unlisted query items: then the first of those that allow them
    /// too and match the most query items.
    private func linearPick(_ entries: [QueueEntry], served: inout [Int], _ input: MatchInput) -> Int? {
        let candidates = entries.indices.filter { i in
            ServingQueue.usesLeft(entries[i].item.repeatability, served: served[i]) > 0
                && RequestMatcher.evaluate(entries[i].item.condition, headers: entries[i].headers, against: input).matches
        }
        guard var chosen = candidates.first else { return nil }
        if entries[chosen].item.condition.unlistedQueryItems == .allowed {
            let allowing = candidates.filter { entries[$0].item.condition.unlistedQueryItems == .allowed }
            let most = allowing.map { entries[$0].item.condition.query.count }.max()!
            chosen = allowing.first { entries[$0].item.condition.query.count == most }!
        }
        served[chosen] += 1
        return chosen
    }

    func testTheIndexPicksWhatALinearScanPicks() {
        var rng = SystemRandomNumberGenerator()
        let methods = ["GET", "POST", "*"]
        let paths = ["/a", "/b", "/c/1"]
        for round in 0..<200 {
            var entries: [QueueEntry] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                let method = methods.randomElement(using: &rng)!
                let pattern: PathPattern? = Bool.random(using: &rng) && Int.random(in: 0..<4, using: &rng) == 0
                    ? .template("/c/{id}") : nil
                let query: [QueryItemMatch] = [[], [.equals("q", "1")], [.equals("q", "1"), .present("r")]].randomElement(using: &rng)!
                let condition = RequestCondition(method: method, scheme: "http", host: "h.test",
                                                 path: paths.randomElement(using: &rng)!, query: query,
                                                 unlistedQueryItems: Bool.random(using: &rng) ? .allowed : .rejected(),
                                                 pathPattern: pattern)
                let repeatability: Repeatability = [.once, .always, .times(2)].randomElement(using: &rng)!
                entries.append(QueueEntry(item: ResponseQueueItem(condition: condition, response: MockResponse(status: 200),
                                                                  repeatability: repeatability)))
            }
            var queue = ServingQueue(entries: entries)
            var served = Array(repeating: 0, count: entries.count)
            for _ in 0..<30 {
                let url = "http://h.test\(paths.randomElement(using: &rng)!)" + ["", "?q=1", "?r=2&q=1", "?s=3"].randomElement(using: &rng)!
                let input = MatchInput(method: ["GET", "POST", "PUT"].randomElement(using: &rng)!, url: url, headers: [:], body: [])
                let expected = linearPick(entries, served: &served, input)
                switch queue.pick(for: input) {
                case .served(let index): XCTAssertEqual(index, expected, "round \(round): \(input.requestLine)")
                case .unmatched:
                    XCTAssertNil(expected, "round \(round): \(input.requestLine)")
                    XCTAssertEqual(queue.diagnosisReports(for: input).map(\.index), Array(entries.indices),
                                   "one report per entry, for the diagnosis")
                }
            }
            XCTAssertEqual(queue.served, served)
        }
    }

    /// `/q` recorded before `/q?v=1` and `/q?v=2`: by default each request gets the item with its
    /// own query items; with unlisted items allowed, the most specific item.
    func testQueryItemsMatchExactlyOrTheMostSpecificItem() {
        func queue(_ unlisted: UnlistedQueryItems) -> ServingQueue {
            ServingQueue(entries: [[], [QueryItemMatch.equals("v", "1")], [.equals("v", "2")]].map { query in
                QueueEntry(item: ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "http", host: "h.test", path: "/q",
                                                                               query: query, unlistedQueryItems: unlisted),
                                                   response: MockResponse(status: 200), repeatability: .always))
            })
        }
        func pick(_ q: inout ServingQueue, _ url: String) -> Int? {
            if case .served(let i) = q.pick(for: MatchInput(method: "GET", url: "http://h.test" + url, headers: [:], body: [])) { return i }
            return nil
        }
        var exact = queue(.rejected())
        XCTAssertEqual(pick(&exact, "/q?v=2"), 2)
        XCTAssertEqual(pick(&exact, "/q?v=1"), 1)
        XCTAssertEqual(pick(&exact, "/q"), 0)
        XCTAssertNil(pick(&exact, "/q?v=3"), "never recorded")
        XCTAssertNil(pick(&exact, "/q?v=1&extra=9"), "an item the recording lacks")
        let extra = MatchInput(method: "GET", url: "http://h.test/q?extra=9&v=1", headers: [:], body: [])
        guard case .unmatched = exact.pick(for: extra) else { return XCTFail() }
        let reports = exact.diagnosisReports(for: extra)
        XCTAssertEqual(reports[1].report.mismatches, [.unlistedQuery(name: "extra", value: "9")])
        var subset = queue(.allowed)
        XCTAssertEqual(pick(&subset, "/q?v=1&extra=9"), 1, "the most specific")
        XCTAssertEqual(pick(&subset, "/q?extra=9&v=2"), 2)
        XCTAssertEqual(pick(&subset, "/q?v=3"), 0)
        XCTAssertEqual(pick(&subset, "/q"), 0)
    }

    /// An unmatched request to a large queue is compared with at most `diagnosisReach` entries:
    /// those of its own method and path first, then those under the same parent path, then the
    /// rest; and the diagnosis still names the nearest one.
    func testAnUnmatchedRequestIsComparedWithABoundedSetOfEntries() {
        var entries: [QueueEntry] = (0..<1_000).map { k in
            QueueEntry(item: ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "http", host: "h.test",
                                                                           path: "/item/\(k)"),
                                               response: MockResponse(status: 200)))
        }
        entries.append(QueueEntry(item: ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "http", host: "h.test",
                                                                                      path: "/v1/projects/42"),
                                                          response: MockResponse(status: 200))))
        var queue = ServingQueue(entries: entries, source: "t")
        let request = MatchInput(method: "GET", url: "http://h.test/v1/projects/43", headers: [:], body: [])
        guard case .unmatched = queue.pick(for: request) else { return XCTFail() }
        let reports = queue.diagnosisReports(for: request)
        XCTAssertEqual(reports.count, ServingQueue.diagnosisReach)
        XCTAssertTrue(reports.contains { $0.index == 1_000 }, "the entry under the same parent path is compared")
        XCTAssertEqual(reports.map(\.index), reports.map(\.index).sorted(), "in queue order")
        let text = queue.diagnosis(for: request, reports: reports, owner: "t", activation: "a", queryAdvice: .code)
        XCTAssertTrue(text.contains("1. #1001 GET /v1/projects/42: path: expected /v1/projects/42, got /v1/projects/43"), text)
    }

    func testResetKeepsWhatWasEverServedAndUnusedListsTheRest() {
        let entry = { (path: String, r: Repeatability) in
            QueueEntry(item: ResponseQueueItem(condition: RequestCondition(method: "GET", scheme: "http", host: "h.test", path: path),
                                               response: MockResponse(status: 200), repeatability: r))
        }
        var queue = ServingQueue(entries: [entry("/a", .once), entry("/a", .always), entry("/b", .times(2))], source: "t")
        let a = MatchInput(method: "GET", url: "http://h.test/a", headers: [:], body: [])
        guard case .served(0) = queue.pick(for: a), case .served(1) = queue.pick(for: a) else { return XCTFail() }
        XCTAssertEqual(queue.unusedIndices(), [2])
        queue.reset()
        XCTAssertEqual(queue.served, [0, 0, 0])
        XCTAssertEqual(queue.everServed, [true, true, false])
        XCTAssertEqual(queue.unusedIndices(), [0, 2], "after a reset the .once item has its use again")
        guard case .served(0) = queue.pick(for: a) else { return XCTFail("a reset serves the first item again") }
    }

    func testInsertFirstTakesPrecedence() {
        let condition = RequestCondition(method: "GET", scheme: "http", host: "h.test", path: "/a")
        var queue = ServingQueue(entries: [QueueEntry(item: ResponseQueueItem(condition: condition, response: MockResponse(status: 200)))])
        queue.insertFirst(QueueEntry(item: ResponseQueueItem(condition: condition, response: MockResponse(status: 201))))
        guard case .served(0) = queue.pick(for: MatchInput(method: "GET", url: "http://h.test/a", headers: [:], body: [])) else {
            return XCTFail("the stub put first answers first")
        }
    }

    func testHostRemapAnswersATargetFromTheRecordedHost() {
        let remap = HostRemap(recordedHost: "API.example.com", target: "http://127.0.0.1:9000/api")!
        var input = MatchInput(method: "GET", url: "http://127.0.0.1:9000/api/v1/feed", headers: [:], body: [])
        XCTAssertTrue(remap.applies(to: input))
        remap.apply(to: &input)
        XCTAssertEqual(input.parts?.host, "api.example.com")
        XCTAssertEqual(input.parts?.path, "/v1/feed")
        XCTAssertFalse(remap.applies(to: MatchInput(method: "GET", url: "http://127.0.0.1:9001/api/x", headers: [:], body: [])))
        XCTAssertFalse(remap.applies(to: MatchInput(method: "GET", url: "http://127.0.0.1:9000/apix", headers: [:], body: [])))
        XCTAssertNil(HostRemap(recordedHost: "a", target: "ftp://h/"))
    }
}
