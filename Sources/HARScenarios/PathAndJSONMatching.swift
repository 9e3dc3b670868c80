// Path templates and regexes, and JSON containment: the value-level matching shared by HARMocking
// and replay.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HAR
import Synchronization

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
            return PatternCache.wholeMatch(pattern, path)
        }
    }
}

/// Compiled regular expressions by pattern (items are values, so they cannot hold one). Swift's
/// Regex, not NSRegularExpression: this target is Foundation-free, and `harrec` links it.
private enum PatternCache {
    private static let cache = Mutex<[String: CompiledPattern]>([:])

    /// Whether the whole of `text` matches `pattern`; false when the pattern does not compile.
    static func wholeMatch(_ pattern: String, _ text: String) -> Bool {
        let compiled = cache.withLock { cache in
            if let found = cache[pattern] { return found }
            let made = CompiledPattern(regex: try? Regex(pattern))
            cache[pattern] = made
            return made
        }
        guard let regex = compiled.regex else { return false }
        return (try? regex.wholeMatch(in: text)) != nil
    }
}

/// A compiled Regex is immutable once made; matching does not change it.
private struct CompiledPattern: @unchecked Sendable {
    let regex: Regex<AnyRegexOutput>?
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
