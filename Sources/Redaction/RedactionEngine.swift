import HAR

/// One value a rule matched: where it is (a JSON path into the HAR, plus a path inside a JSON
/// body when there is one), which rule, and a masked preview that never shows the secret.
public struct RedactionFinding: Sendable, Equatable {
    public var path: String
    public var rule: RedactionRule
    public var location: RedactionLocation
    public var preview: String
    /// Found by the independent check (`SuspectScanner`) in what redaction would leave, not by a
    /// rule: something the rules do not cover (a rule switched off, or a blind spot).
    public var isSuspect = false
}

/// What a run replaced, for the summary: counts per rule and location.
public struct RedactionReport: Sendable {
    public var counts: [RedactionRule: [RedactionLocation: Int]] = [:]
    public var findings: [RedactionFinding] = []
    /// Binary bodies and messages scanned for printable runs only.
    public var binaryBodies = 0
    public var entries = 0

    public var total: Int { counts.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
}

/// What every engine of one run shares: the configuration compiled into tables.
final class CompiledRules: @unchecked Sendable {
    let config: RedactionConfiguration
    let flags: Flags
    let names: NameMatcher
    let internalSuffixBytes: [[UInt8]]
    /// `RedactionEngine.makePairTable`, as a pointer: read for every byte scanned.
    let pairTable: UnsafeMutableBufferPointer<UInt32>
    /// One bit per pair: whether any detector starts there. 8 KiB, so the per-byte test stays in
    /// the L1 cache; the 128 KiB table of detector families is read only on a hit.
    let pairBits: UnsafeMutableBufferPointer<UInt64>
    /// The same bits without the detectors that need a digit (`Detectors.needingDigits`), for
    /// text that has none: a phone, card, IP, code or national number cannot start there.
    let pairBitsWithoutDigits: UnsafeMutableBufferPointer<UInt64>
    /// `KeyFormats.makeTripleBits`, as a pointer.
    let keyFormatTriples: UnsafeMutableBufferPointer<UInt64>
    /// The rules of the user's patterns, numbered after the built-ins.
    let patternRules: [RedactionRule]
    let syntax: MarkerSyntax
    let hasPatterns: Bool
    /// Parameter names that are secret as whole names (`code`, `key`, the rules file's), lowercase.
    let exactParameterNames: [[UInt8]]
    /// Which lowercase prose needs a scan at all.
    let lowercaseProse = LowercaseProse()

    /// Built-in rules as bits: the scanner asks per match, a Set lookup would show.
    struct Flags {
        let bits: UInt64
        @inline(__always) func has(_ rule: RedactionRule) -> Bool { bits & (1 << UInt64(rule.slot)) != 0 }
    }

    init(_ config: RedactionConfiguration, syntax: MarkerSyntax = .random()) {
        self.config = config
        self.syntax = syntax
        var bits: UInt64 = 0
        for rule in RedactionRule.builtIn where config.isEnabled(rule) { bits |= 1 << UInt64(rule.slot) }
        flags = Flags(bits: bits)
        names = NameMatcher(secretRuns: config.secretJSONKeys, exactNames: Array(config.secretParameterNames))
        hasPatterns = !config.patterns.isEmpty
        exactParameterNames = (config.secretParameterNames.map { $0.lowercased() } + ["key"]).sorted().map { Array($0.utf8) }
        internalSuffixBytes = config.internalSuffixes.map { Array($0.lowercased().utf8) }.filter { $0.count >= 2 }
        // Copied and walked through raw pointers: element-wise iteration of these 64 Ki-entry
        // tables made an engine cost 35 ms in a debug build (the tests make thousands).
        let table = RedactionEngine.makePairTable(internalSuffixes: internalSuffixBytes)
        let pairs = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: table.count)
        let anyBits = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: table.count / 64)
        anyBits.initialize(repeating: 0)
        let bitsWithoutDigits = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: table.count / 64)
        bitsWithoutDigits.initialize(repeating: 0)
        let withDigits = ~Detectors.needingDigits.rawValue
        table.withUnsafeBufferPointer { t in
            pairs.baseAddress!.initialize(from: t.baseAddress!, count: t.count)
            var pair = 0
            while pair < t.count {
                let families = t[pair]
                if families != 0 { anyBits[pair >> 6] |= 1 << UInt64(pair & 63) }
                if families & withDigits != 0 { bitsWithoutDigits[pair >> 6] |= 1 << UInt64(pair & 63) }
                pair += 1
            }
        }
        pairTable = pairs
        pairBits = anyBits
        pairBitsWithoutDigits = bitsWithoutDigits
        let triples = KeyFormats.makeTripleBits()
        let tripleBits = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: triples.count)
        triples.withUnsafeBufferPointer { tripleBits.baseAddress!.initialize(from: $0.baseAddress!, count: $0.count) }
        keyFormatTriples = tripleBits
        patternRules = config.patterns.enumerated().map {
            RedactionRule($0.element.name, slot: RedactionRule.builtIn.count + $0.offset)
        }
    }

    deinit {
        pairTable.deallocate()
        pairBits.deallocate()
        pairBitsWithoutDigits.deallocate()
        keyFormatTriples.deallocate()
    }
}

