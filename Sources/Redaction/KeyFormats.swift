import HAR

/// One entry of the catalogue of credential formats (`KeyFormats.all`), found by prefix,
/// alphabet and length anywhere in text. A match needs a word boundary before it and, after it,
/// a byte outside its alphabet. Each entry carries its own samples, as gitleaks' rules do: real
/// shapes it must find, and look-alikes it must not (`KeyFormatCatalogueTests` checks both).
struct KeyFormat {
    enum Alphabet {
        case alnum, alnumDashUnderscore, alnumUnderscore, upperAlnum, hex, lowerHex, letters, base64, bech32Upper
        case alnumDashUnderscoreDot, uuid, lowerAlnum, alnumDash, alnumDashUnderscoreEq, base64Pad, digits
        case alnumUnderscoreDot, upperAlnumDash, alnumDashUnderscoreDotEq, base64UrlPad, base64UrlPadDot, alnumDot
        case base64UrlPadAt, digitsSlash, alnumPercent

        @inline(__always) func contains(_ b: UInt8) -> Bool {
            let alnum = RedactionEngine.isAlnum(b)
            switch self {
            case .alnum: return alnum
            case .alnumDashUnderscore: return alnum || b == 0x2D || b == 0x5F
            case .alnumDashUnderscoreDot: return alnum || b == 0x2D || b == 0x5F || b == 0x2E
            case .alnumUnderscore: return alnum || b == 0x5F
            case .upperAlnum, .bech32Upper: return RedactionEngine.isDigit(b) || RedactionEngine.isUpper(b)
            case .hex: return RedactionEngine.isHex(b)
            case .lowerHex: return RedactionEngine.isDigit(b) || (b >= 0x61 && b <= 0x66)
            case .letters: return b | 0x20 >= 0x61 && b | 0x20 <= 0x7A
            case .base64: return alnum || b == 0x2B || b == 0x2F
            case .uuid: return RedactionEngine.isHex(b) || b == 0x2D
            case .lowerAlnum: return RedactionEngine.isDigit(b) || (b >= 0x61 && b <= 0x7A)
            case .alnumDash: return alnum || b == 0x2D
            case .alnumDashUnderscoreEq: return alnum || b == 0x2D || b == 0x5F || b == 0x3D
            case .base64Pad: return alnum || b == 0x2B || b == 0x2F || b == 0x3D
            case .digits: return RedactionEngine.isDigit(b)
            case .alnumUnderscoreDot: return alnum || b == 0x5F || b == 0x2E
            case .upperAlnumDash: return RedactionEngine.isDigit(b) || RedactionEngine.isUpper(b) || b == 0x2D
            case .alnumDashUnderscoreDotEq: return alnum || b == 0x2D || b == 0x5F || b == 0x2E || b == 0x3D
            case .base64UrlPad: return alnum || b == 0x2D || b == 0x5F || b == 0x3D
            case .base64UrlPadDot: return alnum || b == 0x2D || b == 0x5F || b == 0x3D || b == 0x2B || b == 0x2F || b == 0x2E
            case .alnumDot: return alnum || b == 0x2E
            case .base64UrlPadAt: return alnum || b == 0x2D || b == 0x5F || b == 0x3D || b == 0x2B || b == 0x2F || b == 0x40
            case .digitsSlash: return RedactionEngine.isDigit(b) || b == 0x2F
            case .alnumPercent: return alnum || b == 0x25
            }
        }
    }

    /// The rule's id, as gitleaks names it where gitleaks has the rule.
    let id: String
    let rule: RedactionRule
    let prefix: [UInt8]
    let alphabet: Alphabet
    let length: ClosedRange<Int>
    /// A separator and a second part (SendGrid `SG.<22>.<43>`, Postman `PMAK-<24>-<34>`).
    var second: (separator: UInt8, alphabet: Alphabet, length: ClosedRange<Int>)? = nil
    /// Bytes before the prefix, for formats known by a marker in their middle or at their end
    /// (Terraform Cloud's `.atlasv1.`, New Relic's `NRAL`, FCM's `:APA91b`): the prefix is then
    /// that marker, and the match starts where the lead does.
    var lead: (alphabet: Alphabet, length: ClosedRange<Int>)? = nil
    /// What the random part must hold beyond its alphabet.
    enum Mix {
        case any
        /// A digit or a capital: a key of random alphanumerics always has one, and requiring it
        /// keeps a lowercase prefix (`cio`) out of the triggers of lowercase prose.
        case notAllLowercase
        /// No base64 byte right before (`+`, `/`) or after (`+`, `/`, `=`): a format whose prefix a base64
        /// blob also holds (Twitter's 22 `A`s, which 16 zero bytes encode to) is no part of one.
        case outsideBase64
    }

