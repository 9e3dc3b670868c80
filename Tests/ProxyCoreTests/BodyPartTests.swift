import HTTP1
@testable import ProxyCore
import Recording
import XCTest

/// With a journal's sink (`ProxyConfiguration.streamBodies`), a body goes to the recording a part
/// at a time while its exchange is in flight: the parts come before the flow's record, and the
/// parts and the record's rest are the whole body, byte for byte, whatever the reads' sizes.
final class BodyPartTests: XCTestCase {
    private func playbook(partBytes: Int = 10, cap: Int = 64 << 20, filter: RecordingFilter = RecordingFilter()) -> Playbook {
        var configuration = ProxyConfiguration()
        configuration.streamBodies = true
        configuration.bodyPartBytes = partBytes
        configuration.maxRecordedBodyBytes = cap
        configuration.recordingFilter = filter
        return Playbook(configuration: configuration)
    }

    private func parts(_ commands: [ProxyCommand]) -> [RecordedBodyPart] {
        commands.compactMap { if case .record(.bodyPart(let part)) = $0 { return part } else { return nil } }
    }

    /// The body a recording reads back: the parts of `side`, then the record's rest.
    private func whole(_ parts: [RecordedBodyPart], _ side: RecordedBodyPart.Side, _ body: RecordedBody?) -> [UInt8] {
        parts.filter { $0.side == side }.flatMap(\.bytes) + (body?.bytes ?? [])
    }

