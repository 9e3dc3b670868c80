import HAR

/// One value a rule matched: where it is (a JSON path into the HAR, plus a path inside a JSON
/// body when there is one), which rule, and a masked preview that never shows the secret.
public struct RedactionFinding: Sendable, Equatable {
    public var path: String
    public var rule: RedactionRule
    public var location: RedactionLocation
    public var preview: String
}

/// What a run replaced, for the summary: counts per rule and location.
public struct RedactionReport: Sendable {
    public var counts: [RedactionRule: [RedactionLocation: Int]] = [:]
    public var findings: [RedactionFinding] = []
    /// Bodies left alone because they are binary (images, protobuf, ...).
    public var binaryBodies = 0
    public var entries = 0

    public var total: Int { counts.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
}

/// The redaction engine. One instance redacts one file: the placeholder numbering is per
/// instance, so the same secret gets the same placeholder throughout that file.
///
/// It works on the typed HAR model (`redact(_:)`), never on serialized JSON, so the output is
/// valid HAR; inside bodies it rewrites JSON in place, keeping key order and formatting.
/// Not thread-safe: use one instance per thread.
public final class RedactionEngine {
    public let config: RedactionConfiguration
    var table = PlaceholderTable()
    /// Replacement counts, `tallies[rule.slot * locationCount + location]`: counted per value
    /// on the hot path, so an array rather than nested dictionaries.
    private var tallies: [Int]
    private var findings: [RedactionFinding] = []
    var binaryBodies = 0
    var entriesSeen = 0
    /// The rules of the user's patterns, numbered after the built-ins.
    let patternRules: [RedactionRule]
    /// Whether findings keep their path and preview (only `--check` needs them).
    let collectFindings: Bool
    let flags: Flags
    let internalSuffixBytes: [[UInt8]]
    let pairTable: [UInt8]
    var jsonKeys: JSONKeyMatcher
    /// Counts noted since the last mark, so a JSON rewrite that turns out not to be JSON can
    /// take its notes back before the text is scanned as plain text.
    var journal: [Int] = []
    /// Names of cookies whose values were replaced (lowercased): `name=value` in free text (an
    /// API echoing its request headers, a logged Cookie line) gets the same placeholder when
    /// the value is one of the secrets already replaced.
    var learnedCookieNames: Set<String> = []
    private static let locationCount = RedactionLocation.allCases.count

    /// Built-in rules as booleans: the scanner asks per byte, a Set lookup would show.
    struct Flags {
        var jwt, bearer, aws, google, github, slack, stripe, privateKey, userinfo, email, parameters,
            internalHost, privateIP, jsonKeys, authorization, cookies, setCookies, secretHeaders, knownSecrets: Bool
    }

    public init(config: RedactionConfiguration = RedactionConfiguration(), collectFindings: Bool = false) {
        self.config = config
        self.collectFindings = collectFindings
        let on = config.isEnabled
        flags = Flags(jwt: on(.jwt), bearer: on(.bearerToken), aws: on(.awsAccessKey), google: on(.googleAPIKey),
                      github: on(.githubToken), slack: on(.slackToken), stripe: on(.stripeKey),
                      privateKey: on(.privateKey), userinfo: on(.urlUserinfo), email: on(.email),
                      parameters: on(.secretParameters), internalHost: on(.internalHost), privateIP: on(.privateIP),
                      jsonKeys: on(.jsonKeys), authorization: on(.authorizationHeader), cookies: on(.cookies),
                      setCookies: on(.setCookies), secretHeaders: on(.secretHeaders), knownSecrets: on(.knownSecrets))
        internalSuffixBytes = config.internalSuffixes.map { Array($0.lowercased().utf8) }.filter { $0.count >= 2 }
        pairTable = Self.makePairTable(internalSuffixes: internalSuffixBytes)
        jsonKeys = JSONKeyMatcher(keys: config.secretJSONKeys)
        patternRules = config.patterns.enumerated().map {
            RedactionRule($0.element.name, slot: RedactionRule.builtIn.count + $0.offset)
        }
        tallies = [Int](repeating: 0, count: (RedactionRule.builtIn.count + config.patterns.count) * Self.locationCount)
    }

    /// The counts and findings so far.
    public var currentReport: RedactionReport {
        var report = RedactionReport()
        report.findings = findings
        report.binaryBodies = binaryBodies
        report.entries = entriesSeen
        for (slot, rule) in (RedactionRule.builtIn + patternRules).enumerated() {
            for (index, location) in RedactionLocation.allCases.enumerated() {
                let count = tallies[slot * Self.locationCount + index]
                if count > 0 { report.counts[rule, default: [:]][location] = count }
            }
        }
        return report
    }

    // MARK: - Replacements (every rule ends here)

