import Synchronization

/// Which exchanges go into the recording (`--record-hosts`, `--skip-hosts`, `--skip-url`,
/// `--skip-content-type`), so a fixture holds the app's own API and not its analytics and CDN
/// traffic. Skipped exchanges are still proxied; they only never reach the journal.
///
/// Host patterns are searched (not anchored) in `host:port`, case-insensitively, as
/// `--intercept-hosts` is; URL patterns in the whole URL.
public struct RecordingFilter: @unchecked Sendable {
    // @unchecked: Regex is not Sendable, but these are built once and only matched after.
    public var recordHosts: [Regex<AnyRegexOutput>]
    public var skipHosts: [Regex<AnyRegexOutput>]
    public var skipURLs: [Regex<AnyRegexOutput>]
    /// `image/*` (a whole type) or `application/x-protobuf` (exact), lowercased.
    public var skipContentTypes: [String]

    public init(recordHosts: [Regex<AnyRegexOutput>] = [], skipHosts: [Regex<AnyRegexOutput>] = [],
                skipURLs: [Regex<AnyRegexOutput>] = [], skipContentTypes: [String] = []) {
        self.recordHosts = recordHosts
        self.skipHosts = skipHosts
        self.skipURLs = skipURLs
        self.skipContentTypes = skipContentTypes.map { $0.lowercased() }
    }

    /// Whether the filter lets everything through.
    public var isEmpty: Bool { recordHosts.isEmpty && skipHosts.isEmpty && skipURLs.isEmpty && skipContentTypes.isEmpty }

    /// Whether an exchange to `url` is recorded as far as its URL tells (a WebSocket's start,
    /// before any response).
    public func keeps(url: String) -> Bool {
        let host = Self.hostAndPort(url)
        if !recordHosts.isEmpty && !recordHosts.contains(where: { host.contains($0) }) { return false }
        if skipHosts.contains(where: { host.contains($0) }) { return false }
        return !skipURLs.contains { url.contains($0) }
    }

    /// Whether `flow` is recorded.
    public func keeps(_ flow: Flow) -> Bool {
        guard keeps(url: flow.request.url) else { return false }
        guard !skipContentTypes.isEmpty, let response = flow.response,
              let contentType = response.fields.last(where: { $0.name.lowercased() == "content-type" })?.value else { return true }
        let type = String(contentType.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }).lowercased()
        return !skipContentTypes.contains { pattern in
            pattern.hasSuffix("/*") ? type.hasPrefix(pattern.dropLast()) : type == pattern
        }
    }

    /// `host:port` of an absolute URL, the port filled in from the scheme when absent.
    static func hostAndPort(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url.lowercased() }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        if hasPort { return authority.lowercased() }
        let port = scheme == "https" || scheme == "wss" ? "443" : "80"
        return "\(authority.lowercased()):\(port)"
    }
}

/// A `FlowSink` that passes on what `filter` keeps: skipped flows, and every message of a skipped
/// WebSocket conversation, never reach `inner` (the journal).
public final class FilteringSink: FlowSink, Sendable {
    let inner: FlowSink
    let filter: RecordingFilter
    /// WebSocket conversations skipped at their start, whose messages and end are dropped too.
    private let skippedConversations = Mutex<Set<UInt64>>([])
    private let skipped = Atomic<Int>(0)

    public init(_ inner: FlowSink, filter: RecordingFilter) {
        self.inner = inner
        self.filter = filter
    }

    /// How many exchanges were not recorded.
    public var skippedCount: Int { skipped.load(ordering: .relaxed) }

    public func record(_ flow: Flow) {
        let startedSkipped = skippedConversations.withLock { $0.remove(flow.id) != nil }
        guard !startedSkipped, filter.keeps(flow) else {
            skipped.add(1, ordering: .relaxed)
            return
        }
        inner.record(flow)
    }

    public func recordPageMark(_ mark: PageMark) { inner.recordPageMark(mark) }

    public func recordExportDecision(_ decision: ExportDecision) { inner.recordExportDecision(decision) }

    public func recordPageMove(_ move: PageMove) { inner.recordPageMove(move) }

    public var streamsWebSocketMessages: Bool { inner.streamsWebSocketMessages }

    public func recordWebSocketStart(_ flow: Flow) {
        guard filter.keeps(url: flow.request.url) else {
            skippedConversations.withLock { _ = $0.insert(flow.id) }
            return
        }
        inner.recordWebSocketStart(flow)
    }

    public func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64) {
        guard !skippedConversations.withLock({ $0.contains(flowID) }) else { return }
        inner.recordWebSocketMessage(message, flowID: flowID)
    }

    public var streamsBodies: Bool { inner.streamsBodies }

    /// Parts come only for exchanges the filter keeps as far as they are known
    /// (`ProxyConfiguration.recordingFilter`); a part of one skipped later is left behind unread.
    public func recordBodyPart(_ part: RecordedBodyPart) { inner.recordBodyPart(part) }
}
