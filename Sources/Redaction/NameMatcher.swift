/// What a name (JSON member, query or form parameter, multipart field, header, `NAME=value`
/// assignment, XML element, HTML `name` attribute) says about the value it holds.
enum NameClass: UInt8, Sendable {
    /// Nothing: the value is scanned like any text.
    case ordinary
    /// A credential: token, secret, password, API key, session, signature, OTP, CSRF token...
    case secret
    /// A lone `key`: a secret only when the value looks like a token (`{"key": "theme"}` is a
    /// preferences entry, `{"key": "8f3a..."}` is not).
    case bareKey
    /// A person's name (`firstName`, `displayName`, ...).
    case personName
    /// A phone number (`phone`, `mobile`, `tel`, `msisdn`, ...).
    case phone
    /// A payment card number (`cardNumber`, `pan`, ...).
    case cardNumber
    /// A card security code (`cvc`, `cvv`, `securityCode`, ...).
    case cardCode
    /// A version (`firmwareVersion`, `build`): a dotted quad there is not an IP address.
    case version
    /// A secret word that counts rather than holds (`max_tokens`, `prompt_tokens`, `tokens`):
    /// a number stays, any other value is a secret (a list of tokens).
    case count
    /// A date of birth (`dob`, `birthDate`, `date_of_birth`).
    case birthDate
    /// A postal address (`address`, `shipping_address`, `street`): a string is replaced, an
    /// object's lines are (`PersonalNames.Role`).
    case address
    /// A place (`location`, `home`, `device`, `coords`): a lat/long pair is replaced, and so are
    /// an object's latitude and longitude members.
    case place
    /// A latitude or longitude of a person's place (`home_lat`, `deviceLongitude`).
    case coordinate
    /// An IP address of a client (`client_ip`, `X-Forwarded-For`, `remote_addr`).
    case ipAddress
    /// A payment card's expiry (`exp_month`, `expiry`, `card_expiration`): MM/YY shapes and
    /// month or year numbers are replaced.
    case cardExpiry
    /// A person who receives or sends (`recipient`, `sender`, `beneficiary`): a string that
    /// reads as a name is a person's name; an object's `name` member is.
    case person
    /// A group that describes a person (`customer`, `user`, `shipping`): an object's `name`
    /// member is a person's name; a string is nothing.
    case personGroup
    /// An identifier that is a credential or tracks a device when the value looks like a token
    /// (`idfa`, `registration_id`, `apns`, `bssid`, `X-Honeycomb-Team`), in every place (a
    /// lone `key` header, by contrast, is always a secret).
    case identifier
}

/// Classifies names by their words: `accessToken`, `access_token`, `Access-Token` and
/// `ACCESS_TOKEN` are the words ["access", "token"], and a name is secret when a secret word (or
/// a listed run of words) appears in it, unless a word that describes the value rather than
/// holding it follows (`token_type`, `sessionCount`, `passwordPolicy`, `tokenExpiresIn`).
/// Lowercase compounds are split too (`apikey`, `csrftoken`, `sessionid`).
///
/// The same matcher serves every place a name appears, so a name that is secret as a JSON key is
/// secret as a header, a query parameter or an `.env` line.
struct NameMatcher {
    /// Runs of words that make a name secret (single words are runs of one). User JSON keys and
    /// parameters from a rules file are added here.
    private let secretRuns: WordRuns
    /// Whole names (lowercased, separators kept) that are secret only as the whole name: `code`
    /// (OAuth) and `key` (Google API keys) in query strings, `sig`.
    private let exactSecretNames: Set<String>

    init(secretRuns extra: [String] = [], exactNames: [String] = []) {
        var runs: [[String]] = Self.secretWords.map { [$0] } + Self.secretWordRuns
        var seen = Set(runs)
        for name in extra {
            let words = Self.words(name)
            if !words.isEmpty && seen.insert(words).inserted { runs.append(words) }
        }
        secretRuns = WordRuns(runs)
        exactSecretNames = Set(exactNames.map { $0.lowercased() })
    }

    /// Longer names are read by their last words only (`tail`): no identifier is this long, and
    /// what stands in a name's place beyond it is data (random bytes in a body that only claims
    /// to be a form, a hash used as a key), whose words cost time in proportion to their number
    /// (a 48 MB random "form" took 28 s). The words nearest the value still name it (`...&token`),
    /// and a name that a first redaction shortens under the limit must be read the same way again.
    /// Exact names (rules files, `secretParameterNames`) still match at any length, and the value
    /// is still scanned as content.
    static let maximumNameLength = 128