    func note(_ rule: RedactionRule, _ location: RedactionLocation, _ value: String, _ path: () -> String) {
        let cell = rule.slot * Self.locationCount + location.index
        tallies[cell] += 1
        journal.append(cell)
        if collectFindings {
            findings.append(RedactionFinding(path: path(), rule: rule, location: location, preview: Self.mask(value)))
        }
    }

    /// Takes back the notes made since `mark` (journal count, findings count).
    func rollBack(to mark: (journal: Int, findings: Int)) {
        for cell in journal[mark.journal...] { tallies[cell] -= 1 }
        journal.removeSubrange(mark.journal...)
        findings.removeSubrange(mark.findings...)
    }

    var mark: (journal: Int, findings: Int) { (journal.count, findings.count) }

    func learnCookieName(_ name: String) {
        guard !name.isEmpty, name.utf8.count <= 64 else { return }
        learnedCookieNames.insert(name.lowercased())
    }

    func isUntouchable(_ value: String) -> Bool {
        value.isEmpty || (!config.allowedValues.isEmpty && config.allowedValues.contains(value))
            || Placeholder.isPlaceholder(value)
    }

    func replaceSecret(_ value: String, _ rule: RedactionRule, _ location: RedactionLocation, _ path: () -> String) -> String? {
        // A value seen before is a secret already vetted: skip the placeholder checks.
        if let known = table.knownSecret(value) {
            note(rule, location, value, path)
            return known
        }
        guard !isUntouchable(value) else { return nil }
        note(rule, location, value, path)
        // An email under a secret key or cookie stays an email (same shape), and correlates
        // with the same address found elsewhere.
        if flags.email, Self.isWholeEmail(value) { return table.email(value) }
        return table.secret(value)
    }

    /// Shortest bare value `known-secrets` replaces: shorter secrets (a numeric session id, a
    /// short word) also occur in paths and headers by coincidence, and replacing those would
    /// break fixtures without protecting anything.
    static let knownSecretMinimumLength = 10

    /// `value` whole, when an earlier rule replaced the same value elsewhere in the file (file
    /// order: a secret learned later does not reach back).
    func replaceKnownSecret(_ value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard flags.knownSecrets, value.utf8.count >= Self.knownSecretMinimumLength,
              let known = table.knownSecret(value) else { return nil }
        note(.knownSecrets, location, value, path)
        return known
    }

    /// Replaces known secrets that stand as whole segments of a URL path (between `/`, and `;`,
    /// `=`, `,` for matrix parameters).
    /// `url` is the part before the query; the scheme and authority are left alone.
    func replaceKnownSecretsInPath(_ url: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard flags.knownSecrets, url.utf8.count >= Self.knownSecretMinimumLength else { return nil }
        var pathStart = url.startIndex
        if let scheme = url.range(of: "://") {
            pathStart = url[scheme.upperBound...].firstIndex(of: "/") ?? url.endIndex
        }
        var result = String(url[..<pathStart])
        var changed = false
        var segmentStart = pathStart
        var index = pathStart
        func finishSegment(at end: String.Index) {
            let segment = url[segmentStart..<end]
            if segment.utf8.count >= Self.knownSecretMinimumLength {
                let text = String(segment)
                let decoded = text.contains("%") ? HARBuild.percentDecoded(text, plusAsSpace: false) : text
                if let known = replaceKnownSecret(decoded, location, path) {
                    result += known
                    changed = true
                    return
                }
            }
            result += segment
        }
        while index < url.endIndex {
            let character = url[index]
            if character == "/" || character == ";" || character == "=" || character == "," {
                finishSegment(at: index)
                result.append(character)
                segmentStart = url.index(after: index)
            }
            index = url.index(after: index)
        }
        finishSegment(at: url.endIndex)
        return changed ? result : nil
    }

    /// Whether the whole value is one email address (the shape the text scanner finds).
    static func isWholeEmail(_ value: String) -> Bool {
        let bytes = value.utf8
        guard bytes.count <= 254, let at = bytes.firstIndex(of: 0x40), at != bytes.startIndex else { return false }
        let local = bytes[..<at], domain = bytes[bytes.index(after: at)...]
        guard local.allSatisfy({ isAlnum($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x25 || $0 == 0x2B || $0 == 0x2D }),
              local.first != 0x2E else { return false }
        let labels = domain.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isHostByte) }),
              let tld = labels.last, tld.count >= 2, tld.allSatisfy({ $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A })
        else { return false }
        return true
    }

    func replaceEmail(_ value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        if let known = table.knownEmail(value) {
            note(.email, location, value, path)
            return known
        }
        guard !isUntouchable(value), !value.lowercased().hasSuffix("@example.com") else { return nil }
        note(.email, location, value, path)
        return table.email(value)
    }

    func replaceHost(_ value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard !isUntouchable(value) else { return nil }
        note(.internalHost, location, value, path)
        return table.host(value)
    }

    func replaceIPv4(_ value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard !isUntouchable(value) else { return nil }
        note(.privateIP, location, value, path)
        return table.ipv4Address(value)
    }

    func replaceIPv6(_ value: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        guard !isUntouchable(value) else { return nil }
        note(.privateIP, location, value, path)
        return table.ipv6Address(value)
    }

    /// A preview that says what kind of value it was without revealing it: its first two
    /// characters (one for short values, none below 6) and its length.
    static func mask(_ value: String) -> String {
        let count = value.count
        let shown = count >= 12 ? 2 : (count >= 6 ? 1 : 0)
        let head = String(value.prefix(shown)).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        return "\(head)… (\(count) chars)"
    }
}

