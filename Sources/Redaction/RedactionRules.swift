import HAR

/// A named redaction rule. Built-in rules have fixed names (listed in `RedactionRule.builtIn`
/// and docs/reference/rules.md); a rules file adds patterns with names of their own.
public struct RedactionRule: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let name: String
    /// A dense number for counting without hashing: built-ins 0..<builtIn.count, user patterns
    /// after them, -1 when unknown. Not part of identity.
    let slot: Int
    public init(_ name: String) { self.init(name, slot: -1) }
    init(_ name: String, slot: Int) {
        self.name = name
        self.slot = slot
    }
    public var description: String { name }
    public static func < (a: RedactionRule, b: RedactionRule) -> Bool { a.name < b.name }
    public static func == (a: RedactionRule, b: RedactionRule) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// Authorization and Proxy-Authorization: the scheme is kept, the credential replaced.
    public static let authorizationHeader = RedactionRule("authorization-header", slot: 0)
    /// Cookie headers and request `cookies`: each cookie's value.
    public static let cookies = RedactionRule("cookies", slot: 1)
    /// Set-Cookie headers and response `cookies`: the value, attributes kept.
    public static let setCookies = RedactionRule("set-cookies", slot: 2)
    /// X-Api-Key, X-Auth-Token, ... and any header whose name contains token, secret, api-key,
    /// session or signature: the whole value.
    public static let secretHeaders = RedactionRule("secret-headers", slot: 3)
    /// Query parameters and form fields named token, password, code, ...: the value.
    public static let secretParameters = RedactionRule("secret-parameters", slot: 4)
    /// JSON members named password, token, session, ...: the value, type kept.
    public static let jsonKeys = RedactionRule("json-keys", slot: 5)
    /// JWTs anywhere, found by structure: replaced by a placeholder JWT of the same shape.
    public static let jwt = RedactionRule("jwt", slot: 6)
    /// "Bearer <token>" anywhere in text.
    public static let bearerToken = RedactionRule("bearer-token", slot: 7)
    public static let awsAccessKey = RedactionRule("aws-access-key", slot: 8)
    public static let githubToken = RedactionRule("github-token", slot: 9)
    public static let slackToken = RedactionRule("slack-token", slot: 10)
    public static let stripeKey = RedactionRule("stripe-key", slot: 11)
    public static let googleAPIKey = RedactionRule("google-api-key", slot: 12)
    public static let privateKey = RedactionRule("private-key", slot: 13)
    /// `user:pass@` in URLs.
    public static let urlUserinfo = RedactionRule("url-userinfo", slot: 14)
    /// Email addresses become user1@example.com, user2@example.com, ...
    public static let email = RedactionRule("email", slot: 15)
    /// Hostnames under the internal suffixes become internal-1.example.invalid, ...
    public static let internalHost = RedactionRule("internal-host", slot: 16)
    /// Private and link-local IP literals become documentation addresses (192.0.2.x, 2001:db8::x).
    public static let privateIP = RedactionRule("private-ip", slot: 17)
    /// A value another rule replaced anywhere in the file, met again bare: a URL path segment, a
    /// body under an innocent key, a header, percent-encoded, base64 or base64url.
    public static let knownSecrets = RedactionRule("known-secrets", slot: 18)
    public static let openAIKey = RedactionRule("openai-key", slot: 19)
    public static let anthropicKey = RedactionRule("anthropic-key", slot: 20)
    public static let sendGridKey = RedactionRule("sendgrid-key", slot: 21)
    /// `https://hooks.slack.com/services/T.../B.../...` (and Discord webhooks): the path's secret part.
    public static let slackWebhook = RedactionRule("slack-webhook", slot: 22)
    public static let twilioKey = RedactionRule("twilio-key", slot: 23)
    public static let mailgunKey = RedactionRule("mailgun-key", slot: 24)
    public static let npmToken = RedactionRule("npm-token", slot: 25)
    public static let pypiToken = RedactionRule("pypi-token", slot: 26)
    public static let gitlabToken = RedactionRule("gitlab-token", slot: 27)
    public static let shopifyToken = RedactionRule("shopify-token", slot: 28)
    public static let squareToken = RedactionRule("square-token", slot: 29)
    public static let herokuKey = RedactionRule("heroku-key", slot: 30)
    /// Azure storage account keys (`AccountKey=`), SAS signatures and AD client secrets.
    public static let azureKey = RedactionRule("azure-key", slot: 31)
    /// Other well-known prefixes: Hugging Face, DigitalOcean, Telegram bots, Postman, Databricks,
    /// Linear, Doppler, HashiCorp Vault, Mapbox secret tokens, age keys, Atlassian, Datadog...
    public static let keyFormats = RedactionRule("key-formats", slot: 32)
    /// `NAME=value`, `name: value`, `<password>value</password>`, `password="value"` and HTML
    /// inputs whose name holds a secret word, in any text.
    public static let secretAssignments = RedactionRule("secret-assignments", slot: 33)
    /// Phone numbers: under phone/mobile/tel names always; in free text E.164 (`+14155552671`),
    /// `tel:` links and `(415) 555-2671`.
    public static let phoneNumber = RedactionRule("phone-number", slot: 34)
    /// Luhn-valid payment card numbers.
    public static let cardNumber = RedactionRule("card-number", slot: 35)
    /// CVC/CVV values under their names.
    public static let cardCode = RedactionRule("card-code", slot: 36)
    /// IBANs (ISO 13616, checked mod 97).
    public static let iban = RedactionRule("iban", slot: 37)
    /// Names under firstName, lastName, fullName, displayName... become person-N.
    public static let personName = RedactionRule("person-name", slot: 38)
    /// A high-entropy value next to a secret word (`token is 8fJ2kq...`): the safety net for names
    /// and formats no other rule knows.
    public static let highEntropy = RedactionRule("high-entropy", slot: 39)
    /// Dates of birth under their names (`dob`, `birthDate`): the date becomes 1970-01-01 in the
    /// same format.
    public static let dateOfBirth = RedactionRule("date-of-birth", slot: 40)
    /// US social security and UK national insurance numbers anywhere, by their structure.
    public static let nationalID = RedactionRule("national-id", slot: 41)
    /// Postal addresses under their names (`address`, `shipping_address`, an address's `line1`).
    public static let postalAddress = RedactionRule("postal-address", slot: 42)
    /// Latitude and longitude of a person's place (`location`, `home`, `device`): both become 0.
    public static let geolocation = RedactionRule("geolocation", slot: 43)
    /// MAC addresses and FCM registration tokens anywhere, by their structure.
    public static let deviceID = RedactionRule("device-id", slot: 44)
    /// Client IP addresses, public or private, under their names (`client_ip`, `X-Forwarded-For`).
    public static let clientIP = RedactionRule("client-ip", slot: 45)
    /// A payment card's expiry (`exp_month`, `expiry: "11/26"`): 12/99 in the same shape.
    public static let cardExpiry = RedactionRule("card-expiry", slot: 46)
    /// One-time codes in message text (`Your verification code is 482913`).
    public static let oneTimeCode = RedactionRule("one-time-code", slot: 47)

    /// Every built-in rule, in the order docs/reference/rules.md lists them.
    public static let builtIn: [RedactionRule] = [
        .authorizationHeader, .cookies, .setCookies, .secretHeaders, .secretParameters, .jsonKeys, .jwt,
        .bearerToken, .awsAccessKey, .githubToken, .slackToken, .stripeKey, .googleAPIKey, .privateKey,
        .urlUserinfo, .email, .internalHost, .privateIP, .knownSecrets, .openAIKey, .anthropicKey, .sendGridKey,
        .slackWebhook, .twilioKey, .mailgunKey, .npmToken, .pypiToken, .gitlabToken, .shopifyToken, .squareToken,
        .herokuKey, .azureKey, .keyFormats, .secretAssignments, .phoneNumber, .cardNumber, .cardCode, .iban,
        .personName, .highEntropy, .dateOfBirth, .nationalID, .postalAddress, .geolocation, .deviceID, .clientIP,
        .cardExpiry, .oneTimeCode,
    ]
}

