import TestSupport
import XCTest
import HAR
@testable import Redaction

/// The catalogue of credential formats (`KeyFormats.all`): for every entry a key generated from
/// its prefix, alphabet and length is replaced in free text, inside a JSON string under an
/// innocent key and in a query value, under its own rule; look-alikes (one character short, no
/// word boundary before it, a character outside its alphabet, one too long) are left alone. Then
/// the detectors outside the table: webhooks, Azure keys and Telegram bot tokens.
final class KeyFormatTests: XCTestCase {
    /// Compiled once: a hundred formats times a few cases would otherwise compile the rules
    /// (the pair table) for every engine.
    private static let defaults = CompiledRules(RedactionConfiguration())
    /// The format rules alone: the high-entropy safety net would take some look-alikes.
    private static let formatsOnly = CompiledRules(try! configuration(rules: #"{"disable": ["high-entropy"]}"#))

    /// A fresh engine (placeholders numbered from 1) over shared rules.
    private func engine(_ rules: CompiledRules = defaults) -> RedactionEngine {
        RedactionEngine(rules: rules, collectFindings: false)
    }

    // MARK: Generating keys

    /// The alphabet's characters but '=' (base64 padding, only ever at the end; inside a generated
    /// key it would make `name=value` text of it).
    private static func characters(_ alphabet: KeyFormat.Alphabet) -> [UInt8] {
        (0x21...0x7E).map(UInt8.init).filter { alphabet.contains($0) && $0 != 0x3D }
    }

    /// Formats whose look-alikes only this entry can judge: the prefix holds no '=' (which makes
    /// an assignment of what stands before it: `_gitlab_session=`), and no other entry's prefix
    /// starts after a separator inside it (`rh-api-` holds LaunchDarkly's `api-`).
    private static func standsAlone(_ format: KeyFormat) -> Bool {
        guard !format.prefix.contains(0x3D) else { return false }
        for k in 1..<format.prefix.count where format.prefix[k - 1] == 0x2D || format.prefix[k - 1] == 0x5F || format.prefix[k - 1] == 0x2E {
            let rest = format.prefix[k...]
            if KeyFormats.all.contains(where: { rest.starts(with: $0.prefix) }) { return false }
        }
        return true
    }

    /// `count` characters of `alphabet`, the first and last alphanumeric (a key that ends in '-'
    /// or '.' reads as a key followed by punctuation).
    private static func part(_ alphabet: KeyFormat.Alphabet, _ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
        let all = characters(alphabet)
        let alnum = all.filter(RedactionEngine.isAlnum)
        return (0..<count).map { k in
            let pool = k == 0 || k == count - 1 ? alnum : all
            return pool[Int(rng.next() % UInt64(pool.count))]
        }
    }

    /// A key of `format` whose first part has `length` characters (the second part, if any, its
    /// shortest length).
    private static func key(_ format: KeyFormat, length: Int, _ rng: inout SplitMix64) -> String {
        var bytes = format.prefix + part(format.alphabet, length, &rng)
        if let second = format.second {
            bytes += [second.separator] + part(second.alphabet, second.length.lowerBound, &rng)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A character the alphabet does not hold: a lowercase letter in an uppercase alphabet, a
    /// non-hex letter in a hex one, a digit in a letters-only one, '~' or '-' in the others.
    private static func outsider(_ alphabet: KeyFormat.Alphabet) -> UInt8 {
        switch alphabet {
        case .hex, .uuid: return UInt8(ascii: "g")
        case .lowerHex, .lowerAlnum: return UInt8(ascii: "A")
        case .upperAlnum, .bech32Upper, .upperAlnumDash: return UInt8(ascii: "a")
        case .letters, .digits, .digitsSlash: return UInt8(ascii: "~")
        case .alnumUnderscore, .alnumUnderscoreDot: return UInt8(ascii: "-")
        case .alnum, .alnumDashUnderscore, .alnumDashUnderscoreDot, .base64, .alnumDash, .alnumDashUnderscoreEq, .base64Pad,
             .alnumDashUnderscoreDotEq, .base64UrlPad, .base64UrlPadDot, .alnumDot, .base64UrlPadAt, .alnumPercent:
            return UInt8(ascii: "~")
        }
    }

    private func name(_ format: KeyFormat) -> String { String(decoding: format.prefix, as: UTF8.self) }

    // MARK: Every catalogued format

    func testEveryFormatIsReplacedInFreeTextUnderItsRule() {
        var rng = SplitMix64(seed: 12)
        for format in KeyFormats.anchored {
            let upper = min(format.length.upperBound, format.length.lowerBound + 40)
            for length in [format.length.lowerBound, upper] {
                let key = Self.key(format, length: length, &rng)
                let e = engine()
                XCTAssertEqual(scanned("found \(key) end", engine: e), "found redacted-1 end", "\(name(format)): \(key)")
                XCTAssertEqual(e.currentReport.counts[format.rule]?[.body], 1, "\(name(format)) → \(format.rule)")
                XCTAssertEqual(e.currentReport.total, 1, name(format))
                XCTAssertEqual(scanned(key, engine: engine()), "redacted-1", "alone: \(key)")
                XCTAssertEqual(scanned("(\(key)),", engine: engine()), "(redacted-1),", "between punctuation: \(key)")
            }
        }
    }

    /// A token that goes on past its format's alphabet with `_` and more token bytes (a Sentry
    /// org token's `_<secret>`) is replaced whole: no part of it stays beside the placeholder.
    func testATokenThatGoesOnWithAnUnderscoreIsReplacedWhole() {
        var rng = SplitMix64(seed: 14)
        let rest = "_GhiswXgMCQlnVdxlzBh8AViu6L6me7kv4L9865KFQz7"
        for format in KeyFormats.anchored where !format.alphabet.contains(0x5F) && format.second == nil {
            let key = Self.key(format, length: format.length.lowerBound, &rng)
            XCTAssertEqual(scanned("found \(key)\(rest) end", engine: engine()), "found redacted-1 end", "\(name(format)): \(key)")
            XCTAssertEqual(scanned("x=\(key)\(rest)== end", engine: engine()), "x=redacted-1 end", "\(name(format)), padded")
        }
        let sentry = "sntrys_eyJpYXQiOLeV5oUdkLKojbJnGKWcGRu5fKlZcmVnaW9uX3VybCI6w2HDFWQnG468GzStNXVFygW" + rest
        XCTAssertEqual(body(#"{"values": ["\#(sentry)"]}"#), #"{"values": ["redacted-1"]}"#)
    }

    func testEveryFormatIsReplacedInAJSONStringUnderAnInnocentKey() {
        var rng = SplitMix64(seed: 13)
        for format in KeyFormats.anchored {
            let key = Self.key(format, length: format.length.lowerBound, &rng)
            let e = engine()
            let out = body(#"{"note": "\#(key)", "n": 1}"#, engine: e)
            XCTAssertEqual(out, #"{"note": "redacted-1", "n": 1}"#, "\(name(format)): \(key)")
            XCTAssertEqual(e.currentReport.counts[format.rule]?[.body], 1, name(format))
            // Inside a sentence in the string, too.
            XCTAssertEqual(body(#"{"note": "use \#(key) here"}"#, engine: engine()), #"{"note": "use redacted-1 here"}"#, name(format))
        }
    }

    func testEveryFormatIsReplacedInAQueryValue() {
        var rng = SplitMix64(seed: 14)
        for format in KeyFormats.anchored {
            let key = Self.key(format, length: format.length.lowerBound, &rng)
            let r = redacted([makeEntry(url: "https://api.example.com/v1/items?q=\(key.addingPercentEncodingForQuery())&page=2")])
            let request = r.log.entries[0].request
            XCTAssertEqual(request.url, "https://api.example.com/v1/items?q=redacted-1&page=2", "\(name(format)): \(key)")
            XCTAssertEqual(request.queryString.map(\.value), ["redacted-1", "2"], name(format))
            XCTAssertEqual(r.report.counts[format.rule]?[.query], 1, name(format))
            XCTAssertEqual(r.report.counts[format.rule]?[.url], 1, name(format))
        }
    }

    func testOneCharacterShortIsNotAKey() throws {
        let rules = Self.formatsOnly
        var rng = SplitMix64(seed: 15)
        for format in KeyFormats.anchored where Self.standsAlone(format) {
            let short = Self.key(format, length: format.length.lowerBound - 1, &rng)
            XCTAssertEqual(scanned("found \(short) end", engine: engine(rules)), "found \(short) end", name(format))
            if let second = format.second {
                // The second part one short.
                var bytes = format.prefix + Self.part(format.alphabet, format.length.lowerBound, &rng)
                bytes += [second.separator] + Self.part(second.alphabet, second.length.lowerBound - 1, &rng)
                let text = "found \(String(decoding: bytes, as: UTF8.self)) end"
                XCTAssertEqual(scanned(text, engine: engine(rules)), text, "second part of \(name(format))")
            }
        }
    }

    func testFixedLengthFormatsOneCharacterLongIsNotAKey() throws {
        let rules = Self.formatsOnly
        var rng = SplitMix64(seed: 16)
        for format in KeyFormats.anchored where format.length.count == 1 && format.second == nil && Self.standsAlone(format) {
            // One more character of the alphabet that is alphanumeric: the key does not end there.
            var bytes = Array(Self.key(format, length: format.length.lowerBound, &rng).utf8)
            bytes.append(Self.characters(format.alphabet).first(where: RedactionEngine.isAlnum)!)
            let long = String(decoding: bytes, as: UTF8.self)
            XCTAssertEqual(scanned("found \(long) end", engine: engine(rules)), "found \(long) end", name(format))
        }
    }

    func testAKeyMustStartAtAWordBoundary() throws {
        let rules = Self.formatsOnly
        var rng = SplitMix64(seed: 17)
        for format in KeyFormats.anchored where Self.standsAlone(format) {
            let key = Self.key(format, length: format.length.lowerBound, &rng)
            for glued in ["x" + key, "9" + key, "_" + key] {
                XCTAssertEqual(scanned("found \(glued) end", engine: engine(rules)), "found \(glued) end", name(format))
            }
        }
    }

    func testACharacterOutsideTheAlphabetEndsTheKeyTooEarly() throws {
        let rules = Self.formatsOnly
        var rng = SplitMix64(seed: 18)
        for format in KeyFormats.anchored where Self.standsAlone(format) {
            var bytes = Array(Self.key(format, length: format.length.lowerBound, &rng).utf8)
            bytes[format.prefix.count + format.length.lowerBound / 2] = Self.outsider(format.alphabet)
            let text = "found \(String(decoding: bytes, as: UTF8.self)) end"
            XCTAssertEqual(scanned(text, engine: engine(rules)), text, name(format))
        }
    }

    /// Each format's rule switched off (and the rules that may read its random part another
    /// way: high entropy, and cards, since an Asana key's digit runs can be Luhn-valid), it
    /// stays. The rules go in a fixed order, so every run draws the same keys.
    func testEachFormatCanBeSwitchedOffByItsRule() throws {
        var rng = SplitMix64(seed: 19)
        for rule in Set(KeyFormats.anchored.map(\.rule)).sorted(by: { $0.name < $1.name }) {
            let rules = CompiledRules(try configuration(rules: #"{"disable": ["\#(rule.name)", "high-entropy", "card-number"]}"#))
            for format in KeyFormats.anchored where format.rule == rule && Self.standsAlone(format) {
                let key = Self.key(format, length: format.length.lowerBound, &rng)
                XCTAssertEqual(scanned("found \(key) end", engine: engine(rules)), "found \(key) end", "\(rule): \(name(format))")
            }
        }
    }

    // MARK: Webhooks

    func testSlackAndDiscordWebhooks() {
        let slack = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("post to \(slack) now", engine: engine), "post to https://hooks.slack.com/services/redacted-1 now")
        XCTAssertEqual(engine.currentReport.counts[.slackWebhook]?[.body], 1)
        XCTAssertEqual(scanned("https://hooks.slack.com/workflows/T0ABCDEF1/A0ABCDEF2/123456789/abcdefABCDEF"),
                       "https://hooks.slack.com/workflows/redacted-1")
        let discord = "https://discord.com/api/webhooks/123456789012345678/AbCdEf-GhIjKl_MnOpQrStUvWxYz0123456789"
        XCTAssertEqual(scanned(discord, engine: engine), "https://discord.com/api/webhooks/redacted-2")
        XCTAssertEqual(scanned("https://discordapp.com/api/webhooks/123456789012345678/tok_en-12345678"),
                       "https://discordapp.com/api/webhooks/redacted-1")
        XCTAssertEqual(engine.currentReport.counts[.slackWebhook]?[.body], 2)
        // In a JSON config, and as the whole URL of an entry.
        XCTAssertEqual(body(#"{"url": "\#(slack)"}"#), #"{"url": "https://hooks.slack.com/services/redacted-1"}"#)
        let r = redacted([makeEntry(method: "POST", url: slack)])
        XCTAssertEqual(r.log.entries[0].request.url, "https://hooks.slack.com/services/redacted-1")
        XCTAssertEqual(r.report.counts[.slackWebhook]?[.url], 1)
    }

    func testNotWebhooks() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for text in ["https://hooks.slack.com/services/short", "https://hooks.slack.com/apps/A0000000000000000000",
                     "https://api.slack.com/services/T00000000/B00000000/XXXX", "https://discord.com/api/channels/123456789012345678",
                     "https://discord.com/api/webhooks/1234", "https://xhooks.slack.com/services/T00000000/B00000000/XXXXXXXXXX"] {
            XCTAssertEqual(scanned(text, config: config), text)
        }
    }

    // MARK: Azure

    func testAzureStorageConnectionString() {
        let accountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
        let connection = "DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=\(accountKey);EndpointSuffix=core.windows.net"
        let engine = RedactionEngine()
        XCTAssertEqual(scanned(connection, engine: engine),
                       "DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=redacted-1;EndpointSuffix=core.windows.net")
        XCTAssertEqual(engine.currentReport.counts[.azureKey]?[.body], 1)
        let bus = "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abcDEF123ghiJKL456mnoPQR789stuVWX0yz/+AB="
        XCTAssertEqual(scanned(bus),
                       "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=redacted-1")
        // Under an innocent JSON key the connection string is still found.
        XCTAssertEqual(body(#"{"storage": "\#(connection)"}"#),
                       #"{"storage": "DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;AccountKey=redacted-1;EndpointSuffix=core.windows.net"}"#)
    }

    func testNotAzureAccountKeys() throws {
        // The Azure detector alone: `AccountKey=short` is still a secret assignment.
        let config = try configuration(rules: #"{"disable": ["high-entropy", "secret-assignments", "secret-parameters"]}"#)
        for text in ["AccountKey=short", "AccountKeyName=abcdefghijklmnopqrstuvwxyz", "MyAccountKey=", "AccountKey"] {
            XCTAssertEqual(scanned(text, config: config), text)
        }
    }

    func testAzureADClientSecret() {
        let secret = "abc8Q~" + "Zy1xW2vU3tS4rQ5pO6nM7lK8jI9hG0fE.d"  // 3 + a digit + Q~ + 34
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("found \(secret) end", engine: engine), "found redacted-1 end")
        XCTAssertEqual(engine.currentReport.counts[.azureKey]?[.body], 1)
        XCTAssertEqual(body(#"{"value": "\#(secret)"}"#), #"{"value": "redacted-1"}"#)
        XCTAssertEqual(scanned(secret), "redacted-1", "at the very start of the text")
    }

    func testAzureADClientSecretAfterASecretWordCountsAsAzure() {
        // The secret word before it makes the high-entropy net see it too; the precise rule, which
        // matched the same bytes, is the one counted.
        let secret = "Xy.7Q~" + "aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3w"
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("the client secret is \(secret)", engine: engine), "the client secret is redacted-1")
        // Counted as azure-key, though the high-entropy net (which starts at the secret's first
        // byte, before the Azure detector's "Q~" anchor) finds it first.
        XCTAssertEqual(engine.currentReport.counts[.azureKey]?[.body], 1)
        XCTAssertNil(engine.currentReport.counts[.highEntropy])
    }

    func testNotAzureADClientSecrets() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        let tail = "Zy1xW2vU3tS4rQ5pO6nM7lK8jI9hG0fE.d"
        for text in ["abcxQ~" + tail, "ab8Q~" + tail, "abc8Q~Zy1xW2vU3tS4rQ5pO6n", "zabc8Q~" + tail, "abc8Q-" + tail] {
            XCTAssertEqual(scanned("found \(text) end", config: config), "found \(text) end", text)
        }
    }

    // MARK: Telegram

    func testTelegramBotTokens() {
        let token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("bot \(token) ready", engine: engine), "bot redacted-1 ready")
        XCTAssertEqual(engine.currentReport.counts[.keyFormats]?[.body], 1)
        let r = redacted([makeEntry(url: "https://api.telegram.org/bot\(token)/getMe")])
        // The Bot API puts the token right after "bot" in the path.
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.telegram.org/botredacted-1/getMe")
        XCTAssertEqual(body(#"{"bot_id": "x", "note": "\#(token)"}"#), #"{"bot_id": "x", "note": "redacted-1"}"#)
    }

    func testNotTelegramTokens() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for text in ["1234567:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
                     "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0x", "12:30:45", "x123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"] {
            XCTAssertEqual(scanned("t \(text) end", config: config), "t \(text) end", text)
        }
    }
}
