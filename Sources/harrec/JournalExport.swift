import CSystemShims
import CLI
import Export
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyRuntime
import HAR
import Recording
import Redaction

/// Entries a journal export keeps in memory between the two redaction passes. The rest are read
/// from the journal again for pass 2: that costs a re-read, and keeps the export's peak memory
/// (issue 13: under 300 MB) independent of how much was recorded.
let journalExportKeptBytes = 48 << 20

let recoverSpec = CommandSpec(
    name: "recover",
    abstract: "Write the HAR of a recording that crashed, from the journal it left beside the file.",
    usage: "harrec recover <file.har> [--no-redact] [--raw-out <file.har>] [--keep-journal]",
    options: [
        OptionSpec("no-redact", .flag, help: "Write the raw HAR, secrets included (written 0600)."),
        OptionSpec("raw-out", .value(placeholder: "<file.har>"), help: "Also write the raw, unredacted HAR here (0600)."),
        OptionSpec("rules", .value(placeholder: "<rules.json>"), help: "Redaction rules file (see 'harrec help redact'); the same option as in redact and generate."),
        OptionSpec("redact-rules", .value(placeholder: "<rules.json>"), help: "The same as --rules (the older name)."),
        internalSuffixOption,
        OptionSpec("keep-journal", .flag, help: "Keep the journal after writing the HAR."),
        OptionSpec("quiet", short: "q", .flag, help: "No redaction summary."),
    ],
    positionals: ["file.har"],
    discussion: """
    harrec record journals every exchange to <file.har>.journal/ as it completes. When the
    recorder is killed (kill -9, out of memory, power loss) the journal stays, and the next
    'harrec record --out <file.har>' refuses to start until it is recovered. recover reads every
    whole record, drops a torn last record (and any damaged one), writes <file.har> exactly as
    the recorder would have, and removes the journal.
    """)

/// Where a journal's HAR goes and how.
struct JournalExportPlan {
    var out: String
    var rawOut: String?
    var redaction: RedactionConfiguration?
    var quiet: Bool
    /// False with --no-journal: the flows came from memory, and there is no journal to remove.
    var journaled = true
    var keepJournal: Bool
}

/// Writes the HAR (and the raw copy) from a journal's contents; a signal during the export
/// prints progress, and another stops it, leaving the journal for `harrec recover`. Returns the
/// redaction summary, if any. Exits 1 on failure, naming the journal that is kept.
func exportJournal(_ contents: any FlowSource, plan: JournalExportPlan, signalsBefore: UInt) -> String? {
    printErr("harrec: writing the HAR from the \(plan.journaled ? "journal" : "memory") (\(groupedDigits(contents.count)) entries)")
    let progress = ExportProgress()
    let monitor = SignalMonitor(progress: progress, baseline: signalsBefore,
                                consequence: plan.journaled ? "the journal is kept" : "nothing is written")
    defer { monitor.stop() }
    var summary: String?
    do {
        if let rawOut = plan.rawOut {
            try HARExport.write(contents, to: rawOut, creatorVersion: harrecVersion, mode: 0o600, progress: progress)
            printErr("harrec: wrote the raw HAR (secrets included) to \(rawOut)")
        }
        if let redaction = plan.redaction {
            // Two passes (every value numbered in file order, then replaced everywhere); entries
            // past the memory budget are read from the journal again for the second.
            let file = FileRedaction(config: redaction, entryCount: contents.count)
            try HARExport.write(contents, to: plan.out, creatorVersion: harrecVersion, transform: file,
                                keptBytes: journalExportKeptBytes, progress: progress)
            summary = redactionSummary(file.report, written: plan.out)
        } else {
            try HARExport.write(contents, to: plan.out, creatorVersion: harrecVersion, mode: 0o600, progress: progress)
        }
    } catch is ExportStopped {
        fail("stopped before the HAR was written" + (plan.journaled ? "; the journal is kept: harrec recover \(plan.out)" : ""), code: 1)
    } catch {
        fail("\(error)" + (plan.journaled ? "; the journal is kept: harrec recover \(plan.out)" : ""), code: 1)
    }
    if plan.journaled && !plan.keepJournal {
        do {
            try JournalFile.remove(for: plan.out)
        } catch {
            printErr("harrec: warning: \(error)")
        }
    }
    return summary
}

/// Watches for SIGINT/SIGTERM/SIGHUP during an export: the first prints how far it is, the
/// second stops it.
final class SignalMonitor: @unchecked Sendable {
    /// How often the signal count is looked at.
    static let pollInterval = 0.1
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// `consequence`: what stopping means, as the progress line says it.
    init(progress: ExportProgress, baseline: UInt, consequence: String) {
        startDetachedThread(named: "harrec-export-signals") { [done, finished] in
            var seen = baseline
            while done.wait(timeout: .now() + Self.pollInterval) == .timedOut {
                let now = UInt(harrec_shutdown_signals_received())
                guard now > seen else { continue }
                if seen == baseline && now == baseline + 1 {
                    let status = progress.status
                    let pass = status.passes > 1 ? " (pass \(status.pass) of \(status.passes))" : ""
                    printErr("harrec: writing the HAR: \(groupedDigits(status.built)) of \(groupedDigits(status.entries)) entries\(pass)" +
                             "; press Ctrl-C again to stop, \(consequence)")
                } else {
                    printErr("harrec: stopping the export; \(consequence)")
                    progress.stop()
                }
                seen = now
            }
            finished.signal()
        }
    }

