import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// Every built-in rule, through a whole log: a positive case (the rule is counted and the value is
/// gone from the output, in the encodings it must handle), a negative look-alike (nothing changes),
/// and the rule switched off (it is no longer counted). A rule added to `RedactionRule.builtIn`
/// without a row here fails `testEveryBuiltInRuleHasARow`.
final class RuleMatrixTests: XCTestCase {
    struct Row {
        let rule: RedactionRule
        /// Entries where the rule must fire, and the texts that must be gone from the output.
        let positive: [HAREntry]
        let gone: [String]
        /// Entries the rules (without the high-entropy net) must leave exactly as they are.
        let negative: [HAREntry]
    }

    private static func textEntry(_ s: String, _ mime: String = "text/plain") -> HAREntry { makeEntry(responseBody: (mime, s)) }
    private static func jsonEntry(_ s: String) -> HAREntry { textEntry(s, "application/json") }
    private static func urlEntry(_ u: String) -> HAREntry { makeEntry(url: u) }
    private static func headerEntry(_ h: [(String, String)], response: [(String, String)] = []) -> HAREntry {
        makeEntry(requestHeaders: h, responseHeaders: response)
    }

    /// The first catalogued key of `rule`, at its shortest length, from a fixed alphabet walk.
    private static func sampleKey(_ rule: RedactionRule) -> String {
        let format = KeyFormats.all.first { $0.rule == rule }!
        let chars = (0x21...0x7E).map(UInt8.init).filter { format.alphabet.contains($0) && RedactionEngine.isAlnum($0) }
        var bytes = format.prefix + (0..<format.length.lowerBound).map { chars[($0 * 7 + 3) % chars.count] }
        if let second = format.second {
            let more = (0x21...0x7E).map(UInt8.init).filter { second.alphabet.contains($0) && RedactionEngine.isAlnum($0) }
            bytes += [second.separator] + (0..<second.length.lowerBound).map { more[($0 * 5 + 1) % more.count] }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func keyRow(_ rule: RedactionRule) -> Row {
        let key = sampleKey(rule)
        return Row(rule: rule,
                   positive: [textEntry("found \(key) here"), urlEntry("https://api.example.com/?q=\(key)"),
                              jsonEntry(#"{"note": "\#(key)"}"#)],
                   gone: [key], negative: [textEntry("found \(key.dropLast()) here"), textEntry("found x\(key) here")])
    }

    static let jwt = makeJWT(header: #"{"alg":"RS256"}"#, payload: #"{"sub":"ann"}"#)
    static let basic = Base64.encode(utf8("ann:S3cr3t-Pa55"))
    static let pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50\n-----END PRIVATE KEY-----"

    static let rows: [Row] = [
        Row(rule: .authorizationHeader,
            positive: [headerEntry([("Authorization", "Token tk-abc123def456")]), headerEntry([("Proxy-Authorization", "Basic " + basic)]),
                       // The password inside a Basic credential is chased elsewhere.
                       makeEntry(index: 1, responseBody: ("text/plain", "login with S3cr3t-Pa55 ok"))],
            gone: ["tk-abc123def456", basic, "S3cr3t-Pa55"],
            negative: [headerEntry([("X-Authorization-Mode", "strict-mode-enabled")])]),
        Row(rule: .cookies,
            positive: [headerEntry([("Cookie", "sid=ab12; prefs=cookie-val-1234")]),
                       makeEntry(index: 1, responseBody: ("text/plain", "echo: sid=ab12;"))],
            gone: ["cookie-val-1234", "sid=ab12"], negative: [headerEntry([("X-Cookie-Consent", "accepted-all-cookies")])]),
        Row(rule: .setCookies,
            positive: [headerEntry([], response: [("Set-Cookie", "session=sc-val-98765; Path=/; Domain=app.corp; HttpOnly")])],
            gone: ["sc-val-98765", "app.corp"], negative: [headerEntry([], response: [("Set-Cookie", "theme=; Path=/; Max-Age=3600")])]),
        Row(rule: .secretHeaders,
            positive: [headerEntry([("X-Api-Key", "k-1234567890"), ("X-Custom-Signature", "sig-abcdef"), ("Ocp-Apim-Subscription-Key", "0123abcd")])],
            gone: ["k-1234567890", "sig-abcdef", "0123abcd"],
            negative: [headerEntry([("X-Request-Id", "req-1234567890"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                                ("X-Token-Type", "bearer")])]),
        Row(rule: .secretParameters,
            positive: [urlEntry("https://api.example.com/?access_token=at-123456789&page=2"),
                       makeEntry(method: "POST", requestBody: ("application/x-www-form-urlencoded", "password=pw%21form-1&u=x")),
                       urlEntry("https://api.example.com/cb#access_token=frag-tok-1&state=x")],
            gone: ["at-123456789", "pw%21form-1", "pw!form-1", "frag-tok-1"],
            negative: [urlEntry("https://api.example.com/?token_type=bearer&expires_in=3600&keyboard=us")]),
        Row(rule: .jsonKeys,
            positive: [jsonEntry(#"{"password": "pw-json-1", "new_pass\u0077ord": "pw-esc-2", "payload": "{\"secret\":\"nested-s3\"}", "pin": 987654321}"#)],
            gone: ["pw-json-1", "pw-esc-2", "nested-s3", "987654321"],
            negative: [jsonEntry(#"{"password_policy": "min-length-8", "token_type": "bearer", "keyId": "k-1"}"#)]),
        Row(rule: .jwt,
            positive: [textEntry("t=\(jwt)"), headerEntry([("X-Ctx", Base64.encode(utf8(#"{"t":"\#(jwt)"}"#)))])],
            gone: [jwt], negative: [textEntry("eyJub3QganNvbg.abc.def eyJhbGciOiJIUzI1NiJ9.only-two")]),
        Row(rule: .bearerToken,
            positive: [textEntry("got bearer abcdef123456xyz from server"), textEntry("use Basic \(basic) here")],
            gone: ["abcdef123456xyz", basic], negative: [textEntry("Bearer short, unbearer abcdefghijk")]),
        keyRow(.awsAccessKey), keyRow(.githubToken), keyRow(.slackToken), keyRow(.stripeKey), keyRow(.googleAPIKey),
        Row(rule: .privateKey,
            positive: [textEntry("key:\n" + pem), jsonEntry(#"{"note": "\#(pem.replacingOccurrences(of: "\n", with: "\\n"))"}"#)],
            gone: ["MC4CAQAwBQYDK2Vw", "BEGIN PRIVATE KEY"],
            negative: [textEntry("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----")]),
        Row(rule: .urlUserinfo,
            positive: [urlEntry("https://ann:pw-123456@db.example.com/x"), textEntry("dsn postgres://app:pg-pass-77@db.example.com:5432/app")],
            gone: ["ann:", "pw-123456", "pg-pass-77"], negative: [textEntry("clone ssh://git@github.com/org/app.git")]),
        Row(rule: .email,
            positive: [urlEntry("https://api.example.com/u/ann%40corp.com"), jsonEntry(#"{"to": "Bob.Smith+tag@mail.example.org"}"#)],
            gone: ["ann", "Bob.Smith"], negative: [textEntry("npm i @scope/pkg@1.2.3 and git@github.com:org/app.git")]),
        Row(rule: .internalHost,
            positive: [urlEntry("https://billing.corp/x?cb=https%3A%2F%2Fauth.corp%2Fdone")], gone: ["billing", "auth.corp"],
            negative: [textEntry("api.corp.example.com www.corporate.com window.location")]),
        Row(rule: .privateIP,
            positive: [textEntry("from 10.1.2.3 and [fe80::1ff:fe23:4567:890a]"), headerEntry([("X-Forwarded-For", "192.168.1.10")])],
            gone: ["10.1.2.3", "fe80::1ff", "192.168.1.10"],
            negative: [textEntry("8.8.8.8 172.32.0.1 firmwareVersion=10.2.0.1"), jsonEntry(#"{"app_version": "10.0.0.5"}"#)]),
        Row(rule: .knownSecrets,
            positive: [makeEntry(index: 0, url: "https://api.example.com/s/Zq7-tok3n-Lp9xV2"),
                       makeEntry(index: 1, responseBody: ("application/json", #"{"token": "Zq7-tok3n-Lp9xV2"}"#))],
            gone: ["Zq7-tok3n-Lp9xV2"],
            negative: [makeEntry(index: 0, url: "https://api.example.com/s/sunshine")]),
        keyRow(.openAIKey), keyRow(.anthropicKey), keyRow(.sendGridKey),
        Row(rule: .slackWebhook,
            positive: [urlEntry("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
                       jsonEntry(#"{"hook": "https://discord.com/api/webhooks/123456789012345678/AbCdEf-GhIjKl_MnOp"}"#)],
            gone: ["T00000000", "AbCdEf-GhIjKl"], negative: [textEntry("https://hooks.slack.com/services/short")]),
        keyRow(.twilioKey), keyRow(.mailgunKey), keyRow(.npmToken), keyRow(.pypiToken), keyRow(.gitlabToken),
        keyRow(.shopifyToken), keyRow(.squareToken), keyRow(.herokuKey),
        Row(rule: .azureKey,
            positive: [textEntry("AccountName=a;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZ==;"),
                       textEntry("secret abc8Q~Zy1xW2vU3tS4rQ5pO6nM7lK8jI9hG0fE.d")],
            gone: ["Eby8vdM02x", "abc8Q~"], negative: [textEntry("AccountKeyName=abcdefghijklmnopqrstuvwxyz abcxQ~Zy1xW2vU3tS4rQ5pO6nM7lK8jI9hG0fE.d")]),
        keyRow(.keyFormats),
        Row(rule: .secretAssignments,
            positive: [textEntry("export API_TOKEN=abc123def456\n<password>pw-xml-1</password>")], gone: ["abc123def456", "pw-xml-1"],
            negative: [textEntry("TOKEN_TYPE=bearer\n<passwordPolicy>min 8</passwordPolicy>")]),
        Row(rule: .phoneNumber,
            positive: [textEntry("call +1 415 555 2671"), jsonEntry(#"{"phone": "415.555.0000"}"#)], gone: ["2671", "415.555"],
            negative: [textEntry("at 2024-01-15T10:00:00+01:00 +2024-01-15 +12345")]),
        Row(rule: .cardNumber,
            positive: [textEntry("card 4111 1111 1111 1111"), urlEntry("https://pay.example.com/c/5555555555554444")], gone: ["1111 1111", "5555555555554444"],
            negative: [textEntry("4111111111111112 1700000000000 3100000000000003")]),
        Row(rule: .cardCode, positive: [jsonEntry(#"{"cvc": "737", "cvv2": 4567}"#)], gone: ["737", "4567"],
            negative: [jsonEntry(#"{"cvcLabel": "123", "cvc": "abc"}"#)]),
        Row(rule: .iban, positive: [textEntry("IBAN DE89 3704 0044 0532 0130 00")], gone: ["3704"],
            negative: [textEntry("DE88370400440532013000 ZZ89370400440532013000")]),
        Row(rule: .personName,
            positive: [jsonEntry(#"{"firstName": "Alice", "display_name": "Alice Liddell", "customer": {"name": "Grace Hopper"}, "recipient": "Ada King"}"#)],
            gone: ["Alice", "Grace", "Hopper", "Ada King"],
            negative: [jsonEntry(#"{"name": "Widget", "firstNameLabel": "First name"}"#)]),
        Row(rule: .highEntropy, positive: [textEntry("my api key is 8fJ2kqZ0x7Lm, thanks")], gone: ["8fJ2kqZ0x7Lm"],
            negative: [textEntry("request 550e8400-e29b-41d4-a716-446655440000 done")]),
        Row(rule: .dateOfBirth, positive: [jsonEntry(#"{"dob": "1990-05-17", "birthDate": "05/17/1990"}"#)],
            gone: ["1990-05-17", "05/17/1990"],
            negative: [jsonEntry(#"{"created_at": "2021-05-17", "dob_format": "YYYY-MM-DD", "birth_place": "Paris"}"#)]),
        Row(rule: .nationalID, positive: [textEntry("SSN 536-22-1234, NI AB 12 34 56 C and CE123456D")],
            gone: ["536-22-1234", "AB 12 34 56 C", "CE123456D"],
            negative: [textEntry("order 000-12-3456, 666-12-3456, 912-34-5678, QQ 12 34 56 C, GB123456A, 2024-12-1234")]),
        Row(rule: .postalAddress,
            positive: [jsonEntry(#"{"shipping_address": {"line1": "221B Baker Street", "postal_code": "NW1 6XE", "city": "London"}, "address": "10 Downing Street"}"#)],
            gone: ["221B Baker", "NW1 6XE", "Downing"],
            negative: [jsonEntry(#"{"address_type": "home", "addressId": "a-12", "server_address": "api.example.com:443"}"#)]),
        Row(rule: .geolocation,
            positive: [jsonEntry(#"{"location": {"lat": 51.50722, "lng": -0.1275}, "home": "48.8566,2.3522", "device_latitude": 40.7128}"#)],
            gone: ["51.50722", "0.1275", "48.8566", "2.3522", "40.7128"],
            negative: [jsonEntry(#"{"store": {"lat": 51.50722, "lng": -0.1275}, "location": "London", "home": {"title": "Start"}}"#)]),
        Row(rule: .deviceID,
            positive: [textEntry("bssid a4:2b:b0:3c:9d:11 mac 00-1B-63-84-45-E6 fcm dXh3bW9rZG1jZ2U:APA91b" + String(repeating: "Hq4-x_9Zk2", count: 12))],
            gone: ["a4:2b:b0", "00-1B-63", "dXh3bW9rZG1jZ2U"],
            negative: [textEntry("at 10:30:00 on 2024-01-02, v 1:2:3:4:5:6, 12-34-56-78-90-12, ab:cd:ef")]),
        Row(rule: .clientIP,
            positive: [headerEntry([("X-Forwarded-For", "81.2.69.160, 2a02:26f0:1:2::3")]), jsonEntry(#"{"client_ip": "81.2.69.161"}"#)],
            gone: ["81.2.69.160", "2a02:26f0", "81.2.69.161"],
            negative: [jsonEntry(#"{"ip_version": "4", "dns": "8.8.8.8"}"#)]),
        Row(rule: .cardExpiry, positive: [jsonEntry(#"{"card": {"exp_month": 11, "exp_year": 2027, "expiry": "11/26"}}"#),
                                          jsonEntry(#"{"card_exp": "11/27"}"#)],
            gone: ["2027", "11/26", "11/27"],
            negative: [jsonEntry(#"{"expires_in": 3600, "exp": 1735689600, "expiry": "2026-01-01T00:00:00Z", "card_exp": 1735689600}"#)]),
        Row(rule: .oneTimeCode, positive: [textEntry("Your Acme verification code is 482913. Don't share it. OTP: 7731")],
            gone: ["482913", "7731"],
            negative: [textEntry("error code 4041, status code 200, zip code 94107, code 123456")]),
    ]

    func testEveryBuiltInRuleHasARow() {
        XCTAssertEqual(Set(Self.rows.map(\.rule.name)), Set(RedactionRule.builtIn.map(\.name)))
    }

    /// What a reader sees of each entry (not dates and timings, where short digit runs may occur).
    private func visibleText(_ log: HARLog) -> String {
        var parts: [String] = []
        for e in log.entries {
            parts.append(e.request.url)
            parts += e.request.headers.map(\.value) + e.request.cookies.map(\.value) + e.request.queryString.map(\.value)
            if let post = e.request.postData { parts += [post.text ?? ""] + (post.params ?? []).compactMap(\.value) }
            parts += e.response.headers.map(\.value) + e.response.cookies.map(\.value) + e.response.cookies.compactMap(\.domain)
            parts.append(e.response.content.text ?? "")
        }
        return parts.joined(separator: "\n")
    }

    func testPositives() {
        for row in Self.rows {
            let r = redacted(row.positive)
            XCTAssertNotNil(r.report.counts[row.rule], "\(row.rule) not counted: \(r.report.counts)")
            let out = visibleText(r.log)
            for value in row.gone { XCTAssertFalse(out.contains(value), "\(row.rule): '\(value)' survived") }
            // Valid HAR stays valid (a URL with a fragment, as a Location header would carry, is not).
            XCTAssertEqual(HARValidator.validate(bytes: r.bytes).map(\.description),
                           HARValidator.validate(bytes: makeLog(row.positive).serialize()).map(\.description), "\(row.rule)")
        }
    }

    func testNegativesAreLeftAlone() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for row in Self.rows {
            let log = makeLog(row.negative)
            let r = redacted(log, config: row.rule == .highEntropy ? RedactionConfiguration() : config)
            XCTAssertEqual(r.report.total, 0, "\(row.rule): \(r.report.counts)")
            XCTAssertEqual(text(r.bytes), text(log.serialize(pretty: true)), "\(row.rule)")
        }
    }

    func testEachRuleCanBeSwitchedOff() throws {
        for row in Self.rows {
            let config = try configuration(rules: #"{"disable": ["\#(row.rule.name)", "high-entropy"]}"#)
            XCTAssertNil(redacted(row.positive, config: config).report.counts[row.rule], "\(row.rule)")
        }
    }
}
