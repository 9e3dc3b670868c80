// Serving a .har file directly, without generating Swift: the same items (HARScenarioBuilder),
// the same matching, ordered repeats and diagnostics as NetworkMock (the same MockServer).

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HAR

/// Which recorded request headers an item also requires. Generated scenarios match no headers;
/// replay can, for APIs that vary responses by a header (`Accept`, `X-Api-Version`, ...).
public enum HeaderMatching: Sendable, Equatable {
    /// Headers take no part in matching (the default).
    case none
    /// These headers (case-insensitive names), where the recorded request had them, must have the
    /// recorded value. Headers the recorded request lacked are not required to be absent.
    case named([String])
    /// Every recorded request header except these names and `HARReplayOptions.neverMatchedHeaders`.
    case allExcept(Set<String>)
}

/// Options for `HARReplayProtocol.load`.
public struct HARReplayOptions: Sendable {
    /// How entries become items (host filter, presence-only query items, body matching, latency).
    public var scenario: HARScenarioOptions
    /// Query item names left out of conditions entirely: the request may carry them or not.
    /// Compared lowercased. (`scenario.ignoredQueryItems` still requires the item to be present.)
    public var droppedQueryItems: Set<String>
    /// Request headers that take part in matching.
    public var headers: HeaderMatching

    /// Headers `.allExcept` never considers: hop-by-hop ones, those the URL or the body already
    /// determine, and those URLSession or the platform set on its own. HTTP/2 pseudo-headers
    /// (`:authority`, ...) are never considered either.
    public static let neverMatchedHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "host", "content-length", "accept-encoding", "accept-language", "user-agent", "cookie", "date",
        "if-none-match", "if-modified-since", "cache-control", "pragma",
    ]

    /// Creates replay options; by default entries become items exactly as `harrec generate` would
    /// make them.
    public init(scenario: HARScenarioOptions = HARScenarioOptions(), droppedQueryItems: Set<String> = [],
                headers: HeaderMatching = .none) {
        self.scenario = scenario; self.droppedQueryItems = droppedQueryItems; self.headers = headers
    }
}

/// Why `HARReplayProtocol.load` could not load a HAR.
public struct HARReplayLoadError: Error, CustomStringConvertible, LocalizedError {
    public var description: String
    public var errorDescription: String? { description }
}

/// A URLProtocol that serves a .har file directly. Register it on a configuration, never globally
/// (`HARReplayProtocol.configuration()`). Like NetworkMock it does not handle ws/wss, and
/// unmatched requests fail with `UnmatchedRequestError`.
open class HARReplayProtocol: URLProtocol {
    static let server = MockServer(owner: "HARReplayProtocol", activation: "HARReplayProtocol.load(...)",
                                   presenceAdvice: { _ in "add it to HARScenarioOptions.ignoredQueryItems (presence only) or HARReplayOptions.droppedQueryItems" })

    private let loading = Locked(false)

    /// Serves the entries of the HAR file at `harFile` (replacing anything loaded before).
    public static func load(harFile: URL, options: HARScenarioOptions = HARScenarioOptions()) throws {
        try load(harFile: harFile, replayOptions: HARReplayOptions(scenario: options))
    }

    /// Serves the entries of the HAR file at `harFile` with replay-only knobs (headers, dropped query items).
    public static func load(harFile: URL, replayOptions: HARReplayOptions) throws {
        let data: Data
        do {
            data = try Data(contentsOf: harFile)
        } catch {
            throw HARReplayLoadError(description: "HARReplayProtocol: cannot read \(harFile.path): \(error.localizedDescription)")
        }
        try load(harData: data, replayOptions: replayOptions, source: "HAR file \(harFile.lastPathComponent)")
    }

    /// Serves the entries of a HAR document given as bytes.
    public static func load(harData: Data, options: HARScenarioOptions = HARScenarioOptions()) throws {
        try load(harData: harData, replayOptions: HARReplayOptions(scenario: options))
    }

    /// Serves the entries of a HAR document given as bytes, with replay-only knobs.
    public static func load(harData: Data, replayOptions: HARReplayOptions) throws {
        try load(harData: harData, replayOptions: replayOptions, source: "HAR data")
    }

    /// Serves a HAR file from a bundle's resources (`name` with its extension, e.g. "login.har").
    public static func load(harResource name: String, bundle: Bundle = .main,
                            options: HARScenarioOptions = HARScenarioOptions()) throws {
        guard let url = bundle.url(forResource: name, withExtension: nil) else {
            throw HARReplayLoadError(description: "HARReplayProtocol: no resource \"\(name)\" in bundle \(bundle.bundlePath)")
        }
        try load(harFile: url, replayOptions: HARReplayOptions(scenario: options))
    }

    /// Serves the entries of an already parsed log.
    public static func load(log: HARLog, replayOptions: HARReplayOptions = HARReplayOptions(),
                            source: String = "HAR log") {
        server.activate(entries(from: log, options: replayOptions), source: source)
    }

