import HAR
import TextEncodings

/// A server-to-client message as the generated code replays it.
enum PlannedEvent: Equatable {
    case text(String)
    /// Bytes as canonical base64.
    case binary(String)
    case close(code: Int, reason: String)
}

/// The server messages one trigger replays.
struct TriggerGroup: Equatable {
    var trigger: String
    /// What the trigger stands for ("client message 2"), for the comment above it.
    var cause: String
    /// The client message itself, when it is text, for the same comment.
    var message: String?
    /// The trigger's own time (connection open or client message), epoch seconds.
    var time: Double?
    /// `truncated`: harrec capped the recorded copy (`_truncated`), so the replay is shorter too.
    var events: [(event: PlannedEvent, time: Double?, truncated: Bool)]

    static func == (a: TriggerGroup, b: TriggerGroup) -> Bool {
        a.trigger == b.trigger && a.cause == b.cause && a.message == b.message && a.time == b.time && a.events.count == b.events.count
            && zip(a.events, b.events).allSatisfy { $0.event == $1.event && $0.time == $1.time && $0.truncated == $1.truncated }
    }
}

/// One recorded WebSocket and its trigger groups.
struct PlannedSocket: Equatable {
    var url: String
    var openedAt: String
    var groups: [TriggerGroup]
    /// Messages that cannot be replayed (ping/pong, undecodable binary), for a comment.
    var skippedMessages: Int
}

/// Turns `_webSocketMessages` (Chrome's shape, also written by harrec and mitmproxy) into trigger
/// groups: the server messages that followed the connection open, or a client message, replay
/// together when that trigger is posted.
///
/// Trigger names are ASCII camelCase, stable for a given recording, unique in the file:
/// `onOpen` for the open; `after<Type>` from a JSON client message's `type` (or `event`,
/// `action`, `op`, `method`, `cmd`, `command`, `kind`, `name`) member, or from a JSON array's first
/// string, or from a short plain-text message of up to three words; otherwise
/// `afterClientMessage<N>` with N the client message's 1-based position in its socket. Repeats get
/// a numeric suffix starting at 2 (`afterSubscribe2`).
struct WebSocketPlanner {
    /// Longest part derived from a message, so names stay readable.
    static let maximumDerivedNameLength = 40
    /// Longest plain-text client message used for a name; longer text is data, not a command.
    static let maximumCommandTextLength = 32
    static let typeKeys = ["type", "event", "action", "op", "method", "cmd", "command", "kind", "name"]

    private var usedTriggers: Set<String> = []
    private(set) var triggersInOrder: [String] = []

    /// The sockets of `entries` (those with a `_webSocketMessages` array), in the given order.
    mutating func plan(_ entries: [HAREntry]) -> [PlannedSocket] {
        var sockets: [PlannedSocket] = []
        for entry in entries {
            guard let messages = entry.custom.last(where: { $0.key == "_webSocketMessages" })?.value.arrayValue else { continue }
            sockets.append(planSocket(entry, messages))
        }
        return sockets
    }

    private mutating func planSocket(_ entry: HAREntry, _ messages: [JSONValue]) -> PlannedSocket {
        var groups: [TriggerGroup] = [
            TriggerGroup(trigger: "onOpen", cause: "connection open", message: nil,
                         time: HARDate.parse(entry.startedDateTime), events: []),
        ]
        var skipped = 0
        var clientMessages = 0
        for message in messages {
            let type = message["type"]?.stringValue ?? ""
            let opcode = message["opcode"]?.intValue ?? 1
            let time = message["time"]?.doubleValue.flatMap { $0.isFinite ? $0 : nil }
            let data = message["data"]?.stringValue ?? ""
            let isBase64 = message["_encoding"]?.stringValue == "base64"
            if type == "send" {
                guard opcode == 1 || opcode == 2 || opcode == 8 else { continue }
                clientMessages += 1
                let text = opcode == 1 && !isBase64 ? data : nil
                let (name, cause) = WebSocketPlanner.triggerName(opcode: opcode, text: text, position: clientMessages)
                groups.append(TriggerGroup(trigger: name, cause: cause, message: text, time: time, events: []))
            } else if type == "receive" {
                guard let event = WebSocketPlanner.event(opcode: opcode, data: data, isBase64: isBase64) else {
                    skipped += 1
                    continue
                }
                let truncated = message["_truncated"]?.boolValue == true
                groups[groups.count - 1].events.append((event, time, truncated))
            }
        }
        // A trigger that replays nothing is noise; its name is only taken when it is kept.
        var kept: [TriggerGroup] = []
        for var group in groups where !group.events.isEmpty {
            group.trigger = unique(group.trigger)
            kept.append(group)
        }
        return PlannedSocket(url: entry.request.url, openedAt: entry.startedDateTime, groups: kept, skippedMessages: skipped)
    }

