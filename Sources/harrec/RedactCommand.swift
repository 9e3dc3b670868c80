import CSystemShims
import CLI
import Export
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import Recording
import Redaction
import Synchronization
import Dispatch
import ProxyRuntime

let rulesOption = OptionSpec("rules", .value(placeholder: "<rules.json>"),
                             help: "Rules file: disable rules, add headers, parameters, JSON keys, patterns, suffixes, allowed values.")
let internalSuffixOption = OptionSpec("internal-suffix", .value(placeholder: "<suffix>"),
                                      help: "Another internal hostname suffix, e.g. .mycorp.net (repeatable).")

let redactSpec = CommandSpec(
    name: "redact",
    abstract: "Redact credentials and personal data from any HAR, or check that none are left.",
    usage: "harrec redact <in.har> --out <out.har> [--rules <file>]  |  harrec redact --check <file.har>... [--rules <file>]",
    options: [
        OptionSpec("out", short: "o", .value(placeholder: "<out.har>"), help: "Where to write the redacted HAR (written atomically)."),
        OptionSpec("check", .flag, help: "Change nothing: list each finding (JSON path, rule, masked preview) and each suspect value left; exit 1 if any."),
        rulesOption,
        internalSuffixOption,
        OptionSpec("quiet", short: "q", .flag, help: "No summary."),
    ],
    positionals: ["file.har"],
    variadicPositionals: true,
    discussion: """
    Two passes: every value to replace is found first, then replaced wherever it stands in the
    file (earlier entries, bare path segments, innocent keys, percent-encoded, base64).
    Rules (each can be switched off with "disable" in a rules file):
      \(RedactionRule.builtIn.map(\.name).joined(separator: ", "))
    The same value gets the same placeholder throughout a file (redacted-N, userN@example.com,
    person-N, +12015550100, internal-N.example.invalid, 192.0.2.N), numbered in file order.
    Placeholder JWTs keep a JWT's shape on purpose; to exclude them from secret scanners:
      detect-secrets scan --exclude-secrets 'eyJ[A-Za-z0-9_-]*\\.eyJzdWIiOiJyZWRhY3RlZC0' ...
      gitleaks (.gitleaks.toml): [allowlist] regexes = ['''eyJ[A-Za-z0-9_-]*\\.eyJzdWIiOiJyZWRhY3RlZC0''']
    Every rule and what it keeps: docs/reference/rules.md.
    """)

/// The redaction configuration from `--rules`/`--redact-rules` and `--internal-suffix`; exits
/// with the file's line and field when the rules file is bad (before anything is written).
func loadRedactionConfiguration(rulesPath: String?, suffixes: [String]) -> RedactionConfiguration {
    var configuration = RedactionConfiguration()
    if let rulesPath {
        let bytes: [UInt8]
        do {
            bytes = try readFile(rulesPath)
        } catch {
            fail("cannot read rules file: \(error)", code: 2)
        }
        do {
            try configuration.apply(rulesFile: bytes)
        } catch {
            fail("\(rulesPath): \(error)", code: 2)
        }
    }
    for suffix in suffixes {
        let lower = suffix.lowercased()
        guard lower.count >= 2 else { fail("--internal-suffix needs a suffix like .corp") }
        configuration.internalSuffixes.append(lower.hasPrefix(".") ? lower : "." + lower)
    }
    return configuration
}

func runRedact(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(redactSpec, arguments)
    let check = parsed.flag("check")
    let output = parsed.value("out")
    guard let input = parsed.positionals.first else {
        fail("which HAR? harrec redact <in.har> --out <out.har>, or harrec redact --check <file.har>...")
    }
    if !check && output == nil {
        fail("--out <out.har> is required (or --check to only look): harrec redact \(input) --out redacted.har")
    }
    if check && output != nil {
        fail("--check changes nothing and writes nothing; drop --out, or drop --check to write a redacted copy")
    }
    if !check && parsed.positionals.count > 1 {
        fail("redact writes one file at a time; --check takes several")
    }
    let configuration = loadRedactionConfiguration(rulesPath: parsed.value("rules"),
                                                   suffixes: parsed.allValues("internal-suffix"))
    if check {
        var total = 0
        var suspects = 0
        for path in parsed.positionals {
            let document = loadDocument(path)
            let report = try! redactDocument(document, configuration: configuration, collectFindings: true, path: path, sink: nil)
            for finding in report.findings {
                print(sanitizedForLog("\(path): \(finding.path)  \(finding.rule.name)  \(finding.preview)"))
            }
            if report.findings.isEmpty {
                print(sanitizedForLog("\(path): no secrets found (\(report.entries) entries)"))
            }
            total += report.findings.count
            suspects += report.findings.filter(\.isSuspect).count
        }
        if total == 0 { return 0 }
        let ruleFindings = total - suspects
        var parts: [String] = []
        if ruleFindings > 0 { parts.append("\(ruleFindings) finding\(ruleFindings == 1 ? "" : "s")") }
        if suspects > 0 { parts.append("\(suspects) suspect value\(suspects == 1 ? "" : "s") no rule replaced (a rule switched off or allowed?)") }
        printErr("harrec: \(parts.joined(separator: ", ")); redact with: harrec redact <file.har> --out <out.har>")
        return 1
    }
    let out = output!
    // Freed body buffers are reused instead of being returned to the kernel and faulted in again
    // (a 100 MB HAR otherwise costs ~90k page faults); the process exits right after.
    harrec_retain_freed_memory()
    let loadStart = wallClock()
    let document = loadDocument(input)
    if getenv("HARREC_TRACE") != nil {
        printErr("harrec: trace: load \(Int((wallClock() - loadStart) * 1000)) ms")
    }
    let report: RedactionReport
    let tracePhases = getenv("HARREC_TRACE") != nil
    defer { if tracePhases { printErr("harrec: trace: returned \(Int((wallClock() - loadStart) * 1000)) ms after load start") } }
    do {
        let file = try AtomicFileWriter(path: out)
        do {
            report = try redactDocument(document, configuration: configuration, collectFindings: false, path: input,
                                        spillDirectory: parentDirectory(of: out)) {
                try file.write($0)
            }
            if tracePhases { printErr("harrec: trace: written \(Int((wallClock() - loadStart) * 1000)) ms after load start") }
            try file.commit()
            if tracePhases { printErr("harrec: trace: committed \(Int((wallClock() - loadStart) * 1000)) ms after load start") }
        } catch {
            file.abort()
            throw error
        }
    } catch {
        fail("\(out): \(error)", code: 1)
    }
    if !parsed.flag("quiet") {
        printErr(redactionSummary(report, written: out))
    }
    return 0
}

