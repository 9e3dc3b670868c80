import Foundation
import TestSupport
import XCTest

/// The result of running a command.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var output: String { stdout + stderr }
}

/// Runs a program to completion (resolved through PATH when `program` has no slash), feeding
/// `input` on stdin.
@discardableResult
func runCommand(_ program: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil) throws -> CommandResult {
    let process = Process()
    if program.contains("/") {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
    }
    if let environment { process.environment = environment }
    let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let outBox = DataBox(), errBox = DataBox()
    let group = DispatchGroup()
    for (pipe, box) in [(stdout, outBox), (stderr, errBox)] {
        group.enter()
        DispatchQueue.global().async {
            box.data = pipe.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
    }
    if !input.isEmpty { stdin.fileHandleForWriting.write(Data(input)) }
    try? stdin.fileHandleForWriting.close()
    process.waitUntilExit()
    group.wait()
    return CommandResult(status: process.terminationStatus,
                         stdout: String(decoding: outBox.data, as: UTF8.self),
                         stderr: String(decoding: errBox.data, as: UTF8.self))
}

final class DataBox: @unchecked Sendable { var data = Data() }

/// A fresh temporary directory, removed at the end of the test.
func makeTemporaryDirectory(_ test: XCTestCase) throws -> String {
    let path = NSTemporaryDirectory() + "harrec-tls-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

func writeText(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}

func fileMode(_ path: String) -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode & 0o777)
}

/// Parses `notBefore=Nov  3 06:44:18 2026 GMT` style dates from `openssl x509 -dates`.
func opensslDate(_ line: String) -> Date? {
    guard let equals = line.firstIndex(of: "=") else { return nil }
    let text = line[line.index(after: equals)...].split(separator: " ").joined(separator: " ")
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "MMM d HH:mm:ss yyyy zzz"
    return formatter.date(from: text)
}

let packageRoot = PackagePaths.root.path

/// Python 3.13 from pyenv (its ssl module verifies with VERIFY_X509_STRICT), or nil.
let python313: String? = {
    let candidates = [ProcessInfo.processInfo.environment["PYENV_ROOT"].map { $0 + "/versions/3.13.0/bin/python3" },
                      NSHomeDirectory() + "/.pyenv/versions/3.13.0/bin/python3"].compactMap { $0 }
    if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
    if let root = try? runCommand("pyenv", ["root"]), root.status == 0 {
        let path = root.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/versions/3.13.0/bin/python3"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}()
