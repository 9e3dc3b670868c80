import CSystemShims
import CLI
import Files
import LiveView
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import ProxyRuntime
import Recording
import Redaction
import Synchronization
import TLS

// `harrec record`: its options, the settings they make, and the proxy's lifecycle.

let recordSpec = CommandSpec(
    name: "record",
    abstract: "Run the recording proxy (HTTP and SOCKS5) and write a HAR on exit.",
    usage: "harrec [record] --out <file.har> [--http <port>] [--socks <port>] [options]",
    options: [
        OptionSpec("out", short: "o", .value(placeholder: "<file.har>"), help: "Where to write the HAR on exit (required)."),
        httpPortOption,
        socksPortOption,
        reverseOption,
        noRewriteBackOption,
        listenOption,
        OptionSpec("max-body", .value(placeholder: "<bytes>"), help: "Recording cap per body, e.g. 64m (default 64 MiB). Proxied bodies are never cut."),
        OptionSpec("proxy-auth", .value(placeholder: "<user:pass>"), help: "Require these credentials (HTTP Basic Proxy-Authorization, SOCKS5 method 02); also $HARREC_PROXY_AUTH."),
        proxyAuthFileOption,
        OptionSpec("upstream-timeout", .value(placeholder: "<seconds>"), help: "Upstream silence before a 504 or a cut (default 120)."),
        OptionSpec("connect-timeout", .value(placeholder: "<seconds>"), help: "Upstream DNS + connect limit before a 504 (default 15)."),
        OptionSpec("request-head-timeout", .value(placeholder: "<seconds>"), help: "From a request head's first byte to its end before a 408 (default and most 30)."),
        caDirOption,
        OptionSpec("no-intercept", .flag, help: "Relay TLS tunnels without interception."),
        OptionSpec("intercept-hosts", .value(placeholder: "<regex>"), help: "Intercept only tunnels whose host:port matches (repeatable, case-insensitive)."),
        OptionSpec("ignore-hosts", .value(placeholder: "<regex>"), help: "Relay matching host:port byte for byte (repeatable; wins over --intercept-hosts)."),
        deviceOption,
        qrPNGOption,
        upstreamProxyOption,
        upstreamProxyAuthFileOption,
        noUpstreamProxyOption,
        OptionSpec("upstream-ca", .value(placeholder: "<file.pem>"), help: "Extra trust anchors for upstream TLS (repeatable)."),
        OptionSpec("insecure-upstream", .flag, help: "Do not verify upstream TLS certificates (prints a warning)."),
        OptionSpec("record-hosts", .value(placeholder: "<regex>"), help: "Record only exchanges whose host:port matches (repeatable); other tunnels are relayed without interception."),
        OptionSpec("skip-hosts", .value(placeholder: "<regex>"), help: "Proxy but do not record exchanges whose host:port matches (repeatable); their tunnels are relayed without interception."),
        OptionSpec("skip-url", .value(placeholder: "<regex>"), help: "Proxy but do not record exchanges whose URL matches (repeatable)."),
        OptionSpec("skip-content-type", .value(placeholder: "<type>"), help: "Proxy but do not record responses of this type, e.g. image/* or font/woff2 (repeatable)."),
        OptionSpec("quiet-skipped", .flag, help: "Leave exchanges that are not recorded out of the live log (they are marked there by default)."),
        OptionSpec("record-ws-control", .flag, help: "Also record WebSocket ping and pong frames."),
        OptionSpec("no-http2", .flag, help: "Keep intercepted connections on HTTP/1.1 (by default a client that offers h2 gets it when its server speaks it)."),
        OptionSpec("no-record-errors", .flag, help: "Do not record requests harrec refuses itself (400, 407, 408) or tunnels it cannot open."),
        OptionSpec("no-redact", .flag, help: "Write the raw HAR, secrets included (prints a warning)."),
        OptionSpec("raw-out", .value(placeholder: "<file.har>"), help: "Also write the raw, unredacted HAR here."),
        OptionSpec("rules", .value(placeholder: "<rules.json>"), help: "Redaction rules file (see 'harrec help redact'); the same option as in redact and generate."),
        OptionSpec("redact-rules", .value(placeholder: "<rules.json>"), help: "The same as --rules (the older name)."),
        internalSuffixOption,
        OptionSpec("keep-journal", .flag, help: "Keep the journal (<file.har>.journal/) after writing the HAR."),
        OptionSpec("no-journal", .flag, help: "Keep the recording in memory only: a crash loses it, and memory grows with it."),
        threadsOption,
        webOption,
        webPortOption,
        OptionSpec("quiet", short: "q", .flag, help: "No live line per exchange."),
    ],
    discussion: """
    The HAR is redacted by default: tokens, cookies, JWTs, emails and internal hosts become
    placeholders (see 'harrec help redact'); --no-redact or --raw-out keep the raw data.
    Both ports serve both protocols: a first byte of 0x05 is SOCKS5, anything else HTTP.
    Every exchange and WebSocket message is journaled to <file.har>.journal/ (0700) as it
    completes, and is on disk within a second: after kill -9, an out-of-memory kill or a power
    loss, 'harrec recover <file.har>' writes the HAR from it. Memory holds only an index.
    Ctrl-C, SIGTERM or SIGHUP stops accepting, lets exchanges in flight finish for up to 2 s,
    writes the HAR atomically from the journal, removes the journal and exits. A second signal
    stops the exchanges in flight at once; during the export, one prints progress and the next
    stops it, keeping the journal.
    """)

