import HAR
import TextEncodings

/// `redact --check`'s second, independent reader: what it reports does not depend on the
/// engine's positions, word lists or look-back, so a blind spot of the redactor is not one of
/// the check. It reads every string of an entry (URL, headers, cookies, query and form items,
/// bodies, WebSocket messages, and JSON members inside them) and reports:
/// - a catalogued key format anywhere, also glued to other text (`KeyFormats.all`);
/// - a value under a name with a secret word (`token`, `secret`, `password`, `api_key`,
///   `credential`, `auth`, whatever words follow it), in a cookie or in `Authorization`, that is
///   no placeholder and could be a secret: eight bytes or more, with a digit or mixed case, not
///   a word, a URL, a date or a number.
enum SecondOpinion {
    static let formatRule = RedactionRule("check-format")
    static let namedValueRule = RedactionRule("check-secret-name")

    /// Words of a name that make its value a secret for the check, whatever words follow them.
    static let secretWords: Set<String> = [
        "token", "tokens", "secret", "secrets", "password", "passwords", "passwd", "pwd", "passphrase", "apikey",
        "credential", "credentials", "auth", "authorization", "session", "sessionid", "signature", "sig", "jwt",
        "bearer", "privatekey",
    ]
    /// Runs of two words that do the same (`api_key`, `private-key`, `accessKey`).
    static let secretPairs: Set<[String]> = [["api", "key"], ["private", "key"], ["access", "key"], ["secret", "key"],
                                             ["client", "secret"], ["refresh", "token"]]

    static func isSecretName(_ name: String) -> Bool {
        let words = NameMatcher.words(name)
        if words.contains(where: secretWords.contains) { return true }
        return zip(words, words.dropFirst()).contains { secretPairs.contains([$0, $1]) }
    }

    /// What the second reader finds in `entry` as pass 1 left it (replaced values are markers;
    /// a rewritten response body is `rewrittenResponseBody`, the entry's text nil until pass 2).
    static func findings(in entry: HAREntry, index: Int, rewrittenResponseBody: [UInt8]? = nil,
                         allowed: Set<String> = []) -> [RedactionFinding] {
        var reader = Reader(base: "log.entries[\(index)]", allowed: allowed)
        let request = entry.request, response = entry.response
        reader.text(request.url, at: ".request.url")
        for (k, h) in request.headers.enumerated() { reader.header(h.name, h.value, at: ".request.headers[\(k)]") }
        for (k, c) in request.cookies.enumerated() { reader.cookie(c.value, at: ".request.cookies[\(k)]") }
        for (k, q) in request.queryString.enumerated() { reader.named(q.name, q.value, at: ".request.queryString[\(k)]") }
        if let post = request.postData {
            if let text = readable(post.text, encoding: post.encoding) { reader.body(text, at: ".request.postData.text") }
            for (k, p) in (post.params ?? []).enumerated() { reader.named(p.name, p.value ?? "", at: ".request.postData.params[\(k)]") }
        }
        for (k, h) in response.headers.enumerated() { reader.header(h.name, h.value, at: ".response.headers[\(k)]") }
        for (k, c) in response.cookies.enumerated() { reader.cookie(c.value, at: ".response.cookies[\(k)]") }
        // Binary bodies (and base64 that is no UTF-8 text) hold random runs any loose format
        // would match; the engine reads their printable runs, the check does not.
        if let body = rewrittenResponseBody, BodyKind.isTextual(mimeType: response.content.mimeType) {
            reader.body(String(decoding: body, as: UTF8.self), at: ".response.content.text")
        } else if BodyKind.isTextual(mimeType: response.content.mimeType),
                  let text = readable(response.content.text, encoding: response.content.encoding) {
            reader.body(text, at: ".response.content.text")
        }
        for (key, value) in entry.custom where key == "_webSocketMessages" {
            for (k, message) in (value.arrayValue ?? []).enumerated() {
                let binary = message["opcode"]?.intValue == 2 || message["_encoding"]?.stringValue == "base64"
                    || message["encoding"]?.stringValue == "base64"
                if let data = readable(message["data"]?.stringValue, encoding: binary ? "base64" : nil) {
                    reader.body(data, at: "._webSocketMessages[\(k)].data")
                }
            }
        }
        return reader.found
    }

    /// A body's text as the check reads it: base64 decoded, and nil when that is no UTF-8 text.
    static func readable(_ text: String?, encoding: String?) -> String? {
        guard let text, encoding == "base64" else { return text }
        return Base64.decode(text).flatMap { String(validating: $0, as: UTF8.self) }
    }

    struct Reader {
        let base: String
        /// The rules file's `allow`: values never reported.
        let allowed: Set<String>
        var found: [RedactionFinding] = []

        init(base: String, allowed: Set<String>) {
            self.base = base
            self.allowed = allowed
        }

        mutating func report(_ rule: RedactionRule, _ value: String, at path: String) {
            guard !allowed.contains(value) else { return }
            var finding = RedactionFinding(path: base + path, rule: rule, location: .other, preview: RedactionEngine.mask(value))
            finding.isSuspect = true
            found.append(finding)
        }

        /// A body: JSON members by their names, else text.
        mutating func body(_ text: String, at path: String) {
            let trimmed = text.utf8.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
            if let first = trimmed.first, first == 0x7B || first == 0x5B, let json = try? JSONParser.parse(Array(text.utf8)) {
                self.json(json, name: "", at: path, depth: 0)
                return
            }
            self.text(text, at: path)
        }

