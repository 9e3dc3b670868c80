#if canImport(Glibc)
import Glibc
import TextEncodings
#elseif canImport(Darwin)
import Darwin
#endif
import HAR

/// A second, independent detector, deliberately broader than the rules: credential prefixes
/// anywhere, and high-entropy values next to a secret word (`my api key is 8fJ2kq...`,
/// `token 9c1f...`). It shares only the vocabulary of secret words with the rules (`NameMatcher`),
/// not their positions or shapes.
///
/// `redact --check` runs it over what redaction would leave and reports what it finds as
/// `suspect` (a rule switched off, an allow-list gap, a format no rule knows). Redaction runs it
/// too (rule `high-entropy`), so a file `redact` wrote passes `--check`.
enum SuspectScanner {
    /// Shortest value the entropy test looks at: below this, a word and a token look alike.
    static let minimumLength = 10
    /// Bytes between the words the look-back for a secret word reads (same line, same field), and
    /// between a suspect value and the next.
    static let lookBack = 48

    /// Prefixes that mark a credential wherever they stand, each needing this many more bytes.
    static let prefixes: [(prefix: [UInt8], rest: Int)] = [
        ("sk-", 16), ("sk_live_", 10), ("sk_test_", 10), ("rk_live_", 10), ("rk_test_", 10), ("whsec_", 16),
        ("ghp_", 20), ("gho_", 20), ("ghu_", 20), ("ghs_", 20), ("ghr_", 20), ("github_pat_", 20), ("glpat-", 16),
        ("xoxb-", 10), ("xoxp-", 10), ("xoxa-", 10), ("xoxs-", 10), ("xoxe", 12), ("xapp-", 10), ("AKIA", 16),
        ("ASIA", 16), ("AIza", 30), ("SG.", 30), ("npm_", 30), ("pypi-", 40), ("shpat_", 24), ("shpss_", 24),
        ("shpca_", 24), ("shppa_", 24), ("sq0atp-", 16), ("sq0csp-", 30), ("HRKU-", 16), ("hf_", 24),
        ("dop_v1_", 40), ("AGE-SECRET-KEY-", 40), ("GOCSPX-", 20), ("sntrys_", 40), ("glsa_", 24), ("hvs.", 24),
    ].map { (Array($0.0.utf8), $0.1) }

