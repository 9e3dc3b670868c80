import HAR
import TextEncodings

// Values named by a word in the text itself: `name=value` (query strings, forms, .env files,
// .ini files, shell, XML and HTML attributes), `name: value` (YAML, HTTP dumps, JavaScript,
// GraphQL arguments, JSON that does not parse); elements and HTML inputs are in Markup.swift.
// The name decides through `NameMatcher`, the same words as JSON keys and headers.

extension RedactionEngine {
    /// Bytes a name may hold in an assignment.
    @inline(__always) static func isNameByte(_ c: UInt8) -> Bool {
        isAlnum(c) || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x5B || c == 0x5D
    }

    /// What a value under `nameClass` becomes, as a match over `range` (the value's bytes); a
    /// version value is kept as it is, so no detector reads it as an IP.
    func namedValueMatch(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ nameClass: NameClass,
                         secretRule: RedactionRule, decode: Bool, _ reading: Reading,
                         _ path: () -> String) -> TextMatch? {
        guard !range.isEmpty else { return nil }
        if nameClass == .version {
            // A version: scanned like any text, but a dotted quad in it is no IP address.
            guard let r = scanBytes(UnsafeBufferPointer(rebasing: p[range]), reading.with(.version), path) else {
                return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: "", keep: true)
            }
            return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: String(decoding: r, as: UTF8.self))
        }
        var value = string(p, range)
        if decode && value.utf8Contains(0x25) { value = PercentEncoding.decoded(value, plusAsSpace: false) }
        guard let r = replaceNamedValue(value, nameClass, secretRule: secretRule, reading, path, length: range.count)
        else { return nil }
        return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: r)
    }

    /// `name=value` at the '=': a query or form parameter after `?`, `&`, `#` or `;`, an
    /// assignment at the start of a line or after whitespace (`export TOKEN=...`, `password="..."`,
    /// `.ini` lines with spaces around the '='). A value under an ordinary name that is itself
    /// percent-encoded (a URL inside a query parameter) is decoded and redacted too.
    func equalsAssignment(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                          _ path: () -> String) -> TextMatch? {
        // `==` is base64 padding (or a comparison), never an assignment: the random letters
        // before it can spell a secret word (`...GGPwHsg==`, a WebSocket key).
        if i + 1 < p.count && p[i + 1] == 0x3D { return nil }
        var nameEnd = i
        while nameEnd > lowerBound && (p[nameEnd - 1] == 0x20 || p[nameEnd - 1] == 0x09) && i - nameEnd < 8 { nameEnd -= 1 }
        let spaced = nameEnd < i
        let (start, bounded) = unquotedNameStart(p, lowerBound: lowerBound, nameEnd: nameEnd)
        guard start < nameEnd, nameEnd - start <= 64 else { return nil }
        var parameter = start == 0 && !spaced
        if start > 0 && !bounded {
            let c = p[start - 1]
            if !spaced && (c == 0x3F || c == 0x26 || c == 0x23 || c == 0x3B) {
                parameter = true
            } else if spaced ? !(c == 0x0A || c == 0x0D || c == 0x20 || c == 0x09)
                        : !(c <= 0x20 || c == 0x2C || c == 0x7B || c == 0x28 || c == 0x22 || c == 0x27) {
                return nil
            }
        }
        let rule: RedactionRule = parameter ? .secretParameters : .secretAssignments
        let nameClass = classifyName(p, start..<nameEnd, asParameter: true)
        var j = i + 1
        if spaced { while j < p.count && (p[j] == 0x20 || p[j] == 0x09) { j += 1 } }
        if j < p.count, p[j] == 0x22 || p[j] == 0x27 {
            guard nameClass != .ordinary else { return nil }
            // A quoted value: `password="..."` (XML, HTML, shell, .ini).
            let quote = p[j]
            j += 1
            let valueStart = j
            while j < p.count && p[j] != quote && p[j] != 0x0A { j += 1 }
            // Trailing spaces and commas stay, as for `name: "value"` below: the quote that ends
            // the value may open the next name in text that is not quite JSON or HTML
            // (`x="...jVm, "version": "10.4.1.7"`), and a second run must see the same separator.
            var valueEnd = j
            while valueEnd > valueStart && (p[valueEnd - 1] == 0x20 || p[valueEnd - 1] == 0x09 || p[valueEnd - 1] == 0x2C) {
                valueEnd -= 1
            }
            return namedValueMatch(p, valueStart..<valueEnd, nameClass, secretRule: rule, decode: false, reading, path)
        }
        let valueStart = j
        var encoded = false
        while j < p.count {
            let c = p[j]
            if spaced {
                // `.ini`: the value is the rest of the line, up to a comment.
                if c == 0x0A || c == 0x0D { break }
                if (c == 0x3B || c == 0x23) && p[j - 1] == 0x20 { break }
            } else if c == 0x26 || c == 0x23 || c <= 0x20 || c == 0x22 || c == 0x27 || c == 0x3C || c == 0x3E || c == 0x3B
                        || c == 0x2C || c == 0x29 || c == 0x5C {
                break
            }
            if c == 0x25 { encoded = true }
            j += 1
        }
        var end = j
        while end > valueStart && (p[end - 1] == 0x20 || p[end - 1] == 0x09) { end -= 1 }
        if nameClass == .ordinary && parameter && nameEnd - start <= 2 && flags.has(.secretParameters) {
            let value = string(p, valueStart..<end)
            if Self.isShortNameToken(value) {
                return secretMatch(p, valueStart..<end, rule: formatRule(of: value) ?? .secretParameters, reading, path)
            }
        }
        if nameClass == .ordinary {
            guard encoded, !spaced, end - valueStart >= 6, flags.has(.secretParameters) else { return nil }
            return encodedValueMatch(p, valueStart..<end, reading, path)
        }
        if !parameter && Self.isCodeExpression(p, valueStart..<end) { return nil }
        return namedValueMatch(p, valueStart..<end, nameClass, secretRule: rule, decode: parameter || encoded, reading, path)
    }

    /// A percent-encoded value under an ordinary name (`next=https%3A%2F%2F...%3Ftoken%3D...`):
    /// decoded, redacted as text (a URL in it gets its query redacted), and encoded again. The
    /// match ends where the last change does: the bytes after it are scanned as the text they are,
    /// as a second run reads them once a placeholder stands before them (`r=e%40x7Rk==-Bearer t`).
    private func encodedValueMatch(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ reading: Reading,
                                   _ path: () -> String) -> TextMatch? {
        // The decoded bytes, and where each one starts in `p`.
        var decoded: [UInt8] = [], starts: [Int] = []
        decoded.reserveCapacity(range.count)
        starts.reserveCapacity(range.count)
        var e = range.lowerBound
        while e < range.upperBound {
            starts.append(e)
            if p[e] == 0x25, e + 2 < range.upperBound, let high = PercentEncoding.hexValue(p[e + 1]),
               let low = PercentEncoding.hexValue(p[e + 2]) {
                decoded.append(high << 4 | low)
                e += 3
            } else {
                decoded.append(p[e])
                e += 1
            }
        }
        guard decoded.count < range.count, !reading.keepsLength else { return nil }
        // The words before the value still say what a random run in it is (`token"r=a%40b/:x7Rk...`),
        // as they do once a first run has written the value without escapes.
        suspectLookBack = Array(p[SuspectScanner.lookBack(p, range.lowerBound).start..<range.lowerBound])
        defer { suspectLookBack = [] }
        guard let inner = decoded.withUnsafeBufferPointer({ redactValueBytes($0, reading, path, nestingLevel: 1) }) else { return nil }
        var kept = 0  // decoded bytes at the end that the redaction left as they were
        while kept < min(decoded.count, inner.count) && decoded[decoded.count - 1 - kept] == inner[inner.count - 1 - kept] { kept += 1 }
        let end = kept == 0 ? range.upperBound : starts[decoded.count - kept]
        return TextMatch(start: range.lowerBound, end: end,
                         replacement: syntax.queryEncoded(String(decoding: inner[..<(inner.count - kept)], as: UTF8.self)))
    }

    func classifyName(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, asParameter: Bool) -> NameClass {
        if asParameter {
            let name = UnsafeBufferPointer(rebasing: p[range])
            for exact in rules.exactParameterNames where exact.count == name.count {
                if zip(exact, name).allSatisfy({ $0 == $1 | ($1 >= 0x41 && $1 <= 0x5A ? 0x20 : 0) }) { return .secret }
            }
        }
        return nameMemo.classify(UnsafeBufferPointer(rebasing: p[range]))
    }

    /// A first word shorter than this starts a phrase: the value runs to the end of the line.
    static let phraseWordLength = 8

    /// An unquoted name's start: where its name bytes begin, at the latest where an earlier match
    /// or a placeholder ended (`lowerBound`). `bounded`: the name starts there, so the byte
    /// before it was that value's last, and says nothing.
    func unquotedNameStart(_ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, nameEnd: Int) -> (start: Int, bounded: Bool) {
        var start = nameEnd
        while start > lowerBound && Self.isNameByte(p[start - 1]) { start -= 1 }
        return (start, start == lowerBound && lowerBound > 0)
    }

    /// Where a label of words before a name may start (`Passport No`, `Date of birth`, `ID No.`):
    /// one and two more words of letters, each before one space, nearest first. A label starts a
    /// line or follows a space or punctuation, as a name does.
    static func labelStarts(_ p: UnsafeBufferPointer<UInt8>, nameStart: Int, lowerBound: Int) -> [Int] {
        var starts: [Int] = []
        var start = nameStart
        while starts.count < 2, start - 2 >= lowerBound, p[start - 1] == 0x20 {
            var k = start - 1
            while k > lowerBound && isLetter(p[k - 1]) && start - k <= 24 { k -= 1 }
            guard start - 1 - k >= 2, k == 0 || !isNameByte(p[k - 1]) else { break }
            if k > 0 {
                let c = p[k - 1]
                guard c <= 0x20 || c == 0x7B || c == 0x2C || c == 0x28 || c == 0x3B || c == 0x5B || c == 0x2E else { break }
            }
            starts.append(k)
            start = k
        }
        return starts
    }

    @inline(__always) static func isLetter(_ c: UInt8) -> Bool { c | 0x20 >= 0x61 && c | 0x20 <= 0x7A }

    /// `name: value` at the ':' (YAML, HTTP header dumps, JavaScript objects, GraphQL arguments,
    /// JSON that does not parse); the name may be quoted. Also Telegram bot tokens
    /// (`123456789:AA...`), which are found at their colon.
    func colonAssignment(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                         _ path: () -> String) -> TextMatch? {
        if let m = telegramToken(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        guard flags.has(.secretAssignments), i > lowerBound else { return nil }
        var nameEnd = i
        while nameEnd > lowerBound && (p[nameEnd - 1] == 0x20 || p[nameEnd - 1] == 0x09) && i - nameEnd < 4 { nameEnd -= 1 }
        var nameStart = nameEnd
        var quoted = false
        var bounded = false
        if nameEnd > lowerBound, p[nameEnd - 1] == 0x22 || p[nameEnd - 1] == 0x27 {
            // "name": (JSON-like) or 'name':
            if reading.context.contains(.lenientJSON) { return nil }  // the JSON key pass owns quoted names there
            let quote = p[nameEnd - 1]
            quoted = true
            nameEnd -= 1
            nameStart = nameEnd
            // A quoted name holds no control byte (JSON escapes them): one ends the look-back, and
            // what it ends is no name, whatever a placeholder before it would make of the rest.
            while nameStart > lowerBound && p[nameStart - 1] != quote && p[nameStart - 1] >= 0x20 && nameEnd - nameStart <= 64 {
                nameStart -= 1
            }
            if nameStart > lowerBound && p[nameStart - 1] < 0x20 { return nil }
            if nameStart > lowerBound, p[nameStart - 1] == quote {
                // In a binary body a value too short for a placeholder became '*'s (`"e_key=*"`).
                if reading.keepsLength && p[nameStart..<nameEnd].contains(0x2A) { return nil }
            } else {
                // An earlier match replaced the name's start (`"e@p.ss_token":` in a binary body,
                // the address now `******`): the rest of it names the value, as it does for the
                // next run, which reads it after the placeholder.
                guard nameStart == lowerBound, lowerBound > 0, nameStart < nameEnd else { return nil }
                bounded = true
            }
        } else {
            (nameStart, bounded) = unquotedNameStart(p, lowerBound: lowerBound, nameEnd: nameEnd)
        }
        guard nameStart < nameEnd, nameEnd - nameStart <= 64 else { return nil }
        let before = quoted ? nameStart - 2 : nameStart - 1
        if before >= 0 && !bounded {
            let c = p[before]
            guard c <= 0x20 || c == 0x7B || c == 0x2C || c == 0x28 || c == 0x3B || c == 0x5B || c == 0x2D else { return nil }
        }
        var nameClass = classifyName(p, nameStart..<nameEnd, asParameter: false)
        if nameClass == .ordinary && !quoted && !bounded {
            // A label of words (`Passport No:`, `Phone number:`): the last says nothing alone.
            for start in Self.labelStarts(p, nameStart: nameStart, lowerBound: lowerBound) {
                nameClass = classifyName(p, start..<nameEnd, asParameter: false)
                if nameClass != .ordinary { break }
            }
        }
        guard nameClass != .ordinary else { return nil }
        var j = i + 1
        while j < p.count && (p[j] == 0x20 || p[j] == 0x09) { j += 1 }
        guard j < p.count else { return nil }
        if p[j] == 0x22 || p[j] == 0x27 || p[j] == 0x60 {
            let quote = p[j]
            j += 1
            let valueStart = j
            while j < p.count && p[j] != quote && p[j] != 0x0A {
                if p[j] == 0x5C { j += 1 }
                j += 1
            }
            // Trailing spaces and commas stay: in text that is not quite JSON they may be what
            // separates this value from the next name (`"...jVm, "version": ...`), and a second
            // run must see the same separator.
            var valueEnd = min(j, p.count)
            while valueEnd > valueStart && (p[valueEnd - 1] == 0x20 || p[valueEnd - 1] == 0x09 || p[valueEnd - 1] == 0x2C) {
                valueEnd -= 1
            }
            return namedValueMatch(p, valueStart..<valueEnd, nameClass, secretRule: .secretAssignments,
                                   decode: false, reading, path)
        }
        if p[j] == 0x7B || p[j] == 0x5B || p[j] == 0x0A || p[j] == 0x0D { return nil }
        var valueStart = j
        var oneToken = false
        // `Authorization: Bearer x`: the scheme stays, as in the header itself, and the credential
        // is one token.
        for scheme in ["Bearer ", "Basic ", "Token ", "Digest ", "bearer ", "token "] where hasPrefix(p, at: j, scheme) {
            valueStart = j + scheme.utf8.count
            oneToken = true
        }
        var end = valueStart
        var phrase = false
        while end < p.count {
            let c = p[end]
            if c == 0x0A || c == 0x0D || c == 0x2C || c == 0x3B || c == 0x7D || c == 0x5D || c == 0x29 || c == 0x26
                || c == 0x3C || c == 0x22 || c == 0x27 { break }
            if (c == 0x20 || c == 0x09) && !phrase {
                // One token (`token: eyJ... expires soon`), unless its first word is short: then a
                // phrase (`password: correct horse battery staple`) that runs to the end of the line.
                if oneToken || end - valueStart >= Self.phraseWordLength { break }
                phrase = true
            }
            if c == 0x23 && end > valueStart && p[end - 1] == 0x20 { break }  // a YAML comment
            end += 1
        }
        while end > valueStart && (p[end - 1] == 0x20 || p[end - 1] == 0x09) { end -= 1 }
        let value = string(p, valueStart..<end)
        if value == "null" || value == "true" || value == "false" || value == "~" { return nil }
        // `apiKey: apiKey` passes a variable on (Swift and JavaScript shorthand); a value that is
        // code is no literal.
        if Self.isCodeExpression(p, valueStart..<end) || (end - valueStart == nameEnd - nameStart
            && UnsafeBufferPointer(rebasing: p[valueStart..<end]).elementsEqual(UnsafeBufferPointer(rebasing: p[nameStart..<nameEnd]))) {
            return nil
        }
        if !phrase && !oneToken && nameClass == .secret, let list = codeList(p, first: valueStart..<end, nameClass, reading, path) { return list }
        return namedValueMatch(p, valueStart..<end, nameClass, secretRule: .secretAssignments, decode: false, reading, path)
    }

    /// A list of codes of one shape after a name (`backup codes: 8K3F-9QWE 2MNB-7XCV`,
    /// `recovery: a1b2c3d4, e5f6g7h8`): each code is a value of its own. Nil when only `first`
    /// stands there.
    private func codeList(_ p: UnsafeBufferPointer<UInt8>, first: Range<Int>, _ nameClass: NameClass,
                          _ reading: Reading, _ path: () -> String) -> TextMatch? {
        /// Same length, a letter or digit where `first` has one, the same symbol elsewhere, a digit.
        func sameShape(from s: Int) -> Range<Int>? {
            let end = s + first.count
            guard end <= p.count, end == p.count || !Self.isAlnum(p[end]) else { return nil }
            var digit = false
            for k in 0..<first.count {
                let a = p[first.lowerBound + k], b = p[s + k]
                if Self.isAlnum(a) { guard Self.isAlnum(b) else { return nil } } else { guard a == b else { return nil } }
                if Self.isDigit(b) { digit = true }
            }
            return digit ? s..<end : nil
        }
        guard p[first].contains(where: Self.isDigit) else { return nil }
        var codes = [first]
        var k = first.upperBound
        while codes.count < 64 {
            var s = k
            while s < p.count && (p[s] == 0x20 || p[s] == 0x2C) && s - k < 3 { s += 1 }
            guard s > k, let next = sameShape(from: s) else { break }
            codes.append(next)
            k = next.upperBound
        }
        guard codes.count > 1 else { return nil }
        var replacement = ""
        var changed = false
        for (n, code) in codes.enumerated() {
            if n > 0 { replacement += string(p, codes[n - 1].upperBound..<code.lowerBound) }
            if let m = namedValueMatch(p, code, nameClass, secretRule: .secretAssignments, decode: false, reading, path), !m.keep {
                replacement += m.replacement
                changed = true
            } else {
                replacement += string(p, code)
            }
        }
        guard changed else { return TextMatch(start: first.lowerBound, end: k, replacement: "", keep: true) }
        return TextMatch(start: first.lowerBound, end: k, replacement: replacement)
    }

    /// A value under a one- or two-letter parameter name (`?t=`, `&tk=`: a magic link's token)
    /// that is one token: 16 or more token bytes with letters and digits, no placeholder in it.
    static func isShortNameToken(_ value: String) -> Bool {
        looksLikeToken(value) && value.utf8.allSatisfy(isTokenByte) && !value.contains("redacted-")
    }

    /// The rule of the key format (or JWT) that `value` is whole, if any.
    func formatRule(of value: String) -> RedactionRule? {
        if flags.has(.jwt), JWTShape.header(of: value) != nil { return .jwt }
        // The formats that start with the value's first two bytes, as `keyFormat(at:)` finds
        // them, then those found at a marker.
        let b = value.utf8
        let anchored = b.count >= 2 ? KeyFormats.byStart[UInt16(b.first!) << 8 | UInt16(b[b.index(after: b.startIndex)])] ?? [] : []
        return (anchored + KeyFormats.marked).first { flags.has($0.rule) && KeyFormats.isWhole($0, value) }?.rule
    }

    /// Whether an unquoted value is source code rather than a literal (documentation pages, JS
    /// bundles, code samples): a call or subscript (`loadKey()`, `os.environ['API_KEY']`), a
    /// member of a program's object (`process.env.API_KEY`), or a template (`${API_KEY}`,
    /// `{{token}}`, `<YOUR_API_KEY>`, `%API_KEY%`). A literal secret is quoted in code, and its
    /// format or the quotes' rule still finds it.
    static func isCodeExpression(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard range.count >= 2 else { return false }
        let v = UnsafeBufferPointer(rebasing: p[range])
        let first = v[0]
        if first == 0x24 && (v[1] == 0x7B || isAlnum(v[1]) || v[1] == 0x5F) { return true }  // ${X}, $X
        if first == 0x7B && v[1] == 0x7B { return true }  // {{x}}
        // `await getToken()`, `new Token(...)`, `try loadKey()`.
        for keyword in ["await ", "new ", "try ", "try? ", "try! ", "yield "] where hasPrefix(v, keyword) {
            let rest = range.lowerBound + keyword.utf8.count
            return rest < range.upperBound && isCodeExpression(p, rest..<range.upperBound)
        }
        if first == 0x3C || (first == 0x25 && v[v.count - 1] == 0x25 && v.count >= 4) {
            // <YOUR_API_KEY>, %API_KEY%
            let inner = v[1..<(v.count - 1)]
            return (v[v.count - 1] == 0x3E || first == 0x25) && inner.allSatisfy { isUpper($0) || isDigit($0) || $0 == 0x5F || $0 == 0x2D }
        }
        // identifier(.identifier)* then `(` or `[`, or a known root.
        var k = 0
        var segments: [Range<Int>] = []
        while k < v.count {
            guard isIdentifierStart(v[k]) else { return false }
            let start = k
            while k < v.count && (isAlnum(v[k]) || v[k] == 0x5F || v[k] == 0x24) { k += 1 }
            segments.append(start..<k)
            if k < v.count && v[k] == 0x2E { k += 1; continue }
            break
        }
        if k < v.count { return v[k] == 0x28 || v[k] == 0x5B }
        guard segments.count >= 2, let root = segments.first else { return false }
        return codeRoots.contains(String(decoding: UnsafeBufferPointer(rebasing: v[root]), as: UTF8.self))
    }

    private static func hasPrefix(_ v: UnsafeBufferPointer<UInt8>, _ prefix: String) -> Bool {
        prefix.utf8.count <= v.count && zip(prefix.utf8, v).allSatisfy { $0 == $1 }
    }

    private static func isIdentifierStart(_ b: UInt8) -> Bool {
        (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) || b == 0x5F || b == 0x24
    }

    /// A Telegram bot token, `<8-10 digits>:<35 of [A-Za-z0-9_-]>`, at its colon.
    private func telegramToken(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                               _ path: () -> String) -> TextMatch? {
        guard flags.has(.keyFormats), i >= 8, i + 36 <= p.count, Self.isDigit(p[i - 1]) else { return nil }
        var start = i
        while start > lowerBound && Self.isDigit(p[start - 1]) && i - start < 11 { start -= 1 }
        // `/bot<token>/getMe` in Telegram's API URLs.
        let afterBot = start >= 3 && hasPrefix(p, at: start - 3, "bot")
        guard (8...10).contains(i - start), start == 0 || !Self.isAlnum(p[start - 1]) || afterBot else { return nil }
        let end = run(p, from: i + 1) { Self.isAlnum($0) || $0 == 0x5F || $0 == 0x2D }
        guard end - (i + 1) == 35 else { return nil }
        return secretMatch(p, start..<end, rule: .keyFormats, reading, path)
    }
}
