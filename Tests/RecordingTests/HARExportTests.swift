import Files
import HAR
@testable import Export
@testable import Recording
import XCTest

final class HARExportTests: XCTestCase {
    func makeFlow(id: UInt64 = 1, start: Double = 1_800_000_000.25) -> Flow {
        var instants = FlowInstants(requestStart: start)
        instants.connectStart = start + 0.001
        instants.connectEnd = start + 0.003
        instants.sendStart = start + 0.003
        instants.sendEnd = start + 0.004
        instants.responseStart = start + 0.010
        instants.responseEnd = start + 0.012
        instants.end = start + 0.012
        let request = RecordedRequest(method: "POST", url: "http://a.test/p?q=a%20b&x=1", httpVersion: "HTTP/1.1",
                                      fields: [RecordedField(name: "Host", value: "a.test"),
                                               RecordedField(name: "Cookie", value: "s=1; t=2"),
                                               RecordedField(name: "Content-Type", value: "application/x-www-form-urlencoded")],
                                      headSize: 99, body: RecordedBody(bytes: Array("a=1&b=two".utf8), wireSize: 9))
        var flow = Flow(id: id, clientAddress: "127.0.0.1:1", request: request, instants: instants)
        flow.response = RecordedResponse(status: 200, reason: "OK", httpVersion: "HTTP/1.1",
                                         fields: [RecordedField(name: "Content-Type", value: "application/json"),
                                                  RecordedField(name: "Set-Cookie", value: "id=9; Path=/; HttpOnly")],
                                         headSize: 50, body: RecordedBody(bytes: Array("{\"ok\":true}".utf8), wireSize: 11))
        flow.serverIPAddress = "127.0.0.1"
        flow.connectionID = "1-1"
        return flow
    }

    func testEntryFieldsAndTimingSum() {
        let entry = HARExport.entry(from: makeFlow())
        XCTAssertEqual(entry.startedDateTime, "2027-01-15T08:00:00.250Z")
        XCTAssertEqual(entry.request.queryString.map { "\($0.name)=\($0.value)" }, ["q=a b", "x=1"])
        XCTAssertEqual(entry.request.cookies.map(\.name), ["s", "t"])
        XCTAssertEqual(entry.request.postData?.params?.map(\.name), ["a", "b"])
        XCTAssertEqual(entry.request.postData?.text, "a=1&b=two")
        XCTAssertEqual(entry.request.bodySize, 9)
        XCTAssertEqual(entry.request.headersSize, 99)
        XCTAssertEqual(entry.response.content.text, "{\"ok\":true}")
        XCTAssertEqual(entry.response.content.size, 11)
        XCTAssertEqual(entry.response.cookies.first?.httpOnly, true)
        XCTAssertEqual(entry.timings.connect, 2)
        XCTAssertEqual(entry.timings.dns, -1)
        XCTAssertEqual(entry.timings.blocked, 1)
        XCTAssertEqual(entry.timings.send, 1)
        XCTAssertEqual(entry.timings.wait, 6)
        XCTAssertEqual(entry.timings.receive, 2)
        XCTAssertEqual(entry.time, 12, accuracy: 0.0005)
    }

