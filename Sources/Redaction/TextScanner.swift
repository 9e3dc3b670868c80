import HAR

// Finds secrets in free text (header values, URLs, bodies, WebSocket messages) in one pass over
// the UTF-8 bytes. Each detector is anchored on a pair of bytes (a 65,536-entry table says which
// detectors can start at a byte followed by another), so ordinary text costs a table lookup per
// byte, and a text with nothing to redact allocates nothing.
//
// Matches never overlap: the scan goes left to right and a match that starts inside an earlier
// one is dropped. Detectors that look backwards (emails at '@', assignments at '=' and ':',
// internal hosts at '.') therefore lose to a match found earlier in the text, which is what keeps
// "https://user:pass@host" from also being read as the email "pass@host".
//
// Matches found before the scan (values under secret keys in text that is not quite JSON, user
// patterns, and high-entropy values next to a secret word) are merged in by position.

/// Detector families, as bits of the pair table.
struct Detectors: OptionSet {
    let rawValue: UInt32
    static let jwt = Detectors(rawValue: 1 << 0)
    static let bearer = Detectors(rawValue: 1 << 1)
    static let keyFormat = Detectors(rawValue: 1 << 2)
    static let privateKey = Detectors(rawValue: 1 << 3)
    static let userinfo = Detectors(rawValue: 1 << 4)
    static let email = Detectors(rawValue: 1 << 5)
    static let equalsAssignment = Detectors(rawValue: 1 << 6)
    static let internalHost = Detectors(rawValue: 1 << 7)
    static let ipv4 = Detectors(rawValue: 1 << 8)
    static let ipv6 = Detectors(rawValue: 1 << 9)
    static let colonAssignment = Detectors(rawValue: 1 << 10)
    static let markup = Detectors(rawValue: 1 << 11)
    static let phone = Detectors(rawValue: 1 << 12)
    static let card = Detectors(rawValue: 1 << 13)
    static let iban = Detectors(rawValue: 1 << 14)
    static let structured = Detectors(rawValue: 1 << 15)
    static let oneTimeCode = Detectors(rawValue: 1 << 16)
    static let markedKeyFormat = Detectors(rawValue: 1 << 17)
    static let ownersDevice = Detectors(rawValue: 1 << 18)
    static let streetAddress = Detectors(rawValue: 1 << 19)
    static let nameInText = Detectors(rawValue: 1 << 20)

    /// The detectors whose matches hold a digit: skipped in text that has none.
    static let needingDigits: Detectors = [.oneTimeCode, .structured, .ipv4, .phone, .card, .iban]
}

extension RedactionEngine {
    struct TextMatch {
        var start: Int
        var end: Int
        var replacement: String
        /// Where scanning continues, when not at `end` (userinfo: the host after it is scanned too).
        var resume: Int? = nil
        /// The text matched but stays as it is (already placeholders or allowed).
        var keep = false
        /// Where the replaced value ends, when the match covers more than its value (a whole
        /// HTML tag for its `value` attribute): a later match that starts past it is no rest
        /// of that value. -1: at `end` (an Int, not an optional: every detector returns this).
        var valueEnd = -1
    }

    /// A match found before the scan.
    struct PreMatch {
        /// Where a pre-match comes from, which says how it meets the detectors.
        enum Source {
            /// The text's structure (a value under a secret key, a tag's value): it wins over a
            /// detector at the same position, and a detector's text stops short of it.
            case structure
            /// One of harrec's placeholders, kept: as `structure`, and a detector's value that runs
            /// up to it stays too (a first run replaced that value's rest and kept this part).
            case placeholder
            /// A scan of the whole text (suspects): a detector at the same position wins.
            case scan
        }

        var match: TextMatch
        var source: Source
        /// When set, the match is a secret under this rule and its replacement is made only when it
        /// is applied, so a pre-match that a detector wins over leaves no note and no value behind.
        var lazyRule: RedactionRule? = nil
    }

