// The serving queue shared by NetworkMock, HARReplayProtocol and `harrec replay`: which item answers
// a request, how often items were used, `reset`, and what was never served. Pure and unlocked;
// each owner holds it under its own lock so a `.once` item is never served twice.

/// How a request compared with one entry, for a diagnosis.
package struct CandidateReport {
    package var index: Int
    package var report: MatchReport
}

/// One item of a serving queue and the request headers it also requires (HAR replay only).
package struct QueueEntry: Sendable {
    package var item: ResponseQueueItem
    package var headers: [HeaderCondition]
    /// A recorded failure's `_error` (`upstream reset the stream (ENHANCE_YOUR_CALM)`): a replaying
    /// proxy ends it as the recording's client saw it end.
    package var recordedError: String?
    /// The HAR entry whose response is read when the item is served, for a body too large to keep
    /// or a response past what a replay keeps in memory (`HARReplayEntries.deferredBodyMember`);
    /// the item's own body is then empty, and its headers too unless the body streams.
    package var bodySource: Int?
    /// The index in its log of the entry the item was made from, for a builder that adds to it
    /// (`HARScenarioBuilder.builtItems`): one array of items, changed in place, where a second one
    /// made from it doubled what a replay of many entries holds while loading.
    package var entryIndex: Int

    package init(item: ResponseQueueItem, headers: [HeaderCondition] = [], recordedError: String? = nil,
                 bodySource: Int? = nil, entryIndex: Int = 0) {
        self.item = item
        self.headers = headers
        self.recordedError = recordedError
        self.bodySource = bodySource
        self.entryIndex = entryIndex
    }
}

