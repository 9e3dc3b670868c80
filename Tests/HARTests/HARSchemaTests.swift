import Foundation
import XCTest
@testable import HAR

/// Runs Tests/e2e/check_schema.py (python3 + jsonschema) against HARs. A missing python3 or
/// jsonschema fails the test: `scripts/install-deps --test` installs both.
struct ToolMissing: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

final class HARSchemaTests: XCTestCase {
    func runChecker(_ file: URL) throws -> (status: Int32, output: String) {
        // python3 from PATH (the one with jsonschema may not be /usr/bin/python3).
        let env = URL(fileURLWithPath: "/usr/bin/env")
        let probe = Process()
        probe.executableURL = env
        probe.arguments = ["python3", "-c", "import jsonschema"]
        probe.standardError = FileHandle.nullDevice
        do { try probe.run() } catch { throw ToolMissing(message: "cannot run python3: \(error)") }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            throw ToolMissing(message: "python3 (from PATH) has no jsonschema module; run scripts/install-deps --test")
        }

        let p = Process()
        p.executableURL = env
        p.arguments = ["python3", Fixtures.e2eDirectory.appendingPathComponent("check_schema.py").path, file.path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testHarrecOutputPassesTheSchema() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("harrec-schema-\(getpid()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(makeSampleLog(entryCount: 4).serialize()).write(to: file)
        let (status, output) = try runChecker(file)
        XCTAssertEqual(status, 0, output)
    }

    func testMitmproxySampleFailsOnTheEmptyContent() throws {
        let (status, output) = try runChecker(Fixtures.directory.appendingPathComponent("mitmproxy-12.3.1-sample.har"))
        print(output)
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("log/entries/5/response/content"), output)
        XCTAssertTrue(output.contains("'size' is a required property"), output)
        XCTAssertTrue(output.contains("'mimeType' is a required property"), output)
    }

    func testSchemaRejectsUnknownMembersAndBadTimings() throws {
        var doc = try JSONParser.parse(makeSampleLog(entryCount: 1).serialize())
        mutate(&doc, "log.entries[0].foo", .integer(1))
        mutate(&doc, "log.entries[0].timings.dns", .number("-2"))
        mutate(&doc, "log.entries[0].response.status", .number("200.5"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("harrec-schema-bad-\(getpid()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(JSONWriter.serialize(doc)).write(to: file)
        let (status, output) = try runChecker(file)
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("'foo' was unexpected") || output.contains("foo"), output)
        XCTAssertTrue(output.contains("log/entries/0/timings/dns"), output)
        XCTAssertTrue(output.contains("log/entries/0/response/status"), output)
    }
}