    /// Redacts `text`; nil when nothing changed.
    func scanText(_ text: String, _ reading: Reading, _ path: () -> String) -> String? {
        var copy = text
        let result = copy.withUTF8 { scanBytes($0, reading, path) }
        return result.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The suspect runs of `p`; read after `suspectLookBack` when it is set (the text before a
    /// percent-encoded value decoded for this scan), which it then is no longer.
    private func suspects(_ p: UnsafeBufferPointer<UInt8>, placeholders: [Range<Int>]) -> [Range<Int>] {
        guard !suspectLookBack.isEmpty else { return SuspectScanner.scan(p, memo: &nameMemo, placeholders: placeholders) }
        let before = suspectLookBack
        suspectLookBack = []
        let text = before + Array(p)
        return text.withUnsafeBufferPointer { SuspectScanner.scan($0, memo: &nameMemo) }.compactMap { range in
            range.lowerBound >= before.count ? (range.lowerBound - before.count)..<(range.upperBound - before.count) : nil
        }
    }

    /// Redacts UTF-8 `bytes`; nil when nothing changed. `preMatches` are sorted by start.
    func scanBytes(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String,
                   preMatches given: [PreMatch] = [], shape: ByteShape = .unknown) -> [UInt8]? {
        var pre = given
        defer { if !closingTagIndexes.isEmpty { closingTagIndexes.removeAll { $0.lies(in: p) } } }
        // Placeholders (every one has a digit) are kept as they are before any detector runs: a
        // detector sees text up to one and from after it, never into it.
        var placeholders: [Range<Int>] = []
        if shape.hasDigit {
            for f in PlaceholderText.find(in: p) {
                if f.number > 0 { collector.reserve(f.kind, f.number) }
                pre.append(PreMatch(match: TextMatch(start: f.range.lowerBound, end: f.range.upperBound, replacement: "", keep: true),
                                    source: .placeholder))
                placeholders.append(f.range)
            }
        }
        if rules.hasPatterns { collectPatternMatches(p, reading, path, into: &pre) }
        if flags.has(.highEntropy) && shape.mayHoldSuspect {
            for range in suspects(p, placeholders: placeholders) {
                pre.append(PreMatch(match: TextMatch(start: range.lowerBound, end: range.upperBound, replacement: ""),
                                    source: .scan, lazyRule: .highEntropy))
            }
        }
        if flags.has(.keyFormats) {
            for run in Self.seedPhrasesInText(p) {
                pre.append(PreMatch(match: TextMatch(start: run.lowerBound, end: run.upperBound, replacement: ""),
                                    source: .scan, lazyRule: .keyFormats))
            }
        }
        // At one position a kept placeholder goes first.
        if pre.count > 1 { pre.sort { $0.match.start != $1.match.start ? $0.match.start < $1.match.start : $0.match.keep && !$1.match.keep } }
        var out: [UInt8] = []
        var copied = 0  // bytes of p already in `out` (or skipped by a replacement)
        var floor = 0  // detectors that look back stop here: the end of the last match
        let n = p.count
        var i = 0
        var k = 0  // next pre-match
        var lastReplaced = false  // whether the last match applied was replaced (not kept)
        var keptUntil = -1  // the end of the last match kept as it is
        var lastValueEnd = -1  // where the value of the last match replaced ends
        func apply(_ m: TextMatch) {
            lastReplaced = !m.keep
            lastValueEnd = m.valueEnd >= 0 ? m.valueEnd : m.end
            if m.keep {
                keptUntil = m.resume ?? m.end
                // Matched but left as is (placeholders, allowed values): its bytes are still not up
                // for a look-back detector (`redacted-2@host` is no email).
                floor = max(floor, m.end)
                i = m.resume ?? m.end
                return
            }
            if out.isEmpty { out.reserveCapacity(n + 64) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<m.start]))
            out.append(contentsOf: m.replacement.utf8)
            copied = m.end
            floor = m.end
            i = m.resume ?? m.end
        }
        let pairs = UnsafeBufferPointer(rules.pairTable)
        let bits = UnsafeBufferPointer(shape.hasDigit ? rules.pairBits : rules.pairBitsWithoutDigits)
        let mask = shape.hasDigit ? UInt32.max : ~Detectors.needingDigits.rawValue
        guard let base = p.baseAddress else { return nil }
        var nextPre = pre.isEmpty ? Int.max : pre[0].match.start
        do {
            while i < n {
                if i >= nextPre {
                    defer { nextPre = k < pre.count ? pre[k].match.start : Int.max }
                    let item = pre[k]
                    var m = item.match
                    k += 1
                    // A pre-match overlapped by an earlier match: what is left of it still goes.
                    if m.end <= i { continue }
                    let trimmed = m.start < i
                    if trimmed {
                        // The rest of a value an earlier replacement cut into (a key block that
                        // runs past an assignment's line): it goes with that replacement, not
                        // into a second placeholder glued to it.
                        if !lastReplaced && keptUntil == i {
                            // The rest of a run whose start was a placeholder kept as it is: the
                            // placeholder stood for the whole run the first time, so this stays too.
                            floor = m.end
                            i = m.end
                            continue
                        }
                        // A value that starts inside a larger match past the value that match
                        // replaced (an unterminated string from the middle of a whole `<input>`
                        // tag): its rest is scanned as the text it is, as a run without that tag
                        // would read it.
                        if lastReplaced && copied == i && m.start >= lastValueEnd { continue }
                        if lastReplaced && copied == i {
                            // (In a binary body the bytes are kept in number, as '*'s.)
                            if reading.keepsLength { out.append(contentsOf: [UInt8](repeating: 0x2A, count: m.end - i)) }
                            copied = m.end
                            floor = m.end
                            i = m.end
                            continue
                        }
                        m.start = i
                    }
                    if item.source == .scan && !trimmed, let d = detectAt(i, pairs, bits, mask, p, floor, reading, path) {
                        apply(d)
                        continue
                    }
                    if var rule = item.lazyRule {
                        // A format found only by its middle (an Azure AD secret's `Q~`) keeps its rule.
                        if rule == .highEntropy, m.end - m.start >= 36, m.start + 5 < m.end, p[m.start + 4] == 0x51,
                           p[m.start + 5] == 0x7E, flags.has(.azureKey) { rule = .azureKey }
                        if let r = replaceSecret(string(p, m.start..<m.end), rule, reading, path, length: m.end - m.start) {
                            m.replacement = r
                        } else {
                            m.keep = true
                        }
                    }
                    apply(m)
                    continue
                }
                // Up to the next pre-match, skip every byte whose pair starts no detector: one load
                // and one bit test a byte, with nothing else in the loop.
                let limit = min(n - 1, nextPre)
                while i < limit {
                    let pair = Int(base[i]) &<< 8 | Int(base[i &+ 1])
                    if bits[pair &>> 6] & (1 &<< UInt64(pair & 63)) != 0 { break }
                    i &+= 1
                }
                if i >= n || i >= nextPre { continue }
                // A match found in the text stops short of the next structural one (a number under
                // a secret key in broken JSON, an input's value): running into it, it would decide
                // that one's bytes by text rules, and a second run, once the structure's
                // placeholder is in place, would decide them apart (`r=e%40c.ta:7` took the 7).
                let cut = nextPre < n && pre[k].source != .scan
                let view = cut ? UnsafeBufferPointer(rebasing: p[0..<nextPre]) : p
                let before = cut && pre[k].source == .placeholder ? mark : nil
                if var d = detectAt(i, pairs, bits, mask, view, floor, before == nil ? reading : reading.with(.placeholderFollows), path) {
                    if let before, !d.keep, d.end == nextPre {
                        // A value that runs up to a placeholder: a first run replaced the rest of
                        // it and kept this part, so it stays.
                        rollBack(to: before)
                        d.keep = true
                    }
                    apply(d)
                } else {
                    i += 1
                }
            }
        }
        guard copied > 0 else { return nil }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<n]))
        return out
    }

    @inline(__always)
    private func detectAt(_ i: Int, _ pairs: UnsafeBufferPointer<UInt32>, _ bits: UnsafeBufferPointer<UInt64>,
                          _ mask: UInt32, _ p: UnsafeBufferPointer<UInt8>, _ floor: Int,
                          _ reading: Reading, _ path: () -> String) -> TextMatch? {
        let next = i + 1 < p.count ? p[i + 1] : 0
        let pair = Int(p[i]) << 8 | Int(next)
        if bits[pair >> 6] & (1 << UInt64(pair & 63)) == 0 { return nil }
        let families = pairs[pair] & mask
        // Cards, IPv4 addresses, key formats, `Bearer`/`Basic`, name cues and street types start
        // at a word's start (each checks the byte before it first): inside a word, mostly the
        // digits of every number in a body, the call cost more than that test. A key format in a
        // binary body and an Azure secret's `Q~` are the exceptions, found by their own rules.
        if i > 0 && families & ~Self.wordStartFamilies == 0 && Self.isAlnum(p[i - 1])
            && (families & Detectors.keyFormat.rawValue == 0 || (!reading.keepsLength && p[i] != 0x51)) {
            return nil
        }
        return detect(at: i, Detectors(rawValue: families), p, lowerBound: floor, reading, path)
    }

    @inline(__always) private static var wordStartFamilies: UInt32 {
        Detectors.card.rawValue | Detectors.ipv4.rawValue | Detectors.keyFormat.rawValue | Detectors.bearer.rawValue
            | Detectors.nameInText.rawValue | Detectors.streetAddress.rawValue
    }

    /// `table[first << 8 | second]` holds the detectors that can start at `first` followed by
    /// `second` (0 stands for the end of the text). Two bytes rule out nearly every position at the
    /// cost of one lookup, so common letters cost no call.
    static func makePairTable(internalSuffixes: [[UInt8]]) -> [UInt32] {
        var t = [UInt32](repeating: 0, count: 1 << 16)
        func allow(_ first: UInt8, _ seconds: [UInt8], _ d: Detectors) {
            for second in seconds { t[Int(first) << 8 | Int(second)] |= d.rawValue }
        }
        func allow(_ first: Character, _ seconds: String, _ d: Detectors) {
            allow(first.asciiValue!, Array(seconds.utf8), d)
        }
        let all = (0...255).map(UInt8.init)
        let digits = Array("0123456789".utf8)
        let upper = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        allow("e", "y", .jwt)
        allow("b", "eEaA", .bearer); allow("B", "eEaA", .bearer)  // Bearer, Basic
        for (first, second) in KeyFormats.startPairs { allow(first, [second], .keyFormat) }
        for (first, second) in KeyFormats.markerPairs { allow(first, [second], .markedKeyFormat) }
        allow("-", "-", .privateKey)
        allow(":", "/", .userinfo)
        allow(UInt8(ascii: ":"), all.filter { $0 != UInt8(ascii: "/") }, .colonAssignment)
        allow(UInt8(ascii: "@"), all, .email)
        allow("%", "4", .email)  // %40
        allow(UInt8(ascii: "="), all, .equalsAssignment)
        for first in "123456789".utf8 { allow(first, Array("0123456789.".utf8), .ipv4) }
        allow("f", "cdeCDE", .ipv6); allow("F", "cdeCDE", .ipv6)
        allow(UInt8(ascii: "<"), Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_".utf8), .markup)
        allow(UInt8(ascii: "+"), digits, .phone)
        allow(UInt8(ascii: "("), digits, .phone)
        for first in "23456".utf8 { allow(first, digits, .card) }
        for first in upper { allow(first, upper, .iban); allow(first, upper, .structured) }
        let hex = Array("0123456789abcdefABCDEF".utf8)
        for first in hex { allow(first, Array(":-".utf8), .structured) }
        allow("i", "P", .ownersDevice)
        for (first, second) in RedactionEngine.nameCuePairs { allow(first, [second], .nameInText) }
        for word in RedactionEngine.streetSuffixes.union(RedactionEngine.streetPrefixes) {
            let b = Array(word.utf8)
            allow(b[0], [b[1]], .streetAddress)
        }
        allow("c", "o", .oneTimeCode); allow("C", "o", .oneTimeCode); allow("C", "O", .oneTimeCode)
        allow("o", "t", .oneTimeCode); allow("O", "T", .oneTimeCode); allow("O", "t", .oneTimeCode)
        allow("p", "a", .oneTimeCode); allow("P", "a", .oneTimeCode); allow("P", "A", .oneTimeCode)
        allow("b", "o", .oneTimeCode); allow("B", "o", .oneTimeCode)  // `born 1964-06-06`
        allow("t", "o", .oneTimeCode); allow("T", "O", .oneTimeCode)
        var firsts = Set<UInt8>()
        for suffix in internalSuffixes where suffix.count >= 2 {
            firsts.insert(suffix[1])
            if suffix[1] >= 0x61 && suffix[1] <= 0x7A { firsts.insert(suffix[1] - 0x20) }
        }
        firsts.insert(UInt8(ascii: "e"))  // .example.invalid: harrec's own host placeholders
        allow(UInt8(ascii: "."), Array(firsts), .internalHost)
        return t
    }

    private func detect(at i: Int, _ families: Detectors, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int,
                        _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if families.contains(.jwt), flags.has(.jwt), let m = jwt(at: i, p, reading, path) { return m }
        if families.contains(.bearer), flags.has(.bearerToken), let m = bearer(at: i, p, reading, path) { return m }
        if families.contains(.keyFormat), let m = keyFormat(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.markedKeyFormat), let m = markedKeyFormat(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.structured), let m = structuredID(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.ownersDevice), flags.has(.personName), let range = Self.ownersDevice(p, at: i), range.lowerBound >= lowerBound {
            return valueMatch(p, range, .person, rule: .personName, reading, path)
        }
        if families.contains(.nameInText), let m = nameInText(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.streetAddress), let m = streetAddress(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.privateKey), flags.has(.privateKey), let m = privateKeyBlock(at: i, p, reading, path) { return m }
        if families.contains(.userinfo), flags.has(.urlUserinfo), let m = userinfo(at: i, p, reading, path) { return m }
        if families.contains(.colonAssignment), let m = colonAssignment(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.email), flags.has(.email), let m = email(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.equalsAssignment), let m = equalsAssignment(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.markup), flags.has(.secretAssignments), let m = markup(at: i, p, reading, path) { return m }
        if families.contains(.internalHost), flags.has(.internalHost),
           let m = internalHost(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        if families.contains(.ipv4), !reading.context.contains(.version), let m = ipv4(at: i, p, reading, path) { return m }
        if families.contains(.ipv6), flags.has(.privateIP), let m = ipv6(at: i, p, reading, path) { return m }
        if families.contains(.phone), flags.has(.phoneNumber), let m = phoneInText(at: i, p, reading, path) { return m }
        if families.contains(.card), flags.has(.cardNumber), let m = cardInText(at: i, p, reading, path) { return m }
        if families.contains(.iban), flags.has(.iban), let m = ibanInText(at: i, p, reading, path) { return m }
        if families.contains(.oneTimeCode), let m = oneTimeCode(at: i, p, lowerBound: lowerBound, reading, path) { return m }
        return nil
    }

    // MARK: - Helpers for detectors

    func hasPrefix(_ p: UnsafeBufferPointer<UInt8>, at i: Int, _ prefix: StaticString, caseInsensitive: Bool = false) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard i >= 0, i + count <= p.count else { return false }
        let q = prefix.utf8Start
        for k in 0..<count {
            let a = p[i + k], e = q[k]
            if caseInsensitive ? (a | 0x20) != (e | 0x20) : a != e { return false }
        }
        return true
    }

    func hasPrefix(_ p: UnsafeBufferPointer<UInt8>, at i: Int, _ prefix: String) -> Bool {
        let bytes = prefix.utf8
        let n = bytes.count
        guard i >= 0, i + n <= p.count else { return false }
        guard n > 0, let base = p.baseAddress else { return true }
        // A literal's bytes compared in place (`elementsEqual` over the UTF-8 view cost ~350
        // instructions a call, at every '.' of every body for the host placeholder check).
        if let same = bytes.withContiguousStorageIfAvailable({ memcmpEqual($0.baseAddress!, base + i, n) }) { return same }
        return UnsafeBufferPointer(rebasing: p[i..<i + n]).elementsEqual(bytes)
    }

    func string(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
    }

    func run(_ p: UnsafeBufferPointer<UInt8>, from start: Int, _ accept: (UInt8) -> Bool) -> Int {
        var j = start
        while j < p.count && accept(p[j]) { j += 1 }
        return j
    }

    /// A secret match for `range`, or nil when the value is allowed or already a placeholder.
    func secretMatch(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, rule: RedactionRule,
                     _ reading: Reading, _ path: () -> String) -> TextMatch? {
        // nil: the value is a placeholder or an allowed value. It stays, and as a whole: no other
        // rule takes part of it (a placeholder JWT is no high-entropy run the next time).
        guard let replacement = replaceSecret(string(p, range), rule, reading, path, length: range.count) else {
            return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: "", keep: true)
        }
        return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: replacement)
    }

    /// A match of `kind` (phone, card, person, host, IP) for `range`.
    func valueMatch(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ kind: ValueKind, rule: RedactionRule,
                    _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard let replacement = replaceValue(kind, string(p, range), rule, reading, path, length: range.count) else {
            return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: "", keep: true)
        }
        return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: replacement)
    }

    // MARK: - User patterns

    /// Every match of the rules file's patterns, as pre-matches that win over detectors.
    private func collectPatternMatches(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String,
                                       into pre: inout [PreMatch]) {
        guard rules.hasPatterns else { return }
        let text = String(decoding: p, as: UTF8.self)
        for (pattern, rule) in zip(config.patterns, rules.patternRules) {
            for m in text.matches(of: pattern.regex) where !m.range.isEmpty {
                let start = text.utf8.distance(from: text.startIndex, to: m.range.lowerBound)
                let end = text.utf8.distance(from: text.startIndex, to: m.range.upperBound)
                pre.append(PreMatch(match: TextMatch(start: start, end: end, replacement: ""), source: .structure, lazyRule: rule))
            }
        }
    }
}