    func stop() {
        done.signal()
        finished.wait()
    }
}

/// What `record` and `recover` write besides the HAR: the redaction (nil with --no-redact; a
/// bad rules file exits here) and the raw copy (--raw-out). Contradictory options exit 2.
func outputSettings(_ parsed: ParsedArguments, out: String, outName: String) -> (redaction: RedactionConfiguration?, rawOut: String?) {
    let redact = !parsed.flag("no-redact")
    if parsed.value("rules") != nil && parsed.value("redact-rules") != nil {
        fail("--rules and --redact-rules are the same option; give one")
    }
    let rulesPath = parsed.value("rules") ?? parsed.value("redact-rules")
    if !redact && (rulesPath != nil || !parsed.allValues("internal-suffix").isEmpty) {
        fail("--no-redact contradicts --rules/--internal-suffix; keep a raw copy with --raw-out instead")
    }
    let rawOut = parsed.value("raw-out")
    if let rawOut, rawOut == out { fail("--raw-out must differ from \(outName)") }
    let redaction = redact ? loadRedactionConfiguration(rulesPath: rulesPath,
                                                        suffixes: parsed.allValues("internal-suffix")) : nil
    return (redaction, rawOut)
}

/// The message that stops `record` when a journal is already beside its output, or nil.
func journalConflict(for out: String) -> String? {
    guard JournalFile.exists(for: out) else { return nil }
    if JournalFile.isLockedByAnotherProcess(harPath: out) {
        return "another harrec is recording to \(out) (its journal \(JournalFile.directory(for: out)) is in use)"
    }
    return "\(JournalFile.directory(for: out)) holds a recording that was never written (harrec was killed); " +
        "run 'harrec recover \(out)' first (or delete that directory to discard it)"
}

func runRecover(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(recoverSpec, arguments)
    let out = parsed.positionals[0]
    let (redaction, rawOut) = outputSettings(parsed, out: out, outName: "the HAR")
    let redact = redaction != nil
    guard JournalFile.exists(for: out) else {
        fail("no journal for \(out) (looked for \(JournalFile.directory(for: out))); nothing to recover", code: 1)
    }
    let recovery: JournalRecovery
    do {
        recovery = try JournalContents.recover(harPath: out)
    } catch {
        fail("\(error)", code: 1)
    }
    removeDeadExportFiles(of: out)
    harrec_retain_freed_memory()
    // Ctrl-C during a long recovery: progress first, then a stop (counted by the shim).
    _ = harrec_install_shutdown_signals(-1)
    let started = wallClock()
    let plan = JournalExportPlan(out: out, rawOut: rawOut, redaction: redaction, quiet: parsed.flag("quiet"),
                                 keepJournal: parsed.flag("keep-journal"))
    let summary = exportJournal(recovery.contents, plan: plan,
                                signalsBefore: UInt(harrec_shutdown_signals_received()))
    if let summary, !plan.quiet { printErr(summary) }
    var line = "harrec: recovered \(recovery.contents.count) entries to \(out)"
    if recovery.tornRecords > 0 {
        line += "; dropped \(recovery.tornRecords) torn record\(recovery.tornRecords == 1 ? "" : "s") (\(recovery.tornBytes) bytes)"
    } else {
        line += "; no torn records"
    }
    if recovery.unusableRecords > 0 { line += "; \(recovery.unusableRecords) unreadable record\(recovery.unusableRecords == 1 ? "" : "s") skipped" }
    if recovery.contents.leftOut > 0 { line += "; \(recovery.contents.leftOut) left out in the live view" }
    printErr(line)
    printErr("harrec: HAR written in \(Int(((wallClock() - started) * 1000).rounded())) ms" +
             (plan.keepJournal ? "; the journal is kept" : ""))
    if !redact { printErr("harrec: warning: --no-redact: \(out) holds tokens, cookies and emails as recorded; do not commit it") }
    return 0
}

/// Deletes the temporary files (`<file.har>.tmp-PID`) of exports whose process is gone: a run
/// killed while writing leaves one behind, and it holds raw data.
func removeDeadExportFiles(of harPath: String) {
    let url = URL(fileURLWithPath: harPath)
    let directory = url.deletingLastPathComponent().path
    let prefix = url.lastPathComponent + ".tmp-"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
    for name in names where name.hasPrefix(prefix) {
        guard let pid = Int32(name.dropFirst(prefix.count)), pid > 0 else { continue }
        if kill(pid, 0) != 0 && errno == ESRCH {
            unlink(directory + "/" + name)
        }
    }
}

/// `2,000` for 2000: counts in messages read as the issue's progress line does, whatever the locale.
func groupedDigits(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return n < 0 ? "-" + out : out
}
