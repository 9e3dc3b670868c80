import HAR
import HARScenarios

/// What changed between two recorded JSON responses to the same request, for a comment above the
/// later item: `status: "pending" -> "done"; items[0].count: 1 -> 2`.
enum RepeatNotes {
    /// Changes shown per item; more are counted.
    static let shownChanges = 3
    /// Values longer than this are cut in comments.
    static let valueLimit = 40

    /// The changes from `old` to `new` when both are JSON and differ, else nil.
    static func changes(from old: ResponseBody, to new: ResponseBody) -> String? {
        guard case .text(let a) = old, case .text(let b) = new, a != b,
              let x = try? JSONParser.parse(Array(a.utf8)), let y = try? JSONParser.parse(Array(b.utf8)) else { return nil }
        var found: [String] = []
        var total = 0
        diff(x, y, path: "", into: &found, total: &total)
        guard total > 0 else { return nil }
        var text = found.joined(separator: "; ")
        if total > found.count { text += "; and \(total - found.count) more" }
        return text
    }

    private static func diff(_ a: JSONValue?, _ b: JSONValue?, path: String, into found: inout [String], total: inout Int) {
        switch (a, b) {
        case (.object(let x)?, .object(let y)?):
            var left: [String: JSONValue] = [:], right: [String: JSONValue] = [:]
            for f in x { left[f.key] = f.value }
            for f in y { right[f.key] = f.value }
            var keys = x.map(\.key)
            for f in y where left[f.key] == nil { keys.append(f.key) }
            var seen = Set<String>()
            for key in keys where seen.insert(key).inserted {
                diff(left[key], right[key], path: path.isEmpty ? key : path + "." + key, into: &found, total: &total)
            }
        case (.array(let x)?, .array(let y)?) where x.count == y.count:
            for i in x.indices { diff(x[i], y[i], path: path + "[\(i)]", into: &found, total: &total) }
        default:
            let before = a.map(render), after = b.map(render)
            guard before != after else { return }
            total += 1
            if found.count < shownChanges {
                found.append("\(path.isEmpty ? "body" : path): \(before ?? "(none)") -> \(after ?? "(none)")")
            }
        }
    }

    private static func render(_ value: JSONValue) -> String {
        let text: String
        switch value {
        case .null: text = "null"
        case .bool(let b): text = b ? "true" : "false"
        case .number(let n): text = n
        case .string(let s): text = s.debugDescription
        case .array(let items): text = "[\(items.count) items]"
        case .object(let fields): text = "{\(fields.count) keys}"
        }
        return text.count <= valueLimit ? text : String(text.prefix(valueLimit)) + "…"
    }
}
