import CLI
import Export
import Files
import HAR
import HARGenerator
import LiveView
import ProxyCore
import ProxyRuntime
import Recording
import Redaction

// `record --web`: the live view on its own loopback listener, with an access token in its URL.

let webOption = OptionSpec("web", .flag, help: "Serve the live view: the flows as they come, each whole, and scenario marks (a browser page on 127.0.0.1).")
let webPortOption = OptionSpec("web-port", .value(placeholder: "<port>"), help: "The live view's port (default 8081; 0 picks a free one).")

/// The live view's settings: its service (index, token, flow reader) and its port.
struct WebSettings {
    static let defaultPort: UInt16 = 8081

    let service: LiveService
    let port: UInt16

    /// Nil unless `--web`. Flows are read back from the journal, or from memory with `--no-journal`.
    init?(_ parsed: ParsedArguments, out: String, journal: JournalLog?, memory: FlowLog?, redaction: RedactionConfiguration?) throws {
        guard let port = try Self.port(parsed) else { return nil }
        self.port = port
        let reader: @Sendable (UInt64) -> Flow?
        if let journal {
            reader = { journal.storedFlow(id: $0) }
        } else if let memory {
            reader = { id in memory.snapshot().last { $0.id == id } }
        } else {
            reader = { _ in nil }
        }
        var tools = Self.tools(redaction ?? RedactionConfiguration())
        tools.exportNow = Self.exportNow(to: Self.snapshotPath(out), journal: journal, memory: memory, redaction: redaction)
        tools.exportBytes = { path in try? readFile(path) }
        tools.redactionCounts = Self.redactionCounts(scratch: Self.snapshotPath(out) + ".counting", journal: journal, memory: memory,
                                                     rules: redaction ?? RedactionConfiguration())
        service = LiveService(token: Self.makeToken(), index: LiveIndex(), tools: tools, flowReader: reader)
    }

    /// `harrec replay --web`: the view lists what the replay answered (from the live log's
    /// events), and what it forwarded and kept (`--out`) whole. Nil unless `--web`.
    init?(replay parsed: ParsedArguments, journal: JournalLog?) throws {
        guard let port = try Self.port(parsed) else { return nil }
        self.port = port
        service = LiveService(token: Self.makeToken(), index: LiveIndex(), flowReader: { id in journal?.storedFlow(id: id) })
    }

    /// `--web-port`, or the default; nil without `--web`.
    static func port(_ parsed: ParsedArguments) throws -> UInt16? {
        guard parsed.flag("web") else {
            if parsed.value("web-port") != nil { throw UsageError("--web-port needs --web") }
            return nil
        }
        return try parsed.value("web-port").map { try parsePort($0, option: "web-port") } ?? defaultPort
    }

    /// What redaction replaces in the recording so far, per rule, most first: the export's two
    /// passes over a snapshot, into a scratch file that is removed.
    static func redactionCounts(scratch: String, journal: JournalLog?, memory: FlowLog?,
                                rules: RedactionConfiguration) -> @Sendable () -> Result<[(rule: String, count: Int)], LiveToolError> {
        { () -> Result<[(rule: String, count: Int)], LiveToolError> in
            do {
                let source = try snapshotSource(journal: journal, memory: memory)
                let file = FileRedaction(config: rules, entryCount: source.count)
                defer { removeFile(scratch) }
                try HARExport.write(source, to: scratch, creatorVersion: harrecVersion, transform: file,
                                    keptBytes: journalExportKeptBytes, mode: 0o600)
                let counts = file.report.counts.map { (rule: $0.key.name, count: $0.value.values.reduce(0, +)) }
                return .success(counts.sorted { $0.count != $1.count ? $0.count > $1.count : $0.rule < $1.rule })
            } catch {
                return .failure(LiveToolError("cannot count: \(error)"))
            }
        }
    }

