import Dispatch
import Foundation
@testable import Recording
import XCTest

/// The journal as the recorder uses it: flows and WebSocket messages go in from many threads,
/// come back in HAR order, survive a crash, and a torn or damaged journal loses only what it must.
final class JournalLogTests: XCTestCase {
    private var directory = ""

    override func setUp() {
        directory = NSTemporaryDirectory() + "harrec-journal-\(UUID().uuidString)"
        XCTAssertNoThrow(try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func flow(_ id: UInt64, start: Double) -> Flow {
        var flow = JournalCodecTests.sampleFlow(id, body: Int(id % 5) * 1000)
        flow.instants.requestStart = start
        flow.instants.responseEnd = 3
        return flow
    }

    private func log(_ name: String = "s.har") throws -> JournalLog {
        try JournalLog(harPath: directory + "/" + name, harrecVersion: "test", started: 1, onError: { XCTFail($0) })
    }

    /// Waits until everything appended is in the file (the writer syncs at least every 200 ms).
    private func waitUntilWritten(_ log: JournalLog, file: StaticString = #filePath, line: UInt = #line) {
        let path = JournalFile.recordsPath(in: JournalFile.directory(for: log.harPath))
        for _ in 0..<100 {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64) ?? 0
            if size == log.journalBytes { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTFail("the journal was not written within 2 s", file: file, line: line)
    }

    func testFlowsFromManyThreadsComeBackInStartOrder() throws {
        let journal = try log()
        let perThread = 300
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for k in 0..<perThread {
                let id = UInt64(thread * perThread + k)
                // Starts out of arrival order, with ties broken by id.
                journal.record(Self.flow(id, start: Double((k * 7919) % 500)))
            }
        }
        XCTAssertEqual(journal.count, 4 * perThread)
        let contents = try journal.finish()
        XCTAssertEqual(contents.count, 4 * perThread)
        var previous: (Double, UInt64) = (-1, 0)
        var seen = Set<UInt64>()
        for i in 0..<contents.count {
            let got = try contents.flow(at: i)
            XCTAssertTrue((got.instants.requestStart, got.id) > previous, "order at \(i)")
            previous = (got.instants.requestStart, got.id)
            seen.insert(got.id)
            XCTAssertEqual(got, Self.flow(got.id, start: got.instants.requestStart))
        }
        XCTAssertEqual(seen.count, 4 * perThread)
        XCTAssertEqual(contents.failures, (0..<UInt64(4 * perThread)).filter { $0 % 2 == 0 }.count)
    }

    func testWebSocketMessagesAreJournaledOneByOne() throws {
        let journal = try log()
        var upgrade = Self.flow(9, start: 5)
        upgrade.webSocket = RecordedWebSocket()
        journal.recordWebSocketStart(upgrade)
        let messages = (0..<20).map { RecordedWebSocketMessage(direction: $0 % 2 == 0 ? .send : .receive, time: Double($0),
                                                             opcode: 1, data: Array("m\($0)".utf8)) }
        for message in messages { journal.recordWebSocketMessage(message, flowID: 9) }
        var end = upgrade
        end.webSocket?.problems = ["server to client: bad"]
        end.instants.end = 99
        journal.record(end)
        journal.record(Self.flow(10, start: 1))
        let contents = try journal.finish()
        XCTAssertEqual(contents.count, 2)
        XCTAssertEqual(try contents.flow(at: 0).id, 10)
        let ws = try contents.flow(at: 1)
        XCTAssertEqual(ws.webSocket?.messages, messages)
        XCTAssertEqual(ws.webSocket?.problems, ["server to client: bad"])
        XCTAssertEqual(ws.webSocket?.isOpen, false)
        XCTAssertEqual(ws.instants.end, 99)
    }

    /// The recorder killed: everything appended is recovered from a copy of its journal, and a
    /// conversation without its end record comes back open with the messages it had.
    func testRecoveryAfterACrash() throws {
        let journal = try log()
        for id in 0..<100 { journal.record(Self.flow(UInt64(id), start: Double(id))) }
        var upgrade = Self.flow(500, start: 50.5)
        upgrade.webSocket = RecordedWebSocket()
        journal.recordWebSocketStart(upgrade)
        journal.recordWebSocketMessage(RecordedWebSocketMessage(direction: .send, time: 60, opcode: 1, data: [0x61]), flowID: 500)
        waitUntilWritten(journal)
        // While the recorder runs its journal is locked.
        XCTAssertTrue(JournalFile.isLockedByAnotherProcess(harPath: journal.harPath))
        XCTAssertThrowsError(try JournalContents.recover(harPath: journal.harPath))

        let copy = directory + "/crashed.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let recovery = try JournalContents.recover(harPath: copy)
        XCTAssertEqual(recovery.contents.count, 101)
        XCTAssertEqual(recovery.tornRecords, 0)
        XCTAssertEqual(recovery.records, 1 + 100 + 2)
        XCTAssertEqual(recovery.session?.harrecVersion, "test")
        let ws = try recovery.contents.flow(at: 51)
        XCTAssertEqual(ws.id, 500)
        XCTAssertEqual(ws.webSocket?.isOpen, true)
        XCTAssertEqual(ws.webSocket?.messages.map(\.data), [[0x61]])
        XCTAssertEqual(ws.instants.end, 60)
        XCTAssertEqual(try recovery.contents.flow(at: 100).id, 99)
        _ = try journal.finish()
    }

    /// Scenario markers go to the journal like flows: kept by `finish`, and by recovery after a
    /// crash, so a killed recorder's HAR still has its pages.
    func testPageMarksSurviveFinishAndRecovery() throws {
        let journal = try log()
        journal.record(Self.flow(1, start: 10))
        journal.recordPageMark(PageMark(name: "log in", time: 11))
        journal.record(Self.flow(2, start: 12))
        journal.recordPageMark(PageMark(name: "chat \u{1F4AC}", time: 13))
        waitUntilWritten(journal)
        let copy = directory + "/crashed-marks.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let expected = [PageMark(name: "log in", time: 11), PageMark(name: "chat \u{1F4AC}", time: 13)]
        XCTAssertEqual(try JournalContents.recover(harPath: copy).contents.pageMarks, expected)
        XCTAssertEqual(try journal.finish().pageMarks, expected)
    }

    /// Flows the live view left out stay out of the export, and out of a recovery after a crash;
    /// the last decision about a flow counts. While recording, a flow reads back by id once it is
    /// on disk (the live view's detail).
    func testExportDecisionsSurviveFinishAndRecoveryAndFlowsReadBack() throws {
        let journal = try JournalLog(harPath: directory + "/decided.har", harrecVersion: "test", started: 1, readsBack: true,
                                     onError: { XCTFail($0) })
        for id in 1...4 { journal.record(Self.flow(UInt64(id), start: Double(id))) }
        journal.recordExportDecision(ExportDecision(flowID: 2, excluded: true))
        journal.recordExportDecision(ExportDecision(flowID: 3, excluded: true))
        journal.recordExportDecision(ExportDecision(flowID: 3, excluded: false))
        waitUntilWritten(journal)
        XCTAssertEqual(journal.storedFlow(id: 3), Self.flow(3, start: 3))
        XCTAssertNil(journal.storedFlow(id: 99))
        let copy = directory + "/crashed-decided.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let recovered = try JournalContents.recover(harPath: copy).contents
        XCTAssertEqual(try (0..<recovered.count).map { try recovered.flow(at: $0).id }, [1, 3, 4])
        XCTAssertEqual(recovered.leftOut, 1)
        XCTAssertEqual(recovered.failures, 1, "flow 2's failure left with it (even ids fail)")
        let contents = try journal.finish()
        XCTAssertEqual(try (0..<contents.count).map { try contents.flow(at: $0).id }, [1, 3, 4])
        XCTAssertEqual(contents.leftOut, 1)
    }

    /// A flow moved to another page is exported in it, after a crash too; -1 is no page.
    func testPageMovesSurviveRecoveryAndShapeTheExport() throws {
        let journal = try log("moved.har")
        journal.record(Self.flow(1, start: 10))
        journal.recordPageMark(PageMark(name: "first", time: 11))
        journal.record(Self.flow(2, start: 12))
        journal.recordPageMark(PageMark(name: "second", time: 13))
        journal.record(Self.flow(3, start: 14))
        journal.recordPageMove(PageMove(flowID: 3, page: 0))
        journal.recordPageMove(PageMove(flowID: 1, page: 1))
        journal.recordPageMove(PageMove(flowID: 2, page: -1))
        waitUntilWritten(journal)
        let copy = directory + "/crashed-moved.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let expected: [UInt64: Int] = [3: 0, 1: 1, 2: -1]
        XCTAssertEqual(try JournalContents.recover(harPath: copy).contents.pageOverrides, expected)
        let contents = try journal.finish()
        XCTAssertEqual(contents.pageOverrides, expected)
        let out = directory + "/moved-out.har"
        try HARExport.write(contents, to: out, creatorVersion: "test")
        let har = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.map { $0["pageref"] as? String }, ["page_2", nil, "page_1"])
    }

    /// Truncated anywhere: every record that ended before the cut is recovered and the cut one
    /// is reported torn.
    func testRecoveryOfATruncatedJournal() throws {
        let journal = try log()
        for id in 0..<40 { journal.record(Self.flow(UInt64(id), start: Double(id))) }
        _ = try journal.finish()
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)))))
        // Record boundaries, from the decoder.
        var decoder = JournalDecoder()
        decoder.feed(bytes)
        decoder.finish()
        var ends: [Int] = []
        while case .record(_, let offset, let payload)? = decoder.next() { ends.append(Int(offset) + JournalFrame.headerSize + payload.count) }
        XCTAssertEqual(ends.count, 41)
        var cuts = [0, 1, ends[0], ends[0] + 1, bytes.count - 1, bytes.count]
        for _ in 0..<30 { cuts.append(Int.random(in: 0...bytes.count)) }
        for (n, cut) in cuts.enumerated() {
            let harPath = directory + "/cut\(n).har"
            try FileManager.default.createDirectory(atPath: JournalFile.directory(for: harPath), withIntermediateDirectories: false)
            try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: JournalFile.recordsPath(in: JournalFile.directory(for: harPath))))
            let recovery = try JournalContents.recover(harPath: harPath)
            let whole = ends.filter { $0 <= cut }
            XCTAssertEqual(recovery.contents.count, max(0, whole.count - 1), "cut at \(cut)")
            XCTAssertEqual(recovery.tornRecords, whole.last == cut || (cut == 0) ? 0 : 1, "cut at \(cut)")
            for i in 0..<recovery.contents.count {
                XCTAssertEqual(try recovery.contents.flow(at: i).id, UInt64(i))
            }
        }
    }

    func testAJournalIsNeverOverwrittenAndIsPrivate() throws {
        let journal = try log()
        XCTAssertThrowsError(try log(), "a second recorder on the same file")
        var info = stat()
        XCTAssertEqual(stat(JournalFile.directory(for: journal.harPath), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        _ = try journal.finish()
        XCTAssertTrue(JournalFile.exists(for: journal.harPath))
        try JournalFile.remove(for: journal.harPath)
        XCTAssertFalse(JournalFile.exists(for: journal.harPath))
    }

    /// Memory holds the index, not the bodies: a flow's journal record carries its body bytes.
    func testBodiesGoToTheJournal() throws {
        let journal = try log()
        var big = Self.flow(1, start: 1)
        big.response?.body = RecordedBody(bytes: [UInt8](repeating: 0x41, count: 3 << 20), wireSize: 3 << 20)
        journal.record(big)
        XCTAssertGreaterThan(journal.journalBytes, 3 << 20)
        let contents = try journal.finish()
        XCTAssertEqual(try contents.flow(at: 0).response?.body.bytes.count, 3 << 20)
    }

    /// Bodies sent in parts while their exchanges were in flight, interleaved with other flows'
    /// parts and records, come back whole, in order, and on the right side: from `finish`, from a
    /// snapshot, for the live view (`storedFlow`), and from recovery after a crash. A part whose
    /// exchange never finished is left behind.
    func testBodyPartsComeBackInFrontOfTheirFlows() throws {
        let journal = try JournalLog(harPath: directory + "/p.har", harrecVersion: "test", started: 1, readsBack: true,
                                     onError: { XCTFail($0) })
        XCTAssertTrue(journal.streamsBodies)
        func bytes(_ seed: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* seed &+ seed) } }
        let upload = bytes(3, 5_000), download = bytes(7, 9_000)
        var flows: [Flow] = []
        for id in UInt64(1)...3 {
            var flow = Self.flow(id, start: Double(id))
            flow.request.body = RecordedBody(bytes: Array(upload[4_000...]), wireSize: upload.count)
            flow.response?.body = RecordedBody(bytes: Array(download[8_500...]), wireSize: download.count)
            flows.append(flow)
        }
        // Parts of three exchanges (and of one that never ends), interleaved.
        for k in 0..<4 {
            for id in UInt64(1)...4 {
                journal.recordBodyPart(RecordedBodyPart(flowID: id, side: .request, bytes: Array(upload[(k * 1_000)..<((k + 1) * 1_000)])))
            }
        }
        journal.record(flows[1])
        for k in 0..<17 {
            for id in UInt64(1)...3 where id != 2 || k < 17 {
                journal.recordBodyPart(RecordedBodyPart(flowID: id, side: .response, bytes: Array(download[(k * 500)..<((k + 1) * 500)])))
            }
        }
        journal.record(flows[0])
        journal.record(flows[2])
        waitUntilWritten(journal)
        func check(_ flow: Flow?, _ what: String) {
            XCTAssertEqual(flow?.request.body.bytes, upload, what)
            XCTAssertEqual(flow?.request.body.isTruncated, false, what)
            if flow?.id == 2 {
                XCTAssertEqual(flow?.response?.body.bytes, Array(download[8_500...]), "\(what): parts after the flow are not its")
            } else {
                XCTAssertEqual(flow?.response?.body.bytes, download, what)
            }
        }
        check(journal.storedFlow(id: 1), "stored flow")
        let snapshot = try journal.snapshot()
        XCTAssertEqual(snapshot.count, 3)
        for i in 0..<3 { check(try snapshot.flow(at: i), "snapshot \(i)") }
        XCTAssertGreaterThan(snapshot.byteCount(at: 0), upload.count + download.count, "parts count toward the export's windows")

        let copy = directory + "/crashed.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let recovery = try JournalContents.recover(harPath: copy)
        XCTAssertEqual(recovery.contents.count, 3)
        XCTAssertEqual(recovery.unusableRecords, 0)
        for i in 0..<3 { check(try recovery.contents.flow(at: i), "recovered \(i)") }
        let contents = try journal.finish()
        for i in 0..<3 { check(try contents.flow(at: i), "finished \(i)") }
    }

    /// kill -9 while bodies cross: each exchange comes back from its latest snapshot in flight
    /// and its parts, once, byte for byte, with the error saying it was cut short; a snapshot's
    /// bytes of a side that a later part holds again are not doubled.
    func testExchangesCutShortAreRecoveredFromTheirSnapshots() throws {
        let journal = try JournalLog(harPath: directory + "/k.har", harrecVersion: "test", started: 1, onError: { XCTFail($0) })
        func bytes(_ seed: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* seed &+ seed) } }
        func snapshot(_ id: UInt64, request: [UInt8], response: [UInt8]?) -> Flow {
            var flow = Self.flow(id, start: Double(id))
            flow.instants.responseEnd = nil
            // The bytes that had crossed: at least those held.
            flow.request.body = RecordedBody(bytes: request, wireSize: request.count + 1)
            if let response { flow.response?.body = RecordedBody(bytes: response, wireSize: 1) } else { flow.response = nil }
            return flow
        }
        func part(_ id: UInt64, _ side: RecordedBodyPart.Side, _ b: ArraySlice<UInt8>, _ flow: Flow? = nil) {
            journal.recordBodyPart(RecordedBodyPart(flowID: id, side: side, bytes: Array(b), flowSoFar: flow))
        }
        let small = Array("{\"q\":1}".utf8), upload = bytes(3, 6_000), download = bytes(7, 9_000)
        // 1: a small request, then a download cut in its third part.
        part(1, .response, download[..<3_000], snapshot(1, request: small, response: []))
        part(1, .response, download[3_000..<6_000])
        // 2: an upload in parts, its last 500 bytes still held when the response's first part
        // went out (the snapshot holds them), then the download.
        part(2, .request, upload[..<2_000], snapshot(2, request: [], response: nil))
        part(2, .request, upload[2_000..<5_500])
        part(2, .response, download[..<4_000], snapshot(2, request: Array(upload[5_500...]), response: []))
        // 3: an early response while the upload goes on: the request part after the snapshot
        // holds the 500 bytes the snapshot kept, and more.
        part(3, .request, upload[..<2_000], snapshot(3, request: [], response: nil))
        part(3, .response, download[..<1_000], snapshot(3, request: Array(upload[2_000..<2_500]), response: []))
        part(3, .request, upload[2_000...])
        // 4: a snapshot, then its own record: recovered as the finished flow, once.
        part(4, .response, download[..<2_000], snapshot(4, request: [], response: []))
        var finished = Self.flow(4, start: 4)
        finished.error = nil
        finished.response?.body = RecordedBody(bytes: Array(download[2_000...]), wireSize: download.count)
        journal.record(finished)
        waitUntilWritten(journal)
        XCTAssertEqual(try journal.snapshot().count, 1, "a running recording lists only ended exchanges")

        let copy = directory + "/killed.har"
        try FileManager.default.createDirectory(atPath: JournalFile.directory(for: copy), withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: journal.harPath)),
                                         toPath: JournalFile.recordsPath(in: JournalFile.directory(for: copy)))
        let recovery = try JournalContents.recover(harPath: copy)
        XCTAssertEqual(recovery.unusableRecords, 0)
        XCTAssertEqual(recovery.contents.count, 4)
        XCTAssertEqual(recovery.contents.failures, 3)
        let flows = try (0..<4).map { try recovery.contents.flow(at: $0) }
        XCTAssertEqual(flows.map(\.id), [1, 2, 3, 4])
        XCTAssertEqual(flows[0].request.body.bytes, small)
        XCTAssertEqual(flows[0].response?.body.bytes, Array(download[..<6_000]))
        XCTAssertEqual(flows[0].response?.body.wireSize, 6_000, "the snapshot counted fewer")
        XCTAssertEqual(flows[1].request.body.bytes, upload)
        XCTAssertEqual(flows[1].response?.body.bytes, Array(download[..<4_000]))
        XCTAssertEqual(flows[2].request.body.bytes, upload, "the held bytes are in the later part, not twice")
        XCTAssertEqual(flows[2].response?.body.bytes, Array(download[..<1_000]))
        for flow in flows[..<3] {
            XCTAssertEqual(flow.error, Flow.cutShortError)
            XCTAssertNotNil(flow.instants.end)
        }
        XCTAssertNil(flows[3].error)
        XCTAssertEqual(flows[3].response?.body.bytes, download)
        _ = try journal.finish()
    }

    /// A journal written before bodies came in parts (layout 1) is still read; one from a newer
    /// layout is refused with a reason.
    func testLayoutVersions() throws {
        for (layout, readable) in [(UInt8(1), true), (JournalFrame.layoutVersion, true), (JournalFrame.layoutVersion + 1, false)] {
            let harPath = directory + "/v\(layout).har"
            try FileManager.default.createDirectory(atPath: JournalFile.directory(for: harPath), withIntermediateDirectories: false)
            let session = JournalSession(layoutVersion: layout, harrecVersion: "v\(layout)", processID: 1, started: 1, harPath: harPath)
            let bytes = JournalFrame.record(.session, session.encoded()) + Self.flow(1, start: 1).journalRecord(.flow)
            FileManager.default.createFile(atPath: JournalFile.recordsPath(in: JournalFile.directory(for: harPath)), contents: Data(bytes))
            if readable {
                XCTAssertEqual(try JournalContents.recover(harPath: harPath).contents.count, 1, "layout \(layout)")
            } else {
                XCTAssertThrowsError(try JournalContents.recover(harPath: harPath), "layout \(layout)")
            }
        }
    }
}
