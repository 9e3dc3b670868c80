import HARScenarios
import XCTest

/// The queue HARMocking and `harrec replay` share: its index must pick exactly what a scan of the
/// whole queue in order would pick.
final class ServingQueueTests: XCTestCase {
    /// The rule written the slow way: the first entry in queue order that matches and has uses left.
    private func linearPick(_ entries: [QueueEntry], served: inout [Int], _ input: MatchInput) -> Int? {
        for i in entries.indices
        where ServingQueue.usesLeft(entries[i].item.repeatability, served: served[i]) > 0
            && RequestMatcher.evaluate(entries[i].item.condition, headers: entries[i].headers, against: input).matches {
            served[i] += 1
            return i
        }
        return nil
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
                let condition = RequestCondition(method: method, scheme: "http", host: "h.test",
                                                 path: paths.randomElement(using: &rng)!,
                                                 query: Bool.random(using: &rng) ? [.equals("q", "1")] : [],
                                                 pathPattern: pattern)
                let repeatability: Repeatability = [.once, .always, .times(2)].randomElement(using: &rng)!
                entries.append(QueueEntry(item: ResponseQueueItem(condition: condition, response: MockResponse(status: 200),
                                                                  repeatability: repeatability)))
            }
            var queue = ServingQueue(entries: entries)
            var served = Array(repeating: 0, count: entries.count)
            for _ in 0..<30 {
                let url = "http://h.test\(paths.randomElement(using: &rng)!)" + (Bool.random(using: &rng) ? "?q=1" : "")
                let input = MatchInput(method: ["GET", "POST", "PUT"].randomElement(using: &rng)!, url: url, headers: [:], body: [])
                let expected = linearPick(entries, served: &served, input)
                switch queue.pick(for: input) {
                case .served(let index): XCTAssertEqual(index, expected, "round \(round): \(input.requestLine)")
                case .unmatched(let reports):
                    XCTAssertNil(expected, "round \(round): \(input.requestLine)")
                    XCTAssertEqual(reports.count, entries.count, "one report per entry, for the diagnosis")
                }
            }
            XCTAssertEqual(queue.served, served)
        }
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