    /// The last `maximumNameLength` bytes of a longer name, from the first word boundary in them.
    static func tail(_ name: String) -> String {
        var bytes = name.utf8.suffix(maximumNameLength)[...]
        // Whole characters, then no partial word: a word goes on through letters and digits of
        // any script (as `words` reads them), and stops at anything else (a U+FFFD that stood
        // for a bad byte among them is no letter).
        while let b = bytes.first, b & 0xC0 == 0x80 { bytes = bytes.dropFirst() }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.unicodeScalars.drop { $0 == "_" || $0.properties.isAlphabetic || $0.properties.numericType != nil })
    }

    /// The class of a name. `asParameter`: the name stands for a query or form parameter, where
    /// a bare `key` and `code` are credentials (`?key=AIza...`, OAuth's `?code=`).
    func classify(_ name: String, asParameter: Bool = false) -> NameClass {
        if asParameter && exactSecretNames.contains(name.lowercased()) { return .secret }
        guard name.utf8.count <= Self.maximumNameLength else { return classify(Self.tail(name), asParameter: asParameter) }
        let words = Self.nameWords(name)
        guard !words.isEmpty else { return .ordinary }
        if words.first == "key" && words.dropFirst().allSatisfy({ $0 == "value" || $0 == "string" }) {
            return asParameter ? .secret : .bareKey
        }
        // A secret word wins over a card code word (`cvcToken`): a secret's placeholder replaces
        // any value, a code's only digits.
        if let personal = Self.personalClass(words), personal != .cardCode || !isSecret(words) { return personal }
        if let kind = PersonalNames.classify(words) { return kind }
        if isSecret(words) { return PersonalNames.isCount(words) ? .count : .secret }
        if PersonalNames.isIdentifier(words) { return .identifier }
        if words.contains(where: { Self.versionWords.contains($0) }) { return .version }
        return .ordinary
    }

    private func isSecret(_ words: [String]) -> Bool {
        secretRuns.contains(in: words) { start, end in
            if end - start == 1 && words[start] == "key" {
                // `key` as a word needs a qualifier before it that is not innocent (`apiKey`,
                // `stripe_key`; not `sortKey`), and `keyId` names the key, not its secret.
                guard start > 0, !Self.innocentKeyQualifiers.contains(words[start - 1]) else { return false }
                if end < words.count, words[end] == "id" || words[end] == "ids" { return false }
            }
            return !words[end...].contains(where: { Self.describingWords.contains($0) })
        }
    }

    /// What a member's name means inside a secret object (`"auth": {...}`): everything is
    /// secret but what describes it (`token_type`, `expires_in`, `tokenUrl`, `max_attempts`) and
    /// counts.
    static func inSecretScope(_ own: NameInfo) -> NameClass {
        if own.nameClass == .count { return .count }
        return own.nameClass == .ordinary && own.roles.contains(.describes) ? .ordinary : .secret
    }

    private static func personalClass(_ words: [String]) -> NameClass? {
        func endsWith(_ runs: WordRuns) -> Bool {
            // The run may be followed only by nothing (a describing word makes it a label).
            runs.contains(in: words) { _, end in words[end...].allSatisfy { $0 == "value" || $0 == "text" } }
        }
        // Only words after the code word describe it (`cvcLength`): words before it may be a value
        // a placeholder replaced in broken JSON (`redacted-1\u{3}csc`), which must not change the
        // class from one run to the next.
        if let code = words.firstIndex(where: { cardCodeWords.contains($0) }),
           !words[(code + 1)...].contains(where: describingWords.contains) {
            return .cardCode
        }
        if endsWith(cardCodeRunSet) { return .cardCode }
        if endsWith(cardRunSet) { return .cardNumber }
        if endsWith(personRunSet) { return .personName }
        // A phone word followed only by words that say which phone (`phone_landline`,
        // `mobileNumberFormatted`, `homePhone`).
        if let phone = words.lastIndex(where: phoneWords.contains),
           words[(phone + 1)...].allSatisfy(PersonalNames.phoneQualifiers.contains) {
            return .phone
        }
        return nil
    }

    // MARK: - Words

    /// Lowercase compounds split at a secret word they end or start with: `apikey` is
    /// ["api", "key"], `csrftoken` ["csrf", "token"], `sessionid` ["session", "id"].
    private static let compoundSuffixes = [
        "token", "tokens", "secret", "password", "passwd", "passphrase", "signature", "credential", "credentials",
    ]
    private static let compoundKeyPrefixes = [
        "api", "access", "secret", "private", "client", "auth", "master", "signing", "app", "consumer", "subscription",
    ]
    private static let compoundPrefixes = ["session", "csrf", "xsrf", "otp"]
    static let secretWordSet = Set(secretWords)
    private static let cardCodeRunSet = WordRuns(cardCodeRuns)
    private static let cardRunSet = WordRuns(cardRuns)
    private static let personRunSet = WordRuns(personRuns)

    /// Splits snake_case, kebab-case, camelCase, dotted and lowercase-compound names into
    /// lowercased words; a run of capitals is one word ("APIKey" -> ["api", "key"]).
    /// `name` with each email address in it (`@` or `%40`) read as the one word `email`: a
    /// rule replaces the address in the name (`token At@corp.com` -> `token user1@example.com`),
    /// and its words (`at`, a describing word, against `user1`) must not change the name's class
    /// from one run to the next.
    static func emailsAsWords(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == 0x40 || $0 == 0x25 }) else { return name }
        let b = Array(name.utf8)
        func isLocal(_ c: UInt8) -> Bool { RedactionEngine.isAlnum(c) || c == 0x2E || c == 0x5F || c == 0x2B || c == 0x2D }
        func isDomain(_ c: UInt8) -> Bool { RedactionEngine.isAlnum(c) || c == 0x2E || c == 0x2D }
        var out: [UInt8] = []
        var copied = 0
        var i = 0
        while i < b.count {
            let at = b[i] == 0x40 ? 1 : (b[i] == 0x25 && i + 2 < b.count && b[i + 1] == 0x34 && b[i + 2] == 0x30 ? 3 : 0)
            guard at > 0 else { i += 1; continue }
            var start = i
            while start > copied && isLocal(b[start - 1]) { start -= 1 }
            var end = i + at
            while end < b.count && isDomain(b[end]) { end += 1 }
            while end > i + at && (b[end - 1] == 0x2E || b[end - 1] == 0x2D) { end -= 1 }
            while start < i && b[start] == 0x2E { start += 1 }
            // The address's shape as the email rule checks it.
            guard start < i, RedactionEngine.isWholeEmail(String(decoding: b[start..<i] + [0x40] + b[(i + at)..<end], as: UTF8.self))
            else { i += at; continue }
            out += b[copied..<start] + Array(" email ".utf8)
            copied = end
            i = end
        }
        guard copied > 0 else { return name }
        return String(decoding: out + b[copied...], as: UTF8.self)
    }

    /// The words of a name as every reading of it takes them: an email address in it is the one
    /// word `email` (`emailsAsWords`), so its class and its roles agree before and after a rule
    /// replaces the address (`At@p.en` has no describing `at` once it is `user1@example.com`).
    static func nameWords(_ name: String) -> [String] { words(emailsAsWords(name)) }

    static func words(_ name: String) -> [String] {
        name.utf8.allSatisfy({ $0 < 0x80 }) ? asciiWords(name) : unicodeWords(name)
    }

    /// `words` by `Character`: letters and digits of any script.
    static func unicodeWords(_ name: String) -> [String] {
        var words: [String] = []
        var current: [Character] = []
        let chars = Array(name)
        func flush() {
            guard !current.isEmpty else { return }
            words.append(contentsOf: splitCompound(String(current).lowercased()))
            current = []
        }
        for (index, c) in chars.enumerated() {
            if !(c.isLetter || c.isNumber) {
                flush()
                continue
            }
            if c.isUppercase, let last = current.last {
                let previousLower = last.isLowercase || last.isNumber
                let nextLower = index + 1 < chars.count && chars[index + 1].isLowercase
                if previousLower || (nextLower && last.isUppercase) { flush() }
            }
            current.append(c)
        }
        flush()
        return words
    }

    /// `words` of an ASCII name, read byte by byte: most names are, and `Character`'s Unicode
    /// properties cost a name as much as the rest of its classification.
    static func asciiWords(_ name: String) -> [String] {
        var words: [String] = []
        let b = Array(name.utf8)
        @inline(__always) func isUpper(_ c: UInt8) -> Bool { c >= 0x41 && c <= 0x5A }
        @inline(__always) func isLower(_ c: UInt8) -> Bool { c >= 0x61 && c <= 0x7A }
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        var start = -1
        func flush(_ end: Int) {
            guard start >= 0 else { return }
            words.append(contentsOf: splitCompound(String(decoding: b[start..<end].map { isUpper($0) ? $0 | 0x20 : $0 }, as: UTF8.self)))
            start = -1
        }
        for (index, c) in b.enumerated() {
            guard isUpper(c) || isLower(c) || isDigit(c) else {
                flush(index)
                continue
            }
            if isUpper(c), start >= 0 {
                let last = b[index - 1]
                let nextLower = index + 1 < b.count && isLower(b[index + 1])
                if isLower(last) || isDigit(last) || (nextLower && isUpper(last)) { flush(index) }
            }
            if start < 0 { start = index }
        }
        flush(b.count)
        return words
    }

    private static func splitCompound(_ word: String) -> [String] {
        let length = word.utf8.count
        guard length > 4 else { return [word] }
        if word.hasPrefix("aspsessionid") { return ["aspsessionid"] }  // ASPSESSIONIDQQGGQGQS
        if secretWordSet.contains(word) && word != "apikey" && word != "privatekey" && word != "sessionid" { return [word] }
        for suffix in compoundSuffixes where length > suffix.utf8.count + 1 && word.hasSuffix(suffix) {
            return splitCompound(String(word.dropLast(suffix.count))) + [suffix]
        }
        if word.hasSuffix("key") {
            let head = String(word.dropLast(3))
            if compoundKeyPrefixes.contains(head) { return [head, "key"] }
        }
        if word.hasSuffix("id") {
            let head = String(word.dropLast(2))
            if head == "session" || head == "sess" { return ["session", "id"] }
        }
        for prefix in compoundPrefixes where length > prefix.utf8.count + 1 && word.hasPrefix(prefix) {
            return [prefix] + splitCompound(String(word.dropFirst(prefix.count)))
        }
        return [word]
    }
}

