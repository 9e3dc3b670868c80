import CLI
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Files
import HAR
import HARGenerator
import Recording
import Redaction

let generateSpec = CommandSpec(
    name: "generate",
    abstract: "Turn a HAR into Swift mock scenarios, WebSocket triggers and JSON fixtures for HARMocking.",
    usage: "harrec generate <session.har> --scenario <name> [--out <dir>] [--fixtures <dir>] [--hosts <regex>] [--inline-limit <bytes>] [--latency recorded|none] [--keep-header <name>]",
    options: [
        OptionSpec("scenario", .value(placeholder: "<name>"), help: "Scenario name, e.g. sendingAttachments (required unless --scenario-per-page); types are <Name>HTTPScenario, <Name>WebSocketEvents; fixtures go to <fixtures>/<name>/."),
        OptionSpec("page", .value(placeholder: "<title>"), help: "Only the exchanges of this HAR page (its title, or its id): one scenario marked with `harrec mark`, or one Chrome navigation; the scenario is named after it unless --scenario is given."),
        OptionSpec("scenario-per-page", .flag, help: "One scenario per HAR page, named after its title in lowerCamelCase (\"log in\" -> logIn)."),
        OptionSpec("out", short: "o", .value(placeholder: "<dir>"), help: "Where the Swift files go (default: the current directory)."),
        OptionSpec("fixtures", .value(placeholder: "<dir>"), help: "Where fixture files go (default Fixtures/API/v1), in a directory per scenario named after it."),
        OptionSpec("hosts", .value(placeholder: "<regex>"), help: "Only exchanges whose host matches (case-insensitive)."),
        OptionSpec("inline-limit", .value(placeholder: "<bytes>"), help: "Bodies up to this size are inline string literals (default 4096); JSON always goes to fixtures."),
        OptionSpec("latency", .value(placeholder: "recorded|none"), help: "recorded: each response waits its recorded wait + receive time (`delay:`); none (default): answers at once."),
        OptionSpec("keep-header", .value(placeholder: "<name>"), help: "Keep this response header although it changes on every recording (Date, Server, ETag, X-Request-Id, ...); repeatable."),
        OptionSpec("allow-unredacted", .flag, help: "Generate even when `harrec redact --check` finds secrets in the HAR."),
        rulesOption,
    ],
    positionals: ["session.har"],
    discussion: """
    The HAR is checked with the redaction rules first (as `harrec redact --check`): a HAR with
    tokens, cookies or emails left is refused unless --allow-unredacted is given, because
    generated fixtures end up committed. Run `harrec redact` on it first.
    Output is deterministic: the same HAR gives byte-identical files; unchanged files are not
    rewritten.
    """)

