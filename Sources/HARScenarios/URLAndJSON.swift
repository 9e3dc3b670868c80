// URL parts and JSON values as matching sees them, for recorded and live requests alike.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HAR
import TextEncodings

// MARK: - URL splitting (shared by recorded and live sides)

/// An absolute URL split the way matching needs it, without normalising the path.
package struct MockURLParts: Equatable {
    /// Lowercased.
    package var scheme: String
    /// Lowercased; IPv6 addresses without brackets.
    package var host: String
    /// The port as written; nil when absent.
    package var port: Int?
    /// Percent-encoded as written, "/" when empty.
    package var path: String
    /// The raw query without "?"; nil when there is no "?".
    package var rawQuery: String?

    package static func defaultPort(_ scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http", "ws": return 80
        case "https", "wss": return 443
        default: return nil
        }
    }

    /// The port a connection would use.
    package var effectivePort: Int? { port ?? MockURLParts.defaultPort(scheme) }

    package init?(_ string: String) {
        guard let sep = string.firstRange(of: "://") else { return nil }
        let scheme = string[..<sep.lowerBound]
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." })
        else { return nil }
        self.scheme = scheme.lowercased()
        var rest = string[sep.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        if let portPart, !portPart.isEmpty {
            guard let p = Int(portPart), p >= 0, p <= 65535 else { return nil }
            port = p
        } else {
            port = nil
        }
        guard !hostPart.isEmpty else { return nil }
        host = hostPart.lowercased()
        let afterAuthority = rest[authorityEnd...]
        if let q = afterAuthority.firstIndex(of: "?") {
            path = String(afterAuthority[..<q])
            rawQuery = String(afterAuthority[afterAuthority.index(after: q)...])
        } else {
            path = String(afterAuthority)
            rawQuery = nil
        }
        if path.isEmpty { path = "/" }
    }

    /// Query items in order, percent-decoded; empty segments (`a=1&&b=2`) are skipped.
    package var queryItems: [(name: String, value: String?)] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { segment in
            if let eq = segment.firstIndex(of: "=") {
                return (MockURLParts.percentDecoded(segment[..<eq]),
                        MockURLParts.percentDecoded(segment[segment.index(after: eq)...]))
            }
            return (MockURLParts.percentDecoded(segment), nil)
        }
    }

    /// Decodes %XX escapes; text whose escapes are not valid UTF-8 is kept as written. "+" is kept
    /// (it is only a space in form bodies, and both sides are decoded the same way anyway).
    package static func percentDecoded(_ s: Substring) -> String {
        guard s.contains("%") else { return String(s) }
        let bytes = PercentEncoding.decodedBytes(Array(s.utf8)[...], plusAsSpace: false)
        return String(validating: bytes, as: UTF8.self) ?? String(s)
    }
}

// MARK: - JSON equality by value

package enum MockJSON {
    /// A canonical text for a JSON document (object keys sorted, last duplicate wins, numbers by
    /// value), or nil when `text` is not JSON. Two documents are equal as JSON values exactly when
    /// their canonical texts are equal.
    package static func canonical(_ text: String) -> String? {
        canonical(bytes: Array(text.utf8))
    }

    package static func canonical(bytes: [UInt8]) -> String? {
        guard let value = try? JSONParser.parse(bytes) else { return nil }
        var out = ""
        write(value, into: &out)
        return out
    }

    package static func write(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let literal):
            if let i = Int(literal) {
                out += String(i)
            } else if let d = Double(literal) {
                if d.isFinite, d == d.rounded(.towardZero), abs(d) < 9.0e15 { out += String(Int(d)) } else { out += "\(d)" }
            } else {
                out += literal
            }
        case .string(let s): out += s.debugDescription
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, into: &out)
            }
            out += "]"
        case .object(let fields):
            var last: [String: JSONValue] = [:]
            for field in fields { last[field.key] = field.value }
            out += "{"
            for (i, key) in last.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                out += key.debugDescription + ":"
                write(last[key]!, into: &out)
            }
            out += "}"
        }
    }
}