    func testAnUploadAndADownloadGoOutInPartsBeforeTheirFlow() {
        let upload = (0..<95).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let download = (0..<203).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 1) }
        for read in [1, 3, 64, 1_000] {
            let p = playbook()
            var all: [ProxyCommand] = []
            all += p.client("POST http://a.test/up HTTP/1.1\r\nHost: a.test\r\nContent-Length: \(upload.count)\r\n\r\n")
            all += p.connected(1)
            for start in stride(from: 0, to: upload.count, by: read) { all += p.client(Array(upload[start..<min(upload.count, start + read)])) }
            all += p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: \(download.count)\r\n\r\n")
            for start in stride(from: 0, to: download.count, by: read) { all += p.upstream(1, Array(download[start..<min(download.count, start + read)])) }
            let sent = parts(all)
            XCTAssertGreaterThanOrEqual(sent.count, read < 10 ? 20 : 2, "reads of \(read)")
            XCTAssertTrue(sent.allSatisfy { $0.bytes.count >= 10 && $0.flowID == sent[0].flowID })
            let recordAt = all.firstIndex { if case .record(.flow) = $0 { return true } else { return false } }
            let lastPartAt = all.lastIndex { if case .record(.bodyPart) = $0 { return true } else { return false } }
            XCTAssertLessThan(lastPartAt ?? 0, recordAt ?? -1, "every part comes before the flow")
            let flow = p.sink.flows[0]
            XCTAssertEqual(whole(sent, .request, flow.request.body), upload, "reads of \(read)")
            XCTAssertEqual(whole(sent, .response, flow.response?.body), download, "reads of \(read)")
            XCTAssertLessThan(flow.response!.body.bytes.count, 10, "the record keeps less than a part")
            XCTAssertEqual(flow.response!.body.streamed + flow.response!.body.bytes.count, download.count)
            XCTAssertFalse(flow.response!.body.isTruncated)
            XCTAssertEqual(Array(clientBytes(all).suffix(download.count)), download, "the client gets the body as it came")
            checkSnapshots(sent, url: "http://a.test/up")
        }
    }

    /// Each side's first part, and only it, carries the flow as it stood (for recovery after
    /// kill -9): that side's bytes are all in the parts, the response head is there once the
    /// response's parts begin.
    private func checkSnapshots(_ sent: [RecordedBodyPart], url: String, file: StaticString = #filePath, line: UInt = #line) {
        for side in [RecordedBodyPart.Side.request, .response] {
            let mine = sent.filter { $0.side == side }
            guard let first = mine.first else { continue }
            let flow = first.flowSoFar
            XCTAssertEqual(flow?.id, first.flowID, file: file, line: line)
            XCTAssertEqual(flow?.request.url, url, file: file, line: line)
            XCTAssertTrue(mine.dropFirst().allSatisfy { $0.flowSoFar == nil }, "only a side's first part", file: file, line: line)
            switch side {
            case .request: XCTAssertEqual(flow?.request.body.bytes, [], "its bytes are in the part", file: file, line: line)
            case .response:
                XCTAssertEqual(flow?.response?.body.bytes, [], file: file, line: line)
                XCTAssertNotNil(flow?.response?.status, "the response head", file: file, line: line)
            }
        }
    }

    /// The recording cap still holds over the parts; a skipped exchange keeps and sends nothing.
    func testTheCapAndTheFilterHoldOverParts() {
        let p = playbook(cap: 25)
        p.client("GET http://a.test/big HTTP/1.1\r\nHost: a.test\r\n\r\n")
        p.connected(1)
        var all = p.upstream(1, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        for _ in 0..<10 { all += p.upstream(1, [UInt8](repeating: 0x41, count: 10)) }
        let body = p.sink.flows[0].response!.body
        XCTAssertEqual(whole(parts(all), .response, body).count, 25)
        XCTAssertTrue(body.isTruncated)
        XCTAssertEqual(body.wireSize, 100)

        var filter = RecordingFilter()
        filter.skipContentTypes = ["video/*"]
        let skipped = playbook(filter: filter)
        skipped.client("GET http://a.test/v HTTP/1.1\r\nHost: a.test\r\n\r\n")
        skipped.connected(1)
        var commands = skipped.upstream(1, "HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 100\r\n\r\n")
        for _ in 0..<10 { commands += skipped.upstream(1, [UInt8](repeating: 0x42, count: 10)) }
        XCTAssertTrue(parts(commands).isEmpty, "nothing of a skipped exchange goes out")
        XCTAssertEqual(skipped.sink.flows[0].response?.body.bytes.count ?? -1, 0, "nor is kept")
        XCTAssertEqual(text(clientBytes(commands)).utf8.count, "HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 100\r\n\r\n".utf8.count + 100,
                       "the client still gets it all")
    }

    /// Without a journal's sink, the body stays whole in the flow.
    func testWithoutStreamingTheFlowKeepsTheWholeBody() {
        let p = Playbook()
        p.client("GET http://a.test/big HTTP/1.1\r\nHost: a.test\r\n\r\n")
        p.connected(1)
        let body = [UInt8](repeating: 0x43, count: 3 << 20)
        let commands = p.upstream(1, Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        XCTAssertTrue(parts(commands).isEmpty)
        XCTAssertEqual(p.sink.flows[0].response?.body.bytes, body)
    }

    /// HTTP/2: each stream's bodies go out in parts, and the parts and the record's rest are each
    /// stream's whole body.
    func testHTTP2StreamsSendTheirOwnParts() throws {
        let h = try HTTP2LayerHarness(chunk: 5, bodyPartSize: 100)
        var expected: [Int32: (up: [UInt8], down: [UInt8])] = [:]
        for k in 1...3 {
            let up = (0..<(150 * k)).map { UInt8(truncatingIfNeeded: $0 &+ k) }
            let sid = try h.request("/s\(k)", method: "POST", body: up)
            expected[sid] = (up, (0..<(400 * k)).map { UInt8(truncatingIfNeeded: $0 &* k) })
        }
        try h.run()
        for k in 1...3 {
            let oid = try XCTUnwrap(h.originStream("/s\(k)"))
            let sid = expected.keys.sorted()[k - 1]
            try h.respond(oid, body: expected[sid]!.down)
        }
        try h.run()
        XCTAssertEqual(h.flows.count, 3)
        for flow in h.flows {
            let mine = h.parts.filter { $0.flowID == flow.id }
            XCTAssertFalse(mine.isEmpty)
            let sid = expected.keys.sorted()[Int(flow.request.url.last!.wholeNumberValue!) - 1]
            XCTAssertEqual(whole(mine, .request, flow.request.body), expected[sid]!.up)
            XCTAssertEqual(whole(mine, .response, flow.response?.body), expected[sid]!.down)
            checkSnapshots(mine, url: flow.request.url)
        }
    }
}