/// The redaction engine: pass 1 of one entry at a time (see `FileRedaction` for the whole
/// two-pass run). Every rule ends in one of the `replace` functions below, which note the
/// replacement and return a marker naming the value; pass 2 turns markers into placeholders.
///
/// It works on the typed HAR model, never on serialized JSON, so the output is valid HAR; inside
/// bodies it rewrites JSON in place, keeping key order and formatting.
/// Not thread-safe: one instance per thread.
public final class RedactionEngine {
    public let config: RedactionConfiguration
    let rules: CompiledRules
    /// Copies of the rules' flags and marker syntax: read per match, so kept here, not behind
    /// another reference.
    let flags: CompiledRules.Flags
    let syntax: MarkerSyntax
    /// The values this unit replaced, which markers refer to.
    var collector = ValueCollector()
    var nameMemo: NameMemo
    /// The text before a percent-encoded value being decoded and scanned: the suspect scan's
    /// look-back reads on into it (`encodedValueMatch`).
    var suspectLookBack: [UInt8] = []
    /// The closing tags of the texts being scanned (`closingTag`); each is forgotten when the
    /// scan of its text ends.
    var closingTagIndexes: [ClosingTagIndex] = []
    /// Replacement counts, `tallies[rule.slot * locationCount + location]`.
    private(set) var tallies: [Int]
    private(set) var findings: [RedactionFinding] = []
    /// Counts noted since the last mark, so a JSON rewrite that turns out not to be JSON can take
    /// its notes back before the text is scanned as plain text.
    var journal: [Int] = []
    var binaryBodies = 0
    var entriesSeen = 0
    /// Whether findings keep their path and preview (only `--check` needs them).
    let collectFindings: Bool
    /// Set by `FileRedaction`, which takes `deferredResponseBody` after each entry: a response
    /// body rewritten into bytes stays bytes for pass 2, and the entry's text is nil until then.
    var deferBodies = false
    /// The rewritten response body of the entry collected last, when `deferBodies`.
    var deferredResponseBody: [UInt8]?
    /// The numbering of `redact(_:)` and the standalone helpers (one thread, one file).
    var table = PlaceholderTable()
    static let locationCount = RedactionLocation.allCases.count

    public convenience init(config: RedactionConfiguration = RedactionConfiguration(), collectFindings: Bool = false) {
        self.init(rules: CompiledRules(config), collectFindings: collectFindings)
    }

    init(rules: CompiledRules, collectFindings: Bool) {
        self.rules = rules
        self.config = rules.config
        flags = rules.flags
        syntax = rules.syntax
        nameMemo = NameMemo(rules.names)
        self.collectFindings = collectFindings
        tallies = [Int](repeating: 0, count: (RedactionRule.builtIn.count + rules.config.patterns.count) * Self.locationCount)
    }

    /// The counts and findings so far.
    public var currentReport: RedactionReport {
        var report = RedactionReport()
        report.findings = findings
        report.binaryBodies = binaryBodies
        report.entries = entriesSeen
        Self.addTallies(tallies, rules: rules, to: &report)
        return report
    }

    static func addTallies(_ tallies: [Int], rules: CompiledRules, to report: inout RedactionReport) {
        for (slot, rule) in (RedactionRule.builtIn + rules.patternRules).enumerated() {
            for (index, location) in RedactionLocation.allCases.enumerated() {
                let count = tallies[slot * locationCount + index]
                if count > 0 { report.counts[rule, default: [:]][location, default: 0] += count }
            }
        }
    }