func runGenerate(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(generateSpec, arguments)
    let input = parsed.positionals[0]
    let perPage = parsed.flag("scenario-per-page")
    if perPage && (parsed.value("scenario") != nil || parsed.value("page") != nil) {
        fail("--scenario-per-page names each scenario after its page; leave out --scenario and --page")
    }
    // --page alone names the scenario after the page, as --scenario-per-page does.
    let scenario = parsed.value("scenario") ?? parsed.value("page").map { HARPages.scenarioName($0, fallback: "page") } ?? ""
    guard perPage || !scenario.isEmpty else {
        fail("--scenario <name> is required, e.g. harrec generate \(input) --scenario login (or --scenario-per-page)")
    }
    var options = GeneratorOptions(scenarioName: scenario,
                                   inlineLimit: GeneratorOptions.defaultInlineLimit,
                                   sourceName: URL(fileURLWithPath: input).lastPathComponent)
    do {
        if let limit = parsed.value("inline-limit") {
            options.inlineLimit = try parseByteCount(limit, option: "inline-limit")
        }
        switch parsed.value("latency") {
        case nil, "none": options.scenario.latency = .none
        case "recorded": options.scenario.latency = .recorded
        case let other?: throw UsageError("--latency: expected recorded or none, got '\(sanitizedForLog(other))'")
        }
        for name in parsed.allValues("keep-header") {
            options.scenario.droppedResponseHeaders.remove(name.lowercased())
        }
        if let hosts = parsed.value("hosts") {
            do {
                options.scenario.includeHost = try GeneratorOptions.hostFilter(pattern: hosts)
            } catch {
                throw UsageError("--hosts: not a valid regular expression: \(error)")
            }
        }
    } catch let error as UsageError {
        fail(error.message)
    } catch {
        fail("\(error)")
    }
    let configuration = loadRedactionConfiguration(rulesPath: parsed.value("rules"), suffixes: [])
    var log: HARLog
    do {
        log = try HARLog.parse(try readFile(input))
    } catch {
        fail("\(input): \(error)", code: 1)
    }

    // The redaction gate: fixtures are committed, so secrets must not reach them.
    var checked = log
    let report = RedactionEngine(config: configuration, collectFindings: true).redact(&checked)
    if !report.findings.isEmpty {
        let shown = report.findings.prefix(10)
        for finding in shown {
            printErr(sanitizedForLog("harrec: \(input): \(finding.path)  \(finding.rule.name)  \(finding.preview)"))
        }
        if report.findings.count > shown.count {
            printErr("harrec: ... and \(report.findings.count - shown.count) more")
        }
        if !parsed.flag("allow-unredacted") {
            printErr("harrec: \(input) is not redacted (\(report.findings.count) finding\(report.findings.count == 1 ? "" : "s")); "
                     + "run: harrec redact \(input) --out redacted.har, then generate from redacted.har "
                     + "(or pass --allow-unredacted)")
            return 1
        }
        printErr("harrec: warning: generating from an unredacted HAR (--allow-unredacted): do not commit the output")
    }

    let outDirectory = URL(fileURLWithPath: parsed.value("out") ?? ".")
    let fixturesDirectory = URL(fileURLWithPath: parsed.value("fixtures") ?? GeneratorOptions.defaultFixturesDirectory)
    var jobs: [(options: GeneratorOptions, log: HARLog)] = []
    do {
        if perPage {
            let scenarios = HARPages.scenarios(log)
            guard !scenarios.isEmpty else { throw HARPages.PageError(description: "the HAR has no pages (record with `harrec mark NAME` between scenarios)") }
            for page in scenarios {
                var pageOptions = options
                pageOptions.scenarioName = page.name
                jobs.append((pageOptions, page.log))
                printErr(sanitizedForLog("harrec: page \"\(page.title)\" -> scenario \(page.name) (\(page.log.entries.count) exchange\(page.log.entries.count == 1 ? "" : "s"))"))
            }
        } else if let page = parsed.value("page") {
            jobs = [(options, try HARPages.select(log, page: page))]
        } else {
            jobs = [(options, log)]
        }
    } catch {
        fail(sanitizedForLog("\(input): \(error)"), code: 1)
    }
    for (options, log) in jobs {
        generate(log, options: options, outDirectory: outDirectory, fixturesDirectory: fixturesDirectory)
    }
    return 0
}

/// Writes one scenario's files and reports what changed.
private func generate(_ log: HARLog, options: GeneratorOptions, outDirectory: URL, fixturesDirectory: URL) {
    do {
        let files = try SwiftMockGenerator.generate(log, options: options)
        let written = Set(try files.write(to: outDirectory, fixturesDirectory: fixturesDirectory).map(\.path))
        let swiftFiles = files.filter { $0.role != .fixture }
        let fixtures = files.count - swiftFiles.count
        for file in swiftFiles {
            let path = outDirectory.appendingPathComponent(file.relativePath).path
            printErr("harrec: \(written.contains(path) ? "wrote" : "unchanged") \(path)")
        }
        let fixturesWritten = files.filter { $0.role == .fixture
            && written.contains(fixturesDirectory.appendingPathComponent($0.relativePath).path) }.count
        let scenarioFixtures = fixturesDirectory.appendingPathComponent(options.fixtureDirectoryName)
        printErr("harrec: \(fixtures) fixture file\(fixtures == 1 ? "" : "s") in \(scenarioFixtures.path)"
                 + (fixtures > 0 ? " (\(fixturesWritten) written, \(fixtures - fixturesWritten) unchanged)" : ""))
    } catch {
        fail("\(error)", code: 1)
    }
}
