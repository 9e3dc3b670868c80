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
        XCTAssertEqual(SwiftSource.typeName("sendingAttachments", suffix: "HttpScenario", fallback: "Unnamed"),
                       "SendingAttachmentsHttpScenario")
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
    func testResourceNames() {
        XCTAssertEqual(FixturePlanner.resourceName(path: "/v1/projects"), "projects")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/v1/projects/42"), "projects")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/api/v2.1/users/0b6e3f9a-9c1d-4f3e-8e8a-1b2c3d4e5f60/"), "users")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/items/5f1d7c9e8a4b3c2d1e0f9a8b"), "items")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/small.json"), "small")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/"), "root")
        XCTAssertEqual(FixturePlanner.resourceName(path: "//v1//"), "root")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/%E6%97%A5"), "resource")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/a/..%2F..%2Fetc"), "etc")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/search%20results"), "search-results")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/.hidden"), "hidden")
        XCTAssertEqual(FixturePlanner.resourceName(path: "/" + String(repeating: "a", count: 100)).count,
                       FixturePlanner.maximumResourceLength)
    }

    private func generate(_ entries: [HAREntry], _ options: GeneratorOptions = GeneratorOptions(scenarioName: "s"))
        throws -> (source: String, fixtures: [GeneratedFile]) {
        let files = try SwiftMockGenerator.generate(HARFactory.log(entries), options: options)
        return (String(decoding: files[0].bytes, as: UTF8.self), files.filter { $0.role == .fixture })
    }

    func testJSONGoesToSortedFixturesAndNamesDoNotClash() throws {
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/v1/projects", mimeType: "application/json", text: #"{"b":1,"a":[]}"#),
            HARFactory.entry("GET", "https://a.example/v1/projects/42", mimeType: "application/json", text: #"{"id":42}"#, second: 1),
            HARFactory.entry("GET", "https://a.example/v2/Projects", mimeType: "application/json", text: "[]", second: 2),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["projects-s.json", "projects-s-2.json", "Projects-s-3.json"])
        XCTAssertEqual(String(decoding: fixtures[0].bytes, as: UTF8.self), "{\n  \"a\": [],\n  \"b\": 1\n}\n")
        XCTAssertTrue(source.contains(#"body: .fixture("projects-s-2.json")"#))
    }

    func testIdenticalBodiesOfOneResourceShareAFixture() throws {
        let body = #"{"a":1}"#
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/v1/poll?t=1", mimeType: "application/json", text: body),
            HARFactory.entry("GET", "https://a.example/v1/poll?t=2", mimeType: "application/json", text: body, second: 1),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["poll-s.json"])
        XCTAssertEqual(source.components(separatedBy: #".fixture("poll-s.json")"#).count, 3)
        XCTAssertEqual(source.components(separatedBy: "repeatability: .once").count, 2)
    }

    func testInlineLimitAndJSONOption() throws {
        let small = HARFactory.entry("GET", "https://a.example/a", mimeType: "application/json", text: #"{"a":1}"#)
        let text = HARFactory.entry("GET", "https://a.example/b", mimeType: "text/plain", text: "12345", second: 1)
        let inlineJSON = GeneratorOptions(scenarioName: "s", inlineLimit: 5, jsonBodiesInFixtures: false)
        var result = try generate([small, text], inlineJSON)
        XCTAssertEqual(result.fixtures.map(\.relativePath), ["a-s.json"], "JSON of 7 bytes exceeds a limit of 5")
        XCTAssertTrue(result.source.contains(#"body: .text("12345")"#), "5 bytes is within a limit of 5")

        result = try generate([small, text], GeneratorOptions(scenarioName: "s", inlineLimit: 100, jsonBodiesInFixtures: false))
        XCTAssertEqual(result.fixtures.count, 0)
        XCTAssertTrue(result.source.contains(##"body: .text(#"{"a":1}"#)"##))

        result = try generate([small, text], GeneratorOptions(scenarioName: "s", inlineLimit: 0))
        XCTAssertEqual(result.fixtures.map(\.relativePath), ["a-s.json", "b-s.txt"])
        XCTAssertEqual(result.fixtures[1].bytes, Array("12345".utf8))
    }

    func testInvalidJSONKeepsItsBytesUnderTxt() throws {
        let broken = "{\"a\": [1, 2\r\n" + String(repeating: "x", count: 5000)
        let (source, fixtures) = try generate([
            HARFactory.entry("GET", "https://a.example/v1/broken", mimeType: "application/json; charset=utf-8", text: broken),
        ])
        XCTAssertEqual(fixtures.map(\.relativePath), ["broken-s.txt"])
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
        XCTAssertEqual(fixtures.map(\.relativePath), ["logo-s.png", "anim-s.gif", "doc-s.pdf"])
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
                       ["SHttpScenario.swift", "items-s.json"])
        XCTAssertEqual(try TestIO.read(fixtures.appendingPathComponent("items-s.json")), Array("[\n  1\n]\n".utf8))
        XCTAssertEqual(try files.write(to: out, fixturesDirectory: fixtures), [], "unchanged files are not rewritten")
        var changed = files
        changed[0].bytes += Array("// changed\n".utf8)
        XCTAssertEqual(try changed.write(to: out, fixturesDirectory: fixtures).map(\.lastPathComponent), ["SHttpScenario.swift"])
        XCTAssertEqual(try TestIO.read(out.appendingPathComponent("SHttpScenario.swift")), changed[0].bytes)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out.path).filter { $0.hasPrefix(".") }
        XCTAssertEqual(leftovers, [])
    }
}
