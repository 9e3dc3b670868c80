@testable import Recording
import XCTest

/// The journal's record codec: flows round-trip exactly, and the frame decoder gives the same
/// records whole, byte by byte and in random pieces; torn and damaged input is reported, never
/// misread.
final class JournalCodecTests: XCTestCase {
    static func sampleFlow(_ id: UInt64, body: Int = 40, webSocket: Bool = false) -> Flow {
        var request = RecordedRequest(method: "POST", url: "https://api.test/v1/items?id=\(id)&q=caf\u{E9}",
                                      httpVersion: "HTTP/1.1",
                                      fields: [RecordedField(name: "Host", value: "api.test"),
                                               RecordedField(name: "Authorization", value: "Bearer t\(id)")],
                                      headSize: 118)
        request.body = RecordedBody(bytes: (0..<body).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(id)) }, wireSize: body + 7)
        request.trailers = [RecordedField(name: "X-Checksum", value: "abc")]
        var flow = Flow(id: id, clientAddress: "127.0.0.1:5\(id)", request: request,
                        instants: FlowInstants(requestStart: 1_760_000_000.123456 + Double(id)))
        flow.response = RecordedResponse(status: 200, reason: "OK \u{1F600}", httpVersion: "HTTP/1.1",
                                         fields: [RecordedField(name: "Content-Type", value: "application/json")],
                                         headSize: -1, body: RecordedBody(bytes: Array("{\"a\":1}".utf8), wireSize: 7))
        flow.instants.connectStart = 1_760_000_000.2
        flow.instants.tlsEnd = 1_760_000_000.3
        flow.instants.responseEnd = .nan
        flow.instants.end = 1_760_000_001
        flow.serverIPAddress = "::1"
        flow.connectionID = "c\(id)"
        flow.error = id % 2 == 0 ? "upstream closed" : nil
        if webSocket {
            var ws = RecordedWebSocket()
            ws.isOpen = true
            ws.problems = ["client to server: bad frame"]
            ws.messages = [
                RecordedWebSocketMessage(direction: .send, time: 1.5, opcode: 1, data: Array("hi".utf8)),
                RecordedWebSocketMessage(direction: .receive, time: 2.5, opcode: 2, data: [0, 255, 7], textValid: false,
                                         truncated: true, note: "inflate failed"),
            ]
            flow.webSocket = ws
        }
        return flow
    }

    /// Flows equal after a round trip; NaN compares unequal, so instants are compared bitwise.
    func assertSame(_ a: Flow, _ b: Flow, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.encoded(), b.encoded(), file: file, line: line)
        var x = a, y = b
        x.instants.responseEnd = nil
        y.instants.responseEnd = nil
        XCTAssertEqual(x, y, file: file, line: line)
    }

    func testFlowRoundTrip() throws {
        for flow in [Self.sampleFlow(1), Self.sampleFlow(2, body: 0), Self.sampleFlow(3, webSocket: true),
                     Flow(id: 0, clientAddress: "", request: RecordedRequest(method: "", url: "", httpVersion: "", fields: [], headSize: 0),
                          instants: FlowInstants(requestStart: 0))] {
            let bytes = flow.encoded()
            let decoded = try bytes.withUnsafeBytes { try Flow(decoding: $0) }
            assertSame(decoded, flow)
            let key = try bytes.withUnsafeBytes { try Flow.sortKey(of: $0) }
            XCTAssertEqual(key.id, flow.id)
            XCTAssertEqual(key.requestStart, flow.instants.requestStart)
        }
    }

    /// `refused` is an optional last field: set, it round-trips; unset, the payload is byte for
    /// byte what journals written before the field existed hold, so those still decode.
    func testRefusedIsAnOptionalTrailingField() throws {
        var refused = Self.sampleFlow(7)
        refused.refused = true
        let plain = Self.sampleFlow(7)
        let bytes = refused.encoded()
        XCTAssertEqual(Array(bytes.dropLast()), plain.encoded(), "one trailing byte, only when set")
        let decoded = try bytes.withUnsafeBytes { try Flow(decoding: $0) }
        XCTAssertTrue(decoded.refused)
        XCTAssertFalse(try plain.encoded().withUnsafeBytes { try Flow(decoding: $0) }.refused)
        XCTAssertThrowsError(try (bytes + [1]).withUnsafeBytes { try Flow(decoding: $0) }, "nothing may follow it")
    }

    /// Every truncation of a flow's payload, and every single-byte change, either decodes or
    /// throws: never a trap, and a truncation never decodes.
    func testFlowDecodingOfDamagedPayloads() {
        let bytes = Self.sampleFlow(5, webSocket: true).encoded()
        for cut in 0..<bytes.count {
            XCTAssertThrowsError(try Array(bytes[..<cut]).withUnsafeBytes { try Flow(decoding: $0) }, "cut at \(cut)")
        }
        for i in 0..<bytes.count {
            for value: UInt8 in [0x00, 0xFF, 0x80, bytes[i] ^ 0x01] {
                var copy = bytes
                copy[i] = value
                _ = try? copy.withUnsafeBytes { try Flow(decoding: $0) }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let random = (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? random.withUnsafeBytes { try Flow(decoding: $0) }
        }
    }

    func testWebSocketMessageRecordRoundTrip() throws {
        let message = RecordedWebSocketMessage(direction: .receive, time: 3.25, opcode: 8, data: Array("1000 bye".utf8), note: nil)
        let record = WebSocketMessageRecord.encode(message, flowID: 77)
        var decoder = JournalDecoder()
        decoder.feed(record)
        decoder.finish()
        guard case .record(let kind, 0, let payload)? = decoder.next() else { return XCTFail("no record") }
        XCTAssertEqual(kind, JournalRecordKind.webSocketMessage.rawValue)
        let decoded = try payload.withUnsafeBytes { try WebSocketMessageRecord.decode($0) }
        XCTAssertEqual(decoded.flowID, 77)
        XCTAssertEqual(decoded.message, message)
        XCTAssertNil(decoder.next())
    }

    // MARK: - Frames

    /// A journal of several records, and the events a decoder must give for it.
    private func sampleJournal() -> (bytes: [UInt8], records: [(kind: UInt8, offset: UInt64, payload: [UInt8])]) {
        var bytes: [UInt8] = []
        var records: [(kind: UInt8, offset: UInt64, payload: [UInt8])] = []
        let payloads: [(JournalRecordKind, [UInt8])] = [
            (.session, JournalSession(harrecVersion: "t", processID: 1, started: 2, harPath: "x.har").encoded()),
            (.flow, Self.sampleFlow(1).encoded()),
            (.flow, []),
            // A payload that holds the magic and looks like a header inside it.
            (.flow, JournalFrame.magic + [2, 255, 255, 0, 0, 0, 0, 0, 0] + JournalFrame.magic),
            (.webSocketStart, Self.sampleFlow(2, body: 3000, webSocket: true).encoded()),
        ]
        for (kind, payload) in payloads {
            records.append((kind.rawValue, UInt64(bytes.count), payload))
            bytes += JournalFrame.record(kind, payload)
        }
        return (bytes, records)
    }

    private func decode(_ bytes: [UInt8], pieces: [Int]? = nil) -> [JournalDecoder.Event] {
        var decoder = JournalDecoder()
        var events: [JournalDecoder.Event] = []
        var start = 0
        for size in pieces ?? [bytes.count] where start < bytes.count {
            let end = min(bytes.count, start + size)
            decoder.feed(Array(bytes[start..<end]))
            start = end
            while let event = decoder.next() { events.append(event) }
        }
        if start < bytes.count { decoder.feed(Array(bytes[start...])) }
        decoder.finish()
        while let event = decoder.next() { events.append(event) }
        return events
    }

    private func expected(_ records: [(kind: UInt8, offset: UInt64, payload: [UInt8])]) -> [JournalDecoder.Event] {
        records.map { .record(kind: $0.kind, offset: $0.offset, payload: $0.payload) }
    }

    func testWholeByteByByteAndRandomPieces() {
        let (bytes, records) = sampleJournal()
        XCTAssertEqual(decode(bytes), expected(records))
        XCTAssertEqual(decode(bytes, pieces: Array(repeating: 1, count: bytes.count)), expected(records))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let pieces = (0..<bytes.count).map { _ in Int.random(in: 1...40, using: &generator) }
            XCTAssertEqual(decode(bytes, pieces: pieces), expected(records))
        }
        XCTAssertEqual(decode([]), [])
    }

    /// Cut at every offset: every record that ends before the cut comes back, the rest is one torn
    /// stretch reaching the cut, and nothing is misread.
    func testTornAtEveryOffset() {
        let (bytes, records) = sampleJournal()
        for cut in 0...bytes.count {
            let whole = records.filter { Int($0.offset) + JournalFrame.headerSize + $0.payload.count <= cut }
            var want = expected(whole)
            let end = whole.last.map { Int($0.offset) + JournalFrame.headerSize + $0.payload.count } ?? 0
            if end < cut { want.append(.torn(offset: UInt64(end), length: UInt64(cut - end))) }
            XCTAssertEqual(decode(Array(bytes[..<cut])), want, "cut at \(cut)")
            XCTAssertEqual(decode(Array(bytes[..<cut]), pieces: Array(repeating: 7, count: cut)), want, "cut at \(cut), pieces")
        }
    }

    /// A byte changed anywhere in a record loses that record only: the decoder resynchronizes on
    /// the next whole record.
    func testDamageInTheMiddleLosesOneRecord() {
        let (bytes, records) = sampleJournal()
        for victim in 1..<records.count - 1 {
            let start = Int(records[victim].offset)
            let end = Int(records[victim + 1].offset)
            for position in Array(start..<min(end, start + 24)) + [end - 1] {
                var copy = bytes
                copy[position] ^= 0x5A
                var want = expected(Array(records[..<victim]))
                want.append(.damaged(offset: UInt64(start), length: UInt64(end - start)))
                want += expected(Array(records[(victim + 1)...]))
                XCTAssertEqual(decode(copy), want, "record \(victim), byte \(position)")
            }
        }
    }

    /// Garbage before the first record, a header claiming more than the limit, and a header whose
    /// length runs past the end are reported, not trusted.
    func testGarbageAndImpossibleLengths() {
        let (bytes, records) = sampleJournal()
        let garbage: [UInt8] = [1, 2, 3, 0x9E, 0x68, 9]
        let shifted = records.map { (kind: $0.kind, offset: $0.offset + UInt64(garbage.count), payload: $0.payload) }
        XCTAssertEqual(decode(garbage + bytes), [.damaged(offset: 0, length: UInt64(garbage.count))] + expected(shifted))

        var huge = JournalFrame.magic + [2]
        huge += [0, 0, 0, 0, 0, 0, 0, 0x7F]  // 2^62-ish bytes claimed
        huge += [0, 0, 0, 0]
        XCTAssertEqual(decode(huge + bytes).first, .damaged(offset: 0, length: UInt64(huge.count)))

        // Claims 1000 bytes that never come: torn at the end, but the records after it in the
        // same buffer (a corrupted length in the middle) are still found.
        var claims = JournalFrame.magic + [2]
        claims += [0xE8, 0x03, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]
        let events = decode(claims + bytes)
        XCTAssertEqual(Array(events.dropFirst()), expected(records.map { (kind: $0.kind, offset: $0.offset + UInt64(claims.count), payload: $0.payload) }))
        XCTAssertEqual(events.first, .damaged(offset: 0, length: UInt64(claims.count)))
    }

    /// A forged length within the limit (2 GiB) in a file of known size: damage as soon as its
    /// header is read, not a wait that buffers the rest of the file; the records after it come
    /// back while it is read in pieces, and a torn tail is still torn.
    func testAForgedLengthIsDamageAgainstTheBytesLeft() {
        let (bytes, records) = sampleJournal()
        var forged = JournalFrame.magic + [2]
        forged += [0, 0, 0, 0x80, 0, 0, 0, 0]  // 2 GiB claimed
        forged += [1, 2, 3, 4]
        let file = forged + bytes
        var decoder = JournalDecoder(size: UInt64(file.count))
        var events: [JournalDecoder.Event] = []
        for start in stride(from: 0, to: file.count, by: 64) {
            decoder.feed(Array(file[start..<min(file.count, start + 64)]))
            while let event = decoder.next() { events.append(event) }
            if start >= forged.count + 64 {
                XCTAssertFalse(events.isEmpty, "the damage is reported before the file's end (offset \(start))")
            }
        }
        decoder.finish()
        while let event = decoder.next() { events.append(event) }
        XCTAssertEqual(events.first, .damaged(offset: 0, length: UInt64(forged.count)))
        XCTAssertEqual(Array(events.dropFirst()),
                       expected(records.map { (kind: $0.kind, offset: $0.offset + UInt64(forged.count), payload: $0.payload) }))
        // Without the size, the same bytes cut short are a torn tail, as before.
        let cut = Array(bytes.dropLast(3))
        var sized = JournalDecoder(size: UInt64(cut.count))
        sized.feed(cut)
        sized.finish()
        var tail: [JournalDecoder.Event] = []
        while let event = sized.next() { tail.append(event) }
        XCTAssertEqual(tail, decode(cut), "a known size changes nothing for a torn tail")
    }
}