/// Items in queue order with their use counts. The first item in queue order that matches a
/// request and has uses left answers it; that is the whole ordering rule of HARMocking and replay,
/// but for one refinement: when that item allows query items it does not list, a later such item
/// that lists more of the request's items answers instead (the most specific match).
package struct ServingQueue: Sendable {
    /// Names what is being served in messages: `scenario "login"`, `HAR file x.har`.
    package var source: String
    package private(set) var entries: [QueueEntry]
    /// Times each entry was served since the queue was made or last `reset`, parallel to `entries`.
    package private(set) var served: [Int]
    /// Whether each entry was ever served since the queue was made (`reset` keeps these).
    package private(set) var everServed: [Bool]
    /// Changes whenever what a request would get can change (an item served, a reset): a
    /// diagnosis made at one generation holds until the next.
    package private(set) var generation = 0
    /// Entry indices by "METHOD path", in queue order, for conditions with a plain method and
    /// path; the others (wildcard method, path patterns) are in `unindexed`. A request can only
    /// match entries under its own key or unindexed ones, so a 1,000-item HAR costs a few matches
    /// per request instead of a thousand.
    private var index: [String: PathEntries] = [:]
    private var unindexed: [Int] = []

    /// The entries of one "METHOD path": those whose query items must be exactly some values
    /// (most recorded ones) by those values, the rest in `other`. A request then meets only the
    /// items with its own query items, however many the path has (1,000 searches on `/search`).
    private struct PathEntries {
        var byQuery: [[QueryItemKey]: [Int]] = [:]
        var other: [Int] = []
    }

    package init(entries: [QueueEntry] = [], source: String = "") {
        self.source = source
        self.entries = entries
        served = Array(repeating: 0, count: entries.count)
        everServed = Array(repeating: false, count: entries.count)
        rebuildIndex()
    }

    /// Puts an entry first in the queue (a stub); indices of the others move up by one.
    package mutating func insertFirst(_ entry: QueueEntry) {
        generation &+= 1
        entries.insert(entry, at: 0)
        served.insert(0, at: 0)
        everServed.insert(false, at: 0)
        rebuildIndex()
    }

    /// Every queue back to its first item; what was ever served is kept.
    package mutating func reset() {
        served = Array(repeating: 0, count: entries.count)
        generation &+= 1
    }

    package static func usesLeft(_ r: Repeatability, served: Int) -> Int {
        switch r {
        case .once: return max(0, 1 - served)
        case .times(let n): return max(0, n - served)
        case .always: return Int.max
        }
    }

    /// Items never served, whatever their repeatability, then `.once`/`.times` items with uses
    /// left in the current round; in queue order, each once.
    package func unusedIndices() -> [Int] {
        entries.indices.filter { i in
            if !everServed[i] { return true }
            if case .always = entries[i].item.repeatability { return false }
            return ServingQueue.usesLeft(entries[i].item.repeatability, served: served[i]) > 0
        }
    }

    package enum Pick {
        /// Entry `index` answers; its use is counted.
        case served(index: Int)
        /// Nothing answers (`diagnosisReports` says why).
        case unmatched
    }

    /// The first entry in queue order that matches `request` and has uses left, counted as used.
    package mutating func pick(for request: MatchInput) -> Pick {
        let key = ServingQueue.key(method: request.method, path: request.parts?.path ?? "")
        let entriesOfPath = index[key]
        let lists = [entriesOfPath?.byQuery[ServingQueue.queryKey(request.queryItems)] ?? [], entriesOfPath?.other ?? [], unindexed]
        // Each list is in queue order; walk them merged.
        var positions = [0, 0, 0]
        var chosen: (index: Int, queryItems: Int)?
        while true {
            var next = -1
            for l in 0..<3 where positions[l] < lists[l].count && (next < 0 || lists[l][positions[l]] < lists[next][positions[next]]) {
                next = l
            }
            guard next >= 0 else { break }
            let i = lists[next][positions[next]]
            positions[next] += 1
            guard ServingQueue.usesLeft(entries[i].item.repeatability, served: served[i]) > 0 else { continue }
            let condition = entries[i].item.condition
            if let first = chosen, condition.unlistedQueryItems != .allowed || condition.query.count <= first.queryItems {
                continue  // no more specific than the item chosen
            }
            let report = RequestMatcher.evaluate(condition, headers: entries[i].headers, against: request)
            guard report.matches else { continue }
            chosen = (i, report.queryItemsMatched)
            // An exact item says everything about the query: nothing after it is more specific.
            if condition.unlistedQueryItems != .allowed { break }
        }
        if let (i, _) = chosen {
            served[i] += 1
            everServed[i] = true
            generation &+= 1
            return .served(index: i)
        }
        return .unmatched
    }

    /// How an unmatched request compares with the entries its diagnosis looks at, in queue order
    /// (`diagnosisCandidates`).
    package func diagnosisReports(for request: MatchInput) -> [CandidateReport] {
        let key = ServingQueue.key(method: request.method, path: request.parts?.path ?? "")
        return diagnosisCandidates(for: request, key: key).map {
            CandidateReport(index: $0, report: RequestMatcher.evaluate(entries[$0].item.condition, headers: entries[$0].headers,
                                                                       against: request))
        }
    }

    /// How many entries an unmatched request is compared with for its diagnosis: a flood of
    /// unmatched requests to a large HAR costs a bounded amount each.
    package static let diagnosisReach = 256

    /// The entries an unmatched request's diagnosis compares it with, in queue order, at most
    /// `diagnosisReach`: every entry that can match it fully (its "METHOD path" with its query
    /// items, then the rest of that path, then unindexed ones), then entries of the same method
    /// under the same parent path (`/v1/projects/42` for `/v1/projects/43`), then the others.
    private func diagnosisCandidates(for request: MatchInput, key: String) -> [Int] {
        var taken = Set<Int>()
        var order: [Int] = []
        func take(_ i: Int) {
            if order.count < Self.diagnosisReach, taken.insert(i).inserted { order.append(i) }
        }
        if let bucket = index[key] {
            (bucket.byQuery[ServingQueue.queryKey(request.queryItems)] ?? []).forEach(take)
            bucket.other.forEach(take)
            unindexed.forEach(take)
            for list in bucket.byQuery.values { list.forEach(take) }
        } else {
            unindexed.forEach(take)
        }
        if order.count < Self.diagnosisReach, entries.count > Self.diagnosisReach {
            let parent = ServingQueue.parentPath(request.parts?.path ?? "")
            for i in entries.indices where entries[i].item.condition.method == request.method
                && ServingQueue.parentPath(entries[i].item.condition.path) == parent {
                take(i)
            }
        }
        for i in entries.indices where order.count < Self.diagnosisReach { take(i) }
        return order.sorted()
    }

    private static func parentPath(_ path: String) -> Substring {
        path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
    }

    /// "#3 GET /v1/feed" unless the item has a label.
    package func label(_ i: Int) -> String {
        let item = entries[i].item
        return item.label ?? "#\(i + 1) \(item.condition.method) \(item.condition.path)"
    }

    private static func key(method: String, path: String) -> String { method + " " + path }

    /// One query item as the index compares it: a value-less item (`?flag`) differs from an empty
    /// one (`?flag=`).
    private struct QueryItemKey: Hashable, Comparable {
        var name: String
        var value: String?

        static func < (a: Self, b: Self) -> Bool {
            a.name != b.name ? a.name < b.name : (a.value ?? "", a.value != nil ? 1 : 0) < (b.value ?? "", b.value != nil ? 1 : 0)
        }
    }

    /// The same key for the same query items in any order (a multiset); items are kept whole, so
    /// no name or value can make two different sets share a key.
    private static func queryKey(_ items: [(name: String, value: String?)]) -> [QueryItemKey] {
        items.map { QueryItemKey(name: $0.name, value: $0.value) }.sorted()
    }

    /// The query key every request this condition can match has, when there is one: only exact
    /// values (`.equals`) and no other items allowed.
    private static func queryKey(of condition: RequestCondition) -> [QueryItemKey]? {
        guard condition.unlistedQueryItems == .rejected() else { return nil }
        var items: [(name: String, value: String?)] = []
        for item in condition.query {
            guard case .equals(let name, let value) = item else { return nil }
            items.append((name, value))
        }
        return queryKey(items)
    }

    private mutating func rebuildIndex() {
        index = [:]
        unindexed = []
        for (i, entry) in entries.enumerated() {
            let condition = entry.item.condition
            if condition.method == "*" || condition.pathPattern != nil {
                unindexed.append(i)
            } else {
                let key = ServingQueue.key(method: condition.method.uppercased(), path: condition.path)
                if let queryKey = ServingQueue.queryKey(of: condition) {
                    index[key, default: PathEntries()].byQuery[queryKey, default: []].append(i)
                } else {
                    index[key, default: PathEntries()].other.append(i)
                }
            }
        }
    }
}