/// User and system CPU time of the whole process, for HARREC_TRACE's phase lines.
func processCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
}

func loadDocument(_ path: String) -> HARLazyDocument {
    do {
        failOnTruncation(of: path)
        if let mapped = try HARLazyDocument(mappingFile: path) { return mapped }
        return try HARLazyDocument(try readFile(path))
    } catch {
        fail("\(path): \(error)", code: 1)
    }
}

/// Both passes of redaction over `document`, on every core, through the export pipeline
/// (`EntryExport`): pass 1 parses and collects every entry and keeps them up to a byte budget
/// (the next ones spill to a private file beside the output, the rest are parsed from the mapped
/// file again), the values are numbered, then pass 2 finalizes entries while they are serialized
/// to `sink` (nil for `--check`, which only needs the report).
func redactDocument(_ document: HARLazyDocument, configuration: RedactionConfiguration, collectFindings: Bool,
                    path: String, spillDirectory: String = ".", sink: (@Sendable ([UInt8]) throws -> Void)?) throws -> RedactionReport {
    var t0 = wallClock(), cpu0 = processCPUSeconds()
    /// HARREC_TRACE=1: each phase's wall and CPU time.
    func phase(_ name: String) {
        let now = wallClock(), cpu = processCPUSeconds()
        printErr("harrec: trace: \(name) \(Int((now - t0) * 1000)) ms (CPU \(Int((cpu - cpu0) * 1000)) ms)")
        t0 = now
        cpu0 = cpu
    }
    let file = FileRedaction(config: configuration, entryCount: document.entryCount, collectFindings: collectFindings)
    do {
        try EntryExport.run(DocumentEntries(document: document), head: document.head, transform: file,
                            spillDirectory: spillDirectory, phaseEnded: getenv("HARREC_TRACE") != nil ? phase : nil, to: sink)
    } catch let error as HARReadError {
        fail("\(path): \(error) (nothing written)", code: 1)
    }
    let report = file.report
    // The interned values (hundreds of thousands of strings) are not freed one by one: the
    // command ends right after (about 4% of a 100 MB redaction's wall time).
    _ = Unmanaged.passRetained(file)
    return report
}

/// The table printed after a redaction: replacements per rule and location.
func redactionSummary(_ report: RedactionReport, written path: String) -> String {
    var lines = ["harrec: redacted \(report.total) value\(report.total == 1 ? "" : "s") in \(report.entries) entries -> \(path)"]
    let locations = RedactionLocation.allCases
    if report.total > 0 {
        let nameWidth = max(6, report.counts.keys.map(\.name.count).max() ?? 0)
        func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
            let fill = String(repeating: " ", count: max(0, n - s.count))
            return left ? s + fill : fill + s
        }
        lines.append("  " + pad("rule", nameWidth, left: true) + locations.map { pad($0.rawValue, 10) }.joined() + pad("total", 8))
        for rule in report.counts.keys.sorted(by: { a, b in
            let ia = RedactionRule.builtIn.firstIndex(of: a) ?? Int.max, ib = RedactionRule.builtIn.firstIndex(of: b) ?? Int.max
            return ia != ib ? ia < ib : a.name < b.name
        }) {
            let counts = report.counts[rule]!
            let row = locations.map { pad(counts[$0].map(String.init) ?? "-", 10) }.joined()
            lines.append("  " + pad(rule.name, nameWidth, left: true) + row + pad(String(counts.values.reduce(0, +)), 8))
        }
    }
    if report.binaryBodies > 0 {
        lines.append("harrec: \(report.binaryBodies) binary bod\(report.binaryBodies == 1 ? "y" : "ies") or message\(report.binaryBodies == 1 ? "" : "s") left as they are (not text)")
    }
    return lines.joined(separator: "\n")
}
