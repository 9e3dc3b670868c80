import Foundation
import HAR
import HARGenerator
import TestSupport
import XCTest

/// Paths of the package, found from this file so tests run from any directory.
enum TestPaths {
    static let packageRoot = PackagePaths.root
    static let goldenRoot = packageRoot.appendingPathComponent("Fixtures/generator")
    static let textEncodingsSources = packageRoot.appendingPathComponent("Sources/TextEncodings")
    static let harSources = packageRoot.appendingPathComponent("Sources/HAR")
    static let mockingSources = packageRoot.appendingPathComponent("Sources/HARMocking")
    static let scenariosSources = packageRoot.appendingPathComponent("Sources/HARScenarios")
}

enum TestIO {
    static func read(_ url: URL) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw NSError(domain: "test", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot read \(url.path)"])
        }
        return [UInt8](data)
    }

    static func temporaryDirectory(_ label: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("harrec-gen-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func parseHAR(_ url: URL) throws -> HARLog {
        try HARLog.parse(read(url))
    }
}

/// Result of running a command.
struct CommandResult {
    var status: Int32
    var output: String
}

enum Command {
    /// Runs `arguments[0]` found on PATH, collecting stdout and stderr together.
    static func run(_ arguments: [String], in directory: URL? = nil) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}

/// The real `HARMocking` module (and `HAR`), built from the package's sources with `swiftc
/// -emit-module`, to type-check generated code against the runtime it will be compiled with.
/// Built once per source version and cached in the temporary directory, so repeated test runs
/// skip the two module builds.
enum StubHARMocking {
    static let directory: Result<URL, Error> = Result { try build() }

    private static func build() throws -> URL {
        let fm = FileManager.default
        func swiftFiles(_ dir: URL) throws -> [URL] {
            try fm.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
                .map { dir.appendingPathComponent($0) }
        }
        let encodingFiles = try swiftFiles(TestPaths.textEncodingsSources)
        let harFiles = try swiftFiles(TestPaths.harSources)
        let mockingFiles = try swiftFiles(TestPaths.mockingSources)
        let scenarioFiles = try swiftFiles(TestPaths.scenariosSources)
        var hasher = FNV1a()
        for file in encodingFiles + harFiles + scenarioFiles + mockingFiles { hasher.add(try TestIO.read(file)) }
        let final = fm.temporaryDirectory.appendingPathComponent("harrec-gen-mocking-\(hasher.hex)")
        let done = final.appendingPathComponent("READY")
        if fm.fileExists(atPath: done.path) { return final }

        // Built beside the final directory and renamed into place, so concurrent test runs never
        // see a half-built module.
        let dir = fm.temporaryDirectory.appendingPathComponent("harrec-gen-mocking-\(hasher.hex).\(getpid()).tmp")
        try? fm.removeItem(at: dir)
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        // HARMocking reads HARs (HARScenarioBuilder, HARReplayProtocol), so it needs the HAR module,
        // and HAR its base64.
        let encodings = try Command.run(["swiftc", "-emit-module", "-module-name", "TextEncodings", "-parse-as-library",
                                         "-package-name", "harrec",
                                         "-emit-module-path", dir.appendingPathComponent("TextEncodings.swiftmodule").path]
                                        + encodingFiles.map(\.path), in: dir)
        guard encodings.status == 0 else { throw StubError.build("TextEncodings", encodings.output) }
        let har = try Command.run(["swiftc", "-emit-module", "-module-name", "HAR", "-parse-as-library", "-package-name", "harrec",
                                   "-I", dir.path,
                                   "-emit-module-path", dir.appendingPathComponent("HAR.swiftmodule").path]
                                  + harFiles.map(\.path), in: dir)
        guard har.status == 0 else { throw StubError.build("HAR", har.output) }
        let scenarios = try Command.run(["swiftc", "-emit-module", "-module-name", "HARScenarios", "-parse-as-library",
                                         "-package-name", "harrec", "-swift-version", "5", "-I", dir.path,
                                         "-emit-module-path", dir.appendingPathComponent("HARScenarios.swiftmodule").path]
                                        + scenarioFiles.map(\.path), in: dir)
        guard scenarios.status == 0 else { throw StubError.build("HARScenarios", scenarios.output) }
        let mocking = try Command.run(["swiftc", "-emit-module", "-module-name", "HARMocking", "-parse-as-library",
                                       "-package-name", "harrec", "-swift-version", "5", "-I", dir.path,
                                       "-emit-module-path", dir.appendingPathComponent("HARMocking.swiftmodule").path]
                                      + mockingFiles.map(\.path), in: dir)
        guard mocking.status == 0 else { throw StubError.build("HARMocking", mocking.output) }
        try Data().write(to: dir.appendingPathComponent("READY"))
        if !fm.fileExists(atPath: done.path) { try? fm.removeItem(at: final) }  // a stale half-built one
        if rename(dir.path, final.path) != 0 { try? fm.removeItem(at: dir) }
        return final
    }

    enum StubError: Error, CustomStringConvertible {
        case build(String, String)
        var description: String {
            switch self {
            case .build(let module, let output): return "building the stub \(module) module failed:\n\(output)"
            }
        }
    }

    /// Type-checks the Swift files among `files` against the stub module; returns compiler output
    /// on failure, nil on success.
    static func typecheck(_ files: [GeneratedFile], label: String) throws -> String? {
        let module = try directory.get()
        let dir = try TestIO.temporaryDirectory("typecheck-\(label)")
        defer { try? FileManager.default.removeItem(at: dir) }
        var paths: [String] = []
        for file in files where file.role != .fixture {
            let url = dir.appendingPathComponent(file.relativePath)
            try Data(file.bytes).write(to: url)
            paths.append(url.path)
        }
        let result = try Command.run(["swiftc", "-typecheck", "-I", module.path] + paths, in: dir)
        return result.status == 0 ? nil : result.output
    }
}

/// A small stable hash for cache keys.
struct FNV1a {
    private var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func add(_ bytes: [UInt8]) {
        for b in bytes {
            value ^= UInt64(b)
            value = value &* 0x100_0000_01b3
        }
    }
    var hex: String { String(value, radix: 16) }
}

/// A line diff of two texts for failure messages: the first differing region with context.
func readableDiff(expected: [UInt8], actual: [UInt8], name: String) -> String {
    let e = String(decoding: expected, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    let a = String(decoding: actual, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    var first = 0
    while first < min(e.count, a.count) && e[first] == a[first] { first += 1 }
    var lastE = e.count - 1
    var lastA = a.count - 1
    while lastE >= first && lastA >= first && e[lastE] == a[lastA] { lastE -= 1; lastA -= 1 }
    var out = "--- \(name) (expected)\n+++ \(name) (generated)\n@@ line \(first + 1) @@\n"
    let context = 3
    for i in max(0, first - context)..<first { out += "  \(e[i])\n" }
    let maxLines = 40
    if lastE >= first { for i in first...min(lastE, first + maxLines) { out += "- \(e[i])\n" } }
    if lastA >= first { for i in first...min(lastA, first + maxLines) { out += "+ \(a[i])\n" } }
    if lastE + 1 < e.count { for i in (lastE + 1)..<min(e.count, lastE + 1 + context) { out += "  \(e[i])\n" } }
    if expected.count != actual.count || out.isEmpty {
        out += "(\(expected.count) bytes expected, \(actual.count) generated)\n"
    }
    return out
}