    /// Takes the tallies and findings gathered so far, leaving them empty.
    func takeResults() -> (tallies: [Int], findings: [RedactionFinding], binaryBodies: Int) {
        defer {
            for i in tallies.indices { tallies[i] = 0 }
            findings.removeAll()
            binaryBodies = 0
        }
        return (tallies, findings, binaryBodies)
    }

    // MARK: - Notes

    func note(_ rule: RedactionRule, _ reading: Reading, _ value: String, _ path: () -> String) {
        let cell = rule.slot * Self.locationCount + reading.location.index
        tallies[cell] += 1
        journal.append(cell)
        if collectFindings {
            findings.append(RedactionFinding(path: path(), rule: rule, location: reading.location, preview: Self.mask(value)))
        }
    }

    /// Takes back the notes made and the values collected since `mark`.
    func rollBack(to mark: (journal: Int, findings: Int, values: ValueCollector.Mark)) {
        for cell in journal[mark.journal...] { tallies[cell] -= 1 }
        journal.removeSubrange(mark.journal...)
        findings.removeSubrange(mark.findings...)
        collector.truncate(to: mark.values)
    }

    var mark: (journal: Int, findings: Int, values: ValueCollector.Mark) { (journal.count, findings.count, collector.mark) }

    /// A preview that says what kind of value it was without revealing it: its first two
    /// characters (one for short values, none below 6) and its length.
    static func mask(_ value: String) -> String {
        let count = value.count
        let shown = count >= 12 ? 2 : (count >= 6 ? 1 : 0)
        let head = String(value.prefix(shown)).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        return "\(head)… (\(count) chars)"
    }

    // MARK: - Replacements (every rule ends here)

    /// Empty values, allowed values, documentation stand-ins and placeholders are never replaced,
    /// nor is a value that is nothing but placeholders and punctuation (`+12015550100;`, what a
    /// first run left of a value it replaced): the value is seen through `PlaceholderText`, as
    /// text is, and the placeholders met keep their numbers reserved.
    func isUntouchable(_ value: String) -> Bool {
        if value.isEmpty { return true }
        if Self.isTemplateText(value) { return true }
        if !config.allowedValues.isEmpty && config.allowedValues.contains(value) { return true }
        guard let found = Placeholder.parts(of: value) else { return false }
        for f in found where f.number > 0 { collector.reserve(f.kind, f.number) }
        return true
    }

    /// The marker standing for `value` in `length` bytes of output.
    func marker(_ kind: ValueKind, _ value: String, _ reading: Reading, length: Int) -> String {
        let index = collector.index(kind, value)
        if reading.keepsLength { return syntax.value(index, .sameLength(length)) }
        if index < collector.plainMarkers.count { return collector.plainMarkers[index] }
        let marker = syntax.value(index, .plain)
        if index == collector.plainMarkers.count { collector.plainMarkers.append(marker) }
        return marker
    }

    func replaceSecret(_ value: String, _ rule: RedactionRule, _ reading: Reading, _ path: () -> String,
                       length: Int? = nil) -> String? {
        guard !isUntouchable(value) else { return nil }
        note(rule, reading, value, path)
        // An email under a secret key or cookie stays an email (same shape), and correlates
        // with the same address found elsewhere.
        if flags.has(.email), Self.isWholeEmail(value) { return marker(.email, value, reading, length: length ?? value.utf8.count) }
        return marker(.secret, value, reading, length: length ?? value.utf8.count)
    }

