import CLI
import LiveView
import CSystemShims
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import HARGenerator
import HARReplay
import HARScenarios
import ProxyCore
import ProxyRuntime
import Recording

// `harrec replay`: the recorder's front end serving a HAR instead of the network.

let replaySpec = CommandSpec(
    name: "replay",
    abstract: "Serve a HAR as a proxy (HTTP and SOCKS5): any client gets the recorded responses.",
    usage: "harrec replay <file.har> [--http <port>] [--socks <port>] [options] | harrec replay --reset [--proxy <host:port>]",
    options: [
        httpPortOption,
        socksPortOption,
        reverseOption,
        noRewriteBackOption,
        listenOption,
        proxyAuthFileOption,
        caDirOption,
        OptionSpec("no-intercept", .flag, help: "Do not terminate TLS: https through the replay then fails (tunnels are closed)."),
        OptionSpec("page", .value(placeholder: "<title|id>"), help: "Serve one scenario: the entries of this HAR page."),
        OptionSpec("latency", .value(placeholder: "recorded|none"), help: "Answer after the recorded server time (recorded) or at once (none, the default)."),
        OptionSpec("reset-on", .value(placeholder: "\"<METHOD> <path>\""), help: "Restart every queue after serving this request, e.g. \"GET /v1/logout\" (repeatable)."),
        OptionSpec("host-map", .value(placeholder: "<recorded>=<host:port>"), help: "Serve requests for host:port from the entries recorded for <recorded> (repeatable)."),
        OptionSpec("ignore-query", .value(placeholder: "<name>"), help: "Leave this query item out of matching: requests may carry it or not (a cache buster; repeatable)."),
        OptionSpec("match-query", .value(placeholder: "exact|subset"), help: "exact (the default): a request has the recorded query items and no others; subset: others may come too, and the most specific item answers."),
        OptionSpec("passthrough", .flag, help: "Forward requests and HTTP/2 streams that match nothing to their real upstream instead of answering 599."),
        OptionSpec("out", short: "o", .value(placeholder: "<file.har>"), help: "With --passthrough: record the forwarded exchanges into this HAR at exit (redacted by default)."),
        OptionSpec("no-redact", .flag, help: "With --out: write the raw HAR (prints a warning)."),
        upstreamProxyOption,
        upstreamProxyAuthFileOption,
        noUpstreamProxyOption,
        OptionSpec("upstream-ca", .value(placeholder: "<file.pem>"), help: "With --passthrough: extra trust anchors for upstream TLS (repeatable)."),
        OptionSpec("insecure-upstream", .flag, help: "With --passthrough: do not verify upstream TLS certificates."),
        OptionSpec("strict", .flag, help: "Exit 1 when an item was never served, a request matched nothing or a WebSocket client diverged (a CI gate)."),
        OptionSpec("reset", .flag, help: "Tell a running replay to restart its queues (between tests), then exit."),
        OptionSpec("proxy", .value(placeholder: "<host:port>"), help: "With --reset: the replay's HTTP address (default 127.0.0.1:8888)."),
        threadsOption,
        webOption,
        webPortOption,
        OptionSpec("quiet", short: "q", .flag, help: "No live line per request (unmatched ones still show in the summary)."),
    ],
    positionals: [],
    variadicPositionals: true,
    discussion: """
    Matching and ordering are HARMocking's: a request gets the first recorded response for the same
    method, URL (the same query items, in any order) and, when the recording needs it to tell them apart,
    body (JSON compared by value); repeats are served in recorded order and the last one repeats.
    A request with no match gets status 599 and a body saying which recorded requests came
    nearest and what differed. TLS is intercepted with harrec's CA, as when recording.
    http://harrec/reset through the proxy restarts the queues, as --reset does.
    At exit (Ctrl-C, SIGTERM) a summary lists items never served and unmatched requests.
    """)