    /// Bytes of a value run, by kind: 0 not in a run (a delimiter, a space, non-ASCII), 1 other,
    /// 2 digit, 3 letter.
    private static let valueKind: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for b in 0x21...0x7E { t[b] = 1 }
        for b in "\"'<>`,;(){}[]\\=:&?|".utf8 { t[Int(b)] = 0 }
        for b in 0x30...0x39 { t[b] = 2 }
        for b in 0x41...0x5A { t[b] = 3 }
        for b in 0x61...0x7A { t[b] = 3 }
        return t
    }()

    /// First bytes of the credential prefixes (and of "eyJ"), so most runs skip the prefix test.
    private static let prefixStart: [Bool] = {
        var t = [Bool](repeating: false, count: 256)
        for (prefix, _) in prefixes { t[Int(prefix[0])] = true }
        t[Int(UInt8(ascii: "e"))] = true
        return t
    }()

    /// Bytes where the look-back for a secret word stops: the value belongs to another field.
    private static let fieldBoundary: [Bool] = {
        var t = [Bool](repeating: false, count: 256)
        for b in "\n\r{}[],;&?|".utf8 { t[Int(b)] = true }
        return t
    }()

    /// The suspect values in `p`: ranges of value runs.
    /// `placeholders`: where harrec's placeholders stand in `p` (found here when not given). A
    /// run that holds one is a word of the look-back but no suspect.
    static func scan(_ p: UnsafeBufferPointer<UInt8>, memo: inout NameMemo, placeholders given: [Range<Int>]? = nil) -> [Range<Int>] {
        guard p.count >= minimumLength else { return [] }
        let placeholders = given ?? PlaceholderText.find(in: p).map(\.range)
        var nextPlaceholder = 0
        var found: [Range<Int>] = []
        let n = p.count
        valueKind.withUnsafeBufferPointer { kind in
            var i = 0
            while i < n {
                if kind[Int(p[i])] == 0 {
                    // A JSON escape is no part of a value: `\u0002password` is a control character
                    // and a word (a redacted nested string is written back with such escapes).
                    i += p[i] == 0x5C ? escapeLength(p, at: i) : 1
                    continue
                }
                if p[i] == 0x25 && isEscapedBreak(p, at: i, kind) { i += 3; continue }
                let start = i
                var j = i
                // Letters and digits eight at a time; any other byte is looked up (most of them,
                // a space or a quote, end the run).
                let base = p.baseAddress!
                while true {
                    if j &+ 8 <= n {
                        let m = ByteShape.nonAlnumMask(UInt64(littleEndian: UnsafeRawPointer(base + j).loadUnaligned(as: UInt64.self)))
                        if m == 0 { j &+= 8; continue }
                        j &+= m.trailingZeroBitCount >> 3
                    } else if j >= n {
                        break
                    }
                    if kind[Int(p[j])] == 0 { break }
                    j &+= 1
                }
                // A `%XX` escape of a byte that is no part of a value (`%7B`) ends the run, as the
                // byte does: a value written percent-encoded reads as it does decoded.
                if j - start >= minimumLength, let cut = firstEscapedBreak(p, start..<j, kind) { j = cut }
                let runEnd = j
                // base64 padding belongs to the value.
                while j < n && p[j] == 0x3D && (j + 1 == n || kind[Int(p[j + 1])] == 0 || p[j + 1] == 0x3D) { j += 1 }
                i = j
                let count = j - start
                // Letters and digits are counted only in runs long enough to be looked at (most
                // runs are short words).
                var letters = 0, digits = 0, percents = 0
                if count >= minimumLength {
                    for k in start..<runEnd {
                        let c = kind[Int(p[k])]
                        if c == 3 { letters &+= 1 } else if c == 2 { digits &+= 1 } else if p[k] == 0x25 { percents &+= 1 }
                    }
                }
                if p[start] == 0x2D {
                    if count >= 10, isPrivateKeyBegin(p, start..<j) {
                        let block = privateKeyBlock(p, from: start)
                        found.append(block)
                        i = max(i, block.upperBound)
                    }
                    continue
                }
                guard count >= minimumLength, count <= 8192 else { continue }
                while nextPlaceholder < placeholders.count && placeholders[nextPlaceholder].upperBound <= start { nextPlaceholder += 1 }
                if nextPlaceholder < placeholders.count && placeholders[nextPlaceholder].lowerBound < j { continue }
                let raw = UnsafeBufferPointer(rebasing: p[start..<j])
                // A run with `%XX` escapes is judged by its decoded bytes (`jane%25te-` is
                // `jane%te-`: 8 bytes, no digit), as the value is when a first run decodes it
                // (a percent-encoded value under an ordinary name) and scans it on its own.
                let suspect = percents == 0
                    ? isSuspect(raw, letters: letters, digits: digits, p, start, found.last, &memo)
                    : PercentEncoding.decodedBytes(Array(raw)[...], plusAsSpace: false).withUnsafeBufferPointer { value -> Bool in
                        var letters = 0, digits = 0
                        for b in value {
                            let c = kind[Int(b)]
                            if c == 3 { letters &+= 1 } else if c == 2 { digits &+= 1 }
                        }
                        return value.count >= minimumLength
                            && isSuspect(value, letters: letters, digits: digits, p, start, found.last, &memo)
                    }
                if suspect { found.append(start..<j) }
            }
        }
        return found
    }

    /// Whether a run's `value` (its bytes, or their decoding) is a suspect: a credential prefix,
    /// or random-looking letters and digits after a secret word or after another suspect.
    private static func isSuspect(_ value: UnsafeBufferPointer<UInt8>, letters: Int, digits: Int,
                                  _ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ last: Range<Int>?,
                                  _ memo: inout NameMemo) -> Bool {
        if prefixStart[Int(value[0])] && hasCredentialPrefix(value) { return !holdsRedactedWord(value) }
        return letters >= 2 && digits >= 2 && (followsSuspect(p, start, last) || secretWordBefore(p, start, memo: &memo))
            && looksRandom(value) && !holdsRedactedWord(value)
    }

    /// Whether `p[i]` starts a `%XX` escape of a byte that is no part of a value run.
    @inline(__always) private static func isEscapedBreak(_ p: UnsafeBufferPointer<UInt8>, at i: Int,
                                                         _ kind: UnsafeBufferPointer<UInt8>) -> Bool {
        guard i + 2 < p.count, let high = PercentEncoding.hexValue(p[i + 1]), let low = PercentEncoding.hexValue(p[i + 2]) else { return false }
        return kind[Int(high << 4 | low)] == 0
    }

    private static func firstEscapedBreak(_ p: UnsafeBufferPointer<UInt8>, _ run: Range<Int>,
                                          _ kind: UnsafeBufferPointer<UInt8>) -> Int? {
        var k = run.lowerBound
        let base = UnsafeRawPointer(p.baseAddress!)
        while k < run.upperBound {
            // Most runs have no '%': eight bytes a step to the next one.
            if k + 8 <= run.upperBound {
                let m = byteMask(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: k, as: UInt64.self)), 0x25)
                if m == 0 { k += 8; continue }
                k += m.trailingZeroBitCount >> 3
            }
            if p[k] == 0x25 && isEscapedBreak(p, at: k, kind) { return k }
            k += 1
        }
        return nil
    }

    /// The length of the JSON escape at the backslash at `i` (`\n`: 2, `\u00e9`: 6), else 1.
    static func escapeLength(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        guard i + 1 < p.count else { return 1 }
        switch p[i + 1] {
        case 0x62, 0x66, 0x6E, 0x72, 0x74: return 2  // b f n r t
        case 0x75:
            guard i + 6 <= p.count else { return 1 }
            return p[(i + 2)..<(i + 6)].allSatisfy({ RedactionEngine.isHex($0) }) ? 6 : 1
        default: return 1
        }
    }

    static func hasCredentialPrefix(_ v: UnsafeBufferPointer<UInt8>) -> Bool {
        for (prefix, rest) in prefixes where v.count >= prefix.count + rest && v.starts(with: prefix) {
            let tail = v[(v.startIndex + prefix.count)...]
            if tail.contains(where: RedactionEngine.isDigit) || tail.contains(where: RedactionEngine.isUpper) { return true }
        }
        // A JWT that is not one of harrec's placeholders.
        if v.starts(with: "eyJ".utf8), v.count >= 30, v.filter({ $0 == 0x2E }).count == 2 { return true }
        return false
    }

    /// High entropy for its length (the caller checked for letters and digits): 80% of the most
    /// a string of that length can have (so `hunter2hunter2` is not random, `8fJ2kqZ0x7` is).
    static func looksRandom(_ v: UnsafeBufferPointer<UInt8>) -> Bool {
        // H = log2(n) - (1/n) * sum(c * log2(c)) over the counts c: one table lookup per distinct byte.
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: 128) { counts -> Bool in
            counts.initialize(repeating: 0)
            for b in v { counts[Int(b & 0x7F)] += 1 }
            var sum = 0.0
            for c in counts where c > 0 { sum += Int(c) < countLog.count ? countLog[Int(c)] : Double(c) * log2(Double(c)) }
            let n = Double(v.count)
            let entropy = log2(n) - sum / n
            return entropy >= 0.8 * log2(min(n, 64))
        }
    }

    /// c * log2(c) for the counts a run of up to 8 KiB can have.
    private static let countLog: [Double] = (0...8192).map { $0 == 0 ? 0 : Double($0) * log2(Double($0)) }

    /// Whether the value at `start` follows a suspect value of the same field within the
    /// look-back (`token: 5N_Xg... FUP0THsR8...`): it goes with it. A later run reads the first
    /// value's placeholder there instead, and the secret word before it, so the first run must
    /// not read the first value's random bytes as the name of the second.
    static func followsSuspect(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ last: Range<Int>?) -> Bool {
        guard let last, last.upperBound <= start, start - last.upperBound < lookBack else { return false }
        for k in last.upperBound..<start where fieldBoundary[Int(p[k])] { return false }
        return true
    }

    /// Whether the text just before `start` names a secret: its last three words in the same
    /// field, read as one name (`api key is` -> api, key, is), with at most `lookBack` bytes
    /// between them. Words are taken whole, and only the bytes between them are counted: a window
    /// of bytes cut a word where it began (`{"cjtoken":1105555...` read `jtoken`), and a second
    /// run, where a rule had made a word shorter (`0`), cut it elsewhere.
    static func secretWordBefore(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, memo: inout NameMemo) -> Bool {
        let (nameStart, nameEnd) = lookBack(p, start)
        guard nameStart < nameEnd else { return false }
        let nameClass = memo.classify(UnsafeBufferPointer(rebasing: p[nameStart..<nameEnd]))
        return nameClass == .secret || nameClass == .bareKey || nameClass == .identifier
    }

    /// The look-back's name before `start`: from the start of the earliest of the last three
    /// words to the end of the latest (empty when there is none). No array: this runs for every
    /// long run.
    static func lookBack(_ p: UnsafeBufferPointer<UInt8>, _ start: Int) -> (start: Int, end: Int) {
        var nameStart = start, nameEnd = start
        var words = 0, between = 0
        var end = start
        scan: while end > 0 && words < 3 {
            while end > 0 {
                let (b, width) = byte(before: end, p)
                if isWordByte(b) { break }
                if fieldBoundary[Int(b)] || between == lookBack { break scan }
                between += 1
                end -= width
            }
            guard end > 0 else { break }
            var begin = end
            while begin > 0 {
                let (b, width) = byte(before: begin, p)
                guard isWordByte(b) else { break }
                begin -= width
            }
            // A binary body's placeholder (`***`) ends the look-back: it kept the length of a value
            // that may have been several words (`1<TAB>3`), which the first run counted as such.
            if p[end - 1] == 0x2A && p[begin..<end].allSatisfy({ $0 == 0x2A }) { break }
            // A number written in groups (`4111 1111 1111`) is one word, as its placeholder
            // (`4000000000000010`) is: counted as three, a second run reached one word further.
            if isDigits(p, begin..<end) {
                while begin > 0 {
                    let (b, width) = byte(before: begin, p)
                    guard b == 0x20, begin - width >= 1, RedactionEngine.isDigit(p[begin - width - 1]) else { break }
                    var groupStart = begin - width
                    while groupStart > 0 && RedactionEngine.isDigit(p[groupStart - 1]) { groupStart -= 1 }
                    if groupStart > 0 && isWordByte(byte(before: groupStart, p).0) { break }
                    begin = groupStart
                }
            }
            if words == 0 { nameEnd = end }
            nameStart = begin
            words += 1
            end = begin
        }
        return (nameStart, nameEnd)
    }

    @inline(__always) private static func isDigits(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        !range.isEmpty && range.allSatisfy { RedactionEngine.isDigit(p[$0]) }
    }

    /// The byte that ends just before `end`, reading a `%XX` escape as the byte it stands for
    /// (and its width): a value written percent-encoded (`%7B` for `{`) reads as it does decoded,
    /// so the look-back finds the same words in both. A JSON `\n` or `\r` is the line break it
    /// stands for, as in the decoded string a nested scan reads (`"passwd\nef45_key=..."`).
    @inline(__always) private static func byte(before end: Int, _ p: UnsafeBufferPointer<UInt8>) -> (UInt8, Int) {
        if end >= 3 && p[end - 3] == 0x25, let high = PercentEncoding.hexValue(p[end - 2]), let low = PercentEncoding.hexValue(p[end - 1]) {
            return (high << 4 | low, 3)
        }
        if end >= 2 && p[end - 2] == 0x5C && (p[end - 1] == 0x6E || p[end - 1] == 0x72) {
            var slashes = 1
            while end - 2 - slashes >= 0 && p[end - 2 - slashes] == 0x5C { slashes += 1 }
            if slashes & 1 == 1 { return (p[end - 1] == 0x6E ? 0x0A : 0x0D, 2) }
        }
        return (p[end - 1], 1)
    }

    /// Bytes of the look-back's words: those of value runs. A value another rule replaces is one
    /// run, and so is its placeholder (`redacted-5`, `0`, a binary body's `*******`), so a second
    /// run counts the same words as the first (identifier words split `1115jane%40cnameW` in two,
    /// and the look-back of the next run reached one word further back once it was `0`).
    @inline(__always) static func isWordByte(_ b: UInt8) -> Bool {
        valueKind[Int(b)] != 0
    }

    /// Another tool's placeholder (`REDACTED-0001`, `sk_live_REDACTED`).
    private static func holdsRedactedWord(_ v: UnsafeBufferPointer<UInt8>) -> Bool {
        contains(v, redactedUpper) || contains(v, redactedLower)
    }

    private static let redactedUpper = Array("REDACTED".utf8), redactedLower = Array("redacted".utf8)

    private static func isPrivateKeyBegin(_ p: UnsafeBufferPointer<UInt8>, _ run: Range<Int>) -> Bool {
        let begin = Array("-----BEGIN".utf8)
        guard run.count >= begin.count, p[run.lowerBound] == 0x2D,
              UnsafeBufferPointer(rebasing: p[run.lowerBound..<run.lowerBound + begin.count]).elementsEqual(begin) else { return false }
        let lineEnd = min(p.count, run.lowerBound + 80)
        let line = UnsafeBufferPointer(rebasing: p[run.lowerBound..<lineEnd])
        return contains(line, Array("PRIVATE KEY".utf8))
    }

    /// From BEGIN through the END line (or the end of the text when the block is cut off).
    private static func privateKeyBlock(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int> {
        let endLine = Array("-----END ".utf8), dashes = Array("-----".utf8)
        var k = start + 10
        while k + endLine.count <= p.count {
            if p[k] == 0x2D, UnsafeBufferPointer(rebasing: p[k..<k + endLine.count]).elementsEqual(endLine) {
                // The END line's closing dashes.
                var j = k + endLine.count
                while j + dashes.count <= p.count && j - k < 80 {
                    if UnsafeBufferPointer(rebasing: p[j..<j + dashes.count]).elementsEqual(dashes) { return start..<j + dashes.count }
                    j += 1
                }
                return start..<min(p.count, k + endLine.count)
            }
            k += 1
        }
        return start..<p.count
    }

    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for s in 0...(haystack.count - needle.count)
            where haystack[s] == needle[0] && UnsafeBufferPointer(rebasing: haystack[s..<s + needle.count]).elementsEqual(needle) {
            return true
        }
        return false
    }
}