/// Decides whether a JSON member name is a secret, by words: `accessToken`, `access_token`,
/// `Access-Token` and `ACCESS_TOKEN` are the words ["access", "token"], and a name is secret when
/// a listed key's words appear in it in a row (so `token` matches `csrfToken` but not
/// `tokenizer`). A secret word followed by a word that describes it rather than holding it
/// (`token_type`, `sessionCount`, `passwordPolicy`, `tokenExpiresIn`) does not count.
struct JSONKeyMatcher {
    private let keys: [[String]]

    static let describingWords: Set<String> = [
        "type", "types", "kind", "expires", "expiry", "expiration", "exp", "ttl", "lifetime", "duration", "timeout",
        "length", "count", "url", "uri", "endpoint", "name", "names", "format", "required", "enabled", "policy",
        "hint", "label", "status", "version", "scope", "scopes", "strength", "changed", "updated", "created",
        "present", "set", "valid", "location", "path", "field", "header", "method", "mode", "algorithm",
    ]

    init(keys: [String]) {
        var seen = Set<[String]>()
        self.keys = keys.map { Self.words($0) }.filter { !$0.isEmpty && seen.insert($0).inserted }
    }

    // A memo keyed by the name's bytes: JSON bodies repeat a few hundred member names millions
    // of times, and this avoids building and SipHashing a String per member. Open addressing,
    // FNV-1a; once full, names are simply computed.
    private static let memoSlots = 8192
    private var memoIndex = [Int32](repeating: -1, count: JSONKeyMatcher.memoSlots)
    private var memoEntries: [(hash: UInt64, start: Int32, count: Int32, secret: Bool)] = []
    private var memoBytes: [UInt8] = []

    mutating func isSecret(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        let mask = Self.memoSlots - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let index = memoIndex[slot]
            if index < 0 { break }
            let e = memoEntries[Int(index)]
            if e.hash == hash && Int(e.count) == bytes.count
                && memoBytes[Int(e.start)..<Int(e.start) + Int(e.count)].elementsEqual(bytes) {
                return e.secret
            }
            slot = (slot + 1) & mask
        }
        let result = computeIsSecret(String(decoding: bytes, as: UTF8.self))
        if memoEntries.count < Self.memoSlots / 2 && bytes.count <= 256 {
            memoIndex[slot] = Int32(memoEntries.count)
            memoEntries.append((hash, Int32(memoBytes.count), Int32(bytes.count), result))
            memoBytes.append(contentsOf: bytes)
        }
        return result
    }

    /// The same answer for a name held as a String (goes through the byte memo).
    mutating func isSecret(_ key: String) -> Bool {
        var copy = key
        return copy.withUTF8 { isSecret(bytes: $0) }
    }

    private func computeIsSecret(_ key: String) -> Bool {
        let words = Self.words(key)
        var result = false
        outer: for k in keys where k.count <= words.count {
            for start in 0...(words.count - k.count) where Array(words[start..<start + k.count]) == k {
                let after = words[(start + k.count)...]
                if after.contains(where: Self.describingWords.contains) { continue }
                result = true
                break outer
            }
        }
        return result
    }

    /// Splits snake_case, kebab-case, camelCase and dotted names into lowercased words; a run of
    /// capitals is one word ("APIKey" -> ["api", "key"]).
    static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current: [Character] = []
        let chars = Array(name)
        for (index, c) in chars.enumerated() {
            if !(c.isLetter || c.isNumber) {
                if !current.isEmpty { words.append(String(current).lowercased()); current = [] }
                continue
            }
            if c.isUppercase, !current.isEmpty {
                let previousLower = current.last!.isLowercase || current.last!.isNumber
                let nextLower = index + 1 < chars.count && chars[index + 1].isLowercase
                if previousLower || (nextLower && current.last!.isUppercase) {
                    words.append(String(current).lowercased())
                    current = []
                }
            }
            current.append(c)
        }
        if !current.isEmpty { words.append(String(current).lowercased()) }
        return words
    }
}
