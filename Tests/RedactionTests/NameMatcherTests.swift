import XCTest
import HAR
@testable import Redaction

/// `NameMatcher`: how names (JSON members, parameters, headers, assignments, XML elements) are
/// split into words and classified. The same matcher serves every place a name appears, so these
/// cases hold for all of them.
final class NameMatcherTests: XCTestCase {
    let matcher = NameMatcher()

    private func assertClass(_ names: [String], _ expected: NameClass, asParameter: Bool = false,
                             file: StaticString = #filePath, line: UInt = #line) {
        for name in names {
            XCTAssertEqual(matcher.classify(name, asParameter: asParameter), expected, name, file: file, line: line)
        }
    }

    // MARK: Words

    func testWordsSplitEveryNamingStyle() {
        let cases: [(String, [String])] = [
            ("accessToken", ["access", "token"]), ("access_token", ["access", "token"]),
            ("Access-Token", ["access", "token"]), ("ACCESS_TOKEN", ["access", "token"]),
            ("APIKey", ["api", "key"]), ("x-api-key", ["x", "api", "key"]),
            ("Ocp-Apim-Subscription-Key", ["ocp", "apim", "subscription", "key"]),
            ("user.password", ["user", "password"]), ("HTTPServerURL", ["http", "server", "url"]),
            ("cvv2", ["cvv2"]), ("oauth2Token", ["oauth2", "token"]),
        ]
        for (name, words) in cases { XCTAssertEqual(NameMatcher.words(name), words, name) }
        XCTAssertEqual(NameMatcher.words(""), [])
        XCTAssertEqual(NameMatcher.words("Straße_Nr"), ["straße", "nr"])
    }