    /// A value under a name (JSON member, parameter, header, assignment): what its class says.
    /// `secretRule` is the rule a secret name counts under in this place.
    func replaceNamedValue(_ value: String, _ nameClass: NameClass, secretRule: RedactionRule,
                           _ reading: Reading, _ path: () -> String, length: Int? = nil) -> String? {
        switch nameClass {
        case .ordinary, .version, .personGroup:
            return nil
        case .secret:
            guard flags.has(secretRule), !Self.cannotBeSecret(value) else { return nil }
            if let end = Self.urlAuthorityEnd(value) {
                // A URL under a secret name: what follows its host is the secret, and the URL
                // stays a URL (a request's own URL may be the same value).
                let head = String(decoding: value.utf8.prefix(end + 1), as: UTF8.self)
                let rest = String(decoding: value.utf8.dropFirst(end + 1), as: UTF8.self)
                guard let r = replaceSecret(rest, secretRule, reading, path, length: length.map { $0 - end - 1 }) else { return nil }
                return head + r
            }
            return replaceSecret(value, secretRule, reading, path, length: length)
        case .count:
            guard flags.has(secretRule), !Self.cannotBeSecret(value), !Self.isCountValue(value) else { return nil }
            return replaceSecret(value, secretRule, reading, path, length: length)
        case .birthDate, .address, .place, .coordinate, .ipAddress, .cardExpiry, .person:
            return replacePersonal(value, nameClass, reading, path, length: length)
        case .bareKey, .identifier:
            guard flags.has(secretRule), Self.looksLikeToken(value) else { return nil }
            return replaceSecret(value, secretRule, reading, path, length: length)
        case .personName:
            guard flags.has(.personName), value.contains(where: { $0.isLetter }) else { return nil }
            if flags.has(.email), Self.isWholeEmail(value) { return replaceEmail(value, reading, path, length: length) }
            return replaceValue(.person, value, .personName, reading, path, length: length)
        case .phone:
            guard flags.has(.phoneNumber) else { return nil }
            // A placeholder has no digits of its own, and keeps its number reserved.
            guard Self.ownDigitCount(value) >= 6 else { _ = isUntouchable(value); return nil }
            return replaceValue(.phone, value, .phoneNumber, reading, path, length: length)
        case .cardNumber:
            let digits = Self.longestOwnDigitGroup(value)
            guard flags.has(.cardNumber), digits >= 12, digits <= 19 else { return nil }
            return replaceValue(.card, value, .cardNumber, reading, path, length: length)
        case .cardCode:
            return replaceCardCode(value, reading, path)
        }
    }

    /// A value of `kind` (email, host, IP, phone, card, person): its own numbering and shape.
    func replaceValue(_ kind: ValueKind, _ value: String, _ rule: RedactionRule, _ reading: Reading,
                      _ path: () -> String, length: Int? = nil) -> String? {
        guard !isUntouchable(value) else { return nil }
        note(rule, reading, value, path)
        return marker(kind, value, reading, length: length ?? value.utf8.count)
    }

    func replaceEmail(_ value: String, _ reading: Reading, _ path: () -> String, length: Int? = nil) -> String? {
        guard !Self.hasSuffixIgnoringCase(value, "@example.com") else {
            _ = isUntouchable(value)  // a placeholder keeps its number reserved
            return nil
        }
        return replaceValue(.email, value, .email, reading, path, length: length)
    }

    /// A CVC keeps its length as zeros: it needs no correlation, and apps check its length.
    func replaceCardCode(_ value: String, _ reading: Reading, _ path: () -> String) -> String? {
        guard flags.has(.cardCode), !value.isEmpty, value.utf8.allSatisfy({ Self.isDigit($0) || $0 == 0x20 }),
              value.utf8.contains(where: { $0 != 0x30 && $0 != 0x20 }) else { return nil }
        note(.cardCode, reading, value, path)
        return String(repeating: "0", count: value.utf8.count)
    }

    /// Whether a value under a lone `key` looks like a credential rather than a word: 16 or more
    /// characters without spaces, with letters and digits, and not an identifier of words
    /// (`feature.checkout_v2`).
    /// Placeholders inside the value do not count: a value that held no digit before
    /// `password=hunter2` inside it became `password=redacted-1` is still no token, or a second run
    /// would replace what the first kept.
    static func looksLikeToken(_ value: String) -> Bool {
        guard value.utf8.count >= 16, !value.utf8Contains(0x20), !isWordyIdentifier(value) else { return false }
        let own = value.utf8Count(where: isDigit) > 0 ? withoutPlaceholders(value) : []
        return own.contains(where: isDigit) && own.contains(where: { $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A })
    }

    /// The digits of a value but those of the placeholders in it: a first run that replaced a
    /// token inside a phone field's text must not give it the digits of a phone number.
    static func ownDigitCount(_ value: String) -> Int {
        let all = value.utf8Count(where: isDigit)
        return all == 0 ? 0 : withoutPlaceholders(value).reduce(0) { $0 + (isDigit($1) ? 1 : 0) }
    }

