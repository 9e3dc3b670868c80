import CLI
import Glibc
import HAR
import ProxyCore
import ProxyRuntime
import Recording

/// The version printed by `--version` and written as the HAR creator version.
let harrecVersion = "0.1.0"

let recordSpec = CommandSpec(
    name: "record",
    abstract: "Run the recording proxy (HTTP and SOCKS5) and write a HAR on exit.",
    usage: "harrec [record] --out <file.har> [--http <port>] [--socks <port>] [options]",
    options: [
        OptionSpec("out", short: "o", .value(placeholder: "<file.har>"), help: "Where to write the HAR on exit (required)."),
        OptionSpec("http", .value(placeholder: "<port>"), help: "HTTP proxy port (0 picks one). Default 8888 when no port is given."),
        OptionSpec("socks", .value(placeholder: "<port>"), help: "SOCKS5 proxy port (0 picks one). Default 8889 when no port is given."),
        OptionSpec("listen", .value(placeholder: "<addr>"), help: "Address to listen on (default 127.0.0.1)."),
        OptionSpec("max-body", .value(placeholder: "<bytes>"), help: "Recording cap per body, e.g. 64m (default 64 MiB). Proxied bodies are never cut."),
        OptionSpec("proxy-auth", .value(placeholder: "<user:pass>"), help: "Require these credentials (HTTP Basic Proxy-Authorization, SOCKS5 method 02)."),
        OptionSpec("upstream-timeout", .value(placeholder: "<seconds>"), help: "Upstream silence before a 504 or a cut (default 120)."),
        OptionSpec("connect-timeout", .value(placeholder: "<seconds>"), help: "Upstream DNS + connect limit before a 504 (default 15)."),
        OptionSpec("quiet", short: "q", .flag, help: "No live line per exchange."),
    ],
    discussion: """
    Both ports serve both protocols: a first byte of 0x05 is SOCKS5, anything else HTTP.
    Ctrl-C stops accepting, lets exchanges in flight finish for up to 2 s, writes the HAR
    atomically and exits. A second Ctrl-C stops at once, after writing what was recorded.
    """)

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

let subcommands = [recordSpec, validateSpec, helpSpec]

func printErr(_ text: String) {
    var line = text
    if !line.hasSuffix("\n") { line += "\n" }
    line.withCString { _ = fputs($0, stderr) }
}

func fail(_ message: String, code: Int32 = 2) -> Never {
    printErr("harrec: error: \(message)")
    exit(code)
}

func runRecord(_ arguments: [String]) -> Int32 {
    let parsed: ParsedArguments
    do {
        parsed = try recordSpec.parse(arguments)
    } catch {
        fail(error.message)
    }
    if parsed.flag("help") {
        print(recordSpec.helpText(), terminator: "")
        return 0
    }
    if parsed.flag("version") {
        print(harrecVersion)
        return 0
    }
    guard let out = parsed.value("out") else {
        fail("--out <file.har> is required: where should the HAR be written? e.g. harrec --out session.har")
    }
    var configuration = ProxyConfiguration()
    do {
        if let maxBody = parsed.value("max-body") {
            configuration.maxRecordedBodyBytes = try parseByteCount(maxBody, option: "max-body")
        }
        if let text = parsed.value("upstream-timeout") {
            configuration.timeouts.upstreamResponse = try parseSeconds(text, option: "upstream-timeout")
        }
        if let text = parsed.value("connect-timeout") {
            configuration.timeouts.upstreamConnect = try parseSeconds(text, option: "connect-timeout")
        }
        if let auth = parsed.value("proxy-auth") {
            guard let colon = auth.firstIndex(of: ":"), colon != auth.startIndex else {
                throw UsageError("--proxy-auth needs user:pass")
            }
            configuration.credentials = ProxyCredentials(username: String(auth[..<colon]),
                                                         password: String(auth[auth.index(after: colon)...]))
        }
        var httpPort = try parsed.value("http").map { try parsePort($0, option: "http") }
        var socksPort = try parsed.value("socks").map { try parsePort($0, option: "socks") }
        if httpPort == nil && socksPort == nil {
            httpPort = 8888
            socksPort = 8889
        }
        let address = parsed.value("listen") ?? "127.0.0.1"

        let flows = FlowLog()
        let log = LogOutput(quiet: parsed.flag("quiet"))
        let server = try ProxyServer(configuration: configuration, sink: flows, log: log)
        // Signal handling is in place before the listening lines are printed: a script that
        // sends SIGINT as soon as it sees them must get a clean shutdown.
        try server.handleShutdownSignals()
        do {
            if let httpPort {
                let port = try server.listen(label: "HTTP", address: address, port: httpPort)
                printErr("harrec: HTTP proxy listening on \(displayAddress(address)):\(port)")
            }
            if let socksPort {
                let port = try server.listen(label: "SOCKS5", address: address, port: socksPort)
                printErr("harrec: SOCKS5 proxy listening on \(displayAddress(address)):\(port)")
            }
        } catch {
            fail("cannot listen: \(error) (is another proxy running on that port? pick one with --http/--socks)", code: 1)
        }
        if address != "127.0.0.1" && address != "::1" {
            printErr("harrec: warning: listening on \(address): anyone who can reach it can use this proxy" +
                     (configuration.credentials == nil ? " (consider --proxy-auth)" : ""))
        }
        printErr("harrec: recording to \(out) (Ctrl-C to stop)")

        server.run()
        log.flush()

        let recorded = flows.snapshot()
        let started = wallClock()
        do {
            try HARExport.write(recorded, to: out, creatorVersion: harrecVersion)
        } catch {
            fail("\(error)", code: 1)
        }
        let elapsed = wallClock() - started
        let failures = recorded.filter { $0.error != nil }.count
        printErr("harrec: wrote \(recorded.count) entries to \(out)")
        printErr("harrec: HAR written in \(Int((elapsed * 1000).rounded())) ms" +
                 (failures > 0 ? "; \(failures) \(failures == 1 ? "exchange" : "exchanges") failed (see _error)" : ""))
        return 0
    } catch let error as UsageError {
        fail(error.message)
    } catch {
        fail("\(error)", code: 1)
    }
}

func displayAddress(_ address: String) -> String {
    address.contains(":") ? "[\(address)]" : address
}

func runValidate(_ arguments: [String]) -> Int32 {
    let parsed: ParsedArguments
    do {
        parsed = try validateSpec.parse(arguments)
    } catch {
        fail(error.message)
    }
    if parsed.flag("help") {
        print(validateSpec.helpText(), terminator: "")
        return 0
    }
    let path = parsed.positionals[0]
    let bytes: [UInt8]
    do {
        bytes = try readFile(path)
    } catch {
        fail("\(error)", code: 1)
    }
    let problems = HARValidator.validate(bytes: bytes)
    if problems.isEmpty {
        let count = (try? JSONParser.parse(bytes))?["log"]?["entries"]?.arrayValue?.count ?? 0
        print("\(path): valid HAR 1.2 (\(count) entries)")
        return 0
    }
    for problem in problems {
        print(sanitizedForLog("\(problem.path): \(problem.message)"))
    }
    printErr("harrec: \(path): \(problems.count) problem\(problems.count == 1 ? "" : "s")")
    return 1
}

let arguments = Array(CommandLine.arguments.dropFirst())
let first = arguments.first
switch first {
case "record":
    exit(runRecord(Array(arguments.dropFirst())))
case "validate":
    exit(runValidate(Array(arguments.dropFirst())))
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