    var mix = Mix.any
    /// Values of this format, written for the catalogue (random, never real keys).
    let samples: [String]
    /// Values that look like it and are not: too short, a wrong byte, a word with the prefix.
    let lookAlikes: [String]

    init(_ id: String, _ rule: RedactionRule, after lead: (alphabet: Alphabet, length: ClosedRange<Int>)? = nil,
         _ prefix: String, _ alphabet: Alphabet, _ length: ClosedRange<Int>,
         then second: (separator: UInt8, alphabet: Alphabet, length: ClosedRange<Int>)? = nil,
         mix: Mix = .any, samples: [String], lookAlikes: [String]) {
        self.mix = mix
        self.id = id
        self.lead = lead
        self.rule = rule
        self.prefix = Array(prefix.utf8)
        self.alphabet = alphabet
        self.length = length
        self.second = second
        self.samples = samples
        self.lookAlikes = lookAlikes
    }
}

enum KeyFormats {
    /// The formats found at their start, and the ones found at a marker after a lead.
    static let anchored = all.filter { $0.lead == nil }
    static let marked = all.filter { $0.lead != nil }

    /// Where a marker can be met, as two bytes: its first two, or for a one-byte marker (the `|`
    /// of a Facebook app token, the `.` of a Discord bot token) the marker and each byte the
    /// rest can start with.
    static func markerStarts(_ format: KeyFormat) -> [(UInt8, UInt8)] {
        if format.prefix.count >= 2 { return [(format.prefix[0], format.prefix[1])] }
        return (0...255).map(UInt8.init).filter(format.alphabet.contains).map { (format.prefix[0], $0) }
    }

    /// The starts of every marker, for the pair table.
    static var markerPairs: [(UInt8, UInt8)] { marked.flatMap(markerStarts) }

    /// Marked formats by the first two bytes where their marker is met: `markerLists[markerSlots[pair]]`
    /// (slot 0: none). Two array loads, where a dictionary's hashing showed at every `.x` of a
    /// text once a one-byte marker (Discord's `.`) was in the catalogue.
    private static let (markerSlots, markerLists): ([UInt8], [[KeyFormat]]) = {
        var slots = [UInt8](repeating: 0, count: 1 << 16)
        var lists: [[KeyFormat]] = [[]]
        for format in marked {
            for (a, b) in markerStarts(format) {
                let pair = Int(a) << 8 | Int(b)
                if slots[pair] == 0 {
                    precondition(lists.count < 256, "more marker pairs than a slot byte holds")
                    slots[pair] = UInt8(lists.count)
                    lists.append([])
                }
                lists[Int(slots[pair])].append(format)
            }
        }
        return (slots, lists)
    }()

    /// The marked formats whose marker can be met at the pair `a b`, or nil.
    @inline(__always) static func byMarker(_ a: UInt8, _ b: UInt8) -> [KeyFormat]? {
        let slot = markerSlots.withUnsafeBufferPointer { $0[Int(a) << 8 | Int(b)] }
        return slot == 0 ? nil : markerLists[Int(slot)]
    }

    /// Where a marked format's match is, with its marker at `i`: the lead (at least its shortest
    /// length, back to `lowerBound`, and not glued to a letter or digit before it), the marker,
    /// the rest.
    static func markedMatch(_ format: KeyFormat, _ p: UnsafeBufferPointer<UInt8>, at i: Int, lowerBound: Int) -> Range<Int>? {
        guard let lead = format.lead, let end = matchEnd(format, p, at: i) else { return nil }
        var start = i
        while start > lowerBound && i - start < lead.length.upperBound && lead.alphabet.contains(p[start - 1]) { start -= 1 }
        guard lead.length.contains(i - start) else { return nil }
        if start > 0 && RedactionEngine.isAlnum(p[start - 1]) { return nil }
        return start..<end
    }

    /// Whether `value` is one whole key of `format`.
    static func isWhole(_ format: KeyFormat, _ value: String) -> Bool {
        var copy = value
        return copy.withUTF8 { p -> Bool in
            guard format.lead != nil else { return matchEnd(format, p, at: 0) == p.count }
            let marker = format.prefix
            guard p.count > marker.count else { return false }
            for i in 1...(p.count - marker.count) where p[i] == marker[0] {
                if markedMatch(format, p, at: i, lowerBound: 0) == 0..<p.count { return true }
            }
            return false
        }
    }

