import HAR
import HTTP1
@testable import LiveView
import ProxyCore
import Recording
import XCTest

/// The live view: its index of summaries and change log, the JSON API behind the token, and the
/// HTTP session with its event streams, as transcripts (bytes in, commands out).
final class LiveViewTests: XCTestCase {
    static let token = "0123456789abcdef0123456789abcdef"

    func flow(_ id: UInt64, _ path: String, status: Int? = 200, at start: Double = 1_800_000_000, error: String? = nil) -> Flow {
        var request = RecordedRequest(method: "GET", url: "https://api.example.com\(path)", httpVersion: "HTTP/1.1",
                                      fields: [RecordedField(name: "Accept", value: "*/*")], headSize: 40)
        request.body = RecordedBody(bytes: [], wireSize: 0)
        var flow = Flow(id: id, clientAddress: "127.0.0.1:5000", request: request,
                        instants: FlowInstants(requestStart: start))
        if let status {
            var response = RecordedResponse(status: status, reason: "OK", httpVersion: "HTTP/1.1",
                                            fields: [RecordedField(name: "Content-Type", value: "application/json")], headSize: 50)
            let body = Array(#"{"items":[1,2]}"#.utf8)
            response.body = RecordedBody(bytes: body, wireSize: body.count)
            flow.response = response
        }
        flow.instants.end = start + 0.0125
        flow.error = error
        return flow
    }

    /// Tools that say what they were given: the preview upper-cases the URL, the generator lists
    /// the flows' paths.
    static let tools = LiveTools(redactionPreview: { flow in
        LivePreview(raw: flow.request.url, redacted: flow.request.url.uppercased(), findings: [.init(path: "request.url", rule: "email")])
    }, generate: { flows, name in
        flows.isEmpty ? .failure(LiveToolError("nothing")) : .success([LiveGeneratedFile(path: name + ".swift", role: "scenario",
                                                                      text: flows.map(\.request.url).joined(separator: "\n"))])
    })

    func service(_ index: LiveIndex, flows: [Flow] = []) -> LiveService {
        LiveService(token: Self.token, index: index, tools: Self.tools, flowReader: { id in flows.first { $0.id == id } })
    }

    func json(_ response: LiveResponse) throws -> JSONValue {
        try JSONParser.parse(response.body)
    }

    /// The response, running deferred work here.
    func respond(_ answer: LiveService.Answer) throws -> LiveResponse {
        switch answer {
        case .respond(let response): return response
        case .deferred(let work): return work()
        default: throw XCTSkip("not a response: \(answer)")
        }
    }

    // MARK: - Index

    func testTheIndexListsFlowsPagesAndAChangeLogThatDedupes() {
        let index = LiveIndex()
        index.record(flow(7, "/a"))
        index.mark(PageMark(name: "checkout", time: 1_800_000_001))
        var ws = flow(9, "/chat", status: 101)
        ws.webSocket = RecordedWebSocket()
        ws.webSocket?.isOpen = true
        index.record(ws)
        index.countMessage(flowID: 9, at: 1_800_000_002)
        index.countMessage(flowID: 9, at: 1_800_000_003)
        let (flows, pages, total, cursor) = index.flows(from: 0, limit: 10)
        XCTAssertEqual(total, 2)
        XCTAssertEqual(flows.map(\.url), ["https://api.example.com/a", "wss://api.example.com/chat"])
        XCTAssertEqual(flows.map(\.page), [-1, 0], "the flow after the mark is in its page")
        XCTAssertEqual(flows[1].messages, 2)
        XCTAssertEqual(flows[1].transport, "ws")
        XCTAssertTrue(flows[1].open)
        XCTAssertEqual(pages, [LivePage(title: "checkout", started: 1_800_000_001, firstSeq: 1)])
        let all = index.changes(after: 0)
        XCTAssertEqual(all.flows.map(\.seq), [0, 1], "three changes to the WebSocket come as one summary")
        XCTAssertEqual(all.pages.map(\.index), [0])
        XCTAssertEqual(all.cursor, cursor)
        ws.webSocket?.isOpen = false
        index.record(ws)
        let later = index.changes(after: cursor)
        XCTAssertEqual(later.flows.map(\.open), [false], "the end updates the row")
        XCTAssertEqual(index.changes(after: later.cursor).flows, [])
        // New flows and updates of earlier ones in one look: each once, in the order of its first change.
        index.record(flow(10, "/b"))
        index.countMessage(flowID: 9, at: 1_800_000_004)
        index.record(flow(11, "/c"))
        index.countMessage(flowID: 9, at: 1_800_000_005)
        index.countMessage(flowID: 10, at: 1_800_000_006)
        XCTAssertEqual(index.changes(after: later.cursor).flows.map(\.seq), [2, 1, 3])
        XCTAssertEqual(LiveIndex.sortedContains([1, 4, 9], 4), true)
        XCTAssertEqual([0, 2, 5, 10].map { LiveIndex.sortedContains([1, 4, 9], $0) }, [false, false, false, false])
        let limited = index.changes(after: 0, limit: 1)
        XCTAssertEqual(limited.cursor, 1)
    }

    /// A summary leaves out the members at their default and keeps the ones every row shows;
    /// the bytes a stream writes and the value the list answers agree, member for member, for
    /// every kind of row: plain, failed with a request body, a WebSocket, left out, replayed.
    func testSummaryLeavesDefaultsOut() throws {
        let index = LiveIndex()
        index.record(flow(1, "/a"))
        var failed = flow(2, "/b\u{7F}\"quoted\"", status: nil, error: "upstream reset")
        failed.request.method = "POST"
        failed.request.body = RecordedBody(bytes: [1, 2, 3, 4, 5], wireSize: 5)
        index.record(failed)
        var socket = flow(3, "/ws", status: 101)
        socket.webSocket = RecordedWebSocket()
        socket.webSocket?.isOpen = true
        index.record(socket)
        index.countMessage(flowID: 3, at: 1_800_000_001)
        index.apply(ExportDecision(flowID: 1, excluded: true))
        index.recordReplay(LiveEvent(client: "c", .replayed(method: "GET", url: "https://api.example.com/r", status: 200,
                                                            label: "entry 4")), at: 1_800_000_002)

        let changes = index.changes(after: 0)
        var bytes: [UInt8] = []
        changes.writeFlows(to: &bytes)
        let written = try JSONParser.parse(bytes)
        XCTAssertEqual(written, .array(changes.flows.map(\.json)))
        XCTAssertEqual(changes.flows.map(\.seq), [0, 1, 2, 3], "each flow once, in the order of its first change")
        guard case .array(let rows) = written, rows.count == 4, case .object(let plain) = rows[0] else {
            return XCTFail("\(written)")
        }
        XCTAssertEqual(plain.map(\.0), ["seq", "id", "method", "url", "status", "transport", "ms", "started", "page",
                                       "responseBytes", "mimeType", "excluded"])
        let bad = rows[1]
        XCTAssertEqual(bad["status"], .null, "a flow with no response says so")
        XCTAssertEqual(bad["error"], .string("upstream reset"))
        XCTAssertEqual(bad["url"], .string("https://api.example.com/b\u{7F}\"quoted\""))
        XCTAssertEqual(bad["requestBytes"], .integer(5))
        XCTAssertNil(bad["responseBytes"])
        XCTAssertNil(bad["mimeType"])
        XCTAssertEqual(rows[2]["url"], .string("wss://api.example.com/ws"))
        XCTAssertEqual(rows[2]["transport"], .string("ws"))
        XCTAssertEqual(rows[2]["open"], .bool(true))
        XCTAssertEqual(rows[2]["messages"], .integer(1))
        XCTAssertEqual(rows[3]["transport"], .string("replay"))
        // HTTP/2 as the layer records it (`http/2.0`) and as another tool's HAR may write it.
        for (version, transport) in [("http/2.0", "h2"), ("HTTP/2", "h2"), ("HTTP/1.1", "h1"), ("http/2x", "h2"), ("http/1", "h1")] {
            let one = LiveIndex()
            var f = flow(9, "/v")
            f.request.httpVersion = version
            one.record(f)
            XCTAssertEqual(one.flows(from: 0, limit: 1).flows.first?.transport, transport, version)
        }
        XCTAssertEqual(rows[3]["replayItem"], .string("entry 4"))
        XCTAssertEqual(rows[3]["id"], .string(String(LiveIndex.firstReplayID + 3)))
    }

    /// Strings of every length go to the arena and come back whole, across chunks, with one longer
    /// than a chunk on its own.
    func testByteArenaKeepsEveryString() {
        let arena = ByteArena()
        var stored: [(ArenaRef, String?)] = []
        var generator = SystemRandomNumberGenerator()
        for k in 0..<3000 {
            let length = k == 1500 ? ByteArena.chunkSize + 17 : Int.random(in: 0..<2000, using: &generator)
            let text: String? = k % 97 == 0 ? nil : String(repeating: "é\(k % 10)", count: length / 3)
            stored.append((arena.append(text), text))
        }
        let chunks = arena.chunks
        XCTAssertGreaterThan(chunks.count, 2)
        for (ref, text) in stored { XCTAssertEqual(ByteArena.string(ref, in: chunks), text) }
    }

    func testChunkedRowsKeepOrderAcrossChunks() {
        var rows = ChunkedRows<Int>()
        let n = ChunkedRows<Int>.chunkSize * 2 + 7
        for k in 0..<n { rows.append(k * 3) }
        XCTAssertEqual(rows.count, n)
        XCTAssertEqual(rows[ChunkedRows<Int>.chunkSize], ChunkedRows<Int>.chunkSize * 3)
        rows[n - 1] = -1
        XCTAssertEqual(((n - 3)..<n).map { rows[$0] }, [(n - 3) * 3, (n - 2) * 3, -1])
        XCTAssertEqual(rows.filter { _ in true }.count, n)
        XCTAssertEqual(rows.filter { $0 % 1000 == 0 }, stride(from: 0, to: n * 3, by: 3000).filter { $0 != (n - 1) * 3 })
    }

    func testTheSinkFeedsTheJournalThenTheIndex() {
        let memory = FlowLog()
        let index = LiveIndex()
        let sink = LiveSink(memory, index: index)
        sink.record(flow(1, "/x"))
        sink.recordPageMark(PageMark(name: "p", time: 1))
        XCTAssertEqual(memory.count, 1)
        XCTAssertEqual(memory.pageMarks.map(\.name), ["p"])
        XCTAssertEqual(index.flowCount, 1)
        XCTAssertEqual(index.flows(from: 0, limit: 0).pages.map(\.title), ["p"])
    }

    // MARK: - Service

    func testEveryRequestNeedsTheToken() throws {
        let s = service(LiveIndex())
        for target in ["/", "/api/flows", "/api/status", "/api/flows/1", "/api/events", "/?token=wrong", "/?token=" + Self.token.dropLast()] {
            let answer = s.answer(method: "GET", target: target, fields: HTTPFields(), body: [], now: 0)
            XCTAssertEqual(try respond(answer).status, 403, target)
        }
        let byQuery = try respond(s.answer(method: "GET", target: "/?token=\(Self.token)", fields: HTTPFields(), body: [], now: 0))
        XCTAssertEqual(byQuery.status, 200)
        XCTAssertTrue(byQuery.fields.contains { $0.0 == "Set-Cookie" && $0.1.hasPrefix("harrec_token=\(Self.token);") && $0.1.contains("HttpOnly") })
        XCTAssertTrue(String(decoding: byQuery.body, as: UTF8.self).contains("EventSource"))
        let byCookie = s.answer(method: "GET", target: "/api/status", fields: HTTPFields([HTTPField(name: "Cookie", value: "a=b; harrec_token=\(Self.token)")]),
                                body: [], now: 0)
        XCTAssertEqual(try respond(byCookie).status, 200)
        let byBearer = s.answer(method: "GET", target: "/api/status", fields: HTTPFields([HTTPField(name: "Authorization", value: "Bearer \(Self.token)")]),
                                body: [], now: 0)
        XCTAssertEqual(try respond(byBearer).status, 200)
    }

    func testFlowsDetailMarksAndErrors() throws {
        let index = LiveIndex()
        let recorded = [flow(3, "/a"), flow(4, "/b?q=1", status: nil, error: "upstream closed the connection before responding")]
        recorded.forEach(index.record)
        let s = service(index, flows: [recorded[0]])
        func get(_ target: String) throws -> LiveResponse {
            try respond(s.answer(method: "GET", target: target + (target.contains("?") ? "&" : "?") + "token=\(Self.token)",
                                 fields: HTTPFields(), body: [], now: 5))
        }
        let list = try json(get("/api/flows?from=1&limit=5"))
        XCTAssertEqual(list["total"], .integer(2))
        XCTAssertEqual(list["flows"]?[0]?["url"], .string("https://api.example.com/b?q=1"))
        XCTAssertEqual(list["flows"]?[0]?["status"], .null)
        XCTAssertEqual(list["flows"]?[0]?["error"], .string("upstream closed the connection before responding"))
        XCTAssertEqual(list["flows"]?[0]?["ms"], .double(12.5))
        XCTAssertNotNil(list["cursor"])
        let detail = try json(get("/api/flows/3"))
        XCTAssertEqual(detail["response"]?["body"]?["text"], .string(#"{"items":[1,2]}"#))
        XCTAssertEqual(detail["request"]?["headers"]?[0], .array([.string("Accept"), .string("*/*")]))
        XCTAssertEqual(detail["timings"]?["end"], .double(12.5))
        XCTAssertEqual(detail["response"]?["body"]?["shown"], .integer(15))
        var big = flow(7, "/big")
        let huge = [UInt8](repeating: 0x61, count: LiveJSON.shownBodyBytes - 1) + Array("é".utf8) + [UInt8](repeating: 0x62, count: 10)
        big.response?.body = RecordedBody(bytes: huge, wireSize: huge.count)
        let shown = LiveJSON.body(big.response!.body, mimeType: "text/plain")
        XCTAssertEqual(shown["shown"], .integer(LiveJSON.shownBodyBytes - 1), "a detail shows 1 MiB, not cutting a character")
        XCTAssertEqual(shown["size"], .integer(huge.count))
        let notYet = try get("/api/flows/4")
        XCTAssertEqual(notYet.status, 503, "recorded, but not read back yet")
        XCTAssertTrue(notYet.fields.contains { $0 == ("Retry-After", "1") })
        XCTAssertEqual(try get("/api/flows/99").status, 404)
        XCTAssertEqual(try get("/nowhere").status, 404)
        let wrongMethod = try respond(s.answer(method: "DELETE", target: "/api/flows?token=\(Self.token)", fields: HTTPFields(), body: [], now: 0))
        XCTAssertEqual(wrongMethod.status, 405)

        let preview = try json(get("/api/flows/3/redaction"))
        XCTAssertEqual(preview["redacted"], .string("HTTPS://API.EXAMPLE.COM/A"))
        XCTAssertEqual(preview["findings"]?[0]?["rule"], .string("email"))
        XCTAssertEqual(try get("/api/flows/99/redaction").status, 404)

        let marked = s.answer(method: "POST", target: "/api/mark?name=check%20out&token=\(Self.token)", fields: HTTPFields(), body: [], now: 9)
        guard case .mark(let mark, let response) = marked else { return XCTFail("\(marked)") }
        XCTAssertEqual(mark, PageMark(name: "check out", time: 9))
        XCTAssertEqual(response.status, 200)
        for bad in ["", "%20%20", String(repeating: "x", count: 201), "a%0Ab"] {
            let answer = s.answer(method: "POST", target: "/api/mark?name=\(bad)&token=\(Self.token)", fields: HTTPFields(), body: [], now: 0)
            XCTAssertEqual(try respond(answer).status, 400, bad)
        }
    }

    func testGenerateForAPageOrASelection() throws {
        let index = LiveIndex()
        let recorded = [flow(1, "/before"), flow(2, "/in-page"), flow(3, "/also")]
        index.record(recorded[0])
        index.mark(PageMark(name: "Checkout", time: 1))
        index.record(recorded[1])
        index.record(recorded[2])
        let s = service(index, flows: recorded)
        func post(_ target: String, body: String = "") throws -> LiveResponse {
            try respond(s.answer(method: "POST", target: target + "&token=\(Self.token)", fields: HTTPFields(), body: Array(body.utf8), now: 0))
        }
        let first = try post("/api/generate?page=0")
        XCTAssertEqual(first.status, 200, String(decoding: first.body, as: UTF8.self))
        let page = try json(first)
        XCTAssertEqual(page["name"], .string("Checkout"))
        XCTAssertEqual(page["files"]?[0]?["text"], .string("https://api.example.com/in-page\nhttps://api.example.com/also"))
        let before = try json(post("/api/generate?page=-1"))
        XCTAssertEqual(before["files"]?[0]?["text"], .string("https://api.example.com/before"))
        let chosen = try json(post("/api/generate?name=picked", body: "3,1"))
        XCTAssertEqual(chosen["files"]?[0]?["text"], .string("https://api.example.com/before\nhttps://api.example.com/also"))
        XCTAssertEqual(try post("/api/generate?x=1").status, 400)
        XCTAssertEqual(try post("/api/generate?ids=99").status, 422)
        let unread = LiveService(token: Self.token, index: index, tools: Self.tools, flowReader: { _ in nil })
        let later = try respond(unread.answer(method: "POST", target: "/api/generate?page=0&token=\(Self.token)", fields: HTTPFields(), body: [], now: 0))
        XCTAssertEqual(later.status, 503)
    }

    /// Leaving a flow or a host out: decisions for the journal, rows marked through the sink,
    /// and a left-out host's later flows left out as they come.
    func testLeavingFlowsAndHostsOut() throws {
        let memory = FlowLog()
        let index = LiveIndex()
        let sink = LiveSink(memory, index: index)
        sink.record(flow(1, "/a"))
        var other = flow(2, "/b")
        other.request.url = "https://cdn.example.net/logo.png"
        sink.record(other)
        let s = service(index)
        func post(_ target: String) -> LiveService.Answer {
            s.answer(method: "POST", target: target + (target.contains("?") ? "&" : "?") + "token=\(Self.token)",
                     fields: HTTPFields(), body: [], now: 0)
        }
        guard case .decide(let one, let answered) = post("/api/flows/1/exclude") else { return XCTFail("no decision") }
        XCTAssertEqual(one, [ExportDecision(flowID: 1, excluded: true)])
        XCTAssertEqual(answered.status, 200)
        one.forEach(sink.recordExportDecision)
        XCTAssertEqual(memory.excluded, [1], "the decision reached the journal's side")
        XCTAssertEqual(index.summary(id: 1)?.excluded, true)
        XCTAssertEqual(index.changes(after: 0).flows.map(\.excluded), [true, false])
        guard case .decide(let back, _) = post("/api/flows/1/include") else { return XCTFail("no decision") }
        back.forEach(sink.recordExportDecision)
        XCTAssertEqual(memory.excluded, [])
        guard case .decide(let hostWide, _) = post("/api/hosts/exclude?host=CDN.example.net") else { return XCTFail("no decision") }
        XCTAssertEqual(hostWide, [ExportDecision(flowID: 2, excluded: true)])
        hostWide.forEach(sink.recordExportDecision)
        var later = flow(3, "/c")
        later.request.url = "https://cdn.example.net/font.woff2"
        sink.record(later)
        XCTAssertEqual(memory.excluded, [2, 3], "a flow to a left-out host is left out as it comes")
        XCTAssertEqual(index.summary(id: 3)?.excluded, true)
        XCTAssertEqual(try respond(post("/api/flows/99/exclude")).status, 404)
        XCTAssertEqual(try respond(post("/api/hosts/exclude")).status, 400)
        XCTAssertEqual(LiveIndex.host(of: "wss://Chat.Example.com:8443/x?y"), "chat.example.com:8443")

        sink.recordPageMark(PageMark(name: "next", time: 5))
        guard case .move(let move, let moved) = post("/api/flows/1/page?to=0") else { return XCTFail("no move") }
        XCTAssertEqual(move, PageMove(flowID: 1, page: 0))
        XCTAssertEqual(moved.status, 200)
        sink.recordPageMove(move)
        XCTAssertEqual(memory.pageOverrides, [1: 0])
        XCTAssertEqual(index.summary(id: 1)?.page, 0)
        XCTAssertEqual(try respond(post("/api/flows/1/page?to=1")).status, 400, "only one page")
        XCTAssertEqual(try respond(post("/api/flows/1/page?to=-2")).status, 400)
    }

    func testSearchReadsBodiesAndCountsComeFromTheTool() throws {
        let index = LiveIndex()
        var greeting = flow(2, "/b")
        greeting.request.body = RecordedBody(bytes: Array("Hello World".utf8), wireSize: 11)
        let recorded = [flow(1, "/a"), greeting]
        recorded.forEach(index.record)
        var tools = Self.tools
        tools.redactionCounts = { .success([("email", 3), ("jwt", 1)]) }
        let s = LiveService(token: Self.token, index: index, tools: tools, flowReader: { id in recorded.first { $0.id == id } })
        func get(_ target: String) throws -> LiveResponse {
            try respond(s.answer(method: "GET", target: target + "&token=\(Self.token)", fields: HTTPFields(), body: [], now: 0))
        }
        XCTAssertEqual(try json(get("/api/search?q=wORLD"))["ids"], .array([.string("2")]))
        XCTAssertEqual(try json(get("/api/search?q=%22items%22"))["ids"], .array([.string("1"), .string("2")]))
        XCTAssertEqual(try json(get("/api/search?q=nowhere"))["ids"], .array([]))
        XCTAssertEqual(try get("/api/search?q=").status, 400)
        let counts = try json(get("/api/redaction?x=1"))
        XCTAssertEqual(counts["total"], .integer(4))
        XCTAssertEqual(counts["rules"]?[0]?["rule"], .string("email"))
        XCTAssertTrue(LiveService.contains(Array("abcABC".utf8), lowercased: Array("cab".utf8)))
        XCTAssertFalse(LiveService.contains(Array("ab".utf8), lowercased: Array("abc".utf8)))
    }

    // MARK: - Session

    func session(_ index: LiveIndex = LiveIndex(), flows: [Flow] = []) -> LiveViewSession {
        LiveViewSession(id: 1, clientAddress: "127.0.0.1:6000", service: service(index, flows: flows), now: 100)
    }

    func sent(_ commands: [ProxyCommand]) -> String {
        String(decoding: commands.flatMap { command -> [UInt8] in
            if case .sendToClient(let bytes) = command { return bytes }
            return []
        }, as: UTF8.self)
    }

    func feed(_ s: LiveViewSession, _ text: String, at time: Double = 100, chunk: Int = .max) {
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + chunk)
            Array(bytes[start..<end]).withUnsafeBytes { s.clientReceived($0, at: time) }
            start = end
        }
    }

    func testKeepAliveRequestsWholeAndByteByByte() {
        for chunk in [Int.max, 1, 7] {
            let s = session()
            feed(s, "GET /api/status?token=\(Self.token) HTTP/1.1\r\nHost: x\r\n\r\nGET /api/status HTTP/1.1\r\nHost: x\r\n\r\n", chunk: chunk)
            let out = sent(s.takeCommands())
            XCTAssertTrue(out.hasPrefix("HTTP/1.1 200 OK\r\n"), out)
            XCTAssertTrue(out.contains(#"{"flows":0,"pages":0,"excludedHosts":[]}"#))
            XCTAssertTrue(out.contains("HTTP/1.1 403 Forbidden"), "the second request had no token (chunk \(chunk))")
            XCTAssertFalse(s.isFinished, "keep-alive")
        }
    }

    /// A detail is read off the loop: the session waits, asking to be woken, and answers when
    /// the job is done; a client that leaves meanwhile drops the job.
    func testADeferredAnswerComesOnAWakeUp() throws {
        let index = LiveIndex()
        index.record(flow(5, "/slow"))
        let s = session(index, flows: [flow(5, "/slow")])
        feed(s, "GET /api/flows/5?token=\(Self.token) HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(s.takeCommands(), [.wake(at: 100 + LiveViewSession.jobPollInterval)])
        XCTAssertFalse(s.wantsClientData, "a pipelined request waits its turn")
        var out = ""
        for k in 1...500 where out.isEmpty {
            s.tick(at: 100 + Double(k) * 0.02)
            out = sent(s.takeCommands())
            if out.isEmpty { usleep(1000) }
        }
        XCTAssertTrue(out.hasPrefix("HTTP/1.1 200 OK\r\n") && out.contains("\"url\":\"https://api.example.com/slow\""), out)
        XCTAssertTrue(s.wantsClientData)
        let leaving = session(index, flows: [flow(5, "/slow")])
        feed(leaving, "GET /api/flows/5?token=\(Self.token) HTTP/1.1\r\nHost: x\r\n\r\n")
        leaving.clientClosed(at: 101)
        XCTAssertTrue(leaving.isFinished)
        for _ in 0..<200 where leaving.service.jobs.pending > 0 { usleep(1000) }
        XCTAssertEqual(leaving.service.jobs.pending, 0, "the abandoned job's result is dropped")
    }

    func testAMarkIsRecordedAndLogged() {
        let s = session()
        feed(s, "POST /api/mark?name=login&token=\(Self.token) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        let commands = s.takeCommands()
        XCTAssertTrue(commands.contains(.record(.pageMark(PageMark(name: "login", time: 100)))))
        XCTAssertTrue(commands.contains(.log(LiveEvent(client: "127.0.0.1:6000", .pageMark(name: "login")))))
        XCTAssertEqual(commands.last, .closeClient)
        XCTAssertTrue(s.isFinished)
    }

    func testBadAndOversizedRequestsAreAnsweredAndClosed() {
        let bad = session()
        feed(bad, "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
        let out = bad.takeCommands()
        XCTAssertTrue(sent(out).hasPrefix("HTTP/1.1 400 "), sent(out))
        XCTAssertEqual(out.last, .closeClient)
        let big = session()
        feed(big, "POST /api/mark?token=\(Self.token) HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n" + String(repeating: "a", count: 70000))
        XCTAssertTrue(sent(big.takeCommands()).hasPrefix("HTTP/1.1 413 "))
        XCTAssertTrue(big.isFinished)
    }

    func testAnEventStreamSendsChangesOnWakeUps() {
        let index = LiveIndex()
        index.record(flow(1, "/before"))
        let cursor = index.flows(from: 0, limit: 0).cursor
        let s = session(index)
        feed(s, "GET /api/events?cursor=\(cursor)&token=\(Self.token) HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        let opened = s.takeCommands()
        XCTAssertTrue(sent(opened).hasPrefix("HTTP/1.1 200 OK\r\n"))
        XCTAssertTrue(sent(opened).contains("Content-Type: text/event-stream\r\n"))
        XCTAssertFalse(sent(opened).contains("/before"), "the cursor skips what the list already had")
        XCTAssertTrue(opened.contains(.wake(at: 100 + LiveViewSession.streamInterval)))
        index.record(flow(2, "/after"))
        index.record(flow(3, "/also"))
        index.mark(PageMark(name: "next", time: 101))
        // A reader that does not keep up gets nothing more until it does; the changes wait.
        s.tick(at: 100.05, clientBacklog: LiveViewSession.maximumStreamBacklog + 1)
        XCTAssertEqual(s.takeCommands(), [.wake(at: 100.05 + LiveViewSession.streamInterval)])
        // The events are written off the loop: they go out on a later wake-up.
        var pushed = ""
        for k in 0..<500 where pushed.isEmpty {
            s.tick(at: 100.1 + Double(k) * 0.001, clientBacklog: 0)
            pushed = sent(s.takeCommands())
            if pushed.isEmpty { usleep(1000) }
        }
        // The look's flows are one event holding an array, after its pages; its summaries are the
        // list's, member for member.
        let lines = pushed.components(separatedBy: "\n")
        XCTAssertEqual(lines.filter { $0.hasPrefix("event: ") }, ["event: page", "event: flows"], pushed)
        let streamed = lines.first { $0.hasPrefix("data: [") }.map { String($0.dropFirst(6)) } ?? ""
        XCTAssertEqual(try JSONParser.parse(Array(streamed.utf8)), .array(index.flows(from: 1, limit: 2).flows.map(\.json)))
        XCTAssertTrue(pushed.contains("event: page\ndata: {\"index\":0,\"title\":\"next\""), pushed)
        s.tick(at: 100.7)
        XCTAssertEqual(sent(s.takeCommands()), "", "nothing new")
        s.tick(at: 116)
        XCTAssertEqual(sent(s.takeCommands()), ": keep-alive\n\n")
        s.beginShutdown(at: 117)
        XCTAssertEqual(s.takeCommands(), [.closeClient])
        XCTAssertTrue(s.isFinished)
    }
}