/// Requests sent to one address (scheme, host, port and a path prefix) answered from the items
/// recorded for another host, whatever their scheme and port: a scenario recorded against
/// `api.example.com` serves an app pointed at `http://127.0.0.1:8080` or at a staging host.
package struct HostRemap: Sendable, Equatable {
    /// Lowercased.
    package var recordedHost: String
    package var scheme: String
    package var host: String
    package var port: Int?
    /// "" or a path without a trailing "/" ("/api").
    package var pathPrefix: String

    /// `target`: an absolute http or https URL.
    package init?(recordedHost: String, target: String) {
        guard let parts = MockURLParts(target), parts.scheme == "http" || parts.scheme == "https",
              !parts.host.isEmpty else { return nil }
        self.recordedHost = recordedHost.lowercased()
        scheme = parts.scheme
        host = parts.host
        port = parts.effectivePort
        var prefix = parts.path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        pathPrefix = prefix
    }

    package func applies(to request: MatchInput) -> Bool {
        guard let parts = request.parts, parts.scheme == scheme, parts.host == host, parts.effectivePort == port else {
            return false
        }
        if pathPrefix.isEmpty { return true }
        return parts.path == pathPrefix || parts.path.hasPrefix(pathPrefix + "/")
    }

    package func apply(to request: inout MatchInput) {
        guard var parts = request.parts else { return }
        parts.host = recordedHost
        if !pathPrefix.isEmpty {
            let rest = String(parts.path.dropFirst(pathPrefix.count))
            parts.path = rest.isEmpty ? "/" : rest
        }
        request.parts = parts
        request.remappedHost = recordedHost
    }
}
