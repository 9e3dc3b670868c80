// Recorded WebSocket conversations for `harrec replay`: which upgrade request each answers (the
// same conditions and ordered repeats as HTTP items) and the messages in recorded order.

import HAR
import TextEncodings

/// One recorded WebSocket: the upgrade it answers and its messages, from Chrome's
/// `_webSocketMessages` (also written by harrec and mitmproxy).
package struct RecordedConversation: Sendable {
    package struct Message: Sendable, Equatable {
        /// True for a client-to-server ("send") message.
        package var fromClient: Bool
        /// 1 text, 2 binary, 8 close (data "CODE reason"), 9 ping, 10 pong.
        package var opcode: UInt8
        package var data: [UInt8]
        /// Epoch seconds, when recorded.
        package var time: Double?

        package init(fromClient: Bool, opcode: UInt8, data: [UInt8], time: Double?) {
            self.fromClient = fromClient; self.opcode = opcode; self.data = data; self.time = time
        }
    }

    package var messages: [Message]
    /// When the connection opened (the entry's start), epoch seconds.
    package var openedAt: Double?
    /// The recorded `Sec-WebSocket-Protocol` the server chose, if any.
    package var subprotocol: String?
    /// The recording ended with the conversation still open (`_webSocketOpen`).
    package var leftOpen: Bool

    package init(messages: [Message], openedAt: Double?, subprotocol: String?, leftOpen: Bool) {
        self.messages = messages; self.openedAt = openedAt; self.subprotocol = subprotocol; self.leftOpen = leftOpen
    }
}

package enum HARReplayConversations {
    /// The WebSocket entries of `log` in recorded order: a queue entry per upgrade (its condition
    /// as an http/https request, a placeholder 101 response, the last of equal conditions
    /// repeating) and the conversation it replays, at the same index.
    /// `instants`: when each entry started, where the log is a part of a HAR (a loader's
    /// WebSocket entries) and an entry whose date cannot be parsed takes the instant of the
    /// entry before it in the whole HAR; by default, from the log itself.
    package static func make(from log: HARLog, options: HARReplayOptions,
                             instants: [Double]? = nil) -> (entries: [QueueEntry], conversations: [RecordedConversation]) {
        var entries: [QueueEntry] = []
        var conversations: [RecordedConversation] = []
        var keys: [String] = []
        let dropped = Set(options.droppedQueryItems.map { $0.lowercased() })
        for index in HARScenarioBuilder.sortedIndices(instants: instants ?? log.entries.map(HARScenarioBuilder.instant(of:))) {
            let entry = log.entries[index]
            guard let messages = entry.custom.last(where: { $0.key == "_webSocketMessages" })?.value.arrayValue else { continue }
            // The upgrade as the request a client sends: http(s), a final status so the
            // generator's rules apply, no WebSocket fields.
            var upgrade = entry
            upgrade.request.url = httpURL(entry.request.url)
            upgrade.response.status = 200
            upgrade.custom = []
            guard var condition = HARScenarioBuilder.makeCondition(upgrade, options: options.scenario),
                  condition.method == "GET" else { continue }
            condition.query.removeAll { q in
                switch q {
                case .equals(let n, _), .present(let n): return dropped.contains(n.lowercased())
                }
            }
            let label = "#\(entries.count + 1) websocket \(condition.path)"
            entries.append(QueueEntry(item: ResponseQueueItem(condition: condition, response: MockResponse(status: 101),
                                                              repeatability: .once, label: label)))
            keys.append(HARScenarioBuilder.conditionKey(condition))
            let subprotocol = entry.response.headers.first { $0.name.lowercased() == "sec-websocket-protocol" }?.value
            let leftOpen = entry.custom.contains { $0.key == "_webSocketOpen" && $0.value == .bool(true) }
            conversations.append(RecordedConversation(messages: messages.compactMap(message),
                                                      openedAt: HARDate.parse(entry.startedDateTime),
                                                      subprotocol: subprotocol, leftOpen: leftOpen))
        }
        var last: [String: Int] = [:]
        for (i, key) in keys.enumerated() { last[key] = i }
        for i in entries.indices where last[keys[i]] == i { entries[i].item.repeatability = .always }
        return (entries, conversations)
    }

    /// ws -> http, wss -> https (harrec and Chrome record WebSocket URLs with ws schemes).
    static func httpURL(_ url: String) -> String {
        if url.lowercased().hasPrefix("wss://") { return "https://" + url.dropFirst(6) }
        if url.lowercased().hasPrefix("ws://") { return "http://" + url.dropFirst(5) }
        return url
    }

    private static func message(_ value: JSONValue) -> RecordedConversation.Message? {
        guard let type = value["type"]?.stringValue, type == "send" || type == "receive" else { return nil }
        let opcode = value["opcode"]?.intValue ?? 1
        guard let code = UInt8(exactly: opcode) else { return nil }
        let text = value["data"]?.stringValue ?? ""
        let base64 = opcode == 2 || value["_encoding"]?.stringValue == "base64"
        let data: [UInt8]
        if base64 {
            guard let decoded = Base64.decodeLenient(text) else { return nil }
            data = decoded
        } else {
            data = Array(text.utf8)
        }
        let time = value["time"]?.doubleValue.flatMap { $0.isFinite ? $0 : nil }
        return RecordedConversation.Message(fromClient: type == "send", opcode: code, data: data, time: time)
    }
}

/// Tunnels the recording could not open (a CONNECT or SOCKS5 entry marked `_refused`, harrec's
/// record of a refused or unreachable target), for `harrec replay` to refuse again.
package struct HARReplayRefusedTunnels: Sendable {
    /// "host:port" -> the last refusal's `_error`, and the targets that answered.
    private var refused: [String: String] = [:]
    private var answered: Set<String> = []

    package init() {}

    /// "host:port" (lowercased) -> the recorded `_error`, for targets the recording has no
    /// exchange with: a target that answered in the same recording is served, not refused.
    package static func make(from log: HARLog) -> [String: String] {
        var tunnels = HARReplayRefusedTunnels()
        for entry in log.entries { tunnels.add(entry) }
        return tunnels.refusedTargets
    }

    /// What `entry` says of its target: refused, or answered.
    package mutating func add(_ entry: HAREntry) {
        guard let parts = MockURLParts(HARReplayConversations.httpURL(entry.request.url)),
              let port = parts.effectivePort else { return }
        let key = "\(parts.host):\(port)"
        let isRefusal = entry.custom.contains { $0.key == "_refused" && $0.value == .bool(true) }
        if isRefusal && entry.request.method.uppercased() == "CONNECT" {
            refused[key] = HARScenarioBuilder.recordedError(entry) ?? "refused"
        } else if entry.response.status > 0 {
            answered.insert(key)
        }
    }

    /// What the entries after those added so far say (a later refusal's error wins).
    package mutating func add(contentsOf later: HARReplayRefusedTunnels) {
        refused.merge(later.refused) { _, new in new }
        answered.formUnion(later.answered)
    }

    /// "host:port" -> `_error` of the targets refused and never answered.
    package var refusedTargets: [String: String] { refused.filter { !answered.contains($0.key) } }
}