    private static func load(harData: Data, replayOptions: HARReplayOptions, source: String) throws {
        let log: HARLog
        do {
            log = try HARLog.parse([UInt8](harData))
        } catch {
            throw HARReplayLoadError(description: "HARReplayProtocol: cannot load \(source): \(error)")
        }
        load(log: log, replayOptions: replayOptions, source: source)
    }

    /// Stops serving (requests then fail as unmatched).
    public static func unload() { server.deactivate() }

    /// The items being served, in queue order; `calls[i].itemIndex` indexes this.
    public static var items: [ResponseQueueItem] { server.items }

    /// Every request seen since the last `load`, in arrival order.
    public static var calls: [RequestResponseItem] { server.callRecords }

    /// Items with `.once` / `.times(n)` that were not used up; empty when all were.
    public static func unusedItems() -> [ResponseQueueItem] { server.unusedItems() }

    /// A configuration with HARReplayProtocol first.
    public static func configuration(base: URLSessionConfiguration = .ephemeral) -> URLSessionConfiguration {
        base.protocolClasses = [HARReplayProtocol.self] + (base.protocolClasses ?? []).filter { $0 != HARReplayProtocol.self }
        return base
    }

    /// The queue entries for `log`: HARScenarioBuilder's items, minus dropped query items, plus
    /// header conditions. Repeatability is recomputed when either changes which conditions are equal.
    static func entries(from log: HARLog, options: HARReplayOptions) -> [MockServer.Entry] {
        let dropped = Set(options.droppedQueryItems.map { $0.lowercased() })
        let headerConditions: (HAREntry) -> [HeaderCondition] = { entry in
            let recorded = entry.request.headers.filter { !$0.name.hasPrefix(":") }
            let chosen: [HARHeader]
            switch options.headers {
            case .none:
                return []
            case .named(let names):
                let wanted = Set(names.map { $0.lowercased() })
                chosen = recorded.filter { wanted.contains($0.name.lowercased()) }
            case .allExcept(let names):
                let excluded = Set(names.map { $0.lowercased() }).union(HARReplayOptions.neverMatchedHeaders)
                chosen = recorded.filter { !excluded.contains($0.name.lowercased()) }
            }
            // One condition per name; repeated headers are compared joined, as URLRequest joins them.
            var order: [String] = []
            var values: [String: (name: String, value: String)] = [:]
            for h in chosen {
                let key = h.name.lowercased()
                if let existing = values[key] { values[key] = (existing.name, existing.value + "," + h.value) } else {
                    order.append(key); values[key] = (h.name, h.value)
                }
            }
            return order.map { key in
                let (name, value) = values[key]!
                return HeaderCondition(name: name, value: isRedactedHeaderValue(value) ? nil : value)
            }
        }
        func strip(_ condition: inout RequestCondition) {
            guard !dropped.isEmpty else { return }
            condition.query.removeAll { q in
                switch q {
                case .equals(let n, _), .present(let n): return dropped.contains(n.lowercased())
                }
            }
        }
        let needsRegrouping = !dropped.isEmpty || options.headers != .none
        var built = HARScenarioBuilder.builtItems(from: log, options: options.scenario)
        if needsRegrouping {
            // Recompute "equal conditions" over what is actually matched.
            for i in built.indices { strip(&built[i].item.condition) }
            var last: [String: Int] = [:]
            var keys: [String] = []
            for (i, b) in built.enumerated() {
                let headerKey = headerConditions(b.entry).map { "\($0.name.lowercased())=\($0.value ?? "\u{0}")" }
                    .joined(separator: "\u{1}")
                let key = HARScenarioBuilder.conditionKey(b.item.condition) + "\u{2}" + headerKey
                keys.append(key)
                last[key] = i
            }
            for i in built.indices { built[i].item.repeatability = last[keys[i]] == i ? .always : .once }
        }
        return built.map { MockServer.Entry(item: $0.item, headers: headerConditions($0.entry)) }
    }

    /// A placeholder, or a placeholder credential after a scheme ("Bearer redacted-1"): the
    /// header then only has to be present.
    static func isRedactedHeaderValue(_ value: String) -> Bool {
        if HARScenarioBuilder.isRedactionPlaceholder(value) { return true }
        guard let last = value.split(separator: " ").last else { return false }
        return HARScenarioBuilder.isRedactionPlaceholder(String(last))
    }

    // MARK: URLProtocol

    /// http and https only, never ws/wss.
    open override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// The request unchanged: matching works on the request as the app built it.
    open override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Serves the first matching item with uses left (after its delay), or fails with
    /// `UnmatchedRequestError`.
    open override func startLoading() {
        loading.withLock { $0 = true }
        Self.server.startLoading(self, loading: loading, timeout: request.timeoutInterval)
    }

    /// Drops a pending delayed response.
    open override func stopLoading() {
        loading.withLock { $0 = false }
    }
}
