// A queue made in two steps: a draft of each entry from that entry alone, then the steps that
// compare entries. `harrec replay` drafts each entry as it parses it, so the parsed HAR never
// exists whole; `HARScenarioBuilder.builtItems` and `HARReplayEntries.make` draft a parsed log.

import HAR

/// The drafts of a log's entries, in log order: each queued entry (`entryIndex` set; its label,
/// body condition and repeatability not settled yet) and its request body at the same index.
/// Skipped entries have none.
package struct EntryDrafts: Sendable {
    package var queued: [QueueEntry] = []
    package var bodies: [RequestBodyInfo] = []

    package init() {}

    package mutating func append(_ draft: (queued: QueueEntry, body: RequestBodyInfo)?) {
        guard let draft else { return }
        queued.append(draft.queued)
        bodies.append(draft.body)
    }

    /// `other`'s drafts after these (the next entries of the log).
    package mutating func append(contentsOf other: EntryDrafts) {
        queued.append(contentsOf: other.queued)
        bodies.append(contentsOf: other.bodies)
    }
}

extension HARScenarioBuilder {
    /// When an entry started, for ordering: NaN when `startedDateTime` cannot be parsed (it then
    /// takes the instant of the entry before it, `resolved(_:)`).
    package static func instant(of entry: HAREntry) -> Double {
        HARDate.parse(entry.startedDateTime) ?? .nan
    }

    /// `instants` with each NaN replaced by the instant before it (-infinity for the first).
    package static func resolved(_ instants: [Double]) -> [Double] {
        var previous = -Double.infinity
        return instants.map { t in
            if !t.isNaN { previous = t }
            return previous
        }
    }

    /// The draft of one entry, nil when it is skipped: its condition without a body, its
    /// response (without the `dropping` headers, lowercased) and its request body.
    package static func draft(of entry: HAREntry, index: Int, options: HARScenarioOptions, dropping: Set<String>,
                              proxyAnswersAsFailures: Bool) -> (queued: QueueEntry, body: RequestBodyInfo)? {
        guard let condition = makeCondition(entry, options: options) else { return nil }
        let response = makeResponse(entry, latency: options.latency, dropping: dropping,
                                    proxyAnswersAsFailures: proxyAnswersAsFailures)
        return (QueueEntry(item: ResponseQueueItem(condition: condition, response: response, label: ""), entryIndex: index),
                RequestBodyInfo(entry.request.postData))
    }

    /// The queue from a log's drafts and every entry's `instant(of:)`: in a stable order by start,
    /// labelled, with body conditions and repeatability settled. Changes the drafts in place: a
    /// second array of them doubled what a replay of many entries holds while loading.
    package static func assemble(_ drafts: consuming EntryDrafts, instants: [Double],
                                 options: HARScenarioOptions) -> [QueueEntry] {
        let at = resolved(instants)
        var order = Array(drafts.queued.indices)
        order.sort { a, b in
            let (x, y) = (drafts.queued[a].entryIndex, drafts.queued[b].entryIndex)
            return at[x] != at[y] ? at[x] < at[y] : x < y
        }
        var built = drafts.queued
        var bodies = drafts.bodies
        drafts = EntryDrafts()
        permute(&built, by: order)
        permute(&bodies, by: order)
        for i in built.indices {
            let condition = built[i].item.condition
            built[i].item.label = "#\(i + 1) \(condition.method) \(condition.path)"
        }
        var keys = built.map { conditionKey($0.item.condition) }

        // Body conditions.
        func addBody(_ i: Int) {
            built[i].item.condition.body = bodies[i].hasBody ? bodies[i].match : .text("")
            keys[i] = conditionKey(built[i].item.condition)
        }
        switch options.bodyMatching {
        case .never:
            break
        case .always:
            for i in built.indices where bodies[i].hasBody { addBody(i) }
        case .whenNeeded:
            // A group of equal conditions needs bodies when its members' bodies differ.
            var groups: [String: (body: String, mixed: Bool)] = [:]
            for i in built.indices {
                if let group = groups[keys[i]] {
                    if !group.mixed && group.body != bodies[i].key { groups[keys[i]] = (group.body, true) }
                } else {
                    groups[keys[i]] = (bodies[i].key, false)
                }
            }
            for i in built.indices where groups[keys[i]]?.mixed == true { addBody(i) }
        }

        // Repeatability: the last of equal conditions repeats, earlier ones answer once each.
        var lastIndex: [String: Int] = [:]
        for (i, key) in keys.enumerated() { lastIndex[key] = i }
        for i in built.indices { built[i].item.repeatability = lastIndex[keys[i]] == i ? .always : .once }
        return built
    }