    /// What is recorded so far: the journal on disk, or memory, without the flows left out.
    static func snapshotSource(journal: JournalLog?, memory: FlowLog?) throws -> any FlowSource {
        if let journal { return try journal.snapshot() }
        guard let memory else { throw UsageError("nothing is recorded") }
        let excluded = memory.excluded
        return FlowArray(memory.snapshot().filter { !excluded.contains($0.id) }, pageMarks: memory.pageMarks,
                         pageOverrides: memory.pageOverrides)
    }

    /// Where "export now" writes: beside the final HAR (`session.har` -> `session.now.har`).
    static func snapshotPath(_ out: String) -> String {
        (out.hasSuffix(".har") ? String(out.dropLast(4)) : out) + ".now.har"
    }

    /// The HAR of what is recorded so far, from the journal on disk (or memory), without the
    /// flows left out, redacted with the recording's rules (raw and 0600 with --no-redact).
    static func exportNow(to path: String, journal: JournalLog?, memory: FlowLog?,
                          redaction: RedactionConfiguration?) -> @Sendable () -> Result<LiveExport, LiveToolError> {
        { () -> Result<LiveExport, LiveToolError> in
            do {
                let source = try snapshotSource(journal: journal, memory: memory)
                if let redaction {
                    let file = FileRedaction(config: redaction, entryCount: source.count)
                    try HARExport.write(source, to: path, creatorVersion: harrecVersion, transform: file, keptBytes: journalExportKeptBytes)
                } else {
                    try HARExport.write(source, to: path, creatorVersion: harrecVersion, mode: 0o600)
                }
                let size = fileSize(path) ?? 0
                return .success(LiveExport(path: path, entries: source.count, bytes: size, redacted: redaction != nil))
            } catch {
                return .failure(LiveToolError("the export failed: \(error)"))
            }
        }
    }

    /// The redaction preview and `generate`, with the recording's rules: what the view shows is
    /// what the export writes and what `harrec generate` makes.
    static func tools(_ rules: RedactionConfiguration) -> LiveTools {
        LiveTools(redactionPreview: { flow in
            var log = HARExport.log(from: [flow], creatorVersion: harrecVersion)
            let raw = entryText(log)
            let report = RedactionEngine(config: rules, collectFindings: true).redact(&log)
            return LivePreview(raw: raw, redacted: entryText(log),
                               findings: report.findings.map { LivePreview.Finding(path: $0.path, rule: $0.rule.name) })
        }, generate: { flows, name in
            var log = HARExport.log(from: flows, creatorVersion: harrecVersion)
            RedactionEngine(config: rules).redact(&log)
            do {
                let files = try SwiftMockGenerator.generate(log, options: GeneratorOptions(
                    scenarioName: HARPages.scenarioName(name, fallback: "Recorded"), sourceName: "live view"))
                return .success(files.map { LiveGeneratedFile(path: $0.relativePath, role: $0.role.rawValue,
                                                              text: String(decoding: $0.bytes, as: UTF8.self)) })
            } catch {
                return .failure(LiveToolError("\(error)"))
            }
        })
    }

    /// The log's one entry as pretty JSON.
    static func entryText(_ log: HARLog) -> String {
        guard let entry = log.entries.first else { return "" }
        var writer = JSONWriter(pretty: true)
        entry.write(to: &writer)
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    /// A random 128-bit token, as hex: the view shows raw secrets, so it answers only to its URL.
    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next()
            return String(value >> 32, radix: 16).leftPadded(8) + String(value & 0xFFFF_FFFF, radix: 16).leftPadded(8)
        }.joined()
    }

    /// Binds the listener on loopback; returns the line that gives its URL.
    func start(_ server: ProxyServer) throws -> String {
        let service = self.service
        let bound: UInt16
        do {
            bound = try server.listen(label: "web", address: "127.0.0.1", port: port, kind: .service { id, client, now in
                LiveViewSession(id: id, clientAddress: client, service: service, now: now)
            })
        } catch {
            throw UsageError("cannot serve the live view on 127.0.0.1:\(port): \(error) (pick another with --web-port, or 0 for a free one)")
        }
        return "harrec: live view at http://127.0.0.1:\(bound)/?token=\(service.token)"
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
