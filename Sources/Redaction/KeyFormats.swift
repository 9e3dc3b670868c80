import HAR

/// The catalogue of well-known credential formats, found by prefix, alphabet and length anywhere
/// in text (in the spirit of gitleaks' default rules; written from the vendors' documented
/// formats). A match needs a word boundary before it and, after it, a byte outside its alphabet.
struct KeyFormat {
    enum Alphabet {
        case alnum, alnumDashUnderscore, alnumUnderscore, upperAlnum, hex, lowerHex, letters, base64, bech32Upper
        case alnumDashUnderscoreDot

        @inline(__always) func contains(_ b: UInt8) -> Bool {
            switch self {
            case .alnum: return RedactionEngine.isAlnum(b)
            case .alnumDashUnderscore: return RedactionEngine.isAlnum(b) || b == 0x2D || b == 0x5F
            case .alnumDashUnderscoreDot: return RedactionEngine.isAlnum(b) || b == 0x2D || b == 0x5F || b == 0x2E
            case .alnumUnderscore: return RedactionEngine.isAlnum(b) || b == 0x5F
            case .upperAlnum: return RedactionEngine.isDigit(b) || RedactionEngine.isUpper(b)
            case .hex: return RedactionEngine.isHex(b)
            case .lowerHex: return RedactionEngine.isDigit(b) || (b >= 0x61 && b <= 0x66)
            case .letters: return b | 0x20 >= 0x61 && b | 0x20 <= 0x7A
            case .base64: return RedactionEngine.isAlnum(b) || b == 0x2B || b == 0x2F
            case .bech32Upper: return RedactionEngine.isDigit(b) || RedactionEngine.isUpper(b)
            }
        }
    }

    let rule: RedactionRule
    let prefix: [UInt8]
    let alphabet: Alphabet
    let length: ClosedRange<Int>
    /// A separator and a second part (SendGrid `SG.<22>.<43>`, Postman `PMAK-<24>-<34>`).
    var second: (separator: UInt8, alphabet: Alphabet, length: ClosedRange<Int>)? = nil

    init(_ rule: RedactionRule, _ prefix: String, _ alphabet: Alphabet, _ length: ClosedRange<Int>,
         then second: (separator: UInt8, alphabet: Alphabet, length: ClosedRange<Int>)? = nil) {
        self.rule = rule
        self.prefix = Array(prefix.utf8)
        self.alphabet = alphabet
        self.length = length
        self.second = second
    }
}