/// Where in a HAR a value was found; the summary counts replacements per location.
public enum RedactionLocation: String, Sendable, CaseIterable, Comparable {
    case header, cookie, query, body, webSocket = "websocket", url, other
    public static func < (a: RedactionLocation, b: RedactionLocation) -> Bool { a.index < b.index }

    /// Position in `allCases`.
    var index: Int {
        switch self {
        case .header: return 0
        case .cookie: return 1
        case .query: return 2
        case .body: return 3
        case .webSocket: return 4
        case .url: return 5
        case .other: return 6
        }
    }
}

/// A user pattern from a rules file: every match of `regex` in text is replaced.
public struct RedactionPattern: @unchecked Sendable {
    public let name: String
    public let source: String
    let regex: Regex<AnyRegexOutput>

    public init(name: String, regex source: String) throws {
        self.name = name
        self.source = source
        self.regex = try Regex(source)
    }
}

/// What the engine redacts: the default rules plus what a rules file adds or switches off.
public struct RedactionConfiguration: @unchecked Sendable {
    /// Built-in rules switched off by name.
    public var disabled: Set<RedactionRule> = []
    /// Header names (compared case-insensitively) whose whole value is a secret, on top of every
    /// name whose words hold a secret word (`NameMatcher`).
    public var secretHeaderNames: Set<String> = RedactionConfiguration.defaultSecretHeaderNames
    /// Query parameter and form field names (case-insensitive, whole names) that are secret on
    /// top of the secret words: `code` (OAuth), `key` (Google API keys).
    public var secretParameterNames: Set<String> = RedactionConfiguration.defaultSecretParameterNames
    /// More names that make a value secret wherever a name stands (JSON member, parameter,
    /// header, assignment), compared by words: `pin` also matches `userPin` and `PIN_CODE`.
    public var secretJSONKeys: [String] = []
    /// Hostname suffixes that mark a host as internal (with the leading dot).
    public var internalSuffixes: [String] = [".internal", ".corp", ".local", ".lan", ".intranet", ".localdomain"]
    /// Values never replaced, whatever rule matches them.
    public var allowedValues: Set<String> = []
    /// Extra named patterns.
    public var patterns: [RedactionPattern] = []

