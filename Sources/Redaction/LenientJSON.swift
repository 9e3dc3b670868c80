import HAR

// JSON that does not parse (cut off by --max-body, JSON lines, a trailing comma, control bytes):
// values under secret keys still get placeholders, and escaped text is redacted decoded, before
// the whole text is scanned as plain text.

extension RedactionEngine {
    /// Bytes that go on a value in broken JSON: those of one word of the suspect scan's
    /// look-back. A value replaced whole is then one word, as its placeholder `0` is: taking in
    /// a `(` or a `&`, it was two words before the first run and one after, and the look-back
    /// of a later value reached one word further the second time (`"cetoken":5(I g L0n3...`).
    static let continuesLenientValue: [Bool] = (0...255).map { SuspectScanner.isWordByte(UInt8($0)) }

    /// Text that starts like JSON but does not parse: cut off by --max-body, JSON lines, a
    /// trailing comma. `"key": value` pairs under secret keys still get placeholders (a string
    /// stays a string, a number becomes 0, even when the text ends inside the value), then the
    /// whole text is scanned as plain text.
    func redactBrokenJSON(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> [UInt8]? {
        let keyed = lenientJSONKeys(p, reading, path)
        return scanBytes(p, reading.with(.lenientJSON), path, preMatches: keyed)
    }

    /// Whether `raw` holds an odd run of backslashes right before `redacted-<digit>`.
    func hasEscapedPlaceholder(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while let k = raw[i...].firstIndex(of: 0x5C) {
            var end = k
            while end < raw.count && raw[end] == 0x5C { end += 1 }
            if (end - k) & 1 == 1 && hasPrefix(raw, at: end, "redacted-") && end + 9 < raw.count && Self.isDigit(raw[end + 9]) {
                return true
            }
            i = end
            if i >= raw.count { break }
        }
        return false
    }

    /// `"key": value` pairs under secret keys in text that is not quite JSON: a string stays a
    /// string, a number becomes 0, even when the text ends inside the value.
    func lenientJSONKeys(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> [PreMatch] {
        guard flags.has(.jsonKeys) else { return [] }
        let n = p.count
        var found: [PreMatch] = []
        @inline(__always) func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
        /// The string whose opening quote is at `at`: its content, where scanning resumes, and
        /// whether it has escapes. An unterminated string runs to the end of the text.
        func string(at: Int) -> (content: Range<Int>, next: Int, escaped: Bool) {
            var j = at + 1
            var escaped = false
            while j < n {
                let c = p[j]
                if c == 0x22 { return (at + 1..<j, j + 1, escaped) }
                if c == 0x5C { escaped = true; j += 2; continue }
                j += 1
            }
            return (at + 1..<n, n, escaped)
        }
        func decoded(_ range: Range<Int>, escaped: Bool) -> [UInt8] {
            let raw = UnsafeBufferPointer(rebasing: p[range])
            return escaped ? (JSONParser.unescapeStringContent(raw) ?? Array(raw)) : Array(raw)
        }
        func replaceString(_ value: (content: Range<Int>, next: Int, escaped: Bool), _ nameClass: NameClass) {
            let text = String(decoding: decoded(value.content, escaped: value.escaped), as: UTF8.self)
            if let r = replaceNamedValue(text, nameClass, secretRule: .jsonKeys, reading, path) {
                let quoted = JSONRewriter.quoted(Array(r.utf8), syntax: syntax).dropFirst().dropLast()
                found.append(PreMatch(match: TextMatch(start: value.content.lowerBound, end: value.content.upperBound,
                                                       replacement: String(decoding: quoted, as: UTF8.self)), source: .structure))
            }
        }
        /// A string value holding JSON (`"{\"password\":\"...\"}"`), or any escapes: they hide
        /// the structure from the text scan (`\"password\":\"...\"` is no assignment), so its
        /// decoded text is redacted on its own, as the strict rewriter does with every string.
        func redactNested(_ value: (content: Range<Int>, next: Int, escaped: Bool)) {
            // Escapes that do not decode (`\` before a bad byte) hide nothing: the text scan reads
            // those bytes where they stand, with the name before them, as every later run will.
            // Redacted alone, the string would lose that name and have its backslashes doubled.
            let raw = UnsafeBufferPointer(rebasing: p[value.content])
            // Nor does a placeholder right after a backslash (`\redacted-1`, a `\r` escape now):
            // it replaced a value that began with the bad escape's letter (`\Y3OD...`), where the
            // first run found the string undecodable.
            if value.escaped && hasEscapedPlaceholder(raw) { return }
            guard let content = value.escaped ? JSONParser.unescapeStringContent(raw) : Array(raw) else { return }
            // A "string" that opens at an escaped quote (`password\"xam=...`) is a piece of a
            // broken one: the text scan reads it with what stands before it, which the decoded
            // text would lose (`password\"xam=...` is an assignment to a secret name).
            let opensAtEscapedQuote = value.content.lowerBound >= 2 && p[value.content.lowerBound - 2] == 0x5C
            guard let first = content.first(where: { !isSpace($0) }),
                  first == 0x7B || first == 0x5B || (value.escaped && !opensAtEscapedQuote) else { return }
            // The words before the string still say what a random run in it is (`{"token""y0.dF...`),
            // as they do for the text scan of a later run, when nothing in the string changes.
            suspectLookBack = Array(p[SuspectScanner.lookBack(p, value.content.lowerBound).start..<value.content.lowerBound])
            defer { suspectLookBack = [] }
            guard let redacted = content.withUnsafeBufferPointer({ redactValueBytes($0, reading, path, nestingLevel: 1) })
            else { return }
            let quoted = JSONRewriter.quoted(redacted, syntax: syntax).dropFirst().dropLast()
            found.append(PreMatch(match: TextMatch(start: value.content.lowerBound, end: value.content.upperBound,
                                                   replacement: String(decoding: quoted, as: UTF8.self)), source: .structure))
        }
        /// A version number under a version key (`"version": "10.4.1.7"`) is no IP address.
        func keepVersion(_ value: (content: Range<Int>, next: Int, escaped: Bool)) {
            let bytes = UnsafeBufferPointer(rebasing: p[value.content])
            guard !bytes.isEmpty, bytes.allSatisfy({ RedactionEngine.isDigit($0) || $0 == 0x2E }) else { return }
            found.append(PreMatch(match: TextMatch(start: value.content.lowerBound, end: value.content.upperBound,
                                                   replacement: "", keep: true), source: .structure))
        }
        /// Where the number at `j` ends. Digits that run on into other value bytes
        /// (`1111115jane%40c`) are no number but one value: replaced whole, or a second run would
        /// read the rest after the first run's `0` (`0jane%40c`) as a value of its own.
        func numberEnd(_ j: Int) -> Int {
            var end = j + 1
            while end < n, RedactionEngine.isDigit(p[end]) || p[end] == 0x2E || p[end] | 0x20 == 0x65
                || p[end] == 0x2B || p[end] == 0x2D { end += 1 }
            while end < n && Self.continuesLenientValue[Int(p[end])] { end += 1 }
            return end
        }
        /// Whether a number at `j` stands where JSON puts a value: after `[`, `,` or `:` (spaces
        /// between), or at the start. Digits after anything else are part of other text (`%3D`
        /// in a percent-encoded run), and a later run, whose quotes the placeholders moved, must
        /// read them the same way.
        func atValuePosition(_ j: Int) -> Bool {
            var k = j
            while k > 0 && isSpace(p[k - 1]) { k -= 1 }
            return k == 0 || p[k - 1] == 0x5B || p[k - 1] == 0x2C || p[k - 1] == 0x3A
        }
        func replaceNumber(_ j: Int, _ end: Int, _ nameClass: NameClass) {
            guard !(end - j == 1 && p[j] == 0x30),
                  nameClass == .secret || nameClass == .phone || nameClass == .cardNumber || nameClass == .cardCode else { return }
            note(nameClass == .secret ? .jsonKeys : .cardNumber, reading,
                 String(decoding: UnsafeBufferPointer(rebasing: p[j..<end]), as: UTF8.self), path)
            found.append(PreMatch(match: TextMatch(start: j, end: end, replacement: "0"), source: .structure))
        }
        // Brackets are counted so that everything inside an object or array under a secret key is
        // secret too (`"auth": {"value": "..."`), however the text ends.
        var depth = 0
        var secretDepths: [Int] = []
        var openSecret = false
        var i = 0
        while i < n {
            let c = p[i]
            if c == 0x7B || c == 0x5B {
                depth += 1
                if openSecret { secretDepths.append(depth); openSecret = false }
                i += 1
                continue
            }
            if c == 0x7D || c == 0x5D {
                if secretDepths.last == depth { secretDepths.removeLast() }
                depth -= 1
                i += 1
                continue
            }
            let inSecret = !secretDepths.isEmpty
            if c == 0x2D || RedactionEngine.isDigit(c) {
                let end = numberEnd(i)
                if inSecret && atValuePosition(i) { replaceNumber(i, end, .secret) }
                i = end
                continue
            }
            guard c == 0x22 else { i += 1; continue }
            let token = string(at: i)
            var j = token.next
            while j < n && isSpace(p[j]) { j += 1 }
            guard j < n, p[j] == 0x3A else {
                // A string that is no member name: an array element, or a value whose key came before.
                if inSecret { replaceString(token, .secret) } else { redactNested(token) }
                i = token.next
                continue
            }
            j += 1
            while j < n && isSpace(p[j]) { j += 1 }
            // In text this broken a "name" may be a value whose closing quote went missing
            // (`"{\"password\":\"...\"}garbage": ...`): escaped text in it is redacted decoded
            // too, or the escapes would hide an assignment from every run.
            if token.escaped && !inSecret { redactNested(token) }
            let info = decoded(token.content, escaped: token.escaped).withUnsafeBufferPointer { nameMemo.info($0) }
            let nameClass = inSecret ? NameMatcher.inSecretScope(info) : info.nameClass
            guard j < n, nameClass != .ordinary, nameClass != .version else {
                // A quote glued to a word before it (`"token"19.version":`) may as well close a
                // string as open this name: the text scan reads `"token"` and its value
                // `19.version` there, and a second run no name holding `version`. Only a name
                // that stands where JSON puts one keeps a version from the IP rule.
                if j < n, p[j] == 0x22, nameClass == .version, i == 0 || !RedactionEngine.isAlnum(p[i - 1]) {
                    let value = string(at: j)
                    keepVersion(value)
                    i = value.next
                    continue
                }
                // Inside a secret, a member that describes it keeps its value (`"kind": "x"`).
                if inSecret, j < n, p[j] == 0x22 { i = string(at: j).next; continue }
                if inSecret, j < n, p[j] == 0x2D || RedactionEngine.isDigit(p[j]) { i = numberEnd(j); continue }
                i = j
                continue
            }
            let v = p[j]
            if v == 0x22 {
                let value = string(at: j)
                replaceString(value, nameClass)
                i = value.next
            } else if v == 0x2D || RedactionEngine.isDigit(v) {
                let end = numberEnd(j)
                replaceNumber(j, end, nameClass)
                i = end
            } else {
                if (v == 0x7B || v == 0x5B) && nameClass == .secret { openSecret = true }
                i = j
            }
        }
        return found
    }
}