enum KeyFormats {
    static let all: [KeyFormat] = [
        // Longer prefixes first where one extends another (sk-ant- before sk-, EAAA before EAA).
        KeyFormat(.anthropicKey, "sk-ant-", .alnumDashUnderscore, 20...400),
        KeyFormat(.openAIKey, "sk-proj-", .alnumDashUnderscore, 20...400),
        KeyFormat(.openAIKey, "sk-svcacct-", .alnumDashUnderscore, 20...400),
        KeyFormat(.openAIKey, "sk-admin-", .alnumDashUnderscore, 20...400),
        KeyFormat(.openAIKey, "sk-None-", .alnumDashUnderscore, 20...400),
        KeyFormat(.openAIKey, "sk-", .alnum, 32...200),
        KeyFormat(.keyFormats, "sk.eyJ", .alnumDashUnderscoreDot, 50...1000),  // Mapbox secret token
        KeyFormat(.stripeKey, "sk_live_", .alnum, 10...200), KeyFormat(.stripeKey, "sk_test_", .alnum, 10...200),
        KeyFormat(.stripeKey, "rk_live_", .alnum, 10...200), KeyFormat(.stripeKey, "rk_test_", .alnum, 10...200),
        KeyFormat(.stripeKey, "whsec_", .alnum, 24...200),
        KeyFormat(.awsAccessKey, "AKIA", .upperAlnum, 16...16), KeyFormat(.awsAccessKey, "ASIA", .upperAlnum, 16...16),
        KeyFormat(.awsAccessKey, "ABIA", .upperAlnum, 16...16), KeyFormat(.awsAccessKey, "ACCA", .upperAlnum, 16...16),
        KeyFormat(.googleAPIKey, "AIza", .alnumDashUnderscore, 35...35),
        KeyFormat(.keyFormats, "GOCSPX-", .alnumDashUnderscore, 24...40),  // Google OAuth client secret
        KeyFormat(.githubToken, "ghp_", .alnum, 36...255), KeyFormat(.githubToken, "gho_", .alnum, 36...255),
        KeyFormat(.githubToken, "ghu_", .alnum, 36...255), KeyFormat(.githubToken, "ghs_", .alnum, 36...255),
        KeyFormat(.githubToken, "ghr_", .alnum, 36...255), KeyFormat(.githubToken, "github_pat_", .alnumUnderscore, 22...255),
        KeyFormat(.slackToken, "xoxb-", .alnumDashUnderscore, 10...255), KeyFormat(.slackToken, "xoxp-", .alnumDashUnderscore, 10...255),
        KeyFormat(.slackToken, "xoxa-", .alnumDashUnderscore, 10...255), KeyFormat(.slackToken, "xoxo-", .alnumDashUnderscore, 10...255),
        KeyFormat(.slackToken, "xoxs-", .alnumDashUnderscore, 10...255), KeyFormat(.slackToken, "xoxr-", .alnumDashUnderscore, 10...255),
        KeyFormat(.slackToken, "xoxe-", .alnumDashUnderscore, 10...255), KeyFormat(.slackToken, "xoxe.xox", .alnumDashUnderscore, 10...255),
        KeyFormat(.slackToken, "xapp-", .alnumDashUnderscore, 10...255),
        KeyFormat(.sendGridKey, "SG.", .alnumDashUnderscore, 16...32, then: (0x2E, .alnumDashUnderscore, 30...50)),
        KeyFormat(.twilioKey, "SK", .lowerHex, 32...32),
        KeyFormat(.mailgunKey, "key-", .alnum, 32...32),
        KeyFormat(.npmToken, "npm_", .alnum, 36...36),
        KeyFormat(.pypiToken, "pypi-Ag", .alnumDashUnderscore, 50...400),
        KeyFormat(.gitlabToken, "glpat-", .alnumDashUnderscoreDot, 20...100), KeyFormat(.gitlabToken, "gldt-", .alnumDashUnderscore, 20...100),
        KeyFormat(.gitlabToken, "glptt-", .alnumDashUnderscore, 20...100), KeyFormat(.gitlabToken, "glrt-", .alnumDashUnderscore, 20...100),
        KeyFormat(.gitlabToken, "glsoat-", .alnumDashUnderscore, 20...100), KeyFormat(.gitlabToken, "glcbt-", .alnumDashUnderscore, 20...100),
        KeyFormat(.gitlabToken, "glimt-", .alnumDashUnderscore, 20...100), KeyFormat(.gitlabToken, "glft-", .alnumDashUnderscore, 20...100),
        KeyFormat(.gitlabToken, "glagent-", .alnumDashUnderscore, 20...100), KeyFormat(.gitlabToken, "gloas-", .alnumDashUnderscore, 20...100),
        KeyFormat(.gitlabToken, "GR1348941", .alnumDashUnderscore, 20...100),
        KeyFormat(.shopifyToken, "shpat_", .hex, 32...32), KeyFormat(.shopifyToken, "shpca_", .hex, 32...32),
        KeyFormat(.shopifyToken, "shppa_", .hex, 32...32), KeyFormat(.shopifyToken, "shpss_", .hex, 32...32),
        KeyFormat(.squareToken, "sq0atp-", .alnumDashUnderscore, 22...60), KeyFormat(.squareToken, "sq0csp-", .alnumDashUnderscore, 40...60),
        KeyFormat(.squareToken, "EAAA", .alnumDashUnderscore, 56...64),
        KeyFormat(.keyFormats, "EAA", .alnum, 80...512),  // Facebook / Meta access tokens
        KeyFormat(.herokuKey, "HRKU-", .alnumDashUnderscore, 20...100),
        KeyFormat(.keyFormats, "hf_", .letters, 30...40),  // Hugging Face
        KeyFormat(.keyFormats, "dop_v1_", .lowerHex, 64...64), KeyFormat(.keyFormats, "doo_v1_", .lowerHex, 64...64),
        KeyFormat(.keyFormats, "dor_v1_", .lowerHex, 64...64),
        KeyFormat(.keyFormats, "PMAK-", .hex, 24...24, then: (0x2D, .hex, 34...34)),
        KeyFormat(.keyFormats, "dapi", .lowerHex, 32...32),  // Databricks
        KeyFormat(.keyFormats, "lin_api_", .alnum, 40...40),  // Linear
        KeyFormat(.keyFormats, "dp.pt.", .alnum, 40...50), KeyFormat(.keyFormats, "dp.st.", .alnumDashUnderscoreDot, 40...80),
        KeyFormat(.keyFormats, "dp.sa.", .alnum, 40...50), KeyFormat(.keyFormats, "dp.ct.", .alnum, 40...50),
        KeyFormat(.keyFormats, "hvs.", .alnumDashUnderscore, 24...400), KeyFormat(.keyFormats, "hvb.", .alnumDashUnderscore, 24...400),
        KeyFormat(.keyFormats, "AGE-SECRET-KEY-1", .bech32Upper, 58...58),
        KeyFormat(.keyFormats, "ATATT3", .alnumDashUnderscore, 100...400),  // Atlassian API token
        KeyFormat(.keyFormats, "glc_", .alnumDashUnderscore, 32...400), KeyFormat(.keyFormats, "glsa_", .alnumUnderscore, 32...60),
        KeyFormat(.keyFormats, "sntrys_", .alnumDashUnderscore, 50...400), KeyFormat(.keyFormats, "sntryu_", .lowerHex, 64...64),
        KeyFormat(.keyFormats, "ops_", .alnumDashUnderscoreDot, 40...2000),  // 1Password service accounts
        KeyFormat(.keyFormats, "sbp_", .lowerHex, 40...40), KeyFormat(.keyFormats, "sb_secret_", .alnumDashUnderscore, 20...100),
        KeyFormat(.keyFormats, "gsk_", .alnum, 40...60),  // Groq
        KeyFormat(.keyFormats, "xai-", .alnum, 60...100),
        KeyFormat(.keyFormats, "r8_", .alnum, 30...45),  // Replicate
        KeyFormat(.keyFormats, "pplx-", .alnum, 40...60),
        KeyFormat(.keyFormats, "ntn_", .alnum, 40...50), KeyFormat(.keyFormats, "secret_", .alnum, 43...43),  // Notion
        KeyFormat(.keyFormats, "LTAI", .alnum, 12...30),  // Alibaba Cloud
        KeyFormat(.keyFormats, "AKID", .alnum, 32...40),  // Tencent Cloud
        KeyFormat(.keyFormats, "AKCp", .alnum, 60...80),  // JFrog
        KeyFormat(.keyFormats, "CFPAT-", .alnumDashUnderscore, 43...43),  // Contentful
        KeyFormat(.keyFormats, "NRAK-", .upperAlnum, 27...27), KeyFormat(.keyFormats, "NRII-", .alnumDashUnderscore, 32...32),
        KeyFormat(.keyFormats, "dt0c01.", .upperAlnum, 24...24, then: (0x2E, .upperAlnum, 64...64)),  // Dynatrace
        KeyFormat(.keyFormats, "pul-", .lowerHex, 40...40),  // Pulumi
        KeyFormat(.keyFormats, "AAAA", .alnumDashUnderscore, 7...7, then: (0x3A, .alnumDashUnderscore, 120...200)),  // FCM
    ]