/// `harrec replay`: loads the HAR, serves it until a signal, prints the summary.
func runReplay(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(replaySpec, arguments)
    if parsed.flag("reset") {
        return askReservedHost("/reset", proxy: parsed.value("proxy") ?? "127.0.0.1:8888", peer: "replay",
                               hint: "is 'harrec replay' running? --proxy chooses the address")
    }
    guard parsed.positionals.count == 1, let path = parsed.positionals.first else {
        fail(parsed.positionals.isEmpty ? "which HAR? harrec replay session.har" : "replay serves one HAR at a time")
    }
    let out = parsed.value("out")
    if out != nil && !parsed.flag("passthrough") {
        fail("--out records what --passthrough forwards; give --passthrough too")
    }
    if let out, out == path { fail("--out must differ from the HAR being replayed") }
    // Unrecovered data is never overwritten, and two harrecs never share a journal.
    if let out, let conflict = journalConflict(for: out) { fail(conflict) }
    let (redaction, _) = out.map { outputSettings(parsed, out: $0, outName: "--out") } ?? (nil, nil)
    do {
        let service = try makeReplayService(parsed, path: path)
        var configuration = ProxyConfiguration()
        configuration.replay = service
        configuration.liveLog = !parsed.flag("quiet")
        configuration.recordRefusals = false
        configuration.upstreamProxy = try upstreamProxySetting(parsed)
        if !parsed.flag("no-intercept") {
            configuration.interception = try makeInterception(parsed)
            configuration.caDownloads = configuration.interception?.authority.map(CADownloads.init(authority:))
        }
        let listener = try ListenerSettings(parsed)
        configuration.credentials = listener.credentials

        let log = LogOutput(quiet: parsed.flag("quiet"))
        // Only forwarded exchanges are recorded, and only when --out keeps them: journaled as
        // `record` does, so a killed replay's recording survives (`harrec recover`).
        let journal: JournalLog?
        if let out {
            do {
                journal = try JournalLog(harPath: out, harrecVersion: harrecVersion, started: wallClock(),
                                         readsBack: parsed.flag("web"),
                                         onError: { message in printErr("harrec: error: \(message)") })
            } catch {
                fail("cannot start the journal: \(error)", code: 1)
            }
        } else {
            journal = nil
        }
        var sink: FlowSink = journal ?? DiscardingSink()
        let web = try WebSettings(replay: parsed, journal: journal)
        if let web { sink = LiveSink(sink, index: web.service.index) }
        let server = try ProxyServer(configuration: configuration, sink: sink, log: log, loopCount: listener.loopCount,
                                     poller: listener.poller)
        if let index = web?.service.index {
            server.observeLiveEvents { event in index.recordReplay(event, at: wallClock()) }
        }
        try server.handleShutdownSignals()
        let listening = listener.start(server)
        for line in listening { printErr(line) }
        if let web { printErr(try web.start(server)) }
        printErr("harrec: replaying \(service.itemCount) recorded \(service.itemCount == 1 ? "response" : "responses") from \(path) (Ctrl-C to stop)")
        for note in startupNotes.withLock({ $0 }) { printErr(note) }
        server.run()
        log.flush()

        let summary = service.summary()
        for line in replaySummaryLines(summary) { printErr(line) }
        if let out, let journal {
            let signalsAtStop = UInt(harrec_shutdown_signals_received())
            let contents: JournalContents
            do {
                contents = try journal.finish()
            } catch {
                fail("\(error); the journal is kept: harrec recover \(out)", code: 1)
            }
            let plan = JournalExportPlan(out: out, rawOut: nil, redaction: redaction, quiet: parsed.flag("quiet"),
                                         journaled: true, keepJournal: false)
            _ = exportJournal(contents, plan: plan, signalsBefore: signalsAtStop)
            printErr("harrec: wrote \(contents.count) forwarded \(contents.count == 1 ? "exchange" : "exchanges") to \(out)")
        }
        let clean = summary.neverServed.isEmpty && summary.unmatchedCount == 0 && summary.forwardedCount == 0
            && summary.divergenceCount == 0
        return parsed.flag("strict") && !clean ? 1 : 0
    } catch let error as UsageError {
        fail(error.message)
    } catch {
        fail("\(error)", code: 1)
    }
}

