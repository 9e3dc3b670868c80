import CSystemShims
import CLI
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import ProxyCore
import ProxyRuntime
import Recording
import Redaction
import TLS

/// The version printed by `--version` and written as the HAR creator version.
let harrecVersion = "0.9.2"

let validateSpec = CommandSpec(
    name: "validate",
    abstract: "Check a HAR file against HAR 1.2 and print every problem with its JSON path.",
    usage: "harrec validate <file.har>",
    options: [],
    positionals: ["file.har"])

let helpSpec = CommandSpec(name: "help", abstract: "Show help for a subcommand.", usage: "harrec help [<subcommand>]",
                           options: [], positionals: [], variadicPositionals: true)

let mainSpec = CommandSpec(
    name: "harrec",
    abstract: "Record real HTTP traffic through a local proxy into strict HAR 1.2 fixtures.",
    usage: "harrec <subcommand> [options]   (no subcommand means 'record')",
    options: recordSpec.options)

let subcommands = [recordSpec, markSpec, replaySpec, redactSpec, recoverSpec, generateSpec, caSpec, validateSpec, helpSpec]

func printErr(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    writeAll(Array(line.utf8), to: STDERR_FILENO)
}

/// Writes every byte to `fd` (a standard stream), through short writes and interruptions.
func writeAll(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
    }
}

func fail(_ message: String, code: Int32 = 2) -> Never {
    printErr("harrec: error: \(message)")
    exit(code)
}

/// Before `path` is mapped: a bus error (the file truncated while it is read: its pages past the
/// new end are gone) ends the process with this error, exit status 1 and no partial output,
/// instead of a crash.
func failOnTruncation(of path: String) {
    harrec_on_bus_error("harrec: error: \(sanitizedForLog(path)) changed while harrec read it (truncated or rewritten in place); nothing written\n")
}

/// Parses a subcommand's arguments; usage errors exit 2, and --help / --version print and exit 0.
func parseOrExit(_ spec: CommandSpec, _ arguments: [String]) -> ParsedArguments {
    let parsed: ParsedArguments
    do {
        parsed = try spec.parse(arguments)
    } catch {
        fail(error.message)
    }
    if parsed.flag("help") {
        print(spec.helpText(), terminator: "")
        exit(0)
    }
    if parsed.flag("version") {
        print(harrecVersion)
        exit(0)
    }
    return parsed
}

func runValidate(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(validateSpec, arguments)
    let path = parsed.positionals[0]
    let (problems, count) = validate(path)
    if problems.isEmpty {
        print("\(path): valid HAR 1.2 (\(count) entries)")
        return 0
    }
    for problem in problems {
        print(sanitizedForLog("\(problem.path): \(problem.message)"))
    }
    printErr("harrec: \(path): \(problems.count) problem\(problems.count == 1 ? "" : "s")")
    return 1
}

/// The problems of the HAR at `path` and its entry count: read an entry at a time from the file
/// (memory follows the largest entry, and a file larger than the address space left is read in
/// windows), or from its bytes when it is no regular file or has an unusual shape.
func validate(_ path: String) -> (problems: [HARProblem], entryCount: Int) {
    do {
        failOnTruncation(of: path)
        if let result = try HARValidator.validateCountingEntries(reading: { () throws(HARReadError) in try HARLazyDocument(mappingFile: path) }) {
            return result
        }
    } catch {
        fail("\(path): \(error)", code: 1)
    }
    do {
        return HARValidator.validateCountingEntries(bytes: try readFile(path))
    } catch {
        fail("\(error)", code: 1)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let first = arguments.first
switch first {
case "record":
    exit(runRecord(Array(arguments.dropFirst())))
case "validate":
    exit(runValidate(Array(arguments.dropFirst())))
case "mark":
    exit(runMark(Array(arguments.dropFirst())))
case "replay":
    exit(runReplay(Array(arguments.dropFirst())))
case "redact":
    exit(runRedact(Array(arguments.dropFirst())))
case "recover":
    exit(runRecover(Array(arguments.dropFirst())))
case "generate":
    exit(runGenerate(Array(arguments.dropFirst())))
case "ca":
    exit(runCA(Array(arguments.dropFirst())))
case "help":
    if let name = arguments.dropFirst().first, let spec = subcommands.first(where: { $0.name == name }) {
        print(spec.helpText(), terminator: "")
    } else {
        print(mainSpec.helpText(subcommands: subcommands), terminator: "")
    }
    exit(0)
case "--help", "-h":
    print(mainSpec.helpText(subcommands: subcommands), terminator: "")
    exit(0)
case "--version":
    print(harrecVersion)
    exit(0)
case let word? where !word.hasPrefix("-"):
    let names = subcommands.map(\.name)
    fail("unknown subcommand '\(word)'; choose one of: \(names.joined(separator: ", ")) (see 'harrec --help')")
default:
    exit(runRecord(arguments))
}
