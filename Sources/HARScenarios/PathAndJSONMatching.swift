// Path templates and regexes, and JSON containment: the value-level matching shared by HARMocking
// and replay.

import Foundation
import HAR

extension PathPattern {
    /// Whether `path` (percent-encoded, "/" when empty) matches.
    package func matches(_ path: String) -> Bool {
        switch self {
        case .template(let template):
            let want = template.split(separator: "/", omittingEmptySubsequences: false)
            let have = path.split(separator: "/", omittingEmptySubsequences: false)
            for (i, segment) in want.enumerated() {
                let isVariable = segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count >= 2
                if isVariable && segment.hasSuffix("...}") && i == want.count - 1 {
                    return have.count > i && have[i...].allSatisfy { !$0.isEmpty }
                }
                guard i < have.count else { return false }
                if isVariable {
                    if have[i].isEmpty { return false }
                } else if segment != have[i] {
                    return false
                }
            }
            return want.count == have.count
        case .regex(let pattern):
            guard let regex = PatternCache.regex(pattern) else { return false }
            let range = NSRange(path.startIndex..., in: path)
            guard let match = regex.firstMatch(in: path, options: [.anchored], range: range) else { return false }
            return match.range == range
        }
    }
}

/// Compiled regular expressions by pattern (items are values, so they cannot hold one).
private enum PatternCache {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: NSRegularExpression] = [:]

    static func regex(_ pattern: String) -> NSRegularExpression? {
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[pattern] { return cached }
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        cache[pattern] = regex
        return regex
    }
}

extension MockJSON {
    /// Whether `actual` contains `expected`: objects have at least the expected keys with values
    /// that contain the expected ones, arrays have the same length and contain element by element,
    /// other values are equal (numbers by value).
    package static func contains(_ actual: JSONValue, _ expected: JSONValue) -> Bool {
        switch (expected, actual) {
        case (.object(let want), .object(let have)):
            var last: [String: JSONValue] = [:]
            for field in have { last[field.key] = field.value }
            var wanted: [String: JSONValue] = [:]
            for field in want { wanted[field.key] = field.value }
            return wanted.allSatisfy { key, value in last[key].map { contains($0, value) } ?? false }
        case (.array(let want), .array(let have)):
            return want.count == have.count && zip(have, want).allSatisfy { contains($0, $1) }
        default:
            var a = "", b = ""
            write(expected, into: &a)
            write(actual, into: &b)
            return a == b
        }
    }

    /// Whether the JSON text `bytes` contains the JSON text `expected`; false when either is not JSON.
    package static func contains(bytes: [UInt8], expected: String) -> Bool {
        guard let want = try? JSONParser.parse(Array(expected.utf8)), let have = try? JSONParser.parse(bytes) else {
            return false
        }
        return contains(have, want)
    }
}
