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

    /// The parts of `string`, an absolute URL; nil when it has no `scheme://` or a bad authority.
    /// An ASCII URL (nearly every recorded one) is read byte by byte; any other is read by
    /// characters, with the same rules.
    package init?(_ string: String) {
        var text = string
        switch text.withUTF8({ Self.parseASCII($0) }) {
        case .parsed(let parts): self = parts
        case .invalid: return nil
        case .notASCII: self.init(characters: string)
        }
    }

    package init(scheme: String, host: String, port: Int?, path: String, rawQuery: String?) {
        self.scheme = scheme; self.host = host; self.port = port; self.path = path; self.rawQuery = rawQuery
    }

    enum ASCIIParse { case parsed(MockURLParts), invalid, notASCII }

    static func parseASCII(_ b: UnsafeBufferPointer<UInt8>) -> ASCIIParse {
        let n = b.count
        for byte in b where byte >= 0x80 { return .notASCII }
        func text(_ range: Range<Int>, lowercased: Bool = false) -> String {
            let slice = UnsafeBufferPointer(rebasing: b[range])
            guard lowercased, slice.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else {
                return String(decoding: slice, as: UTF8.self)
            }
            return String(decoding: slice.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        func first(_ byte: UInt8, in range: Range<Int>) -> Int? { range.first { b[$0] == byte } }
        func last(_ byte: UInt8, in range: Range<Int>) -> Int? { range.last { b[$0] == byte } }
        var k = 0
        while k + 2 < n && !(b[k] == 0x3A && b[k + 1] == 0x2F && b[k + 2] == 0x2F) { k += 1 }
        guard k + 2 < n else { return .invalid }
        let sep = k
        func isSchemeByte(_ c: UInt8) -> Bool {
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D || c == 0x2E
        }
        guard sep > 0, (0..<sep).allSatisfy({ isSchemeByte(b[$0]) }) else { return .invalid }
        let restStart = sep + 3
        let end = first(0x23, in: restStart..<n) ?? n  // '#'
        let authorityEnd = (restStart..<end).first { b[$0] == 0x2F || b[$0] == 0x3F } ?? end
        let authorityStart = last(0x40, in: restStart..<authorityEnd).map { $0 + 1 } ?? restStart  // '@'
        var host = authorityStart..<authorityEnd
        var portBytes: Range<Int>?
        if authorityStart < authorityEnd && b[authorityStart] == 0x5B {  // '['
            guard let close = first(0x5D, in: authorityStart..<authorityEnd) else { return .invalid }
            host = (authorityStart + 1)..<close
            if close + 1 < authorityEnd {
                guard b[close + 1] == 0x3A else { return .invalid }
                portBytes = (close + 2)..<authorityEnd
            }
        } else if let colon = last(0x3A, in: authorityStart..<authorityEnd) {
            host = authorityStart..<colon
            portBytes = (colon + 1)..<authorityEnd
        }
        var port: Int?
        if let portBytes, !portBytes.isEmpty {
            guard let p = Int(text(portBytes)), p >= 0, p <= 65535 else { return .invalid }
            port = p
        }
        guard !host.isEmpty else { return .invalid }
        var path: String
        var rawQuery: String?
        if let q = first(0x3F, in: authorityEnd..<end) {
            path = text(authorityEnd..<q)
            rawQuery = text((q + 1)..<end)
        } else {
            path = text(authorityEnd..<end)
        }
        if path.isEmpty { path = "/" }
        return .parsed(MockURLParts(scheme: text(0..<sep, lowercased: true), host: text(host, lowercased: true),
                                    port: port, path: path, rawQuery: rawQuery))
    }

    /// `init(_:)` for a URL that is not all ASCII, by characters.
    package init?(characters string: String) {
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
