import Foundation
import HAR
import HARGenerator
import HARMocking
import TestSupport
import XCTest

/// Hostile strings everywhere: the output must compile, and literals must evaluate to the
/// recorded strings.
final class FuzzTests: XCTestCase {
    /// A log with hostile strings in URLs, headers, bodies and WebSocket messages.
    static func hostileLog(seed: UInt64, entries: Int) -> HARLog {
        var random = SplitMix64(seed: seed)
        var list: [HAREntry] = []
        let mimes = ["text/plain", "application/json", "text/html", "", "application/octet-stream", "image/png"]
        for i in 0..<entries {
            let segment = Hostile.string(&random, maximumPieces: 3).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "x"
            let queryName = Hostile.string(&random, maximumPieces: 2).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "q"
            let queryValue = Hostile.string(&random, maximumPieces: 2).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "v"
            let url = "https://h\(i % 3).example.com/\(random.pick(["v1", "class", "123", ""]))/\(segment)?\(queryName)=\(queryValue)&flag"
            var body = Hostile.string(&random, maximumPieces: 20)
            if i % 7 == 0 { body = String(repeating: body, count: 300) }  // beyond the inline limit
            let mime = random.pick(mimes)
            let encoded = mime == "image/png"
            list.append(HARFactory.entry(random.pick(["GET", "POST", "PUT"]), url, mimeType: mime,
                                         text: encoded ? Data(body.utf8).base64EncodedString() : body,
                                         encoding: encoded ? "base64" : nil,
                                         headers: [(Hostile.string(&random, maximumPieces: 2), Hostile.string(&random))],
                                         requestBody: i % 2 == 0 ? Hostile.string(&random) : nil, second: i))
        }
        var messages: [(String, Int, String, Double)] = []
        for i in 0..<24 {
            let kind = i % 3 == 1 ? "send" : "receive"
            let data = i % 5 == 0 ? "{\"type\":\(JSONWriterString(Hostile.string(&random)))}" : Hostile.string(&random)
            messages.append((kind, i % 11 == 10 ? 8 : 1, data, Double(i) * 0.01))
        }
        list.append(HARFactory.webSocket("wss://h.example.com/\(Hostile.string(&random))", second: entries, messages: messages))
        return HARFactory.log(list)
    }

    /// Scenario names that are keywords, empty, start with digits, or hold only symbols, grouped
    /// so that names in one group give distinct type names (one compiler run per group).
    static let nameGroups: [[String]] = [
        ["class", "3dSecure", "Self", "Type", "public struct X", "😀 emoji", "a\u{0}b\r\nc", "\"\"\"#\\(x)", "é"],
        [""],
        ["_"],
    ]