        mutating func json(_ value: JSONValue, name: String, at path: String, depth: Int) {
            guard depth < 64 else { return }
            if let members = value.objectValue {
                for (key, member) in members { json(member, name: key, at: path + "." + key, depth: depth + 1) }
            } else if let items = value.arrayValue {
                for (k, item) in items.enumerated() { json(item, name: name, at: path + "[\(k)]", depth: depth + 1) }
            } else if let string = value.stringValue {
                if !name.isEmpty { namedOnly(name, string, at: path) }
                body(string, at: path)
            }
        }

        mutating func named(_ name: String, _ value: String, at path: String) {
            namedOnly(name, value, at: path)
            text(value, at: path)
        }

        /// A header: its value by its name, but `Cookie` and `Set-Cookie`, whose values are
        /// read one cookie at a time, and `Authorization`, whose scheme stays.
        mutating func header(_ name: String, _ value: String, at path: String) {
            switch name.lowercased() {
            case "cookie", "set-cookie":
                text(value, at: path)
            case "authorization", "proxy-authorization":
                let credential = value.split(separator: " ", maxSplits: 1).last.map(String.init) ?? value
                if SecondOpinion.mayBeSecret(credential) { report(SecondOpinion.namedValueRule, credential, at: path) }
                text(value, at: path)
            default:
                named(name, value, at: path)
            }
        }

        /// A cookie's value: every one is a secret to the redactor, so any but a placeholder is
        /// reported.
        mutating func cookie(_ value: String, at path: String) {
            if SecondOpinion.mayBeSecret(value) { report(SecondOpinion.namedValueRule, value, at: path) }
            text(value, at: path)
        }

        private mutating func namedOnly(_ name: String, _ value: String, at path: String) {
            guard SecondOpinion.mayBeSecret(value), SecondOpinion.isSecretName(name) else { return }
            report(SecondOpinion.namedValueRule, value, at: path)
        }

        /// Catalogued formats anywhere in `text`, and in its percent-decoded form.
        mutating func text(_ text: String, at path: String) {
            for value in SecondOpinion.formats(in: text) { report(SecondOpinion.formatRule, value, at: path) }
            if text.utf8Contains(0x25) {
                let decoded = PercentEncoding.decoded(text, plusAsSpace: true)
                if decoded != text {
                    for value in SecondOpinion.formats(in: decoded) { report(SecondOpinion.formatRule, value, at: path) }
                }
            }
        }
    }

    /// Every catalogued key in `text`, wherever it starts (no word boundary needed before it).
    static func formats(in text: String) -> [String] {
        var copy = text
        return copy.withUTF8 { p -> [String] in
            guard p.count >= 8 else { return [] }
            var out: [String] = []
            var i = 0
            while i + 1 < p.count {
                let pair = UInt16(p[i]) << 8 | UInt16(p[i + 1])
                var end: Int?
                // Glued to the text before it too, but for short prefixes, which random runs
                // (base64 in a data URI) hold by chance.
                if let formats = KeyFormats.byStart[pair] {
                    for format in formats where format.prefix.count >= 5 || i == 0 || !RedactionEngine.isAlnum(p[i - 1]) {
                        if let e = KeyFormats.matchEnd(format, p, at: i) { end = e; break }
                    }
                }
                var start = i
                if end == nil, let formats = KeyFormats.byMarker(p[i], p[i + 1]) {
                    for format in formats {
                        if let range = KeyFormats.markedMatch(format, p, at: i, lowerBound: 0) { start = range.lowerBound; end = range.upperBound; break }
                    }
                }
                if let end {
                    let value = String(decoding: UnsafeBufferPointer(rebasing: p[start..<end]), as: UTF8.self)
                    if !Placeholder.isPlaceholder(value) && !RedactionEngine.isTemplateText(value) { out.append(value) }
                    i = end
                } else {
                    i += 1
                }
            }
            return out
        }
    }

    /// Whether a value under a secret-sounding name could be a secret: not a placeholder,
    /// template, boolean, date, URL, number or word, and eight bytes or more with a digit or
    /// both cases.
    static func mayBeSecret(_ value: String) -> Bool {
        let b = Array(value.utf8)
        // A marker (U+E000 and on) is a value a rule replaced in pass 1.
        guard b.count >= 8, b.count <= 4096, !b.contains(0xEE), Placeholder.parts(of: value) == nil,
              !RedactionEngine.isTemplateText(value), !RedactionEngine.cannotBeSecret(value),
              RedactionEngine.urlAuthorityEnd(value) == nil, !value.hasPrefix("http"), !RedactionEngine.isWordyIdentifier(value)
        else { return false }
        let digits = b.contains(where: RedactionEngine.isDigit)
        let upper = b.contains(where: RedactionEngine.isUpper), lower = b.contains { $0 >= 0x61 && $0 <= 0x7A }
        if b.allSatisfy({ RedactionEngine.isDigit($0) || $0 == 0x2E || $0 == 0x2D }) { return false }  // a number
        // Words and sentences: letters, spaces and punctuation only.
        if b.contains(0x20) && !digits { return false }
        return digits || (upper && lower)
    }
}
