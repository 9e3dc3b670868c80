import CHarrecShims
import CLI
import Glibc
import HAR
import Recording
import Redaction
import Synchronization

let rulesOption = OptionSpec("rules", .value(placeholder: "<rules.json>"),
                             help: "Rules file: disable rules, add headers, parameters, JSON keys, patterns, suffixes, allowed values.")
let internalSuffixOption = OptionSpec("internal-suffix", .value(placeholder: "<suffix>"),
                                      help: "Another internal hostname suffix, e.g. .mycorp.net (repeatable).")

let redactSpec = CommandSpec(
    name: "redact",
    abstract: "Redact tokens, cookies, JWTs, emails and internal hosts from any HAR, or check that none are left.",
    usage: "harrec redact <in.har> --out <out.har> [--rules <file>]  |  harrec redact --check <file.har>... [--rules <file>]",
    options: [
        OptionSpec("out", short: "o", .value(placeholder: "<out.har>"), help: "Where to write the redacted HAR (written atomically)."),
        OptionSpec("check", .flag, help: "Change nothing: list each finding (JSON path, rule, masked preview); exit 1 if any."),
        rulesOption,
        internalSuffixOption,
        OptionSpec("quiet", short: "q", .flag, help: "No summary."),
    ],
    positionals: ["file.har"],
    variadicPositionals: true,
    discussion: """
    Rules (each can be switched off with "disable" in a rules file):
      \(RedactionRule.builtIn.map(\.name).joined(separator: ", "))
    The same secret gets the same placeholder throughout a file (redacted-N, userN@example.com,
    internal-N.example.invalid, 192.0.2.N), so values that correlate still do. See README "Redaction".
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
    func load(_ path: String) -> HARLog {
        do {
            return try HARLog.parse(try readFile(path))
        } catch {
            fail("\(path): \(error)", code: 1)
        }
    }
    if check {
        var total = 0
        for path in parsed.positionals {
            var log = load(path)
            let engine = RedactionEngine(config: configuration, collectFindings: true)
            let report = engine.redact(&log)
            for finding in report.findings {
                print(sanitizedForLog("\(path): \(finding.path)  \(finding.rule.name)  \(finding.preview)"))
            }
            if report.findings.isEmpty {
                print(sanitizedForLog("\(path): no secrets found (\(report.entries) entries)"))
            }
            total += report.findings.count
        }
        if total == 0 { return 0 }
        printErr("harrec: \(total) finding\(total == 1 ? "" : "s"); redact with: harrec redact <file.har> --out <out.har>")
        return 1
    }
    let out = output!
    // Freed body buffers are reused instead of being returned to the kernel and faulted in again
    // (a 100 MB HAR otherwise costs ~90k page faults); the process exits right after.
    harrec_retain_freed_memory()
    let document: HARLazyDocument
    do {
        document = try HARLazyDocument(try readFile(input))
    } catch {
        fail("\(input): \(error)", code: 1)
    }
    var head = document.head
    let engine = RedactionEngine(config: configuration)
    engine.redactLogFields(&head)
    let entryFailure = Mutex<HARReadError?>(nil)
    do {
        let file = try AtomicFileWriter(path: out)
        do {
            // Entries are parsed on every core, redacted here one by one in file order, and
            // serialized and written in the background: parsing, redaction and writing overlap,
            // and no whole tree of the file is ever in memory.
            try head.serialize(pretty: true, entryCount: document.entryCount, entry: { index in
                do throws(HARReadError) {
                    return try document.takeEntry(index)
                } catch {
                    entryFailure.withLock { if $0 == nil { $0 = error } }
                    return HAREntry.placeholder
                }
            }, inOrder: { engine.redact(&$0, index: $1) }) { try file.write($0) }
            if let error = entryFailure.withLock({ $0 }) { throw error }
            try file.commit()
        } catch {
            file.abort()
            throw error
        }
    } catch let error as HARReadError {
        fail("\(input): \(error) (nothing written)", code: 1)
    } catch {
        fail("\(out): \(error)", code: 1)
    }
    let report = engine.currentReport
    if !parsed.flag("quiet") {
        printErr(redactionSummary(report, written: out))
    }
    return 0
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

extension HAREntry {
    /// Stands in for an entry that failed to parse; the file is then not written.
    static let placeholder = HAREntry(startedDateTime: "", time: 0,
                                      request: HARRequest(method: "", url: "", httpVersion: ""),
                                      response: HARResponse(status: 0, statusText: "", httpVersion: "",
                                                            content: HARContent(size: 0, mimeType: "")),
                                      timings: HARTimings(send: 0, wait: 0, receive: 0))
}