    /// The digits of the longest group in a value but the placeholders in it: digits with single
    /// spaces or dashes between them (`4111 1111 1111 1111`). A card number is one group; digits
    /// scattered through other text (`7<NUL>token"zk-1234567}123456789000`) are not added up, or
    /// replacing a token among them (`redacted-1`) would make a card of what was none.
    static func longestOwnDigitGroup(_ value: String) -> Int {
        guard value.utf8Count(where: isDigit) > 0 else { return 0 }
        let own = withoutPlaceholders(value)
        var longest = 0, group = 0
        for (k, b) in own.enumerated() {
            if isDigit(b) {
                group += 1
                longest = max(longest, group)
            } else if !((b == 0x20 || b == 0x2D) && k > 0 && isDigit(own[k - 1]) && k + 1 < own.count && isDigit(own[k + 1])) {
                group = 0
            }
        }
        return longest
    }

    /// The bytes of `value` outside the placeholders in it (`PlaceholderText`).
    static func withoutPlaceholders(_ value: String) -> [UInt8] {
        var copy = value
        return copy.withUTF8 { PlaceholderText.withoutPlaceholders($0) }
    }

    /// Whether the whole value is one email address (the shape the text scanner finds).
    static func isWholeEmail(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { p -> Bool in
            // Over the bytes, not String.UTF8View: this runs for every email in a file.
            guard p.count <= 254, let at = p.firstIndex(of: 0x40), at > 0, p[0] != 0x2E else { return false }
            for k in 0..<at {
                let b = p[k]
                guard isAlnum(b) || b == 0x2E || b == 0x5F || b == 0x25 || b == 0x2B || b == 0x2D else { return false }
            }
            // Labels: non-empty host bytes separated by dots, at least two, the last (the TLD) two
            // letters or more.
            var labels = 0, labelLength = 0, tldLetters = true
            for k in (at + 1)..<p.count {
                let b = p[k]
                if b == 0x2E {
                    guard labelLength > 0 else { return false }
                    labels += 1
                    labelLength = 0
                    tldLetters = true
                    continue
                }
                guard isHostByte(b) else { return false }
                labelLength += 1
                if !(b | 0x20 >= 0x61 && b | 0x20 <= 0x7A) { tldLetters = false }
            }
            return labels >= 1 && labelLength >= 2 && tldLetters
                && !(labels == 1 && isScaleLabel(UnsafeBufferPointer(rebasing: p[(at + 1)...])))
        }
    }

    /// Whether `p` starts with an asset scale label (`2x.`, `3x.`, `1.5x.` is two labels): the
    /// `@2x` of `icon@2x.png` is no domain.
    static func isScaleLabel(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        var k = 0
        while k < p.count && isDigit(p[k]) { k += 1 }
        return k > 0 && k <= 2 && k + 1 < p.count && p[k] | 0x20 == 0x78 && p[k + 1] == 0x2E
    }

    /// `value` ends with `suffix` (lowercase ASCII), ignoring case, without a lowercased copy.
    static func hasSuffixIgnoringCase(_ value: String, _ suffix: StaticString) -> Bool {
        let v = value.utf8, n = suffix.utf8CodeUnitCount
        guard v.count >= n else { return false }
        var i = v.index(v.endIndex, offsetBy: -n)
        for k in 0..<n {
            if v[i] | 0x20 != suffix.utf8Start[k] | 0x20 { return false }
            i = v.index(after: i)
        }
        return true
    }

    // MARK: - Byte classes

    @inline(__always) static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
    }
    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    @inline(__always) static func isHex(_ b: UInt8) -> Bool {
        isDigit(b) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66)
    }
    @inline(__always) static func isUpper(_ b: UInt8) -> Bool { b >= 0x41 && b <= 0x5A }
    @inline(__always) static func isHostByte(_ b: UInt8) -> Bool { isAlnum(b) || b == 0x2D }
    /// Characters of tokens (bearer credentials, API keys): base64, base64url and a few separators.
    @inline(__always) static func isTokenByte(_ b: UInt8) -> Bool {
        isAlnum(b) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E || b == 0x2B || b == 0x2F
    }
}

extension String {
    /// Whether the string's UTF-8 holds `byte`, read from its contiguous storage: `utf8.contains`
    /// walks the view's iterator at about 30 instructions a byte, once per replaced value.
    @inline(__always) func utf8Contains(_ byte: UInt8) -> Bool {
        var copy = self
        return copy.withUTF8 { p in p.contains(byte) }
    }

    /// How many of the string's UTF-8 bytes satisfy `accept`, read from contiguous storage.
    @inline(__always) func utf8Count(where accept: (UInt8) -> Bool) -> Int {
        var copy = self
        return copy.withUTF8 { p in
            var n = 0
            for b in p where accept(b) { n += 1 }
            return n
        }
    }
}