    /// The first two bytes of every prefix (and of the URL detectors), for the pair table.
    static var startPairs: [(UInt8, UInt8)] {
        var pairs = anchored.map { ($0.prefix[0], $0.prefix[1]) }
        pairs += [(UInt8(ascii: "h"), UInt8(ascii: "o")), (UInt8(ascii: "d"), UInt8(ascii: "i"))]  // hooks.slack.com, discord.com
        pairs += [(UInt8(ascii: "A"), UInt8(ascii: "c")), (UInt8(ascii: "S"), UInt8(ascii: "h"))]  // AccountKey=, SharedAccessKey=
        pairs += [(UInt8(ascii: "Q"), UInt8(ascii: "~"))]  // Azure AD client secrets, found at their "Q~"
        return pairs
    }

    /// Azure connection strings' key fields.
    static let azureKeyNames = ["AccountKey=", "SharedAccessKey="]

    /// Formats by their first two bytes.
    static let byStart: [UInt16: [KeyFormat]] = {
        var table: [UInt16: [KeyFormat]] = [:]
        for format in anchored { table[UInt16(format.prefix[0]) << 8 | UInt16(format.prefix[1]), default: []].append(format) }
        return table
    }()

    /// The end of a `format` match starting at `i`, or nil.
    static func matchEnd(_ format: KeyFormat, _ p: UnsafeBufferPointer<UInt8>, at i: Int, trailingBoundary: Bool = true) -> Int? {
        let n = format.prefix.count
        guard i + n <= p.count else { return nil }
        for k in 0..<n where p[i + k] != format.prefix[k] { return nil }
        func part(from start: Int, _ alphabet: KeyFormat.Alphabet, _ length: ClosedRange<Int>) -> Int? {
            var j = start
            while j < p.count && j - start < length.upperBound && alphabet.contains(p[j]) { j += 1 }
            guard length.contains(j - start) else { return nil }
            return j
        }
        guard var end = part(from: i + n, format.alphabet, format.length) else { return nil }
        if format.mix == .notAllLowercase && p[(i + n)..<end].allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) { return nil }
        if let second = format.second {
            guard end < p.count, p[end] == second.separator,
                  let secondEnd = part(from: end + 1, second.alphabet, second.length) else { return nil }
            end = secondEnd
        }
        // The match must end its token: no letter or digit right after.
        if trailingBoundary, end < p.count, RedactionEngine.isAlnum(p[end]) { return nil }
        // A token that goes on past the format's alphabet with `_` and more of a token is one
        // token (a Sentry org token's `_<secret>` after its base64 part): the rest goes with it,
        // or the secret part would stay next to the placeholder.
        if trailingBoundary, end + 1 < p.count, p[end] == 0x5F, RedactionEngine.isAlnum(p[end + 1]) {
            while end < p.count {
                let b = p[end]
                if RedactionEngine.isAlnum(b) || b == 0x5F || b == 0x2B || b == 0x2F { end += 1; continue }
                // Base64 padding ends it; an `=` before more letters is an assignment's.
                var k = end
                while k < p.count && p[k] == 0x3D { k += 1 }
                if k > end && (k == p.count || !RedactionEngine.isAlnum(p[k])) { end = k }
                break
            }
        }
        if format.mix == .outsideBase64 {
            func isBase64Symbol(_ b: UInt8) -> Bool { b == 0x2B || b == 0x2F || b == 0x3D }
            // (Before it an `=` is an assignment's: base64 has its `=` only at the end.)
            if (end < p.count && isBase64Symbol(p[end])) || (i > 0 && (p[i - 1] == 0x2B || p[i - 1] == 0x2F)) { return nil }
        }
        return end
    }

    /// Webhook URLs whose path is the credential: the secret part's range and rule.
    /// The first three bytes of everything `keyFormat` looks for, as bits of a 32,768-bit table
    /// (`tripleBit`): a two-byte start is mostly an English word (`ho` of "hotel" for
    /// hooks.slack.com, `se` for `secret_`), and its third byte rules it out without a lookup.
    static func makeTripleBits() -> [UInt64] {
        var bits = [UInt64](repeating: 0, count: 1 << 9)
        func set(_ a: UInt8, _ b: UInt8, _ c: UInt8) {
            let k = tripleBit(a, b, c)
            bits[k >> 6] |= 1 << UInt64(k & 63)
        }
        for format in anchored {
            if format.prefix.count >= 3 {
                set(format.prefix[0], format.prefix[1], format.prefix[2])
            } else {
                for c in 0...255 { set(format.prefix[0], format.prefix[1], UInt8(c)) }
            }
        }
        for (host, _) in webhookHosts { set(host[0], host[1], host[2]) }
        for name in azureKeyNames.map({ Array($0.utf8) }) { set(name[0], name[1], name[2]) }
        return bits
    }

    @inline(__always) static func tripleBit(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> Int {
        Int(truncatingIfNeeded: ((UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)) &* 0x9E37_79B1) >> 17)
    }

    private static let webhookHosts: [([UInt8], [[UInt8]])] = [
        ("hooks.slack.com/", ["services/", "workflows/", "triggers/"]),
        ("discord.com/api/webhooks/", [""]), ("discordapp.com/api/webhooks/", [""]),
    ].map { (Array($0.0.utf8), $0.1.map { Array($0.utf8) }) }

    static func webhook(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> (Range<Int>, RedactionRule)? {
        for (h, paths) in webhookHosts {
            guard i + h.count <= p.count, UnsafeBufferPointer(rebasing: p[i..<i + h.count]).elementsEqual(h) else { continue }
            for path in paths {
                let start = i + h.count + path.count
                guard start <= p.count, UnsafeBufferPointer(rebasing: p[(i + h.count)..<start]).elementsEqual(path) else { continue }
                var j = start
                while j < p.count && (RedactionEngine.isAlnum(p[j]) || p[j] == 0x2F || p[j] == 0x2D || p[j] == 0x5F) { j += 1 }
                guard j - start >= 16 else { continue }
                return (start..<j, .slackWebhook)
            }
        }
        return nil
    }
}