/// `redact --check`'s independent look at what redaction leaves: the suspect scanner over every
/// text field of the final entry (bodies decoded; binary bodies by their printable runs).
enum SuspectCheck {
    static let rule = RedactionRule("suspect")

    static func residuals(in entry: HAREntry, base: String, engine: RedactionEngine) -> [RedactionFinding] {
        var found: [RedactionFinding] = []
        func check(_ text: String, _ reading: Reading, _ path: @autoclosure () -> String) {
            var copy = text
            copy.withUTF8 { p in
                for range in SuspectScanner.scan(p, memo: &engine.nameMemo) {
                    let value = String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
                    if engine.config.allowedValues.contains(value) || Placeholder.isPlaceholder(value) { continue }
                    found.append(RedactionFinding(path: path(), rule: rule, location: reading.location,
                                                  preview: RedactionEngine.mask(value), isSuspect: true))
                }
            }
        }
        func checkBody(_ text: String?, base64: Bool, _ path: String) {
            guard let text else { return }
            guard base64 else { return check(text, .body, path) }
            guard let bytes = Base64.decode(text) else { return }
            if let decoded = String(validating: bytes, as: UTF8.self) { return check(decoded, .body, path) }
            // Binary: the printable runs redaction scans.
            bytes.withUnsafeBufferPointer { p in
                for run in RedactionEngine.printableRuns(p) { check(String(decoding: p[run], as: UTF8.self), .body, path) }
            }
        }
        let request = entry.request, response = entry.response
        check(request.url, .url, base + ".request.url")
        for (i, h) in request.headers.enumerated() { check(h.value, .header, "\(base).request.headers[\(i)].value") }
        for (i, c) in request.cookies.enumerated() { check(c.value, .cookie, "\(base).request.cookies[\(i)].value") }
        for (i, q) in request.queryString.enumerated() { check(q.value, .query, "\(base).request.queryString[\(i)].value") }
        if let post = request.postData {
            for (i, p) in (post.params ?? []).enumerated() {
                if let v = p.value { check(v, .body, "\(base).request.postData.params[\(i)].value") }
            }
            checkBody(post.text, base64: post.encoding == "base64",
                      base + ".request.postData.text")
        }
        for (i, h) in response.headers.enumerated() { check(h.value, .header, "\(base).response.headers[\(i)].value") }
        for (i, c) in response.cookies.enumerated() { check(c.value, .cookie, "\(base).response.cookies[\(i)].value") }
        check(response.redirectURL, .url, base + ".response.redirectURL")
        checkBody(response.content.text, base64: response.content.encoding == "base64", base + ".response.content.text")
        for field in entry.custom where field.key == "_webSocketMessages" {
            guard case .array(let messages) = field.value else { continue }
            for (i, message) in messages.enumerated() {
                guard let data = message["data"]?.stringValue else { continue }
                let binary = message["opcode"]?.intValue == 2 || message["_encoding"]?.stringValue == "base64"
                    || message["encoding"]?.stringValue == "base64"
                checkBody(data, base64: binary, "\(base)._webSocketMessages[\(i)].data")
            }
        }
        return found
    }
}