    private mutating func unique(_ name: String) -> String {
        var candidate = name
        var n = 2
        while usedTriggers.contains(candidate) {
            candidate = name + String(n)
            n += 1
        }
        usedTriggers.insert(candidate)
        triggersInOrder.append(candidate)
        return candidate
    }

    static func event(opcode: Int, data: String, isBase64: Bool) -> PlannedEvent? {
        switch opcode {
        case 1:
            // harrec writes text that is not UTF-8 as base64; only bytes can replay it exactly.
            guard isBase64 else { return .text(data) }
            return Base64.decodeLenient(data).map { .binary(Base64.encode($0)) }
        case 2:
            return Base64.decodeLenient(data).map { .binary(Base64.encode($0)) }
        case 8:
            return close(data)
        default:
            return nil
        }
    }

    /// `"<code> <reason>"`; an empty close frame has no code, which RFC 6455 reports as 1005.
    static func close(_ data: String) -> PlannedEvent {
        let digits = data.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 4, let code = Int(digits) else {
            return .close(code: 1005, reason: data)
        }
        var reason = data.dropFirst(digits.count)
        if reason.first == " " { reason = reason.dropFirst() }
        return .close(code: code, reason: String(reason))
    }

    /// The name a client message gives to the server messages after it, and a description of it.
    /// `text` is nil for a text message recorded as base64 (not UTF-8).
    static func triggerName(opcode: Int, text: String?, position: Int) -> (name: String, cause: String) {
        let fallback = "afterClientMessage\(position)"
        switch opcode {
        case 8:
            return ("afterClientClose", "client close")
        case 1:
            guard let text else { return (fallback, "client text message \(position) (not UTF-8)") }
            let cause = "client message \(position)"
            if let word = commandWord(text) {
                let derived = shortened(SwiftSource.upperCamelCase(word))
                if !derived.isEmpty { return ("after" + derived, cause) }
            }
            return (fallback, cause)
        default:
            return (fallback, "client binary message \(position)")
        }
    }

    /// The word that names a client message, if it has one.
    private static func commandWord(_ text: String) -> String? {
        if let json = try? JSONParser.parse(Array(text.utf8)) {
            switch json {
            case .object:
                for key in typeKeys {
                    if let value = json[key]?.stringValue, !value.isEmpty { return value }
                }
                return nil
            case .array(let items):
                return items.first?.stringValue
            case .string(let s):
                return s.count <= maximumCommandTextLength ? s : nil
            default:
                return nil
            }
        }
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed.count <= maximumCommandTextLength,
              trimmed.split(separator: " ").count <= 3 else { return nil }
        return trimmed
    }

    /// Whole words only, up to `maximumDerivedNameLength` characters.
    private static func shortened(_ camel: String) -> String {
        guard camel.count > maximumDerivedNameLength else { return camel }
        var out = ""
        for word in SwiftSource.words(camel) {
            if out.count + word.count > maximumDerivedNameLength { break }
            out += word
        }
        return out.isEmpty ? String(camel.prefix(maximumDerivedNameLength)) : out
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