    func testHostileInputsTypeCheck() throws {
        var group = 0
        for names in Self.nameGroups {
            var files: [GeneratedFile] = []
            for (n, name) in names.enumerated() {
                // "_" gets a log with only a WebSocket: an empty queue must compile too.
                var log = Self.hostileLog(seed: UInt64(100 + n), entries: 14)
                if name == "_" { log.entries = log.entries.filter { $0.response.status == 101 } }
                // "" gets a long recording: long queues and event lists are split into functions.
                if name.isEmpty { log = Self.largeLog() }
                let generated = try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: name, sourceName: name))
                XCTAssertTrue(generated.contains { $0.role == .webSocketEvents }, name.debugDescription)
                let fixtureNames = generated.filter { $0.role == .fixture }.map(\.relativePath)
                let directory = GeneratorOptions(scenarioName: name).fixtureDirectoryName
                for fixture in fixtureNames {
                    // `<scenario directory>/<file>`, both file-name-safe ASCII, neither hidden.
                    let parts = fixture.split(separator: "/", omittingEmptySubsequences: false)
                    XCTAssertEqual(parts.count, 2, fixture)
                    XCTAssertEqual(parts.first.map(String.init), directory, fixture)
                    for part in parts {
                        XCTAssertFalse(part.isEmpty || part.hasPrefix(".") || part.hasPrefix("-"), fixture)
                        XCTAssertTrue(part.unicodeScalars.allSatisfy { FuzzTests.fileNameSafe($0) }, fixture)
                    }
                }
                XCTAssertEqual(Set(fixtureNames.map { $0.lowercased() }).count, fixtureNames.count,
                               "fixture names clash (ignoring case): \(fixtureNames)")
                files += generated
            }
            let swiftNames = files.filter { $0.role != .fixture }.map(\.relativePath)
            XCTAssertEqual(Set(swiftNames).count, swiftNames.count, "group \(group) has clashing type names: \(swiftNames)")
            if let errors = try StubHARMocking.typecheck(files, label: "fuzz\(group)") {
                XCTFail("hostile input group \(group) does not compile:\n\(errors.prefix(4000))")
            }
            group += 1
        }
    }

    /// ASCII letters, digits, `_`, `-` and `.`: what fixture names are made of.
    static func fileNameSafe(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_-.".unicodeScalars.contains(scalar))
    }

    /// 250 exchanges, one trigger with 45 messages, 26 triggers in all.
    static func largeLog() -> HARLog {
        var entries = (0..<250).map { i in
            HARFactory.entry("GET", "https://a.example/v1/items/\(i)?page=\(i % 7)", mimeType: "text/plain", text: "item \(i)\n",
                             headers: [("X-Index", "\(i)")], second: i % 3600)
        }
        var messages: [(String, Int, String, Double)] = (0..<45).map { ("receive", 1, "{\"n\":\($0)}", Double($0) * 0.01) }
        for i in 0..<25 {
            messages.append(("send", 1, "{\"type\":\"step\",\"n\":\(i)}", 1 + Double(i)))
            messages.append(("receive", 1, "ack \(i)", 1.5 + Double(i)))
        }
        entries.append(HARFactory.webSocket("wss://a.example/live", second: 3000, messages: messages))
        return HARFactory.log(entries)
    }

    func testLongRecordingsAreSplitIntoFunctions() throws {
        let files = try SwiftMockGenerator.generate(Self.largeLog(), options: GeneratorOptions(scenarioName: "long"))
        let scenario = String(decoding: files[0].bytes, as: UTF8.self)
        XCTAssertTrue(scenario.contains("public let responseQueue: [ResponseQueueItem] = Self.recordedItems()\n"))
        XCTAssertTrue(scenario.contains("        all += recordedItemsPart13()\n        return all\n"))
        XCTAssertFalse(scenario.contains("recordedItemsPart14"))
        XCTAssertEqual(scenario.components(separatedBy: "\n        ResponseQueueItem(\n").count - 1, 0)
        XCTAssertEqual(scenario.components(separatedBy: "\n            ResponseQueueItem(\n").count - 1, 250)
        let events = String(decoding: files[1].bytes, as: UTF8.self)
        XCTAssertTrue(events.contains(#"center.register("onOpen", events: onOpenEvents(), to: simulator)"#))
        XCTAssertTrue(events.contains("        registerPart2(with: simulator, center: center)\n    }\n"))
        XCTAssertTrue(events.contains("    private static func onOpenEventsPart3() -> [WebSocketEvent] {"))
        XCTAssertTrue(events.contains(#""afterStep25","#))
    }

    func testTypeNamesForAwkwardScenarioNames() throws {
        let expected: [(String, String)] = [
            ("class", "ClassHTTPScenario"), ("3dSecure", "_3dSecureHTTPScenario"), ("", "UnnamedHTTPScenario"),
            ("é", "UnnamedHTTPScenario"), ("sendingAttachments", "SendingAttachmentsHTTPScenario"),
            ("SEND_MESSAGE", "SendMessageHTTPScenario"), ("a\u{0}b\r\nc", "ABCHTTPScenario"),
        ]
        let log = HARFactory.log([HARFactory.entry("GET", "https://a.example/x", text: "ok")])
        for (name, typeName) in expected {
            let files = try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: name))
            XCTAssertEqual(files.first?.relativePath, typeName + ".swift", name.debugDescription)
            let source = String(decoding: files[0].bytes, as: UTF8.self)
            XCTAssertTrue(source.contains("public struct \(typeName): Scenario {"), name.debugDescription)
        }
    }

    /// Compiles and runs one program holding generated code, printing every string the queue and
    /// the WebSocket triggers hold; each must equal the recorded string byte for byte.
    func testLiteralsRoundTripThroughTheCompiler() throws {
        var random = SplitMix64(seed: 7)
        var entries: [HAREntry] = []
        var texts: [String] = [Hostile.all, "\r\n", "\"\"\"#\n\"#\n", "line\nwith \\ and \"\"\" and #\"#", "\t\n\ttab",
                               "\u{301}starts with a combining mark", "\u{5E9}\u{202E}rtl\n\u{301}",
                               String(repeating: "ab\"#\\", count: 800)]
        for _ in 0..<20 { texts.append(Hostile.string(&random, maximumPieces: 12)) }
        for (i, text) in texts.enumerated() {
            entries.append(HARFactory.entry("GET", "https://h.example.com/t\(i)?q=\(i)", mimeType: "text/plain", text: text,
                                            headers: [("X-Test", Hostile.string(&random))], second: i))
        }
        var messages: [(String, Int, String, Double)] = [("receive", 1, Hostile.all, 0.1)]
        for (i, text) in texts.enumerated() { messages.append((i % 2 == 0 ? "send" : "receive", 1, text, Double(i))) }
        entries.append(HARFactory.webSocket("wss://h.example.com/ws", second: texts.count, messages: messages))
        let log = HARFactory.log(entries)
        let scenarioName = "round\"#\u{202E}trip \\(x)"
        let files = try SwiftMockGenerator.generate(log, options: GeneratorOptions(scenarioName: scenarioName))
        XCTAssertFalse(files.contains { $0.role == .fixture }, "every body is small text, so all must be inline")

        // What the program must print: the builder's strings and the recorded server messages.
        var expected: [String] = [scenarioName]
        for item in HARScenarioBuilder.items(from: log) {
            expected += [item.condition.method, item.condition.scheme, item.condition.host, item.condition.path]
            for match in item.condition.query {
                if case .equals(let name, let value) = match { expected += [name, value ?? "<nil>"] }
            }
            for header in item.response.headers { expected += [header.name, header.value] }
            if case .text(let text) = item.response.body { expected.append(text) } else { XCTFail("body not text") }
            expected.append(item.label ?? "")
        }
        // Every server message is text, in recorded order (groups keep that order).
        for message in messages where message.0 == "receive" { expected.append(message.2) }

        let dir = try TestIO.temporaryDirectory("roundtrip")
        defer { try? FileManager.default.removeItem(at: dir) }
        var paths: [String] = []
        for file in files {
            // The program is one module: the generated imports of HARMocking go.
            let source = String(decoding: file.bytes, as: UTF8.self).replacingOccurrences(of: "import HARMocking\n", with: "")
            let url = dir.appendingPathComponent(file.relativePath)
            try Data(source.utf8).write(to: url)
            paths.append(url.path)
        }
        let model = dir.appendingPathComponent("Model.swift")
        try Data(Self.runtimeValueTypes().utf8).write(to: model)
        let main = dir.appendingPathComponent("main.swift")
        let scenarioType = files[0].relativePath.replacingOccurrences(of: ".swift", with: "")
        let eventsType = files[1].relativePath.replacingOccurrences(of: ".swift", with: "")
        try Data(Self.dumpProgram(scenarioType: scenarioType, eventsType: eventsType).utf8).write(to: main)
        let binary = dir.appendingPathComponent("roundtrip")
        let build = try Command.run(["swiftc", "-Onone", "-package-name", "harrec", "-o", binary.path, model.path, main.path] + paths, in: dir)
        guard build.status == 0 else { return XCTFail("round-trip program does not build:\n\(build.output.prefix(4000))") }
        let run = try Command.run([binary.path], in: dir)
        XCTAssertEqual(run.status, 0, run.output)
        let printed = run.output.split(separator: "\n").map { String(decoding: Data(base64Encoded: String($0)) ?? Data(), as: UTF8.self) }
        XCTAssertEqual(printed.count, expected.count)
        for (i, (got, want)) in zip(printed, expected).enumerated() where Array(got.utf8) != Array(want.utf8) {
            XCTFail("string \(i) differs: got \(got.debugDescription), want \(want.debugDescription)")
        }
    }

    /// The runtime's own value types (Sources/HARScenarios/ScenarioModel.swift), plus a
    /// WebSocketTriggerCenter that records what is registered, so generated code runs without the
    /// serving parts of the runtime.
    static func runtimeValueTypes() throws -> String {
        let model = String(decoding: try TestIO.read(TestPaths.scenariosSources.appendingPathComponent("ScenarioModel.swift")),
                           as: UTF8.self)
        return model + """

        public enum WebSocketEvent: Equatable {
            case text(String)
            case binary(Data)
            case close(code: Int, reason: String)
        }
        public protocol WebSocketSimulating: AnyObject {
            func simulateReceive(event: WebSocketEvent)
        }
        public final class WebSocketTriggerCenter {
            public static let shared = WebSocketTriggerCenter()
            public var registered: [(String, [WebSocketEvent])] = []
            public func register(_ trigger: String, events: [WebSocketEvent], to simulator: any WebSocketSimulating) {
                registered.append((trigger, events))
            }
        }

        """
    }

    static func dumpProgram(scenarioType: String, eventsType: String) -> String {
        """
        import Foundation
        func emit(_ s: String) { print(Data(s.utf8).base64EncodedString()) }
        final class Sink: WebSocketSimulating { func simulateReceive(event: WebSocketEvent) {} }
        let scenario = \(scenarioType)()
        emit(scenario.scenarioId.rawValue)
        for item in scenario.responseQueue {
            let c = item.condition
            emit(c.method); emit(c.scheme); emit(c.host); emit(c.path)
            for q in c.query { if case .equals(let n, let v) = q { emit(n); emit(v ?? "<nil>") } }
            for h in item.response.headers { emit(h.name); emit(h.value) }
            if case .text(let t) = item.response.body { emit(t) } else { emit("<not text>") }
            emit(item.label ?? "")
        }
        let center = WebSocketTriggerCenter()
        \(eventsType).register(with: Sink(), center: center)
        for (_, events) in center.registered {
            for event in events { if case .text(let t) = event { emit(t) } else { emit("<not text>") } }
        }
        """
    }
}

/// A JSON string literal for `value` (for building JSON client messages in tests).
func JSONWriterString(_ value: String) -> String {
    String(decoding: JSONWriter.serialize(.string(value), pretty: false), as: UTF8.self)
}