/// What `harrec record` was asked to do, checked before anything starts: a bad option, an open
/// LAN listener or an unrecovered journal stops here, before the proxy records anything.
struct RecordSettings {
    var out: String
    var redaction: RedactionConfiguration?
    var rawOut: String?
    var configuration = ProxyConfiguration()
    var listener: ListenerSettings
    var journaled: Bool
    var keepJournal: Bool
    var quiet: Bool

    init(_ parsed: ParsedArguments) throws {
        guard let out = parsed.value("out") else {
            throw UsageError("--out <file.har> is required: where should the HAR be written? e.g. harrec --out session.har")
        }
        self.out = out
        // A bad rules file stops here, before the proxy starts: nothing is recorded to be lost.
        (redaction, rawOut) = outputSettings(parsed, out: out, outName: "--out")
        // Unrecovered data is never overwritten, and two recorders never share a journal.
        if let conflict = journalConflict(for: out) { throw UsageError(conflict) }
        journaled = !parsed.flag("no-journal")
        keepJournal = parsed.flag("keep-journal")
        quiet = parsed.flag("quiet")
        if !journaled && keepJournal { throw UsageError("--keep-journal contradicts --no-journal") }
        configuration.liveLog = !quiet
        configuration.recordWebSocketControlFrames = parsed.flag("record-ws-control")
        configuration.recordRefusals = !parsed.flag("no-record-errors")
        configuration.http2 = !parsed.flag("no-http2")
        if let maxBody = parsed.value("max-body") {
            configuration.maxRecordedBodyBytes = try parseByteCount(maxBody, option: "max-body")
        }
        if let text = parsed.value("upstream-timeout") {
            configuration.timeouts.upstreamResponse = try parseSeconds(text, option: "upstream-timeout")
        }
        if let text = parsed.value("connect-timeout") {
            configuration.timeouts.upstreamConnect = try parseSeconds(text, option: "connect-timeout")
        }
        if let text = parsed.value("request-head-timeout") {
            let seconds = try parseSeconds(text, option: "request-head-timeout")
            guard seconds <= ProxyTimeouts.maximumRequestHead else {
                throw UsageError("--request-head-timeout is at most \(Int(ProxyTimeouts.maximumRequestHead)) seconds (a slow head holds a connection)")
            }
            configuration.timeouts.requestHead = seconds
        }
        configuration.recordingFilter = RecordingFilter(
            recordHosts: try parsed.allValues("record-hosts").map { try hostPattern($0, option: "record-hosts") },
            skipHosts: try parsed.allValues("skip-hosts").map { try hostPattern($0, option: "skip-hosts") },
            skipURLs: try parsed.allValues("skip-url").map { try hostPattern($0, option: "skip-url") },
            skipContentTypes: try parsed.allValues("skip-content-type").map { type in
                guard type.contains("/"), !type.contains(" ") else {
                    throw UsageError("--skip-content-type \(type): give a media type, such as image/* or application/x-protobuf")
                }
                return type
            })
        configuration.quietSkipped = parsed.flag("quiet-skipped")
        if parsed.value("qr-png") != nil && !parsed.flag("device") {
            throw UsageError("--qr-png draws the --device setup code; give --device too")
        }
        configuration.upstreamProxy = try upstreamProxySetting(parsed)
        listener = try ListenerSettings(parsed)
        configuration.credentials = listener.credentials
        if parsed.flag("no-intercept") && listener.reachesHTTPSUpstream {
            throw UsageError("--reverse to an https:// upstream needs TLS toward it: leave out --no-intercept")
        }
        if !parsed.flag("no-intercept") {
            configuration.interception = try makeInterception(parsed)
            // The public certificate only, for http://harrec/ca.pem.
            configuration.caDownloads = configuration.interception?.authority.map(CADownloads.init(authority:))
        }
    }
}

