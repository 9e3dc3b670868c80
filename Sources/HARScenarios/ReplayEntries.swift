// How a HAR becomes a serving queue for replay (HARReplayProtocol and `harrec replay`): the
// generator's items, minus dropped query items, plus header conditions.

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

/// How a replayed request's query items must agree with the recorded ones.
public enum QueryMatching: Sendable, Equatable {
    /// The same items as a multiset, in any order (but `droppedQueryItems`, which may come or
    /// not). The default.
    case exact
    /// The recorded items must be there; others may be too. Where several items match, the one
    /// with the most matching query items answers.
    case subset
}

/// Options for `HARReplayProtocol.load` (and how `harrec replay` builds its queue).
public struct HARReplayOptions: Sendable {
    /// How entries become items (host filter, presence-only query items, body matching, latency).
    public var scenario: HARScenarioOptions
    /// Query item names left out of conditions entirely: the request may carry them or not.
    /// Compared lowercased. (`scenario.ignoredQueryItems` still requires the item to be present.)
    public var droppedQueryItems: Set<String>
    /// Request headers that take part in matching.
    public var headers: HeaderMatching
    /// Whether a request may carry query items the recording lacks. Default `.exact`.
    public var queryMatching: QueryMatching

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
                headers: HeaderMatching = .none, queryMatching: QueryMatching = .exact) {
        self.scenario = scenario; self.droppedQueryItems = droppedQueryItems; self.headers = headers
        self.queryMatching = queryMatching
    }
}

/// The part of a recorded response a loader left in the HAR file (`QueueEntry.bodySource`), read
/// again when the item is served.
package struct StoredResponse: Sendable {
    package var headers: [HTTPHeader]
    package var body: ResponseBody

    package init(headers: [HTTPHeader], body: ResponseBody) {
        self.headers = headers
        self.body = body
    }
}

/// The queue entries of a replayed HAR.
package enum HARReplayEntries {
    /// The members of an entry's own `custom` that a replay reads: what failed, WebSocket
    /// conversations, harrec's refusals, and a loader's mark of a left-out body.
    static let readMembers: Set<String> = ["_error", "_webSocketMessages", "_webSocketOpen", "_refused", deferredBodyMember]

    /// `entry` without what a replay that matches no request headers never reads (`make`,
    /// `HARReplayConversations`, `HARReplayRefusedTunnels`): the request's headers, cookies and
    /// query list (the URL holds the query), the response's cookies (served as its `Set-Cookie`
    /// headers), the cache, comments, addresses, and custom members other than `readMembers`.
    /// `harrec replay` holds every parsed entry at once while a HAR loads, and a request's
    /// headers were the largest part of a small one.
    package static func slimmed(_ entry: HAREntry) -> HAREntry {
        var entry = entry
        entry.request.headers = []
        entry.request.cookies = []
        entry.request.queryString = []
        entry.request.comment = nil
        entry.request.custom = []
        entry.response.cookies = []
        entry.response.comment = nil
        entry.cache = HARCache()
        entry.serverIPAddress = nil
        entry.connection = nil
        entry.comment = nil
        entry.custom.removeAll { !readMembers.contains($0.key) }
        return entry
    }

    /// The queue entries for `log`: HARScenarioBuilder's items, minus dropped query items, plus
    /// header conditions. Repeatability is recomputed when either changes which conditions are equal.
    /// `proxyAnswersAsFailures`: see `HARScenarioBuilder.builtItems`; a replaying proxy passes
    /// false, to answer as harrec answered when recording (its 502s and 504s).
    package static func make(from log: HARLog, options: HARReplayOptions, proxyAnswersAsFailures: Bool = true) -> [QueueEntry] {
        let dropping = HARScenarioBuilder.droppedHeaders(options.scenario.droppedResponseHeaders, log: log)
        var drafts = EntryDrafts()
        for (index, entry) in log.entries.enumerated() {
            drafts.append(draft(of: entry, index: index, options: options, dropping: dropping,
                                proxyAnswersAsFailures: proxyAnswersAsFailures))
        }
        return finish(consume drafts, instants: log.entries.map(HARScenarioBuilder.instant(of:)), options: options)
    }

    /// The recorded request headers `matching` requires, one condition per name (repeated headers
    /// compared joined, as URLRequest joins them); a placeholder value only has to be present.
    static func headerConditions(_ entry: HAREntry, matching: HeaderMatching) -> [HeaderCondition] {
        let recorded = entry.request.headers.filter { !$0.name.hasPrefix(":") }
        let chosen: [HARHeader]
        switch matching {
        case .none:
            return []
        case .named(let names):
            let wanted = Set(names.map { $0.lowercased() })
            chosen = recorded.filter { wanted.contains($0.name.lowercased()) }
        case .allExcept(let names):
            let excluded = Set(names.map { $0.lowercased() }).union(HARReplayOptions.neverMatchedHeaders)
            chosen = recorded.filter { !excluded.contains($0.name.lowercased()) }
        }
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

    /// The member a loader puts on an entry whose response it left in the file (its body, and its
    /// headers unless the body streams from there): the entry's index there, so the response is
    /// read when served (`QueueEntry.bodySource`).
    package static let deferredBodyMember = "_harrecDeferredBody"

    package static func deferredBody(of entry: HAREntry) -> Int? {
        guard let value = entry.custom.last(where: { $0.0 == deferredBodyMember })?.1, case .number(let text) = value else {
            return nil
        }
        return Int(text)
    }

    /// A placeholder, or a placeholder credential after a scheme ("Bearer redacted-1"): the
    /// header then only has to be present.
    package static func isRedactedHeaderValue(_ value: String) -> Bool {
        if HARScenarioBuilder.isRedactionPlaceholder(value) { return true }
        guard let last = value.split(separator: " ").last else { return false }
        return HARScenarioBuilder.isRedactionPlaceholder(String(last))
    }
}
