// Serving a .har file directly, without generating Swift: the same items (HARScenarioBuilder),
// the same matching, ordered repeats and diagnostics as NetworkMock (the same MockServer).

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HAR

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
                                   queryAdvice: QueryAdvice(
                                       presence: { _ in "add it to HARScenarioOptions.ignoredQueryItems (presence only) or HARReplayOptions.droppedQueryItems" },
                                       unlisted: { _ in "add it to HARReplayOptions.droppedQueryItems, or load with queryMatching: .subset" },
                                       general: "add the names of query items that change from run to run to HARReplayOptions.droppedQueryItems"))

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

    /// The items being served, in queue order; `calls[i].itemIndex` (0-based) indexes this, and
    /// `calls[i].itemNumber` (1-based) is the `#n` of messages and labels.
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

    /// The queue entries for `log` (shared with `harrec replay`: `HARReplayEntries`).
    static func entries(from log: HARLog, options: HARReplayOptions) -> [MockServer.Entry] {
        HARReplayEntries.make(from: log, options: options).map { MockServer.Entry(item: $0.item, headers: $0.headers) }
    }

    /// A placeholder, or a placeholder credential after a scheme ("Bearer redacted-1").
    static func isRedactedHeaderValue(_ value: String) -> Bool { HARReplayEntries.isRedactedHeaderValue(value) }

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