    /// An ASCII name is split byte by byte, a name with other scripts by `Character`: both read
    /// the same words in every ASCII name, whatever its mix of cases, digits and separators.
    func testASCIIWordsAreTheUnicodeWords() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("aBcDkKeEyYiIdD09_-.$ tToOnN")
        for _ in 0..<5_000 {
            let name = String((0..<Int.random(in: 0...14, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            XCTAssertEqual(NameMatcher.asciiWords(name), NameMatcher.unicodeWords(name), name)
        }
        for name in ["APIKey", "HTTPServerURL", "oauth2Token", "X-Api-KEY", "sessionId", "a1B2c3", "ABCdef", "__x__"] {
            XCTAssertEqual(NameMatcher.asciiWords(name), NameMatcher.unicodeWords(name), name)
        }
        XCTAssertEqual(NameMatcher.words("--__.."), [])
    }

    /// An email address in a name is the one word `email`, whether it is the original or its
    /// placeholder, so replacing it never changes the name's class.
    func testAnEmailInANameIsOneWord() {
        XCTAssertEqual(NameMatcher.emailsAsWords("token At@corp.com"), "token  email ")
        XCTAssertEqual(NameMatcher.emailsAsWords("credential,At%40p.ex"), "credential, email ")
        XCTAssertEqual(NameMatcher.emailsAsWords("x@y"), "x@y", "no domain")
        XCTAssertEqual(NameMatcher.emailsAsWords("a@b.c1"), "a@b.c1", "no top-level domain")
        XCTAssertEqual(NameMatcher.emailsAsWords("git@github.com:org/app"), " email :org/app")
        for (original, placeholder) in [("token At@corp.com", "token user1@example.com"),
                                        ("credential,At%40p.ex", "credential,user1%40example.com"),
                                        ("jane@corp.com token", "user1@example.com token"),
                                        ("token_jane@corp.com", "user1@example.com")] {
            XCTAssertEqual(matcher.classify(original), matcher.classify(placeholder), original)
        }
        XCTAssertEqual(matcher.classify("token At@corp.com"), .secret)
        XCTAssertEqual(matcher.classify("token at"), .ordinary, "`at` still describes where there is no address")
    }

    func testLowercaseCompoundsAreSplitAtSecretWords() {
        let cases: [(String, [String])] = [
            ("apikey", ["api", "key"]), ("csrftoken", ["csrf", "token"]), ("accesstoken", ["access", "token"]),
            ("sessionid", ["session", "id"]), ("xsrftoken", ["xsrf", "token"]), ("clientsecret", ["client", "secret"]),
            ("userpassword", ["user", "password"]), ("privatekey", ["private", "key"]),
        ]
        for (name, words) in cases { XCTAssertEqual(NameMatcher.words(name), words, name) }
        // Words that merely contain a secret word are not split.
        for word in ["keyboard", "monkey", "passenger", "compass", "tokenizer", "secretary", "author", "spinner"] {
            XCTAssertEqual(NameMatcher.words(word), [word])
        }
    }

    // MARK: Secret names

    func testTheIssuesSecretWords() {
        assertClass(["token", "Token", "id_token", "refreshToken", "X-Auth-Token", "secret", "client_secret",
                     "password", "Password", "new_password", "passwd", "pwd", "pass", "db_pass", "passphrase",
                     "auth", "Auth", "credential", "signature", "sig", "x-signature",
                     "otp", "otp_code", "csrf", "xsrf", "X-XSRF-TOKEN", "_csrf", "session", "sessionId", "session_id",
                     "jwt", "pin", "mfa", "cookie"], .secret)
        // Plurals are secret unless their value is a number (`tokens: 512` counts).
        assertClass(["tokens", "credentials", "AWS_CREDENTIALS"], .count)
        XCTAssertEqual(body(#"{"tokens": ["tok-9f8e7d6c5b", "tok-1a2b3c4d5e"], "max_tokens": 1024, "credentials": "AKd8s7f6"}"#),
                       #"{"tokens": ["redacted-1", "redacted-2"], "max_tokens": 1024, "credentials": "redacted-3"}"#)
        XCTAssertEqual(scanned("MAX_TOKENS=1024\nAPI_TOKENS=tk-8f7e6d5c4b3a"), "MAX_TOKENS=1024\nAPI_TOKENS=redacted-1")
    }

    func testKeyIsSecretOnlyAsAQualifiedWord() {
        assertClass(["api_key", "apiKey", "API_KEY", "x-api-key", "subscription-key", "Ocp-Apim-Subscription-Key",
                     "stripe_key", "secretKey", "access_key", "privateKey", "signingKey", "client-key"], .secret)
        assertClass(["keyboard", "monkey", "sortKey", "publicKey", "public_key", "primary_key", "keyId", "key_id",
                     "cacheKey", "idempotency-key", "partitionKey", "i18nKey", "keys", "turkey"], .ordinary)
    }

    func testABareKeyDependsOnWhereItStands() {
        // `{"key": "theme"}` is a preferences entry; `?key=AIza...` is a Google API key.
        XCTAssertEqual(matcher.classify("key"), .bareKey)
        XCTAssertEqual(matcher.classify("Key"), .bareKey)
        XCTAssertEqual(matcher.classify("key_value"), .bareKey)
        XCTAssertEqual(matcher.classify("key", asParameter: true), .secret)
        XCTAssertEqual(matcher.classify("keyString", asParameter: true), .secret)
        XCTAssertEqual(matcher.classify("code"), .ordinary)
        XCTAssertEqual(NameMatcher(exactNames: ["code"]).classify("code", asParameter: true), .secret)
        XCTAssertEqual(NameMatcher(exactNames: ["code"]).classify("code"), .ordinary, "only as a parameter")
    }

    func testSessionNamesAndCounts() {
        assertClass(["sessionId", "SESSIONID", "sessionid", "session_token"], .secret)
        assertClass(["sessionCount", "session_timeout", "sessionExpiresAt", "session_length"], .ordinary)
    }

    func testWellKnownSessionCookieNames() {
        // Servlet, PHP and ASP session cookies, which also travel in URLs (`;jsessionid=...`).
        assertClass(["JSESSIONID", "jsessionid", "PHPSESSID", "phpsessid", "sessid", "ASPSESSIONIDQQGGQGQS"], .secret)
        let r = redacted([makeEntry(url: "https://shop.example.com/cart;jsessionid=1A2B3C4D5E6F7A8B9C0D?x=1")])
        XCTAssertEqual(r.log.entries[0].request.url, "https://shop.example.com/cart;jsessionid=redacted-1?x=1")
        XCTAssertEqual(scanned("PHPSESSID=9f8e7d6c5b4a3f2e1d0c"), "PHPSESSID=redacted-1")
    }

    func testDescribingWordsAfterASecretWordMakeItInnocent() {
        assertClass(["token_type", "tokenType", "passwordPolicy", "password_hint", "expires_in", "tokenExpiresIn",
                     "token_expiry", "password_min_length", "secretName", "authUrl", "auth_provider", "otpChannel",
                     "passwordChangedAt", "csrfHeaderName", "signature_algorithm", "apiKeyPrefix", "token_endpoint"],
                    .ordinary)
        // A describing word before the secret word changes nothing.
        assertClass(["typeToken", "expiredToken", "oldPassword"], .secret)
    }

    func testLookAlikesOfSecretWordsAreOrdinary() {
        assertClass(["authority", "compass", "bypass", "tokenizer", "secretary", "keyword", "pinned", "spinner", "name",
                     "id", "description", "bypassed"],
                    .ordinary)
        // Words for people are personal-data names, not secret ones.
        assertClass(["author"], .personGroup)
        assertClass(["passenger", "signatory"], .person)
    }

    /// Names of personal data other than emails, phones and cards, and what they are not.
    func testPersonalDataNames() {
        assertClass(["dob", "dateOfBirth", "date_of_birth", "birthDate", "birthday", "BIRTH_DATE"], .birthDate)
        assertClass(["birth_date_format", "dobVerified", "place_of_birth"], .ordinary)
        assertClass(["passport", "passport_number", "nino", "ni_number", "national_id", "ssn", "driver_license",
                     "code_verifier", "oauth_verifier", "mnemonic", "seed_phrase", "recovery_phrase"], .secret)
        assertClass(["address", "shipping_address", "billingAddress", "home_address", "street", "address_line1"], .address)
        assertClass(["email_address", "ip_address", "mac_address", "wallet_address", "address_type", "addressId",
                     "server_address"], NameClass.ordinary, notAddress: true)
        assertClass(["client_ip", "ip", "remote_addr", "X-Forwarded-For", "X-Real-IP", "ip_address", "ipv6",
                     "CF-Connecting-IP"], .ipAddress)
        XCTAssertNotEqual(matcher.classify("ip_version"), .ipAddress)
        assertClass(["location", "home", "device", "coords", "current_location"], .place)
        assertClass(["home_lat", "deviceLongitude", "user_lng"], .coordinate)
        assertClass(["lat", "longitude"], .ordinary)
        assertClass(["exp_month", "exp_year", "expiry", "card_expiry", "expiration_date", "card_exp", "ccExp"], .cardExpiry)
        assertClass(["exp", "expires", "token_expiry", "expires_at", "token_exp"], .ordinary)
        assertClass(["recipient", "sender", "beneficiary"], .person)
        assertClass(["customer", "user", "shipping", "billing"], .personGroup)
        assertClass(["phone_landline", "homePhone", "mobile_number_formatted", "landline"], .phone)
        assertClass(["idfa", "gaid", "advertising_id", "registration_id", "apns", "wifi_bssid", "X-Honeycomb-Team",
                     "end_user_id", "endUserId", "safety_identifier"], .identifier)
        assertClass(["user_id", "userId", "end_date", "user_identifier_type"], .ordinary)
        assertClass(["max_tokens", "prompt_tokens", "completion_tokens", "total_tokens", "cache_read_input_tokens",
                     "MAX_TOKENS", "tokens", "credentials"], .count)
    }

    /// Classes other than `excluded` for names that must not be `.address`.
    private func assertClass(_ names: [String], _ expected: NameClass, notAddress: Bool,
                             file: StaticString = #filePath, line: UInt = #line) {
        for name in names { XCTAssertNotEqual(matcher.classify(name), .address, name, file: file, line: line) }
    }

    func testMultiWordRunsAndUserKeys() {
        assertClass(["auth_code", "verificationCode", "recovery_codes", "connection_string", "dsn", "ssn", "tax_id",
                     "routingNumber", "account_number"], .secret)
        let custom = NameMatcher(secretRuns: ["pin", "device-serial"])
        XCTAssertEqual(custom.classify("deviceSerial"), .secret)
        XCTAssertEqual(custom.classify("DEVICE_SERIAL"), .secret)
        XCTAssertNotEqual(custom.classify("device"), .secret)
        XCTAssertEqual(custom.classify("serial"), .ordinary)
    }

    func testNamesLongerThanTheBoundAreReadByTheirLastWords() {
        let limit = NameMatcher.maximumNameLength
        let atLimit = String(repeating: "x", count: limit - "_password".count) + "_password"
        XCTAssertEqual(atLimit.utf8.count, limit)
        XCTAssertEqual(matcher.classify(atLimit), .secret)
        XCTAssertEqual(matcher.classify("y" + atLimit), .ordinary,
                       "one byte over: only the last 128 bytes count, from a word boundary, and they are one cut word")
        // Data before the last words (broken JSON, a random "form"): the words nearest the value name it.
        let noise = String(repeating: "aZ9/q.", count: 60)
        XCTAssertEqual(matcher.classify(noise + "&api_token"), .secret)
        XCTAssertEqual(matcher.classify(noise + "&page"), .ordinary)
        XCTAssertEqual(matcher.classify(String(repeating: noise, count: 20_000) + "&usetoken"), .secret,
                       "a 7 MB name costs its last 128 bytes")
        // Characters that are no letters (U+FFFD for bad bytes) end words, as `words` reads them;
        // letters of any script go on (the cut word `éééx` is dropped whole).
        let replacementRun = String(repeating: "\u{FFFD}", count: 21)
        XCTAssertEqual(matcher.classify(noise + "x" + replacementRun + "otp" + replacementRun + "rd"), .secret)
        XCTAssertEqual(matcher.classify(String(repeating: "é", count: 70) + "x&otp"), .secret)
        XCTAssertEqual(matcher.classify(String(repeating: "é", count: 70) + "xotp"), .ordinary)
        // Exact names match at any length, before the bound.
        let long = String(repeating: "z", count: limit * 2)
        XCTAssertEqual(NameMatcher(exactNames: [long]).classify(long.uppercased(), asParameter: true), .secret)
        // A random "form" body: its items' values are still scanned as content.
        let body = "q" + String(repeating: "\u{1}\u{2}x", count: 60) + "_token=ghp_" + String(repeating: "A1b2", count: 9)
        XCTAssertFalse(scanned(body).contains("ghp_A1b2"), "a key format under a long name is still found")
    }

    // MARK: Personal data

    func testPersonalClasses() {
        assertClass(["firstName", "first_name", "last_name", "LastName", "displayName", "display-name", "fullName",
                     "given_name", "familyName", "surname", "nickname", "username", "user_name", "cardholder_name",
                     "firstname", "firstNameValue"], .personName)
        assertClass(["phone", "Phone", "mobile", "tel", "telephone", "msisdn", "mobileNumber", "phone_number",
                     "phoneNumber", "cell_phone", "fax", "phonenumber", "whatsapp", "contactPhone"], .phone)
        assertClass(["cardNumber", "card_number", "card-no", "pan", "credit_card", "ccNumber", "cardnumber"], .cardNumber)
        assertClass(["cvc", "cvv", "CVV", "cvv2", "cvc2", "csc", "securityCode", "security_code", "card_code"], .cardCode)
        // Only words after the code word describe it: a placeholder before it in broken JSON
        // (`redacted-1` is a describing word) leaves the class as it was.
        assertClass(["maskedCvc", "redacted-1\u{3}csc", "I1NiJ9.eyJ\u{3}csc"], .cardCode)
        // A secret word wins: its placeholder replaces any value, a code's only digits.
        assertClass(["cvcToken", "csctoken", "redacted-1\u{3}csctoken", "I1NiJ9.eyJ\u{3}csctoken"], .secret)
    }

    func testLabelsOfPersonalFieldsAreOrdinary() {
        // A describing word after the personal word makes the name a label, not the value.
        assertClass(["firstNameLabel", "phoneVerified", "phone_format", "cardNumberMask", "cvcLength", "cvc_required",
                     "name", "company", "phoneme", "telemetry"], .ordinary)
    }

    // MARK: Versions

    func testVersionNames() {
        assertClass(["firmwareVersion", "app_version", "APP-VERSION", "version", "build", "buildNumber", "fw", "release",
                     "fwVersion", "os_ver"], .version)
        // A secret word wins over a version word.
        XCTAssertEqual(matcher.classify("buildToken"), .secret)
        XCTAssertEqual(matcher.classify("tokenVersion"), .version, "version describes the token: no secret")
    }

    // MARK: The memo

    func testMemoAgreesWithTheMatcher() {
        var memo = NameMemo(matcher)
        let names = ["apiKey", "sortKey", "firstName", "firmwareVersion", "token_type", "key", "Ocp-Apim-Subscription-Key",
                     "sessionCount", "sessionId", "cvv2", "mobileNumber", ""]
        for _ in 0..<2 {  // the second round reads the memo
            for name in names { XCTAssertEqual(memo.classify(name), matcher.classify(name), name) }
        }
        // Names too many for the memo are still classified, and the memo starts over, so the
        // names read before it filled are classified alike when they come back.
        for i in 0..<5000 { _ = memo.classify("field\(i)") }
        XCTAssertEqual(memo.classify("client_secret_9999"), .secret)
        XCTAssertEqual(memo.classify("field_9999"), .ordinary)
        for name in names { XCTAssertEqual(memo.classify(name), matcher.classify(name), name) }
    }
}