/// `harrec record`: checks the settings, runs the proxy until a signal, then writes the HAR from
/// the journal (or memory).
func runRecord(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(recordSpec, arguments)
    do {
        let settings = try RecordSettings(parsed)
        let out = settings.out
        let configuration = settings.configuration
        let journaled = settings.journaled
        let log = LogOutput(quiet: settings.quiet)
        let journal: JournalLog?
        let memory: FlowLog?
        if journaled {
            do {
                journal = try JournalLog(harPath: out, harrecVersion: harrecVersion, started: wallClock(),
                                         readsBack: parsed.flag("web"),
                                         onError: { message in printErr("harrec: error: \(message)") })
            } catch {
                fail("cannot start the journal: \(error)", code: 1)
            }
            memory = nil
        } else {
            journal = nil
            memory = FlowLog()
        }
        var flows: FlowSink = journal ?? memory!
        let web = try WebSettings(parsed, out: out, journal: journal, memory: memory, redaction: settings.redaction)
        if let web { flows = LiveSink(flows, index: web.service.index) }
        let server = try ProxyServer(configuration: configuration, sink: flows, log: log, loopCount: settings.listener.loopCount,
                                     poller: settings.listener.poller)
        // Signal handling is in place before the listening lines are printed: a script that
        // sends SIGINT as soon as it sees them must get a clean shutdown.
        try server.handleShutdownSignals()
        let listening = settings.listener.start(server)
        for line in listening { printErr(line) }
        if let web { printErr(try web.start(server)) }
        if !isLoopbackAddress(settings.listener.address) && settings.listener.hasForwardListener {
            printErr("harrec: listening on \(settings.listener.address): reachable from the network; proxy credentials are required")
        }
        if settings.listener.isDevice, let http = server.boundListeners.first(where: { $0.label == "HTTP" }) {
            let given = settings.listener.credentials.map { (username: $0.username, password: $0.password) }
            try printDeviceInstructions(host: settings.listener.address, port: http.port,
                                        credentials: settings.listener.deviceCredentials ?? given.map { ($0.username, "(the one given)") },
                                        pngPath: parsed.value("qr-png"))
        }
        printErr("harrec: recording to \(out) (Ctrl-C to stop)")
        if settings.redaction == nil {
            printErr("harrec: warning: --no-redact: \(out) will hold tokens, cookies and emails as recorded; do not commit it")
        }
        for note in startupNotes.withLock({ $0 }) { printErr(note) }

        server.run()
        log.flush()

        let signalsAtStop = UInt(harrec_shutdown_signals_received())
        let contents: any FlowSource
        let failures: Int
        let leftOut: Int
        if let journal {
            do {
                let journaled = try journal.finish()
                contents = journaled
                failures = journaled.failures
                leftOut = journaled.leftOut
            } catch {
                fail("\(error); the journal is kept: harrec recover \(out)", code: 1)
            }
        } else {
            let excluded = memory!.excluded
            let flows = FlowArray(memory!.takeAll().filter { !excluded.contains($0.id) }, pageMarks: memory!.pageMarks,
                                  pageOverrides: memory!.pageOverrides)
            contents = flows
            failures = flows.flows.filter { $0.error != nil }.count
            leftOut = excluded.count
        }
        let started = wallClock()
        // The export allocates and frees many body-sized buffers; keep freed memory for reuse
        // rather than faulting fresh pages in for each (the process exits right after).
        harrec_retain_freed_memory()
        let plan = JournalExportPlan(out: out, rawOut: settings.rawOut, redaction: settings.redaction, quiet: settings.quiet,
                                     journaled: journaled, keepJournal: settings.keepJournal)
        let summary = exportJournal(contents, plan: plan, signalsBefore: signalsAtStop)
        let elapsed = wallClock() - started
        if let summary, !settings.quiet { printErr(summary) }
        printErr("harrec: wrote \(contents.count) entries to \(out)" + (leftOut > 0 ? " (\(leftOut) left out in the live view)" : ""))
        printErr("harrec: HAR written in \(Int((elapsed * 1000).rounded())) ms" +
                 (failures > 0 ? "; \(failures) \(failures == 1 ? "exchange" : "exchanges") failed (see _error)" : "") +
                 (plan.keepJournal ? "; the journal is kept in \(JournalFile.directory(for: out))" : ""))
        return 0
    } catch let error as UsageError {
        fail(error.message)
    } catch {
        fail("\(error)", code: 1)
    }
}

