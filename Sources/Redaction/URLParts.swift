#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import TextEncodings

/// URL and form helpers: query strings are redacted item by item on decoded values, so a
/// percent-encoded email or token is found, and the same value maps to the same placeholder in
/// `url`, `queryString`, `postData.params` and the urlencoded text.
enum URLParts {}

extension MarkerSyntax {
    /// Text (which may hold markers) to be written percent-encoded as a query value once its
    /// markers are resolved.
    func queryEncoded(_ text: String) -> String {
        String(decoding: Self.percentOpen + nonce + Array(text.utf8) + Self.percentClose + nonce, as: UTF8.self)
    }

    static let percentOpen: [UInt8] = [0xEE, 0x80, 0x86]
    static let percentClose: [UInt8] = [0xEE, 0x80, 0x87]
}

extension RedactionEngine {
    /// Redacts a URL: the part before the query as text (userinfo, internal hosts, private IPs,
    /// JWTs, emails and keys in the path), the query and a fragment with parameters item by item.
    func redactURL(_ url: String, _ reading: Reading, _ path: () -> String) -> String? {
        guard !url.isEmpty else { return nil }
        // Found as bytes (ASCII, so at character boundaries): a search by Character walked
        // the URL grapheme by grapheme.
        var head = Substring(url)
        var fragment: Substring?
        if let hash = head.utf8.firstIndex(of: 0x23) {
            fragment = head[head.utf8.index(after: hash)...]
            head = head[..<hash]
        }
        var query: Substring?
        if let mark = head.utf8.firstIndex(of: 0x3F) {
            query = head[head.utf8.index(after: mark)...]
            head = head[..<mark]
        }
        var changed = false
        var result = String(head)
        if let r = scanText(result, reading, path) {
            result = r
            changed = true
        }
        for (separator, part) in [("?", query), ("#", fragment)] {
            guard let part else { continue }
            result += separator
            // An OAuth implicit-flow fragment (`#access_token=...`) is a query too.
            let r = part.utf8.contains(0x3D) ? redactQuery(String(part), reading, path, plusAsSpace: false)
                : scanText(String(part), reading, path)
            if let r {
                result += r
                changed = true
            } else {
                result += part
            }
        }
        return changed ? result : nil
    }

    /// Redacts `a=1&b=2` (a URL query or an urlencoded form body): secret names get a
    /// placeholder value; other values are decoded, scanned and, when changed, re-encoded.
    func redactQuery(_ query: String, _ reading: Reading, _ path: () -> String, plusAsSpace: Bool) -> String? {
        var changed = false
        var items: [String] = []
        for item in query.pieces(splitAt: 0x26) {
            guard let eq = item.firstIndex(ofByte: 0x3D) else {
                items.append(String(item))
                continue
            }
            let name = String(item[..<eq])
            let rawValue = String(item[item.index(afterByte: eq)...])
            let value = PercentEncoding.decoded(rawValue, plusAsSpace: plusAsSpace)
            if let replacement = redactParameterValue(name: PercentEncoding.decoded(name, plusAsSpace: plusAsSpace),
                                                      value: value, reading, path) {
                items.append(name + "=" + syntax.queryEncoded(replacement))
                changed = true
            } else {
                items.append(String(item))
            }
        }
        return changed ? items.joined(separator: "&") : nil
    }

    /// What a parameter's name decides about its value (query and form items, multipart parts).
    private enum NameDecision {
        /// Redacted by its name: the replacement, or nil when it stays.
        case decided(String?)
        /// An ordinary name: the value is redacted as content.
        case byContent
    }

    private func decideByName(_ name: String, _ value: String, _ reading: Reading, _ path: () -> String) -> NameDecision {
        let nameClass = parameterClass(name)
        if nameClass == .version {
            return .decided(redactTextOrJSON(value, reading.with(.version), path))
        }
        if nameClass != .ordinary {
            if let r = replaceNamedValue(value, nameClass, secretRule: .secretParameters, reading, path) { return .decided(r) }
            if nameClass == .secret && flags.has(.secretParameters) { return .decided(nil) }
        } else if name.utf8.count <= 2, Self.isShortNameToken(value) {
            return .decided(replaceSecret(value, formatRule(of: value) ?? .secretParameters, reading, path))
        }
        return .byContent
    }

    /// A query or form item's value (already decoded, as in `queryString` and `params`).
    func redactParameterValue(name: String, value: String, _ reading: Reading, _ path: () -> String) -> String? {
        if case .decided(let r) = decideByName(name, value, reading, path) { return r }
        return redactTextOrJSON(value, reading, path)
    }

    /// The class of a query, form or multipart parameter name: the exact names (`code`, `key`,
    /// `sig`) and every name whose words hold a secret word.
    func parameterClass(_ name: String) -> NameClass {
        let lower = name.lowercased()
        if config.secretParameterNames.contains(lower) || lower == "key" { return .secret }
        return nameMemo.classify(name)
    }