    func testGzipBodyIsDecodedAndCompressionIsReported() throws {
        var flow = makeFlow()
        // "hello hello hello" gzip-compressed (python gzip.compress, level 9, mtime 0).
        let gzipped: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9,
                                0xc9, 0x57, 0xc8, 0x40, 0x90, 0x00, 0x80, 0x88, 0xf9, 0xe5, 0x11, 0x00, 0x00, 0x00]
        flow.response?.fields = [RecordedField(name: "Content-Type", value: "text/plain"),
                                 RecordedField(name: "Content-Encoding", value: "gzip")]
        flow.response?.body = RecordedBody(bytes: gzipped, wireSize: gzipped.count)
        let content = HARExport.entry(from: flow).response.content
        XCTAssertEqual(content.text, "hello hello hello")
        XCTAssertEqual(content.size, 17)
        XCTAssertEqual(content.compression, 17 - gzipped.count)
    }

    func testBinaryBodyIsBase64() {
        var flow = makeFlow()
        flow.response?.fields = [RecordedField(name: "Content-Type", value: "application/octet-stream")]
        flow.response?.body = RecordedBody(bytes: [0, 255, 1, 2], wireSize: 4)
        let content = HARExport.entry(from: flow).response.content
        XCTAssertEqual(content.encoding, "base64")
        XCTAssertEqual(content.text, "AP8BAg==")
        XCTAssertEqual(content.size, 4)
    }

    func testFailedFlowIsSchemaShaped() throws {
        var flow = makeFlow()
        flow.response = nil
        flow.instants = FlowInstants(requestStart: 1_800_000_000)
        flow.instants.end = 1_800_000_000.5
        flow.error = "cannot connect to a.test:80: connection refused"
        let entry = HARExport.entry(from: flow)
        XCTAssertEqual(entry.response.status, 0)
        XCTAssertEqual(entry.response.content.size, 0)
        XCTAssertEqual(entry.response.content.mimeType, "x-unknown")
        XCTAssertEqual(entry.custom.first?.key, "_error")
        XCTAssertEqual(entry.timings.blocked, 500)
        XCTAssertEqual(entry.time, 500)
        let log = HARExport.log(from: [flow], creatorVersion: "test")
        XCTAssertEqual(HARValidator.validate(bytes: log.serialize()), [])
    }

    func testTruncatedBodyIsMarked() {
        var flow = makeFlow()
        flow.response?.body = RecordedBody(bytes: Array("{\"ok\":".utf8), wireSize: 11)
        let content = HARExport.entry(from: flow).response.content
        XCTAssertTrue(content.custom.contains { $0.key == "_truncated" })
        XCTAssertEqual(content.text, "{\"ok\":")
    }

    func testEntriesAreSortedAndTheLogValidates() throws {
        let late = makeFlow(id: 1, start: 1_800_000_001)
        let early = makeFlow(id: 2, start: 1_800_000_000)
        let log = HARExport.log(from: [late, early], creatorVersion: "9.9")
        XCTAssertEqual(log.entries.map(\.startedDateTime), ["2027-01-15T08:00:00.000Z", "2027-01-15T08:00:01.000Z"])
        XCTAssertEqual(log.creator.name, "harrec")
        let bytes = log.serialize()
        XCTAssertEqual(HARValidator.validate(bytes: bytes), [])
        XCTAssertEqual(bytes, log.serialize(), "deterministic")
    }

    func testStreamingWriteEqualsWholeSerialization() throws {
        // More than one parallel batch, and a partial last batch.
        let flows = (0..<(HARLog.parallelBatchSize * 2 + 17)).map { makeFlow(id: UInt64($0), start: 1_800_000_000 + Double($0) / 7) }
        let path = "/tmp/harrec-stream-\(getpid()).har"
        defer { unlink(path) }
        try HARExport.write(flows, to: path, creatorVersion: "1")
        let whole = HARExport.log(from: flows, creatorVersion: "1").serialize(pretty: true)
        XCTAssertEqual(try readFile(path), whole)

        // The pieces arrive in order: the head, one per batch, then the tail.
        final class Pieces: @unchecked Sendable { var all: [[UInt8]] = [] }
        let pieces = Pieces()
        let entries = HARExport.log(from: flows, creatorVersion: "1").entries
        try HARLog(creator: HARCreator(name: "harrec", version: "1"), entries: [])
            .serialize(pretty: true, entryCount: entries.count, entry: { entries[$0] }) { pieces.all.append($0) }
        XCTAssertEqual(pieces.all.count, 2 + 3, "head, three batches, tail")
        XCTAssertEqual(Array(pieces.all.joined()), whole)

        // An empty log is still a valid, identical file.
        try HARExport.write([], to: path, creatorVersion: "1")
        XCTAssertEqual(try readFile(path), HARExport.log(from: [], creatorVersion: "1").serialize(pretty: true))
    }

    /// Batches are cut by bytes as well as by count: an entry over a batch's share goes alone,
    /// small ones fill a batch up to `parallelBatchSize`, and without sizes nothing changes.
    func testParallelBatchesAreCutByBytes() {
        XCTAssertEqual(HARLog.parallelBatches(count: 70, bytes: nil), [0..<32, 32..<64, 64..<70])
        XCTAssertEqual(HARLog.parallelBatches(count: 70, maxBytes: 100, bytes: { _ in 1 }), [0..<32, 32..<64, 64..<70])
        let sizes = [10, 500, 10, 10, 60, 50, 0, 200, 1]
        XCTAssertEqual(HARLog.parallelBatches(count: sizes.count, maxBytes: 100, bytes: { sizes[$0] }),
                       [0..<1, 1..<2, 2..<5, 5..<7, 7..<8, 8..<9])
        XCTAssertEqual(HARLog.parallelBatches(count: 0, maxBytes: 100, bytes: { _ in 1 }), [])
        XCTAssertGreaterThanOrEqual(HARLog.parallelBatchBytes * 4, 1 << 20)
    }

    /// Windows and batches cut by bytes (large bodies mixed with small ones) write the same file,
    /// in order, with and without the in-order pass; no window holds more than its share.
    func testByteBoundedWindowsWriteTheSameFile() throws {
        // Sizes as a journal reports them: every ninth entry over a batch's share.
        struct Sized: FlowSource {
            let flows: FlowArray
            var count: Int { flows.count }
            func flow(at i: Int) -> Flow { flows.flow(at: i) }
            func byteCount(at i: Int) -> Int { i % 9 == 4 ? HARLog.parallelBatchBytes + 1 : flows.byteCount(at: i) }
        }
        let flows = (0..<(HARLog.parallelBatchSize * 3 + 5)).map { makeFlow(id: UInt64($0), start: 1_800_000_000 + Double($0) / 7) }
        let source = Sized(flows: FlowArray(flows))
        let entries = HARExport.log(from: flows, creatorVersion: "1").entries
        let whole = HARExport.log(from: flows, creatorVersion: "1").serialize(pretty: true)
        final class Pieces: @unchecked Sendable { var all: [[UInt8]] = []; var seen: [Int] = [] }
        for ordered in [false, true] {
            let pieces = Pieces()
            try HARLog(creator: HARCreator(name: "harrec", version: "1"), entries: [])
                .serialize(pretty: true, entryCount: entries.count, entry: { entries[$0] }, entryBytes: source.byteCount(at:),
                           inOrder: ordered ? { _, i in pieces.seen.append(i) } : nil) { pieces.all.append($0) }
            XCTAssertEqual(Array(pieces.all.joined()), whole, "ordered: \(ordered)")
            XCTAssertGreaterThan(pieces.all.count, 2 + 4, "a big entry is a batch alone")
            if ordered { XCTAssertEqual(pieces.seen, Array(entries.indices)) }
        }
        let path = "/tmp/harrec-bytes-\(getpid()).har"
        defer { unlink(path) }
        try HARExport.write(source, to: path, creatorVersion: "1")
        XCTAssertEqual(try readFile(path), whole)
    }

    /// A two-pass export keeps entries within its byte budget and spills the others to a private
    /// file, with what pass 1 held for them, for pass 2: the file is the same whatever the budget,
    /// every entry goes through pass 2 once with its held bytes back, and none is built again.
    func testTwoPassExportKeepsEntriesWithinItsBudget() throws {
        let flows = (0..<(HARLog.parallelBatchSize + 9)).map { makeFlow(id: UInt64($0), start: 1_800_000_000 + Double($0) / 7) }
        let path = "/tmp/harrec-two-pass-\(getpid()).har"
        defer { unlink(path) }
        /// Pass 1 notes the entries it saw; pass 2 needs pass 1 to have seen the entry (kept or
        /// spilled) or runs both passes (built again), then marks the entry in its comment.
        final class Counts: TwoPassTransform, @unchecked Sendable {
            let lock = NSLock()
            let held: Int
            var first = 0, kept = 0, again = 0, between = 0
            var seenInFirst = Set<Int>(), released = Set<Int>(), builtAgain = Set<Int>()
            var taken = Set<Int>(), restored: [Int: [UInt8]] = [:]
            init(held: Int) { self.held = held }
            func add(_ body: (Counts) -> Void) { lock.lock(); body(self); lock.unlock() }
            func firstPass(head: inout HARLog) {}
            func firstPass(_ entry: inout HAREntry, index: Int) {
                add { $0.first += 1; $0.seenInFirst.insert(index) }
                entry.comment = "first"
            }
            func betweenPasses() { add { $0.between += 1 } }
            func secondPass(head: inout HARLog) {}
            func secondPass(_ entry: inout HAREntry, index: Int) {
                add { $0.kept += 1 }
                XCTAssertEqual(entry.comment, "first", "a kept entry comes from pass 1")
                entry.comment = "done \(index)"
            }
            func bothPasses(_ entry: inout HAREntry, index: Int) {
                add { $0.again += 1; $0.builtAgain.insert(index) }
                XCTAssertNil(entry.comment, "an entry built again is fresh")
                entry.comment = "done \(index)"
            }
            func released(_ index: Int) { add { $0.released.insert(index) } }
            func heldBytes(_ index: Int) -> Int { held }
            func takeHeld(_ index: Int) -> [UInt8]? { add { $0.taken.insert(index) }; return [UInt8(index & 0xFF), 7] }
            func restoreHeld(_ index: Int, _ bytes: [UInt8]?) { add { $0.restored[index] = bytes } }
        }
        func export(keptBytes: Int, held: Int = 0) throws -> (bytes: [UInt8], counts: Counts) {
            let counts = Counts(held: held)
            try HARExport.write(flows, to: path, creatorVersion: "1", transform: counts, keptBytes: keptBytes)
            return (try readFile(path), counts)
        }
        var expected = HARExport.log(from: flows, creatorVersion: "1")
        for i in expected.entries.indices { expected.entries[i].comment = "done \(i)" }
        let one = KeptEntries.approximateBytes(expected.entries[0])
        for (budget, inMemory) in [(0, 0), (one * 5 + one / 2, 5), (Int.max / 2, flows.count)] {
            let (bytes, counts) = try export(keptBytes: budget)
            XCTAssertEqual(bytes, expected.serialize(pretty: true), "budget \(budget)")
            XCTAssertEqual(counts.first, flows.count)
            XCTAssertEqual(counts.seenInFirst.count, flows.count)
            XCTAssertEqual(counts.between, 1)
            XCTAssertEqual(counts.kept, flows.count, "every entry comes to pass 2 from pass 1, in memory or spilled")
            XCTAssertEqual(counts.again, 0)
            XCTAssertEqual(counts.released, [])
            XCTAssertEqual(counts.taken.count, flows.count - inMemory, "budget \(budget): the spilled ones")
            XCTAssertEqual(Set(counts.restored.keys), counts.taken)
            for (i, bytes) in counts.restored { XCTAssertEqual(bytes, [UInt8(i & 0xFF), 7], "held bytes come back") }
        }
        // What pass 1 holds outside an entry (a rewritten body) counts against the budget too.
        let (bytes, counts) = try export(keptBytes: one * 5 + one / 2, held: one)
        XCTAssertEqual(bytes, expected.serialize(pretty: true))
        XCTAssertEqual(counts.taken.count, flows.count - 2, "each entry in memory costs twice as much")
        // Nothing is left beside the output: the spill file was unlinked when it was made.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix(".harrec-spill-") }
        XCTAssertEqual(leftovers, [])
        XCTAssertNil(SpilledEntries(directory: "/nonexistent-dir"), "no spill file: entries are built again")
    }

    func testRecordedBodyCap() {
        var body = RecordedBody()
        body.append(Array(repeating: 1, count: 10), cap: 4)
        body.append(Array(repeating: 2, count: 10), cap: 4)
        XCTAssertEqual(body.bytes, [1, 1, 1, 1])
        XCTAssertEqual(body.wireSize, 20)
        XCTAssertTrue(body.isTruncated)
    }

    func testAtomicWriteReplacesTheFile() throws {
        let path = "/tmp/harrec-atomic-\(getpid()).har"
        try writeFileAtomically(Array("one".utf8), to: path)
        try writeFileAtomically(Array("two".utf8), to: path)
        XCTAssertEqual(try readFile(path), Array("two".utf8))
        unlink(path)
        XCTAssertThrowsError(try writeFileAtomically([1], to: "/nonexistent-dir/x.har"))
    }

    func testSanitizedForLog() {
        XCTAssertEqual(sanitizedForLog("plain"), "plain")
        XCTAssertEqual(sanitizedForLog("a\u{1b}[31mb\r\n"), "a\\x1b[31mb\\x0d\\x0a")
        XCTAssertEqual(sanitizedForLog("\u{85}é"), "\\x85é")
    }

    /// Markers become pages in time order; an entry belongs to the page current when its request
    /// started, entries before the first marker to none, and without markers there are no pages.
    func testPageMarksBecomePagesAndPagerefs() {
        func flow(_ id: UInt64, _ start: Double) -> Flow {
            Flow(id: id, clientAddress: "127.0.0.1:1",
                 request: RecordedRequest(method: "GET", url: "http://a.test/\(id)", httpVersion: "HTTP/1.1", fields: [], headSize: 0),
                 instants: FlowInstants(requestStart: start))
        }
        let flows = [flow(1, 100), flow(2, 101), flow(3, 102.5), flow(4, 103), flow(5, 104)]
        // Given out of order (two loops), the second one at the very instant of flow 4's start.
        let marks = [PageMark(name: "chat", time: 103), PageMark(name: "log in", time: 101)]
        let log = HARExport.log(from: flows, creatorVersion: "t", pageMarks: marks)
        XCTAssertEqual(log.pages?.map(\.id), ["page_1", "page_2"])
        XCTAssertEqual(log.pages?.map(\.title), ["log in", "chat"])
        XCTAssertEqual(log.pages?.first?.startedDateTime, HARDate.format(epochSeconds: 101))
        XCTAssertEqual(log.pages?.first?.pageTimings, HARPageTimings(onContentLoad: -1, onLoad: -1))
        XCTAssertEqual(log.entries.map(\.pageref), [nil, "page_1", "page_1", "page_2", "page_2"])
        XCTAssertNil(HARExport.log(from: flows, creatorVersion: "t").pages, "no markers, no pages")
        XCTAssertTrue(HARExport.log(from: flows, creatorVersion: "t").entries.allSatisfy { $0.pageref == nil })
        XCTAssertEqual(HARValidator.validate(bytes: log.serialize()), [])
    }
}
