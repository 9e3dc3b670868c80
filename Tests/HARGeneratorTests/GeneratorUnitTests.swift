import Foundation
import HAR
@testable import HARGenerator
import HARMocking
import TextEncodings
import XCTest

final class LiteralTests: XCTestCase {
    func testEscapedLiteralEscapesWhatSwiftCannotHoldRaw() {
        XCTAssertEqual(SwiftSource.escapedLiteral("a\"b\\c"), #""a\"b\\c""#)
        XCTAssertEqual(SwiftSource.escapedLiteral("\\(x)"), #""\\(x)""#)
        XCTAssertEqual(SwiftSource.escapedLiteral("\0\r\n\t\u{7F}\u{202E}\u{2028}"), #""\0\r\n\t\u{7F}\u{202E}\u{2028}""#)
        XCTAssertEqual(SwiftSource.escapedLiteral("café 日本 😀"), "\"café 日本 😀\"")
    }

    func testReadableLiteralPicksTheSimplestExactForm() {
        XCTAssertEqual(SwiftSource.readableLiteral("plain"), "\"plain\"")
        XCTAssertEqual(SwiftSource.readableLiteral(#"{"a":1}"#), ##"#"{"a":1}"#"##)
        XCTAssertEqual(SwiftSource.readableLiteral("say \"#hi ##"), "###\"say \"#hi ##\"###")
        XCTAssertEqual(SwiftSource.readableLiteral("a\nb"), "#\"\"\"\na\nb\n\"\"\"#")
        XCTAssertEqual(SwiftSource.readableLiteral("\"\"\"#\n"), "##\"\"\"\n\"\"\"#\n\n\"\"\"##")
        // CR would be normalized to LF inside a multi-line literal, NUL is rejected: escaped form.
        XCTAssertEqual(SwiftSource.readableLiteral("a\r\nb"), #""a\r\nb""#)
        XCTAssertEqual(SwiftSource.readableLiteral("a\0\"b"), #""a\0\"b""#)
        // A tab is only allowed raw in the multi-line form.
        XCTAssertEqual(SwiftSource.readableLiteral("a\tb"), "#\"\"\"\na\tb\n\"\"\"#")
    }

    func testCommentTextIsOneASCIILine() {
        XCTAssertEqual(SwiftSource.commentText("a\nb\r\u{202E}é"), "a\\nb\\r\\u{202E}\\u{E9}")
        XCTAssertEqual(SwiftSource.commentText(String(repeating: "x", count: 100), limit: 10), "xxxxxxxxxx...")
    }

    func testTypeNames() {
        XCTAssertEqual(SwiftSource.typeName("sendingAttachments", suffix: "HTTPScenario", fallback: "Unnamed"),
                       "SendingAttachmentsHTTPScenario")
        XCTAssertEqual(SwiftSource.typeName("sending-attachments v2", suffix: "X", fallback: "U"), "SendingAttachmentsV2X")
        XCTAssertEqual(SwiftSource.typeName("42", suffix: "X", fallback: "U"), "_42X")
        XCTAssertEqual(SwiftSource.typeName("", suffix: "X", fallback: "U"), "UX")
        XCTAssertEqual(SwiftSource.typeName("self", suffix: "", fallback: "U"), "`Self`")
        XCTAssertEqual(SwiftSource.typeName("HTTPServer", suffix: "", fallback: "U"), "HTTPServer")
    }

    func testBase64RoundTripAndLeniency() {
        for n in 0..<8 {
            let bytes = (0..<n).map { UInt8(($0 * 77 + 5) % 256) }
            XCTAssertEqual(Base64.decodeLenient(Base64.encode(bytes)), bytes)
        }
        XCTAssertEqual(Base64.decodeLenient("AAEC"), [0, 1, 2])
        XCTAssertEqual(Base64.decodeLenient("AA E\nC"), [0, 1, 2])
        XCTAssertEqual(Base64.decodeLenient("/w"), [0xFF])
        XCTAssertEqual(Base64.decodeLenient("_w=="), [0xFF])
        XCTAssertNil(Base64.decodeLenient("A"))
        XCTAssertNil(Base64.decodeLenient("AA==AA"))
        XCTAssertNil(Base64.decodeLenient("AA*A"))
    }
}

final class FixtureRuleTests: XCTestCase {
    func testPathNames() {
        XCTAssertEqual(FixturePlanner.pathName("/orders"), "orders")
        XCTAssertEqual(FixturePlanner.pathName("/orders/42"), "orders-42")
        XCTAssertEqual(FixturePlanner.pathName("/v1/projects/42/"), "v1-projects-42", "empty segments are left out")
        XCTAssertEqual(FixturePlanner.pathName("/"), "root")
        XCTAssertEqual(FixturePlanner.pathName(""), "root")
        XCTAssertEqual(FixturePlanner.pathName("//"), "root")
        XCTAssertEqual(FixturePlanner.pathName("/%E6%97%A5"), "resource", "nothing file-name-safe is left")
        XCTAssertEqual(FixturePlanner.pathName("/users/%E6%97%A5%E6%9C%AC"), "users")
        XCTAssertEqual(FixturePlanner.pathName("/caf%C3%A9/men%C3%BC"), "caf-men", "non-ASCII characters separate")
        XCTAssertEqual(FixturePlanner.pathName("/a/..%2F..%2Fetc"), "a-etc", "no path traversal")
        XCTAssertEqual(FixturePlanner.pathName("/a/../b/./c"), "a-b-c")
        XCTAssertEqual(FixturePlanner.pathName("/search%20results/a:b*c?"), "search-results-a-b-c")
        XCTAssertEqual(FixturePlanner.pathName("/.hidden/-x-"), "hidden-x")
        // The last segment's file extension goes (the fixture gets its own); versions and dotted
        // numbers stay.
        XCTAssertEqual(FixturePlanner.pathName("/small.json"), "small")
        XCTAssertEqual(FixturePlanner.pathName("/static/app.min.js"), "static-app.min")
        XCTAssertEqual(FixturePlanner.pathName("/api/v2.1/rates/1.5"), "api-v2.1-rates-1.5")
        XCTAssertEqual(FixturePlanner.pathName("/files/report.verylongext"), "files-report.verylongext")
        XCTAssertEqual(FixturePlanner.pathName("/data.json/x.json"), "data.json-x")
        // Windows device names.
        XCTAssertEqual(FixturePlanner.pathName("/aux"), "aux_")
        XCTAssertEqual(FixturePlanner.pathName("/NUL.min.js"), "NUL_.min")
        XCTAssertEqual(FixturePlanner.pathName("/v1/con"), "v1-con", "only a whole name is a device")
        // Long paths keep as many whole segments from the end as fit.
        let long = "/api/v1/organizations/acme-corporation-international/projects/12345/attachments/98765/thumbnails"
        XCTAssertEqual(FixturePlanner.pathName(long), "projects-12345-attachments-98765-thumbnails")
        let segment = String(repeating: "a", count: 100)
        XCTAssertEqual(FixturePlanner.pathName("/x/" + segment), String(repeating: "a", count: FixturePlanner.maximumNameLength))
        for path in [long, "/x/" + segment, "/" + String(repeating: "ab/", count: 80)] {
            XCTAssertLessThanOrEqual(FixturePlanner.pathName(path).count, FixturePlanner.maximumNameLength, path)
        }
    }

    func testScenarioDirectoryNames() {
        XCTAssertEqual(FixturePlanner.directoryName("sendingAttachments"), "sendingAttachments")
        XCTAssertEqual(FixturePlanner.directoryName("3ds \"#class\u{301} \u{202E}x"), "3ds-class-x")
        XCTAssertEqual(FixturePlanner.directoryName("..."), "scenario")
        XCTAssertEqual(FixturePlanner.directoryName(""), "scenario")
        XCTAssertEqual(FixturePlanner.directoryName("con"), "con_")
        XCTAssertEqual(FixturePlanner.directoryName(String(repeating: "s", count: 100)).count, FixturePlanner.maximumNameLength)
        XCTAssertEqual(GeneratorOptions(scenarioName: "log in").fixtureDirectoryName, "log-in")
    }

    private func generate(_ entries: [HAREntry], _ options: GeneratorOptions = GeneratorOptions(scenarioName: "s"))
        throws -> (source: String, fixtures: [GeneratedFile]) {
        let files = try SwiftMockGenerator.generate(HARFactory.log(entries), options: options)
        return (String(decoding: files[0].bytes, as: UTF8.self), files.filter { $0.role == .fixture })
    }

    func testJSONGoesToSortedFixturesNamedAfterThePath() throws {
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/orders", mimeType: "application/json", text: #"{"b":1,"a":[]}"#),
            HARFactory.entry("GET", "https://a.example/orders/42", mimeType: "application/json", text: #"{"id":42}"#, second: 1),
            HARFactory.entry("GET", "https://a.example/orders/42", mimeType: "application/json", text: #"{"id":42,"v":2}"#, second: 2),
            HARFactory.entry("GET", "https://a.example/orders/42", mimeType: "application/json", text: #"{"id":42,"v":3}"#, second: 3),
        ], GeneratorOptions(scenarioName: "browse"))
        XCTAssertEqual(fixtures.map(\.relativePath),
                       ["browse/orders.json", "browse/orders-42.json", "browse/orders-42-2.json", "browse/orders-42-3.json"])
        XCTAssertEqual(String(decoding: fixtures[0].bytes, as: UTF8.self), "{\n  \"a\": [],\n  \"b\": 1\n}\n")
        XCTAssertTrue(source.contains(#"body: .fixture("browse/orders-42-2.json")"#))
    }

    func testNamesThatClashGetNumbersInQueueOrder() throws {
        let json = "application/json"
        let (source, fixtures) = try generate([
            // The query is not part of the name: responses it tells apart are numbered.
            HARFactory.entry("GET", "https://a.example/search?q=a", mimeType: json, text: "[1]"),
            HARFactory.entry("GET", "https://a.example/search?q=b", mimeType: json, text: "[2]", second: 1),
            // Paths that sanitize to one name, and case (file systems may ignore it).
            HARFactory.entry("GET", "https://a.example/a%20b", mimeType: json, text: "[3]", second: 2),
            HARFactory.entry("GET", "https://a.example/a-b", mimeType: json, text: "[4]", second: 3),
            HARFactory.entry("GET", "https://a.example/Search", mimeType: json, text: "[5]", second: 4),
            // A path whose own name is a numbered one: the next free number.
            HARFactory.entry("GET", "https://a.example/search/2", mimeType: json, text: "[6]", second: 5),
            // Another host, the same path; another extension does not clash.
            HARFactory.entry("GET", "https://b.example/a-b", mimeType: json, text: "[7]", second: 6),
            HARFactory.entry("GET", "https://a.example/a-b", mimeType: "text/plain", text: String(repeating: "t", count: 5000), second: 7),
            // The same body for the same name is written once.
            HARFactory.entry("GET", "https://a.example/search?q=c", mimeType: json, text: "[1]", second: 8),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), [
            "s/search.json", "s/search-2.json", "s/a-b.json", "s/a-b-2.json", "s/Search-3.json", "s/search-2-2.json",
            "s/a-b-3.json", "s/a-b.txt",
        ])
        XCTAssertEqual(source.components(separatedBy: #".fixture("s/search.json")"#).count - 1, 2)
        XCTAssertEqual(Set(fixtures.map { $0.relativePath.lowercased() }).count, fixtures.count, "unique, whatever the case")
    }

    func testIdenticalBodiesOfOneResourceShareAFixture() throws {
        let body = #"{"a":1}"#
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/v1/poll?t=1", mimeType: "application/json", text: body),
            HARFactory.entry("GET", "https://a.example/v1/poll?t=2", mimeType: "application/json", text: body, second: 1),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["s/v1-poll.json"])
        XCTAssertEqual(source.components(separatedBy: #".fixture("s/v1-poll.json")"#).count, 3)
        XCTAssertEqual(source.components(separatedBy: "repeatability: .once").count, 2)
    }

    func testInlineLimitAndJSONOption() throws {
        let small = HARFactory.entry("GET", "https://a.example/a", mimeType: "application/json", text: #"{"a":1}"#)
        let text = HARFactory.entry("GET", "https://a.example/b", mimeType: "text/plain", text: "12345", second: 1)
        let inlineJSON = GeneratorOptions(scenarioName: "s", inlineLimit: 5, jsonBodiesInFixtures: false)
        var result = try generate([small, text], inlineJSON)
        XCTAssertEqual(result.fixtures.map(\.relativePath), ["s/a.json"], "JSON of 7 bytes exceeds a limit of 5")
        XCTAssertTrue(result.source.contains(#"body: .text("12345")"#), "5 bytes is within a limit of 5")

        result = try generate([small, text], GeneratorOptions(scenarioName: "s", inlineLimit: 100, jsonBodiesInFixtures: false))
        XCTAssertEqual(result.fixtures.count, 0)
        XCTAssertTrue(result.source.contains(##"body: .text(#"{"a":1}"#)"##))

        result = try generate([small, text], GeneratorOptions(scenarioName: "s", inlineLimit: 0))
        XCTAssertEqual(result.fixtures.map(\.relativePath), ["s/a.json", "s/b.txt"])
        XCTAssertEqual(result.fixtures[1].bytes, Array("12345".utf8))
    }

    func testInvalidJSONKeepsItsBytesUnderTxt() throws {
        let broken = "{\"a\": [1, 2\r\n" + String(repeating: "x", count: 5000)
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/v1/broken", mimeType: "application/json; charset=utf-8", text: broken),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["s/v1-broken.txt"])
        XCTAssertEqual(fixtures.first?.bytes, Array(broken.utf8))
        XCTAssertTrue(source.contains("// Note: the body is not valid JSON"))
    }

    func testBinaryBodiesInlineOrFixtureWithExtension() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 5000)
        let gif: [UInt8] = Array("GIF89a".utf8) + Array(repeating: 0, count: 5000)
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/logo", mimeType: "image/png", text: Base64.encode(png), encoding: "base64"),
            HARFactory.entry("GET", "https://a.example/anim", mimeType: "application/octet-stream",
                             text: Base64.encode(gif), encoding: "base64", second: 1),
            HARFactory.entry("GET", "https://a.example/tiny", mimeType: "application/octet-stream",
                             text: "AAEC", encoding: "base64", second: 2),
            HARFactory.entry("GET", "https://a.example/doc", mimeType: "application/pdf",
                             text: Base64.encode(Array("%PDF-1.4".utf8) + Array(repeating: 32, count: 5000)),
                             encoding: "base64", second: 3),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["s/logo.png", "s/anim.gif", "s/doc.pdf"])
        XCTAssertEqual(fixtures[0].bytes, png)
        XCTAssertTrue(source.contains(#"body: .base64("AAEC")"#))
    }

    func testMediaTypeAndExtension() {
        XCTAssertEqual(FixturePlanner.mediaType([HTTPHeader("content-type", " Text/HTML ; charset=utf-8")]), "text/html")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "text/html", bytes: [], labelledJSONButInvalid: false), "html")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "application/atom+xml", bytes: [], labelledJSONButInvalid: false), "xml")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "", bytes: Array("hello".utf8), labelledJSONButInvalid: false), "txt")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "", bytes: [0xFF, 0x00], labelledJSONButInvalid: false), "bin")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "", bytes: [0xFF, 0xD8, 0xFF, 0xE0], labelledJSONButInvalid: false), "jpg")
        XCTAssertEqual(FixturePlanner.fileExtension(mime: "application/vnd.foo", bytes: Array("x".utf8),
                                                    labelledJSONButInvalid: false), "bin")
    }
}

final class JQFormatterTests: XCTestCase {
    /// Documents whose formatting is compared with the installed jq. Numbers are in the form every
    /// jq version prints unchanged (jq 1.6 reprints others through a double).
    static let documents = [
        #"{"b":1,"a":{"d":[],"c":{}},"":null}"#,
        #"[1,-2,0.5,3.25,true,false,null,"s",[],{},[[]],[{}]]"#,
        #"{"é":1,"e\u0301":2,"z":3,"Z":4,"日本":5,"😀":6,"a\u0000":7}"#,
        #"{"k":"\u0000\u0001\u001f\u007f\b\f\n\r\t\"\\/\u2028\ufeff\ud83d\ude00 é"}"#,
        #"{"dup":1,"dup":2,"x":{"dup":[1],"dup":[2,3]}}"#,
        #""just a string""#,
        "42",
        "[[[[[[[[[[1]]]]]]]]]]",
    ]

    func testMatchesJQ() throws {
        guard (try? Command.run(["jq", "--version"]))?.status == 0 else {
            return XCTFail("jq is not installed: scripts/install-deps --test installs it (apt-get install jq)")
        }
        let dir = try TestIO.temporaryDirectory("jqunit")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (i, document) in Self.documents.enumerated() {
            let url = dir.appendingPathComponent("\(i).json")
            try Data(document.utf8).write(to: url)
            let jq = try Command.run(["jq", "-S", ".", url.path])
            XCTAssertEqual(jq.status, 0, jq.output)
            let mine = JQFormatter.format(try JSONParser.parse(Array(document.utf8)))
            if Array(jq.output.utf8) != mine {
                XCTFail("document \(i):\n" + readableDiff(expected: Array(jq.output.utf8), actual: mine, name: "\(i).json"))
            }
        }
    }

    func testNumbersKeepTheirRecordedSpelling() throws {
        let value = try JSONParser.parse(Array(#"[1.50,1E2,100000000000000000000001,-0]"#.utf8))
        XCTAssertEqual(String(decoding: JQFormatter.format(value), as: UTF8.self),
                       "[\n  1.50,\n  1E2,\n  100000000000000000000001,\n  -0\n]\n")
    }
}

final class WebSocketTriggerTests: XCTestCase {
    func testTriggerNamesFromClientMessages() {
        func name(_ text: String, _ position: Int = 2) -> String {
            WebSocketPlanner.triggerName(opcode: 1, text: text, position: position).name
        }
        XCTAssertEqual(name(#"{"type":"subscribe","channel":"x"}"#), "afterSubscribe")
        XCTAssertEqual(name(#"{"event":"phx_join"}"#), "afterPhxJoin")
        XCTAssertEqual(name(#"{"action":"chat.message.send"}"#), "afterChatMessageSend")
        XCTAssertEqual(name(#"["subscribe", {"topic": 1}]"#), "afterSubscribe")
        XCTAssertEqual(name("hello"), "afterHello")
        XCTAssertEqual(name("PING now"), "afterPingNow")
        XCTAssertEqual(name(#"{"id":1}"#), "afterClientMessage2")
        XCTAssertEqual(name(#"{"type":"日本"}"#), "afterClientMessage2")
        XCTAssertEqual(name("a long message that is clearly not a command at all"), "afterClientMessage2")
        XCTAssertEqual(name(##"{"type":"\"#class\u202e"}"##), "afterClass")
        XCTAssertEqual(WebSocketPlanner.triggerName(opcode: 2, text: nil, position: 3).name, "afterClientMessage3")
        XCTAssertEqual(WebSocketPlanner.triggerName(opcode: 8, text: nil, position: 3).name, "afterClientClose")
        let long = name(#"{"type":"\#(String(repeating: "wordy_", count: 20))"}"#)
        XCTAssertLessThanOrEqual(long.count, "after".count + WebSocketPlanner.maximumDerivedNameLength)
        XCTAssertTrue(long.hasPrefix("afterWordyWordy"))
    }

    func testGroupingAndDeduplication() throws {
        let log = HARFactory.log([
            HARFactory.webSocket("wss://a.example/s", messages: [
                ("receive", 1, "welcome", 0.01),
                ("send", 1, #"{"type":"subscribe"}"#, 0.1),
                ("receive", 1, "one", 0.11),
                ("receive", 10, "", 0.12),                 // pong: not replayable
                ("send", 1, #"{"type":"subscribe"}"#, 0.2),
                ("receive", 2, "AAEC", 0.21),
                ("receive", 8, "1000 done", 0.4),
                ("send", 1, "quiet", 0.5),                 // no reply: no trigger
            ]),
        ])
        var planner = WebSocketPlanner()
        let sockets = planner.plan(log.entries)
        XCTAssertEqual(planner.triggersInOrder, ["onOpen", "afterSubscribe", "afterSubscribe2"])
        XCTAssertEqual(sockets.first?.skippedMessages, 1)
        XCTAssertEqual(sockets.first?.groups.map { $0.events.map(\.event) },
                       [[.text("welcome")], [.text("one")], [.binary("AAEC"), .close(code: 1000, reason: "done")]])
        let source = String(decoding: try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: "s"))[1].bytes,
                            as: UTF8.self)
        XCTAssertTrue(source.contains("// afterSubscribe2: after client message 2 (2026-11-30T10:00:00.200Z): {\"type\":\"subscribe\"}"))
        XCTAssertTrue(source.contains("// server messages at +0.010 s, +0.200 s"))
    }

    func testTruncatedMessagesAreMarked() throws {
        var entry = HARFactory.webSocket("wss://a.example/s", messages: [("receive", 1, "partial", 0.5)])
        if case .array(var messages)? = entry.custom.last?.value, case .object(var fields) = messages[0] {
            fields.append(("_truncated", .bool(true)))
            messages[0] = .object(fields)
            entry.custom[entry.custom.count - 1].value = .array(messages)
        }
        let files = try SwiftMockGenerator.generate(HARFactory.log([entry]), options: GeneratorOptions(scenarioName: "s"))
        XCTAssertTrue(String(decoding: files[1].bytes, as: UTF8.self)
            .contains("            // 2026-11-30T10:00:00.500Z, truncated when recorded\n            .text(\"partial\"),"))
    }

    func testCloseFrames() {
        XCTAssertEqual(WebSocketPlanner.close("1000 normal"), .close(code: 1000, reason: "normal"))
        XCTAssertEqual(WebSocketPlanner.close("4001"), .close(code: 4001, reason: ""))
        XCTAssertEqual(WebSocketPlanner.close(""), .close(code: 1005, reason: ""))
        XCTAssertEqual(WebSocketPlanner.close("99999999999999999999 x"), .close(code: 1005, reason: "99999999999999999999 x"))
    }

    func testOffsets() {
        XCTAssertEqual(WebSocketEmitter.offset(0.0125), "+0.013 s")
        XCTAssertEqual(WebSocketEmitter.offset(12), "+12.000 s")
        XCTAssertEqual(WebSocketEmitter.offset(-0.5), "-0.500 s")
        XCTAssertEqual(WebSocketEmitter.offset(.nan), "+?")
    }
}

final class GeneratorBehaviourTests: XCTestCase {
    func testDeterministic() throws {
        let bytes = try TestIO.read(TestPaths.goldenRoot.appendingPathComponent("websocket/input.har"))
        let options = GeneratorOptions(scenarioName: "chatRoom")
        let first = try SwiftMockGenerator.generate(try HARLog.parse(bytes), options: options)
        let second = try SwiftMockGenerator.generate(try HARLog.parse(bytes), options: options)
        XCTAssertEqual(first, second)
        let fuzz = FuzzTests.hostileLog(seed: 1, entries: 30)
        XCTAssertEqual(try SwiftMockGenerator.generate(fuzz, options: options),
                       try SwiftMockGenerator.generate(fuzz, options: options))
    }

    func testHostFilterAppliesToHTTPAndWebSockets() throws {
        let log = HARFactory.log([
            HARFactory.entry("GET", "https://api.example.com/a", text: "a"),
            HARFactory.entry("GET", "https://tracker.example.net/b", text: "b", second: 1),
            HARFactory.webSocket("wss://tracker.example.net/s", second: 2, messages: [("receive", 1, "x", 0.1)]),
        ])
        var options = GeneratorOptions(scenarioName: "s")
        options.scenario.includeHost = try GeneratorOptions.hostFilter(pattern: "API\\.example")
        let files = try SwiftMockGenerator.generate(log, options: options)
        XCTAssertEqual(files.map(\.role), [.scenario])
        let source = String(decoding: files[0].bytes, as: UTF8.self)
        XCTAssertTrue(source.contains("\"api.example.com\""))
        XCTAssertFalse(source.contains("tracker"))
        XCTAssertThrowsError(try GeneratorOptions.hostFilter(pattern: "("))
    }

    func testRecordedLatencyBecomesDelay() throws {
        var options = GeneratorOptions(scenarioName: "s")
        options.scenario.latency = .recorded
        let log = HARFactory.log([HARFactory.entry("GET", "https://a.example/x", text: "ok")])
        let source = String(decoding: try SwiftMockGenerator.generate(log, options: options)[0].bytes, as: UTF8.self)
        // The server's part of the recorded 5 ms: wait 3 + receive 1.
        XCTAssertTrue(source.contains("body: .text(\"ok\"),\n                delay: 0.004\n"), source)
    }

    func testNothingToGenerate() {
        let log = HARFactory.log([HARFactory.entry("GET", "http://127.0.0.1:1/refused", status: 0)])
        XCTAssertThrowsError(try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: "s"))) { error in
            XCTAssertEqual(error as? GeneratorError, .nothingToGenerate(entries: 1))
        }
    }

    func testWriterIsAtomicAndSkipsUnchangedFiles() throws {
        let root = try TestIO.temporaryDirectory("write")
        defer { try? FileManager.default.removeItem(at: root) }
        let out = root.appendingPathComponent("Sources/Mocks")
        let fixtures = root.appendingPathComponent("Fixtures/API/v1")
        let log = HARFactory.log([HARFactory.entry("GET", "https://a.example/v1/items", mimeType: "application/json", text: "[1]")])
        let files = try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: "s"))
        XCTAssertEqual(try files.write(to: out, fixturesDirectory: fixtures).map(\.lastPathComponent),
                       ["SHTTPScenario.swift", "v1-items.json"])
        XCTAssertEqual(try TestIO.read(fixtures.appendingPathComponent("s/v1-items.json")), Array("[\n  1\n]\n".utf8))
        XCTAssertEqual(try files.write(to: out, fixturesDirectory: fixtures), [], "unchanged files are not rewritten")
        var changed = files
        changed[0].bytes += Array("// changed\n".utf8)
        XCTAssertEqual(try changed.write(to: out, fixturesDirectory: fixtures).map(\.lastPathComponent), ["SHTTPScenario.swift"])
        XCTAssertEqual(try TestIO.read(out.appendingPathComponent("SHTTPScenario.swift")), changed[0].bytes)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [])
    }
}