/// Whether `address` only accepts connections from this machine.
func isLoopbackAddress(_ address: String) -> Bool {
    address.hasPrefix("127.") || address == "::1" || address.lowercased() == "localhost"
}

/// The proxy credential and where it came from: --proxy-auth, --proxy-auth-file (first line), or
/// $HARREC_PROXY_AUTH. At most one of them.
func proxyAuthSetting(_ parsed: ParsedArguments) throws -> (value: String, source: String)? {
    var found: [(value: String, source: String)] = []
    if let value = parsed.value("proxy-auth") { found.append((value, "--proxy-auth")) }
    if let path = parsed.value("proxy-auth-file") {
        guard let bytes = try? readFile(path) else { throw UsageError("--proxy-auth-file \(path): cannot read the file") }
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first ?? ""
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        found.append((String(line.drop(while: blank).reversed().drop(while: blank).reversed()), "--proxy-auth-file"))
    }
    if let value = getenv("HARREC_PROXY_AUTH").map({ String(cString: $0) }), !value.isEmpty {
        found.append((value, "HARREC_PROXY_AUTH"))
    }
    guard found.count <= 1 else {
        throw UsageError("give the proxy credentials once: \(found.map(\.source).joined(separator: " and ")) are both set")
    }
    return found.first
}

/// Lines printed after the listening lines, so scripts that wait for those see them first.
let startupNotes = Mutex<[String]>([])

/// TLS interception settings from the record options: the CA (created when missing), upstream
/// verification and the host filters.
func makeInterception(_ parsed: ParsedArguments) throws -> TLSInterception {
    let authority = loadAuthority(parsed)
    if authority.wasCreated {
        startupNotes.withLock { $0.append("harrec: created a CA in \(authority.directory); to trust it: harrec ca show") }
    }
    let verification: TLSClientContext.Verification
    if parsed.flag("insecure-upstream") {
        startupNotes.withLock { $0.append("harrec: warning: --insecure-upstream: upstream TLS certificates are not verified") }
        verification = .none
    } else {
        let anchors = parsed.allValues("upstream-ca")
        for anchor in anchors where access(anchor, R_OK) != 0 {
            throw UsageError("--upstream-ca \(anchor): cannot read the file")
        }
        verification = .systemTrustStore(additionalAnchorFiles: anchors)
    }
    // What is not recorded need not be intercepted: --record-hosts narrows interception and
    // --skip-hosts relays byte for byte, as --intercept-hosts and --ignore-hosts do.
    let include = try (parsed.allValues("intercept-hosts").map { try hostPattern($0, option: "intercept-hosts") }
        + parsed.allValues("record-hosts").map { try hostPattern($0, option: "record-hosts") })
    let ignore = try (parsed.allValues("ignore-hosts").map { try hostPattern($0, option: "ignore-hosts") }
        + parsed.allValues("skip-hosts").map { try hostPattern($0, option: "skip-hosts") })
    let filter = HostFilter(include: include, ignore: ignore)
    return TLSInterception(serverContext: try TLSServerContext(source: .authority(authority)),
                           clientContext: try TLSClientContext(verification: verification),
                           authority: authority,
                           shouldIntercept: { names in filter.intercepts(names) })
}

func hostPattern(_ text: String, option: String) throws -> Regex<AnyRegexOutput> {
    do {
        return try Regex(text).ignoresCase()
    } catch {
        throw UsageError("--\(option) '\(text)' is not a valid regular expression: \(error)")
    }
}

/// `--intercept-hosts` and `--ignore-hosts`: ignore wins; with no include pattern everything is
/// intercepted. Patterns are searched (not anchored) in `host:port`.
struct HostFilter: @unchecked Sendable {
    var include: [Regex<AnyRegexOutput>]
    var ignore: [Regex<AnyRegexOutput>]

    func intercepts(_ names: [String]) -> Bool {
        for name in names where ignore.contains(where: { name.contains($0) }) { return false }
        if include.isEmpty { return true }
        return names.contains { name in include.contains { name.contains($0) } }
    }
}

func displayAddress(_ address: String) -> String {
    address.contains(":") ? "[\(address)]" : address
}

