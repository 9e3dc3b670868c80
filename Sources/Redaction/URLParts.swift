import Foundation
import HAR

/// URL and form helpers: query strings are redacted item by item on decoded values, so a
/// percent-encoded email or token is found, and the same value maps to the same placeholder in
/// `url`, `queryString`, `postData.params` and the urlencoded text.
enum URLParts {
    /// Percent-encodes for a query value: unreserved characters and `@ : / ! $ ' ( ) * , ;` stay.
    static func percentEncodedQueryValue(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            let keep = RedactionEngine.isAlnum(b) || "-._~@:/!$'()*,;".utf8.contains(b)
            if keep {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return out
    }
}

extension RedactionEngine {
    /// Redacts a URL: the part before the query and the fragment as text (userinfo, internal
    /// hosts, private IPs, JWTs and emails in the path), the query item by item.
    func redactURL(_ url: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard !url.isEmpty else { return nil }
        var head = Substring(url)
        var fragment: Substring?
        if let hash = head.firstIndex(of: "#") {
            fragment = head[head.index(after: hash)...]
            head = head[..<hash]
        }
        var query: Substring?
        if let mark = head.firstIndex(of: "?") {
            query = head[head.index(after: mark)...]
            head = head[..<mark]
        }
        var changed = false
        var result = String(head)
        if let r = scanText(result, location, path) {
            result = r
            changed = true
        }
        if let r = replaceKnownSecretsInPath(result, location, path) {
            result = r
            changed = true
        }
        if let query {
            result += "?"
            if let r = redactQuery(String(query), location, path, plusAsSpace: false) {
                result += r
                changed = true
            } else {
                result += query
            }
        }
        if let fragment {
            result += "#"
            if let r = scanText(String(fragment), location, path) {
                result += r
                changed = true
            } else {
                result += fragment
            }
        }
        return changed ? result : nil
    }

    /// Redacts `a=1&b=2` (a URL query or an urlencoded form body): secret names get a
    /// placeholder value; other values are decoded, scanned and, when changed, re-encoded.
    func redactQuery(_ query: String, _ location: RedactionLocation, _ path: () -> String, plusAsSpace: Bool) -> String? {
        var changed = false
        var items: [String] = []
        for item in query.split(separator: "&", omittingEmptySubsequences: false) {
            guard let eq = item.firstIndex(of: "=") else {
                items.append(String(item))
                continue
            }
            let name = String(item[..<eq])
            let rawValue = String(item[item.index(after: eq)...])
            let value = HARBuild.percentDecoded(rawValue, plusAsSpace: plusAsSpace)
            if let replacement = redactParameterValue(name: HARBuild.percentDecoded(name, plusAsSpace: plusAsSpace),
                                                      value: value, location, path) {
                items.append(name + "=" + URLParts.percentEncodedQueryValue(replacement))
                changed = true
            } else {
                items.append(String(item))
            }
        }
        return changed ? items.joined(separator: "&") : nil
    }

    /// A query or form item's value (already decoded, as in `queryString` and `params`).
    func redactParameterValue(name: String, value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        if flags.parameters, config.secretParameterNames.contains(name.lowercased()) {
            return replaceSecret(value, .secretParameters, location, path)
        }
        return redactTextOrJSON(value, location, path) ?? replaceKnownSecret(value, location, path)
    }

    /// multipart/form-data: fields named like secret parameters get a placeholder; other
    /// textual parts are redacted as text or JSON; file parts with binary types are left alone.
    func redactMultipart(_ text: String, boundary: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        let delimiter = "--" + boundary
        let pieces = text.components(separatedBy: delimiter)
        guard pieces.count >= 3 else { return redactTextOrJSON(text, location, path) }
        var changed = false
        var out: [String] = [pieces[0]]
        for piece in pieces.dropFirst() {
            guard !piece.hasPrefix("--"), let split = piece.range(of: "\r\n\r\n") ?? piece.range(of: "\n\n") else {
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
            let partType = lowerHeaders.range(of: "content-type:").map { String(lowerHeaders[$0.upperBound...].prefix { $0 != "\r" && $0 != "\n" }).trimmingSpaces } ?? ""
            if let r = scanText(headers, location, path) {
                headers = r
                changed = true
            }
            if let name, flags.parameters, config.secretParameterNames.contains(name.lowercased()) {
                if let r = replaceSecret(content, .secretParameters, location, path) {
                    content = r
                    changed = true
                }
            } else if isFile && !partType.isEmpty && !BodyKind.isTextual(mimeType: partType) {
                binaryBodies += 1
            } else if let r = redactTextOrJSON(content, location, path) {
                content = r
                changed = true
            }
            out.append(headers + String(piece[split]) + content + trailer)
        }
        return changed ? out.joined(separator: delimiter) : nil
    }

    /// `name="value"` from a Content-Disposition line.
    static func dispositionParameter(_ parameter: String, in headers: String) -> String? {
        let lower = headers.lowercased()
        guard let disposition = lower.range(of: "content-disposition:") else { return nil }
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

    func trimming(_ set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// What a body is, from its MIME type.
enum BodyKind {
    static func isTextual(mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        if type.isEmpty { return false }
        if type.hasPrefix("text/") { return true }
        for marker in ["json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql", "yaml", "csv",
                       "html", "multipart/form-data", "x-ndjson", "problem", "jwt", "plain"]
            where type.contains(marker) { return true }
        return false
    }

    static func boundary(of mimeType: String) -> String? {
        guard mimeType.lowercased().hasPrefix("multipart/") else { return nil }
        for parameter in mimeType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimming(" ").lowercased() == "boundary" else { continue }
            var value = pair[1].trimming(" ")
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    static func isURLEncoded(_ mimeType: String) -> Bool {
        mimeType.lowercased().hasPrefix("application/x-www-form-urlencoded")
    }
}