extension RedactionEngine {
    /// A catalogued key format, a webhook URL or an Azure credential starting at `i`.
    func keyFormat(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                   _ path: () -> String) -> TextMatch? {
        if p[i] == UInt8(ascii: "Q") { return i - 4 >= lowerBound ? azureClientSecret(at: i, p, reading, path) : nil }
        // In a binary body the bytes around a string field are its length and the next tag, which
        // may be printable: no boundary is required there.
        if i > 0 && !reading.keepsLength {
            let c = p[i - 1]
            if Self.isAlnum(c) || c == 0x5F { return nil }
        }
        // Every start below has three bytes that must be there.
        guard i + 2 < p.count else { return nil }
        let k = KeyFormats.tripleBit(p[i], p[i + 1], p[i + 2])
        guard rules.keyFormatTriples[k >> 6] & (1 << UInt64(k & 63)) != 0 else { return nil }
        if let formats = KeyFormats.byStart[UInt16(p[i]) << 8 | UInt16(p[i + 1])] {
            for format in formats where flags.has(format.rule) {
                if let end = KeyFormats.matchEnd(format, p, at: i, trailingBoundary: !reading.keepsLength) {
                    return secretMatch(p, i..<end, rule: format.rule, reading, path)
                }
            }
        }
        if p[i] == UInt8(ascii: "h") || p[i] == UInt8(ascii: "d"), flags.has(.slackWebhook),
           let (range, rule) = KeyFormats.webhook(p, at: i) {
            return secretMatch(p, range, rule: rule, reading, path)
        }
        if p[i] == UInt8(ascii: "A") || p[i] == UInt8(ascii: "S"), flags.has(.azureKey) {
            for name in KeyFormats.azureKeyNames where hasPrefix(p, at: i, name) {
                let start = i + name.utf8.count
                let end = run(p, from: start) { KeyFormat.Alphabet.base64.contains($0) || $0 == 0x3D }
                if end - start >= 20 { return secretMatch(p, start..<end, rule: .azureKey, reading, path) }
            }
        }
        return nil
    }

    /// A format found at its marker (`.atlasv1.`, `NRAL`, `:APA91b`), inside a token too.
    func markedKeyFormat(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                         _ path: () -> String) -> TextMatch? {
        guard i + 1 < p.count, let formats = KeyFormats.byMarker(p[i], p[i + 1]) else { return nil }
        for format in formats where flags.has(format.rule) {
            if let range = KeyFormats.markedMatch(format, p, at: i, lowerBound: lowerBound) {
                return secretMatch(p, range, rule: format.rule, reading, path)
            }
        }
        return nil
    }

    /// An Azure AD client secret, `[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}`, found at its "Q~".
    private func azureClientSecret(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading,
                                   _ path: () -> String) -> TextMatch? {
        guard flags.has(.azureKey), i >= 4, i + 2 < p.count, p[i + 1] == 0x7E, Self.isDigit(p[i - 1]) else { return nil }
        func isChar(_ b: UInt8) -> Bool { Self.isAlnum(b) || b == 0x5F || b == 0x7E || b == 0x2E }
        let start = i - 4
        guard (start..<i - 1).allSatisfy({ isChar(p[$0]) }), start == 0 || !(isChar(p[start - 1]) || p[start - 1] == 0x2D)
        else { return nil }
        let end = run(p, from: i + 2) { isChar($0) || $0 == 0x2D }
        // gitleaks says 31-34 after "Q~"; Azure's secrets are 40 characters in all. A little slack
        // either way errs on the side of replacing.
        guard (30...40).contains(end - (i + 2)) else { return nil }
        return secretMatch(p, start..<end, rule: .azureKey, reading, path)
    }
}