/// Runs of words (`["api", "key"]`), found by their first word.
struct WordRuns {
    private var byFirst: [String: [[String]]] = [:]

    init(_ runs: [[String]]) {
        for run in runs where !run.isEmpty { byFirst[run[0], default: []].append(run) }
    }

    /// Whether a run stands in `words` (at `start..<end`) where `accept` takes it.
    func contains(in words: [String], where accept: (_ start: Int, _ end: Int) -> Bool) -> Bool {
        for (start, word) in words.enumerated() {
            guard let runs = byFirst[word] else { continue }
            for run in runs where start + run.count <= words.count
                && words[start..<start + run.count].elementsEqual(run) && accept(start, start + run.count) {
                return true
            }
        }
        return false
    }
}

/// What a name says, as `NameMemo` keeps it: its class, and what it means as a member of an
/// object whose name set a scope (`PersonalNames.Roles`).
struct NameInfo {
    var nameClass: NameClass
    var roles: PersonalNames.Roles
}

/// `NameMatcher.classify` with a memo keyed by the name's bytes: JSON bodies repeat a few hundred
/// member names millions of times, and this avoids building and hashing a String per member.
/// Open addressing, FNV-1a; once half full, it starts over. One per engine (not shared).
struct NameMemo {
    private static let slots = 8192
    /// Bytes of query, form and markup syntax, and control bytes: no identifier holds them.
    static let syntaxBytes: [Bool] = (0...255).map { $0 < 0x20 || "=%&?\"\\<>{}[];".utf8.contains(UInt8($0)) }
    /// The matcher, held here so a lookup copies nothing.
    let matcher: NameMatcher

