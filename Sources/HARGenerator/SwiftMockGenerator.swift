import HAR
import HARScenarios

/// `harrec generate`: turns a recorded session into Swift source for the HARMocking runtime, plus
/// fixture files for bodies that do not belong in source.
///
/// Output, for scenario name `sendingAttachments`:
/// - `SendingAttachmentsHTTPScenario.swift`: a `Scenario` whose queue has one item per recorded
///   HTTP exchange, in order, as `HARScenarioBuilder.items(from:options:)` defines them (the same
///   rules as replaying the HAR directly).
/// - `SendingAttachmentsWebSocketEvents.swift`, when the session has WebSockets: the server
///   messages grouped under named triggers (see `WebSocketPlanner` for the naming), bound by
///   `register(with:center:)`.
/// - fixtures such as `sendingAttachments/v1-projects-42.json`, named after the request path in a
///   directory named after the scenario (see `FixturePlanner`); which bodies become fixtures is
///   described at `GeneratorOptions.jsonBodiesInFixtures` and `GeneratorOptions.defaultInlineLimit`.
///
/// Pure and deterministic: the same log and options give byte-identical files, and the Swift
/// compiles for any input (every recorded string is spelled as an exact literal).
public enum SwiftMockGenerator {
    /// The files for `log`: the scenario source first, then the WebSocket source (if any), then
    /// fixtures in the order the queue references them.
    /// - Throws: `GeneratorError.nothingToGenerate` when no entry survives the filters.
    public static func generate(_ log: HARLog, options: GeneratorOptions) throws -> [GeneratedFile] {
        let sourced = HARScenarioBuilder.sourcedItems(from: log, options: options.scenario)
        let items = sourced.map(\.item)
        var socketPlanner = WebSocketPlanner()
        let sockets = socketPlanner.plan(webSocketEntries(log, includeHost: options.scenario.includeHost))
        guard !items.isEmpty || !sockets.isEmpty else {
            throw GeneratorError.nothingToGenerate(entries: log.entries.count)
        }

        var fixtures = FixturePlanner(scenarioName: options.scenarioName, inlineLimit: options.inlineLimit,
                                      jsonBodiesInFixtures: options.jsonBodiesInFixtures)
        let bodies = items.map { item in
            fixtures.plan(item.response.body, headers: item.response.headers, path: item.condition.path)
        }
        let names = TypeNames(scenarioName: options.scenarioName)
        var files = [
            GeneratedFile(relativePath: names.scenario + ".swift", role: .scenario,
                          bytes: Array(ScenarioEmitter.source(items: items, notes: itemNotes(sourced), bodies: bodies, names: names,
                                                              options: options).utf8)),
        ]
        if !sockets.isEmpty {
            let source = WebSocketEmitter.source(sockets: sockets, triggers: socketPlanner.triggersInOrder,
                                                 names: names, options: options)
            files.append(GeneratedFile(relativePath: names.webSocketEvents + ".swift", role: .webSocketEvents,
                                       bytes: Array(source.utf8)))
        }
        return files + fixtures.fixtures
    }

    /// Comment lines for each item: its recorded failure, and what changed since the previous
    /// recording of the same request.
    static func itemNotes(_ sourced: [HARScenarioBuilder.SourcedItem]) -> [[String]] {
        sourced.map { s in
            var notes: [String] = []
            if let error = s.recordedError {
                notes.append((s.item.response.interruptionCode != nil ? "Cut short: " : "Recorded failure: ") + error)
            }
            if let previous = s.previousRepeat,
               let changes = RepeatNotes.changes(from: sourced[previous].item.response.body, to: s.item.response.body) {
                let name = sourced[previous].item.label ?? "the previous response"
                notes.append("Changed since \(name): \(changes)")
            }
            return notes
        }
    }

    /// Entries carrying `_webSocketMessages`, ordered like `HARScenarioBuilder` orders entries
    /// (by start time, stable), filtered by host.
    static func webSocketEntries(_ log: HARLog, includeHost: (@Sendable (String) -> Bool)?) -> [HAREntry] {
        let sockets = log.entries.enumerated().filter { _, entry in
            guard entry.custom.contains(where: { $0.key == "_webSocketMessages" && $0.value.arrayValue != nil }) else {
                return false
            }
            guard let includeHost else { return true }
            return includeHost(host(of: entry.request.url))
        }
        return sockets.sorted { a, b in
            let ta = HARDate.parse(a.element.startedDateTime) ?? 0
            let tb = HARDate.parse(b.element.startedDateTime) ?? 0
            return ta != tb ? ta < tb : a.offset < b.offset
        }.map(\.element)
    }

    /// The lowercased host of an absolute URL, without port, user info or IPv6 brackets.
    static func host(of url: String) -> String {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        rest = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close]).lowercased()
        }
        if let colon = rest.firstIndex(of: ":") { rest = rest[..<colon] }
        return rest.lowercased()
    }
}

/// The Swift type names for one scenario.
struct TypeNames {
    let scenario: String
    let webSocketEvents: String

    init(scenarioName: String) {
        scenario = SwiftSource.typeName(scenarioName, suffix: "HTTPScenario", fallback: "Unnamed")
        webSocketEvents = SwiftSource.typeName(scenarioName, suffix: "WebSocketEvents", fallback: "Unnamed")
    }
}