    public init() {}

    public func isEnabled(_ rule: RedactionRule) -> Bool { !disabled.contains(rule) }

    public static let defaultSecretHeaderNames: Set<String> = [
        "x-api-key", "x-auth-token", "x-access-token", "x-csrf-token", "x-xsrf-token", "x-session-token",
        "x-amz-security-token", "x-goog-api-key", "x-functions-key", "x-vault-token",
    ]

    public static let defaultSecretParameterNames: Set<String> = [
        "code", "key", "sig", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
        "x-goog-signature", "x-goog-credential",
    ]
}

/// A rules file that could not be used: which line and field, and why.
public struct RulesFileError: Error, CustomStringConvertible, Equatable {
    public var line: Int
    public var field: String
    public var reason: String
    public var description: String { "line \(line), field \(field): \(reason)" }
}

extension RedactionConfiguration {
    /// The members a rules file may have. Unknown members are errors, so a typo never silently
    /// turns a rule off or on.
    public static let rulesFileMembers = [
        "disable", "headers", "queryParams", "jsonKeys", "patterns", "internalSuffixes", "allow",
    ]

    /// Applies a rules file (JSON) on top of this configuration:
    ///
    /// ```json
    /// {
    ///   "disable": ["email"],
    ///   "headers": ["X-Device-Id"],
    ///   "queryParams": ["session_key"],
    ///   "jsonKeys": ["pin"],
    ///   "patterns": [{"name": "order-id", "regex": "ORD-[0-9]{8}"}],
    ///   "internalSuffixes": [".mycorp.net"],
    ///   "allow": ["demo-public-token"]
    /// }
    /// ```
    /// Every member is optional. Throws `RulesFileError` naming the line and the field.
    public mutating func apply(rulesFile bytes: [UInt8]) throws(RulesFileError) {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw RulesFileError(line: error.line, field: "(document)", reason: "invalid JSON: \(error.reason)")
        }
        let locate = { (needle: String) -> Int in Self.line(of: needle, in: bytes) }
        guard let members = document.objectValue else {
            throw RulesFileError(line: 1, field: "(document)", reason: "the rules file must be a JSON object")
        }
        func strings(_ name: String, _ value: JSONValue) throws(RulesFileError) -> [String] {
            guard let array = value.arrayValue else {
                throw RulesFileError(line: locate("\"\(name)\""), field: name, reason: "must be an array of strings")
            }
            var out: [String] = []
            for (index, element) in array.enumerated() {
                guard let text = element.stringValue, !text.isEmpty else {
                    throw RulesFileError(line: locate("\"\(name)\""), field: "\(name)[\(index)]",
                                         reason: "must be a non-empty string")
                }
                out.append(text)
            }
            return out
        }
        for (name, value) in members {
            switch name {
            case "disable":
                let known = Set(RedactionRule.builtIn.map(\.name))
                for (index, rule) in try strings(name, value).enumerated() {
                    guard known.contains(rule) else {
                        throw RulesFileError(line: locate("\"\(rule)\""), field: "disable[\(index)]",
                                             reason: "unknown rule '\(rule)'; rules are: "
                                                 + RedactionRule.builtIn.map(\.name).joined(separator: ", "))
                    }
                    disabled.insert(RedactionRule(rule))
                }
            case "headers":
                for header in try strings(name, value) { secretHeaderNames.insert(header.lowercased()) }
            case "queryParams":
                for parameter in try strings(name, value) { secretParameterNames.insert(parameter.lowercased()) }
            case "jsonKeys":
                secretJSONKeys += try strings(name, value)
            case "internalSuffixes":
                for suffix in try strings(name, value) {
                    let lower = suffix.lowercased()
                    internalSuffixes.append(lower.hasPrefix(".") ? lower : "." + lower)
                }
            case "allow":
                allowedValues.formUnion(try strings(name, value))
            case "patterns":
                guard let array = value.arrayValue else {
                    throw RulesFileError(line: locate("\"patterns\""), field: name,
                                         reason: "must be an array of {\"name\": ..., \"regex\": ...} objects")
                }
                for (index, element) in array.enumerated() {
                    let field = "patterns[\(index)]"
                    guard let patternName = element["name"]?.stringValue, !patternName.isEmpty else {
                        throw RulesFileError(line: locate("\"patterns\""), field: field + ".name",
                                             reason: "must be a non-empty string")
                    }
                    guard let source = element["regex"]?.stringValue, !source.isEmpty else {
                        throw RulesFileError(line: locate("\"\(patternName)\""), field: field + ".regex",
                                             reason: "must be a non-empty string")
                    }
                    if RedactionRule.builtIn.contains(RedactionRule(patternName)) {
                        throw RulesFileError(line: locate("\"\(patternName)\""), field: field + ".name",
                                             reason: "'\(patternName)' is a built-in rule's name")
                    }
                    do {
                        patterns.append(try RedactionPattern(name: patternName, regex: source))
                    } catch {
                        throw RulesFileError(line: locate("\"\(patternName)\""), field: field + ".regex",
                                             reason: "not a valid regular expression: \(error)")
                    }
                }
            default:
                throw RulesFileError(line: locate("\"\(name)\""), field: name,
                                     reason: "unknown member; members are: "
                                         + Self.rulesFileMembers.joined(separator: ", "))
            }
        }
    }

    /// The 1-based line of the first occurrence of `needle` (1 when absent). Good enough to point
    /// a user at a field in a hand-written rules file.
    static func line(of needle: String, in bytes: [UInt8]) -> Int {
        let target = Array(needle.utf8)
        guard !target.isEmpty, bytes.count >= target.count else { return 1 }
        var line = 1
        var i = 0
        while i + target.count <= bytes.count {
            if bytes[i] == target[0] && Array(bytes[i..<i + target.count]) == target { return line }
            if bytes[i] == 0x0A { line += 1 }
            i += 1
        }
        return 1
    }
}