    /// The first two bytes of every prefix (and of the URL detectors), for the pair table.
    static var startPairs: [(UInt8, UInt8)] {
        var pairs = all.map { ($0.prefix[0], $0.prefix[1]) }
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
        for format in all { table[UInt16(format.prefix[0]) << 8 | UInt16(format.prefix[1]), default: []].append(format) }
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
        if let second = format.second {
            guard end < p.count, p[end] == second.separator,
                  let secondEnd = part(from: end + 1, second.alphabet, second.length) else { return nil }
            end = secondEnd
        }
        // The match must end its token: no letter or digit right after.
        if trailingBoundary, end < p.count, RedactionEngine.isAlnum(p[end]) { return nil }
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
        for format in all {
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
    func keyFormat(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ location: RedactionLocation,
                   _ path: () -> String) -> TextMatch? {
        if p[i] == UInt8(ascii: "Q") { return i - 4 >= lowerBound ? azureClientSecret(at: i, p, location, path) : nil }
        // In a binary body the bytes around a string field are its length and the next tag, which
        // may be printable: no boundary is required there.
        if i > 0 && !sameLength {
            let c = p[i - 1]
            if Self.isAlnum(c) || c == 0x5F { return nil }
        }
        // Every start below has three bytes that must be there.
        guard i + 2 < p.count else { return nil }
        let k = KeyFormats.tripleBit(p[i], p[i + 1], p[i + 2])
        guard rules.keyFormatTriples[k >> 6] & (1 << UInt64(k & 63)) != 0 else { return nil }
        if let formats = KeyFormats.byStart[UInt16(p[i]) << 8 | UInt16(p[i + 1])] {
            for format in formats where flags.has(format.rule) {
                if let end = KeyFormats.matchEnd(format, p, at: i, trailingBoundary: !sameLength) {
                    return secretMatch(p, i..<end, rule: format.rule, location, path)
                }
            }
        }
        if p[i] == UInt8(ascii: "h") || p[i] == UInt8(ascii: "d"), flags.has(.slackWebhook),
           let (range, rule) = KeyFormats.webhook(p, at: i) {
            return secretMatch(p, range, rule: rule, location, path)
        }
        if p[i] == UInt8(ascii: "A") || p[i] == UInt8(ascii: "S"), flags.has(.azureKey) {
            for name in KeyFormats.azureKeyNames where hasPrefix(p, at: i, name) {
                let start = i + name.utf8.count
                let end = run(p, from: start) { KeyFormat.Alphabet.base64.contains($0) || $0 == 0x3D }
                if end - start >= 20 { return secretMatch(p, start..<end, rule: .azureKey, location, path) }
            }
        }
        return nil
    }

    /// An Azure AD client secret, `[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}`, found at its "Q~".
    private func azureClientSecret(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation,
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
        return secretMatch(p, start..<end, rule: .azureKey, location, path)
    }
}