    /// Puts `array[order[k]]` at `k`, in place (along each cycle of the permutation).
    static func permute<T>(_ array: inout [T], by order: [Int]) {
        var done = [Bool](repeating: false, count: order.count)
        for start in order.indices where !done[start] {
            var k = start
            while true {
                done[k] = true
                let next = order[k]
                if next == start { break }
                array.swapAt(k, next)
                k = next
            }
        }
    }
}

extension HARReplayEntries {
    /// The draft of one entry for a replay (nil when it is skipped): the builder's, with its
    /// header conditions, recorded error and left-out response.
    package static func draft(of entry: HAREntry, index: Int, options: HARReplayOptions, dropping: Set<String>,
                              proxyAnswersAsFailures: Bool) -> (queued: QueueEntry, body: RequestBodyInfo)? {
        guard var draft = HARScenarioBuilder.draft(of: entry, index: index, options: options.scenario, dropping: dropping,
                                                   proxyAnswersAsFailures: proxyAnswersAsFailures) else { return nil }
        draft.queued.headers = headerConditions(entry, matching: options.headers)
        draft.queued.recordedError = draft.queued.item.response.endsInFailure ? HARScenarioBuilder.recordedError(entry) : nil
        draft.queued.bodySource = deferredBody(of: entry)
        return draft
    }

    /// The replay queue from a log's drafts (`assemble`), minus dropped query items, with
    /// requests of equal headers sharing one array of conditions, and repeatability recomputed
    /// when dropped items or headers change which conditions are equal.
    package static func finish(_ drafts: consuming EntryDrafts, instants: [Double], options: HARReplayOptions) -> [QueueEntry] {
        let dropped = Set(options.droppedQueryItems.map { $0.lowercased() })
        let unlisted: UnlistedQueryItems = options.queryMatching == .subset ? .allowed : .rejected(except: dropped)
        var built = HARScenarioBuilder.assemble(consume drafts, instants: instants, options: options.scenario)
        // Most requests carry the same headers: one array of conditions serves them all.
        var shared: Set<[HeaderCondition]> = []
        for i in built.indices {
            built[i].item.condition.unlistedQueryItems = unlisted
            if !dropped.isEmpty {
                built[i].item.condition.query.removeAll { q in
                    switch q {
                    case .equals(let n, _), .present(let n): return dropped.contains(n.lowercased())
                    }
                }
            }
            built[i].headers = shared.insert(built[i].headers).memberAfterInsert
        }
        if !dropped.isEmpty || options.headers != .none {
            // Recompute "equal conditions" over what is actually matched.
            var last: [String: Int] = [:]
            var keys: [String] = []
            for i in built.indices {
                let headerKey = built[i].headers.map { "\($0.name.lowercased())=\($0.value ?? "\u{0}")" }
                    .joined(separator: "\u{1}")
                let key = HARScenarioBuilder.conditionKey(built[i].item.condition) + "\u{2}" + headerKey
                keys.append(key)
                last[key] = i
            }
            for i in built.indices { built[i].item.repeatability = last[keys[i]] == i ? .always : .once }
        }
        return built
    }
}