    /// multipart/form-data: fields with secret names get a placeholder; other textual parts are
    /// redacted as text or JSON; binary file parts are scanned for printable runs.
    func redactMultipart(_ text: String, boundary: String, _ reading: Reading, _ path: () -> String) -> String? {
        let delimiter = "--" + boundary
        let pieces = text.split(separator: delimiter, omittingEmptySubsequences: false).map(String.init)
        guard pieces.count >= 3 else { return redactTextOrJSON(text, reading, path) }
        var changed = false
        var out: [String] = [pieces[0]]
        for piece in pieces.dropFirst() {
            guard !piece.hasPrefix("--"), let split = piece.firstRange(of: "\r\n\r\n") ?? piece.firstRange(of: "\n\n") else {
                out.append(piece)
                continue
            }
            var headers = String(piece[..<split.lowerBound])
            var content = String(piece[split.upperBound...])
            var trailer = ""
            if content.hasSuffix("\r\n") { content.removeLast(1); trailer = "\r\n" }  // "\r\n" is one Character
            else if content.hasSuffix("\n") { content.removeLast(); trailer = "\n" }
            let lowerHeaders = headers.lowercased()
            let name = Self.dispositionParameter("name", in: headers)
            let isFile = Self.dispositionParameter("filename", in: headers) != nil
            var partType = ""
            if let typeHeader = lowerHeaders.firstRange(of: "content-type:") {
                let line = lowerHeaders[typeHeader.upperBound...].prefix { $0 != "\r" && $0 != "\n" }
                partType = String(line).trimmingSpaces
            }
            // The name as it will stand decides too: a second run sees only that one (a name over
            // `NameMatcher.maximumNameLength` is ordinary until a placeholder shortens it).
            var names = name.map { [$0] } ?? []
            if let r = scanText(headers, reading, path) {
                headers = r
                changed = true
                if let redactedName = Self.dispositionParameter("name", in: r), redactedName != name { names.append(redactedName) }
            }
            if let r = redactPart(names: names, content: content, binary: isFile && !partType.isEmpty && !BodyKind.isTextual(mimeType: partType),
                                  mimeType: partType, reading, path) {
                content = r
                changed = true
            }
            out.append(headers + String(piece[split]) + content + trailer)
        }
        return changed ? out.joined(separator: delimiter) : nil
    }

    private func redactPart(names: [String], content: String, binary: Bool, mimeType: String,
                            _ reading: Reading, _ path: () -> String) -> String? {
        for name in names {
            if case .decided(let r) = decideByName(name, content, reading, path) { return r }
        }
        if binary {
            // Text already (the body was UTF-8): scan it keeping every length.
            binaryBodies += 1
            return scanText(content, reading.with(.sameLength), path)
        }
        return mimeType.isEmpty ? redactTextOrJSON(content, reading, path)
            : redactDecodedBody(content, mimeType: mimeType, reading, path)
    }

    /// `name="value"` from a Content-Disposition line.
    static func dispositionParameter(_ parameter: String, in headers: String) -> String? {
        let lower = headers.lowercased()
        guard let disposition = lower.firstRange(of: "content-disposition:") else { return nil }
        let line = headers[disposition.upperBound...].prefix { $0 != "\r" && $0 != "\n" }
        for attribute in line.split(separator: ";") {
            let pair = attribute.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimming(" ").lowercased() == parameter else { continue }
            var value = pair[1].trimming(" ")
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}

extension StringProtocol {
    var trimmingSpaces: String { trimming(" \t") }

    /// The pieces between occurrences of the ASCII `byte` (empty ones kept), found as bytes:
    /// `split(separator:)` by Character walked every header and query grapheme by grapheme.
    func pieces(splitAt byte: UInt8) -> [SubSequence] {
        let utf8 = self.utf8
        var result: [SubSequence] = []
        var start = utf8.startIndex, i = start
        while i < utf8.endIndex {
            if utf8[i] == byte {
                result.append(self[start..<i])
                start = utf8.index(after: i)
            }
            i = utf8.index(after: i)
        }
        result.append(self[start..<utf8.endIndex])
        return result
    }

    /// Where the first ASCII `byte` is, found as bytes.
    func firstIndex(ofByte byte: UInt8) -> Index? { utf8.firstIndex(of: byte) }

    /// The index after the ASCII byte at `i`.
    func index(afterByte i: Index) -> Index { utf8.index(after: i) }

    /// Without the leading and trailing bytes that are in `set` (ASCII), compared as bytes: a
    /// trailing `\r\n` goes too (one Character, which a Character comparison would keep).
    func trimming(_ set: StaticString) -> String {
        let trim = UnsafeBufferPointer(start: set.utf8Start, count: set.utf8CodeUnitCount)
        let utf8 = self.utf8
        var start = utf8.startIndex
        while start < utf8.endIndex && trim.contains(utf8[start]) { start = utf8.index(after: start) }
        // Forward to the end of the last byte kept (a protocol's UTF-8 view does not walk back).
        var end = start, i = start
        while i < utf8.endIndex {
            let next = utf8.index(after: i)
            if !trim.contains(utf8[i]) { end = next }
            i = next
        }
        return String(self[start..<end])
    }
}