    init(_ matcher: NameMatcher) { self.matcher = matcher }

    private var index = [Int32](repeating: -1, count: NameMemo.slots)
    private var entries: [(hash: UInt64, start: Int32, count: Int32, info: NameInfo)] = []
    private var bytes: [UInt8] = []

    mutating func classify(_ name: UnsafeBufferPointer<UInt8>) -> NameClass { info(name).nameClass }

    mutating func info(_ name: UnsafeBufferPointer<UInt8>) -> NameInfo {
        if name.isEmpty { return NameInfo(nameClass: .ordinary, roles: []) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in name { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 }
        let mask = Self.slots - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let i = index[slot]
            if i < 0 { break }
            let e = entries[Int(i)]
            if e.hash == hash && Int(e.count) == name.count
                && bytes.withUnsafeBufferPointer({ memcmpEqual($0.baseAddress! + Int(e.start), name.baseAddress!, name.count) }) {
                return e.info
            }
            slot = (slot + 1) & mask
        }
        let text = String(decoding: name, as: UTF8.self)
        let nameClass = matcher.classify(text)
        var roles = PersonalNames.roles(of: text)
        switch nameClass {
        case .phone, .birthDate, .address: roles.insert(.personal)
        case .personName where NameMatcher.nameWords(text).contains(where: PersonalNames.realNameWords.contains):
            roles.insert(.personal)
        default: break
        }
        // A name holding query or markup syntax (`r=a%39xAt-en`) is text, not an identifier: its
        // words describe nothing. A rule may rewrite part of it (a placeholder), and what it says
        // of its value must not change with that.
        if name.contains(where: { NameMemo.syntaxBytes[Int($0)] }) { roles.remove(.describes) }
        let result = NameInfo(nameClass: nameClass, roles: roles)
        guard name.count <= 256 else { return result }
        if entries.count == Self.slots / 2 {
            // Full (a body keyed by ids): start over, so the names it repeats stay cheap.
            for k in index.indices { index[k] = -1 }
            entries.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            slot = Int(truncatingIfNeeded: hash) & mask
        }
        index[slot] = Int32(entries.count)
        entries.append((hash, Int32(bytes.count), Int32(name.count), result))
        bytes.append(contentsOf: name)
        return result
    }

    mutating func classify(_ name: String) -> NameClass {
        var copy = name
        return copy.withUTF8 { classify($0) }
    }
}
