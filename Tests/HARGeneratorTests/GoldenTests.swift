import Foundation
import HAR
import HARGenerator
import HARMocking
import XCTest

/// One golden case: `Fixtures/generator/<directory>/input.har` generated with `options`, compared
/// with `expected/` (Swift files at its top, fixtures under `expected/fixtures/`).
struct GoldenCase {
    var directory: String
    var options: GeneratorOptions

    static let all: [GoldenCase] = [
        GoldenCase(directory: "rest", options: GeneratorOptions(scenarioName: "sendingAttachments", sourceName: "rest.har")),
        GoldenCase(directory: "websocket", options: GeneratorOptions(scenarioName: "chatRoom", sourceName: "websocket.har")),
        GoldenCase(directory: "mitmproxy", options: GeneratorOptions(scenarioName: "mitmproxySample",
                                                                      sourceName: "mitmproxy-12.3.1-sample.har")),
        GoldenCase(directory: "hostile", options: GeneratorOptions(scenarioName: "3ds \"#class\u{301} \u{202E}x",
                                                                    inlineLimit: 2048, sourceName: "hostile\n.har")),
    ]

    var root: URL { TestPaths.goldenRoot.appendingPathComponent(directory) }
    var expectedRoot: URL { root.appendingPathComponent("expected") }

    func generate() throws -> [GeneratedFile] {
        try SwiftMockGenerator.generate(TestIO.parseHAR(root.appendingPathComponent("input.har")), options: options)
    }

    func expectedURL(_ file: GeneratedFile) -> URL {
        file.role == .fixture
            ? expectedRoot.appendingPathComponent("fixtures").appendingPathComponent(file.relativePath)
            : expectedRoot.appendingPathComponent(file.relativePath)
    }

    /// Every file under `expected/`, as paths relative to it.
    func expectedFiles() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: expectedRoot.path) else { return [] }
        var out: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: expectedRoot.appendingPathComponent(path).path, isDirectory: &isDirectory),
               !isDirectory.boolValue {
                out.append(path)
            }
        }
        return out.sorted()
    }
}

final class GoldenTests: XCTestCase {
    /// Set `HARREC_UPDATE_GOLDEN=1` to rewrite `expected/` from the current generator.
    private var updating: Bool { ProcessInfo.processInfo.environment["HARREC_UPDATE_GOLDEN"] == "1" }

    func testRESTGolden() throws { try check(GoldenCase.all[0]) }
    func testWebSocketGolden() throws { try check(GoldenCase.all[1]) }
    func testMitmproxySampleGolden() throws { try check(GoldenCase.all[2]) }
    func testHostileStringsGolden() throws { try check(GoldenCase.all[3]) }

    private func check(_ golden: GoldenCase) throws {
        let files = try golden.generate()
        if updating {
            try? FileManager.default.removeItem(at: golden.expectedRoot)
            for file in files {
                let url = golden.expectedURL(file)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(file.bytes).write(to: url)
            }
            return
        }
        let generatedPaths = files.map { file in
            file.role == .fixture ? "fixtures/" + file.relativePath : file.relativePath
        }.sorted()
        XCTAssertEqual(generatedPaths, golden.expectedFiles(),
                       "\(golden.directory): file set differs (HARREC_UPDATE_GOLDEN=1 rewrites the goldens)")
        for file in files {
            let url = golden.expectedURL(file)
            guard let expected = try? TestIO.read(url) else { continue }
            if expected != file.bytes {
                XCTFail("\(golden.directory)/\(file.relativePath) differs (HARREC_UPDATE_GOLDEN=1 rewrites it):\n"
                        + readableDiff(expected: expected, actual: file.bytes, name: file.relativePath))
            }
        }
    }

    /// The generated Swift of every golden case type-checks against the real HARMocking module.
    /// One compiler run per case (each defines its own types).
    func testGoldenSourcesTypeCheck() throws {
        for golden in GoldenCase.all {
            if let errors = try StubHARMocking.typecheck(try golden.generate(), label: golden.directory) {
                XCTFail("\(golden.directory): generated code does not compile:\n\(errors)")
            }
        }
    }

    /// Fixtures named `.json` parse, and are formatted exactly as `jq -S .` formats them.
    func testJSONFixturesMatchJQ() throws {
        guard (try? Command.run(["jq", "--version"]))?.status == 0 else {
            return XCTFail("jq is not installed: scripts/install-deps --test installs it (apt-get install jq)")
        }
        let dir = try TestIO.temporaryDirectory("jq")
        defer { try? FileManager.default.removeItem(at: dir) }
        var compared = 0
        for golden in GoldenCase.all {
            for file in try golden.generate() where file.relativePath.hasSuffix(".json") {
                XCTAssertNoThrow(try JSONParser.parse(file.bytes), file.relativePath)
                let url = dir.appendingPathComponent(file.relativePath)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(file.bytes).write(to: url)
                let jq = try Command.run(["jq", "-S", ".", url.path])
                XCTAssertEqual(jq.status, 0, jq.output)
                if Array(jq.output.utf8) != file.bytes {
                    XCTFail("\(file.relativePath) is not jq -S formatted:\n"
                            + readableDiff(expected: Array(jq.output.utf8), actual: file.bytes, name: file.relativePath))
                }
                compared += 1
            }
        }
        XCTAssertGreaterThan(compared, 5)
    }
}