/// The queue for `path` with the replay options: page, latency, host maps, reset triggers.
func makeReplayService(_ parsed: ParsedArguments, path: String) throws -> ReplayService {
    var source = "HAR file \(lastPathComponent(path))"
    let page = parsed.value("page")
    if let page { source += " (page \(page))" }
    var scenario = HARScenarioOptions()
    // Served as recorded: Date, ETag and the like stay (the generator drops them for stable fixtures).
    scenario.droppedResponseHeaders = []
    switch parsed.value("latency") ?? "none" {
    case "none": scenario.latency = .none
    case "recorded": scenario.latency = .recorded
    case let other: throw UsageError("--latency is recorded or none, not '\(other)'")
    }
    let queryMatching: QueryMatching
    switch parsed.value("match-query") ?? "exact" {
    case "exact": queryMatching = .exact
    case "subset": queryMatching = .subset
    case let other: throw UsageError("--match-query is exact or subset, not '\(other)'")
    }
    let options = HARReplayOptions(scenario: scenario, droppedQueryItems: Set(parsed.allValues("ignore-query")),
                                   queryMatching: queryMatching)
    let triggers = try parsed.allValues("reset-on").map { text -> ReplayResetTrigger in
        guard let trigger = ReplayResetTrigger(text) else {
            throw UsageError("--reset-on needs \"METHOD /path\" or \"/path\", not '\(text)'")
        }
        return trigger
    }
    let remaps = try parsed.allValues("host-map").flatMap { try hostMaps($0) }
    var loaded = try ReplayHARFile.load(path: path, page: page, options: options, proxyAnswersAsFailures: false)
    let file = loaded.bodies
    let queue = loaded.queue
    loaded.queue = []
    let service = ReplayService(entries: consume queue, source: source, remaps: remaps,
                                resetOn: triggers, activation: "harrec replay \(lastPathComponent(path))",
                                passthrough: parsed.flag("passthrough"), recordedLatency: scenario.latency == .recorded,
                                webSockets: loaded.webSockets, refusedTunnels: loaded.refusedTunnels,
                                http2Hosts: loaded.http2Hosts,
                                bodies: { [dropping = Set(scenario.droppedResponseHeaders.map { $0.lowercased() })] in
                                    file.response(ofEntry: $0, dropping: dropping)
                                },
                                streams: { file.stream(ofEntry: $0) })
    // What malloc kept of the parsed entries goes back to the system.
    harrec_release_free_memory()
    return service
}

/// `api.example.com=127.0.0.1:9000`: requests to 127.0.0.1:9000 (http or https; https by default
/// on 443, http on 80 when no port is given) are served from the entries recorded for
/// api.example.com. A target with a scheme (`=http://127.0.0.1:9000/api`) is taken as written.
func hostMaps(_ text: String) throws -> [HostRemap] {
    let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !parts[0].contains("/") else {
        throw UsageError("--host-map needs recorded-host=host:port, not '\(text)'")
    }
    let targets = parts[1].contains("://") ? [parts[1]] : ["http://" + parts[1], "https://" + parts[1]]
    return try targets.map { target in
        guard let remap = HostRemap(recordedHost: parts[0], target: target) else {
            throw UsageError("--host-map: '\(parts[1])' is not a host:port or an http(s) URL")
        }
        return remap
    }
}

/// The summary at exit: what was served, what never was, and what matched nothing.
func replaySummaryLines(_ summary: ReplaySummary) -> [String] {
    var lines = ["harrec replay: served \(summary.servedCount) \(summary.servedCount == 1 ? "request" : "requests")"]
    if !summary.neverServed.isEmpty {
        lines.append("harrec replay: \(summary.neverServed.count) recorded \(summary.neverServed.count == 1 ? "item was" : "items were") never served:")
        lines += summary.neverServed.prefix(20).map { "  " + sanitizedForLog($0) }
        if summary.neverServed.count > 20 { lines.append("  … and \(summary.neverServed.count - 20) more") }
    }
    if summary.forwardedCount > 0 {
        lines.append("harrec replay: \(summary.forwardedCount) \(summary.forwardedCount == 1 ? "request" : "requests") matched nothing and \(summary.forwardedCount == 1 ? "was" : "were") forwarded (--passthrough):")
        lines += summary.forwarded.prefix(20).map { "  " + sanitizedForLog($0) }
        if summary.forwardedCount > 20 { lines.append("  … and \(summary.forwardedCount - 20) more") }
    }
    if summary.refusedCount > 0 {
        lines.append("harrec replay: refused \(summary.refusedCount) \(summary.refusedCount == 1 ? "tunnel" : "tunnels") as recorded")
    }
    if summary.divergenceCount > 0 {
        lines.append("harrec replay: \(summary.divergenceCount) WebSocket \(summary.divergenceCount == 1 ? "divergence" : "divergences") from the recording:")
        lines += summary.divergences.prefix(20).map { "  " + sanitizedForLog($0) }
        if summary.divergenceCount > 20 { lines.append("  … and \(summary.divergenceCount - 20) more") }
    }
    if summary.unmatchedCount > 0 {
        lines.append("harrec replay: \(summary.unmatchedCount) \(summary.unmatchedCount == 1 ? "request" : "requests") matched nothing (answered 599):")
        lines += summary.unmatched.prefix(20).map { "  " + sanitizedForLog($0) }
        if summary.unmatchedCount > 20 { lines.append("  … and \(summary.unmatchedCount - 20) more") }
    }
    return lines
}

/// The sink of a replay without `--out`: what it forwards is not kept.
final class DiscardingSink: FlowSink, @unchecked Sendable {
    func record(_ flow: Flow) {}
}

func lastPathComponent(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}
