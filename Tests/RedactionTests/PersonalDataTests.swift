import XCTest
import HAR
@testable import Redaction

/// Personal data: phone numbers, payment cards, card codes, IBANs, person names and emails, in
/// free text (where the shape decides) and under their names (where the name decides), with
/// the look-alikes each shape must leave alone.
final class PersonalDataTests: XCTestCase {
    private func only(_ rules: String = "") throws -> RedactionConfiguration {
        try configuration(rules: #"{"disable": ["high-entropy"\#(rules)]}"#)
    }

    private let phone1 = PlaceholderFormat.phone(1)  // +12015550100
    private let card1 = PlaceholderFormat.card(1)

    // MARK: Phones

    func testPhonesInFreeText() {
        XCTAssertEqual(phone1, "+12015550100")
        for number in ["+14155552671", "+1 415 555 2671", "+1-415-555-2671", "+44 20 7946 0958", "+44 (20) 7946-0958",
                       "+49.30.12345678", "(415) 555-2671", "(415)555-2671", "(415) 555.2671"] {
            let engine = RedactionEngine()
            XCTAssertEqual(scanned("call \(number) now", engine: engine), "call \(phone1) now", number)
            XCTAssertEqual(engine.currentReport.counts[.phoneNumber]?[.body], 1, number)
        }
        XCTAssertEqual(scanned("<a href=\"tel:+14155552671\">"), "<a href=\"tel:\(phone1)\">")
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("+14155552671 or +14155550000, again +14155552671", engine: engine),
                       "+12015550100 or +12015550101, again +12015550100")
    }

    func testNotPhones() throws {
        let config = try only()
        for text in ["+0100", "2024-01-15T10:00:00+01:00", "offset +0530", "+2024-01-15", "+12345", "+1234567",
                     "+1415555267100000", "a+14155552671", "+14155552671x", "UTC+12:00", "1+1=2", "v1.2.3+45",
                     "(415) 555-26710", "(12) 555-2671", "(4155) 555-2671", "+12015550100"] {
            XCTAssertEqual(scanned("at \(text) end", config: config), "at \(text) end", text)
        }
    }

    func testPhonesUnderPhoneNames() throws {
        XCTAssertEqual(body(#"{"phone": "415-555-2671", "mobileNumber": 4155552671, "fax": "+33 1 23 45 67 89"}"#),
                       #"{"phone": "+12015550100", "mobileNumber": 0, "fax": "+12015550101"}"#)
        XCTAssertEqual(body(#"{"phone": "n/a", "phoneVerified": "4155552671", "tel": 12}"#),
                       #"{"phone": "n/a", "phoneVerified": "4155552671", "tel": 12}"#, "no number, a label, too short")
        let r = redacted([makeEntry(method: "POST", url: "https://api.example.com/v1/contact?phone=415-555-2671&x=1",
                                    requestBody: ("application/x-www-form-urlencoded", "tel=4155559876&name=x"))])
        let request = r.log.entries[0].request
        // '+' is written %2B in a query (a bare '+' would read as a space).
        XCTAssertEqual(request.url, "https://api.example.com/v1/contact?phone=%2B12015550100&x=1")
        XCTAssertEqual(request.queryString[0].value, phone1)
        XCTAssertEqual(request.postData?.text, "tel=%2B12015550101&name=x")
        XCTAssertEqual(request.postData?.params?[0].value, "+12015550101")
        XCTAssertEqual(scanned("[user]\nphone = (415) 555-2671\nname = x"), "[user]\nphone = \(phone1)\nname = x")
        // A `name: value` value whose first word is short runs to the end of the line: the whole
        // number goes, not "+1 415 555" alone.
        XCTAssertEqual(scanned("contact:\n  mobile: +1 415 555 2671\n  city: Paris"), "contact:\n  mobile: \(phone1)\n  city: Paris")
        XCTAssertEqual(scanned("PHONE_NUMBER=4155552671"), "PHONE_NUMBER=\(phone1)")
    }

    // MARK: Cards

    /// Test numbers of each network, all Luhn-valid.
    private let cards = [
        "4111111111111111", "4222222222222", "5555555555554444", "5105105105105100", "2223003122003222",
        "378282246310005", "371449635398431", "6011111111111117", "6011000990139424", "3530111333300000",
        "3566002020360505", "30569309025904", "38520000023237", "6200000000000005",
    ]

    func testCardNumbersOfEachNetwork() {
        for number in cards {
            XCTAssertTrue(RedactionEngine.luhnValid(number.utf8.map { $0 - 0x30 }), "test data: \(number)")
            let engine = RedactionEngine()
            XCTAssertEqual(scanned("card \(number) ok", engine: engine), "card \(card1) ok", number)
            XCTAssertEqual(engine.currentReport.counts[.cardNumber]?[.body], 1, number)
        }
        XCTAssertTrue(card1.hasPrefix("400000") && card1.count == 16)
        XCTAssertTrue(RedactionEngine.luhnValid(card1.utf8.map { $0 - 0x30 }))
        XCTAssertEqual(scanned(card1), card1, "a placeholder stays")
    }

    func testGroupedCardsAndCardsInURLs() {
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("4111 1111 1111 1111 / 4111-1111-1111-1111 / 3782 822463 10005", engine: engine),
                       "\(card1) / \(card1) / \(PlaceholderFormat.card(2))", "the same digits, the same placeholder")
        let r = redacted([makeEntry(url: "https://api.example.com/cards/4111111111111111/charge?pan=5555555555554444")])
        XCTAssertEqual(r.log.entries[0].request.url,
                       "https://api.example.com/cards/\(card1)/charge?pan=\(PlaceholderFormat.card(2))")
        XCTAssertEqual(body(#"{"card": {"number": "4111 1111 1111 1111", "cardNumber": 4111111111111111}}"#),
                       #"{"card": {"number": "\#(card1)", "cardNumber": 0}}"#)
    }

    func testNotCards() throws {
        let config = try only()
        let luhnValidOutsideNetworks = "3100000000000003"  // 31: no network
        XCTAssertTrue(RedactionEngine.luhnValid(luhnValidOutsideNetworks.utf8.map { $0 - 0x30 }))
        let seventeenDigitVisa = "41111111111111113"
        XCTAssertTrue(RedactionEngine.luhnValid(seventeenDigitVisa.utf8.map { $0 - 0x30 }))
        for text in ["4111111111111112", "1700000000000", "1715270400123", luhnValidOutsideNetworks, seventeenDigitVisa,
                     "id_4111111111111111", "v4111111111111111", "4111111111111111.25", "41111111111111110000",
                     "ORD-4111111111111111", "0.4111111111111111"] {
            XCTAssertEqual(scanned("n \(text) end", config: config), "n \(text) end", text)
        }
    }

    // MARK: Card codes

    func testCardCodesUnderTheirNames() {
        XCTAssertEqual(body(#"{"cvc": "123", "cvv2": 4567, "securityCode": "0000", "card_code": "1234"}"#),
                       #"{"cvc": "000", "cvv2": 0, "securityCode": "0000", "card_code": "0000"}"#)
        let engine = RedactionEngine()
        XCTAssertEqual(body(#"{"cvv": "737"}"#, engine: engine), #"{"cvv": "000"}"#)
        XCTAssertEqual(engine.currentReport.counts[.cardCode]?[.body], 1)
        let r = redacted([makeEntry(url: "https://pay.example.com/charge?cvc=737&amount=10")])
        XCTAssertEqual(r.log.entries[0].request.url, "https://pay.example.com/charge?cvc=000&amount=10")
        XCTAssertEqual(r.log.entries[0].request.queryString[0].value, "000")
        XCTAssertEqual(scanned("<cvv>123</cvv> cvc=4567"), "<cvv>000</cvv> cvc=0000")
        // Not codes: a label, a word, no name.
        XCTAssertEqual(body(#"{"cvcLabel": "123", "cvc": "abc", "code": "123"}"#), #"{"cvcLabel": "123", "cvc": "abc", "code": "123"}"#)
    }

    // MARK: IBANs

    /// The mod-97 check of ISO 13616, written independently of the engine's.
    private func ibanValid(_ iban: String) -> Bool {
        let chars = Array(iban.utf8)
        var remainder = 0
        for c in chars[4...] + chars[..<4] {
            let digits = c >= 0x41 ? String(Int(c) - 0x41 + 10) : String(UnicodeScalar(c))
            for d in digits.utf8 { remainder = (remainder * 10 + Int(d - 0x30)) % 97 }
        }
        return remainder == 1
    }

    private let ibans = [
        "DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300",
        "BE68539007547034", "CH9300762011623852957", "NO9386011117947", "ES9121000418450200051332",
        "IT60X0542811101000000123456",
    ]

    func testIBANsOfSeveralCountries() {
        for iban in ibans {
            XCTAssertTrue(ibanValid(iban), "test data: \(iban)")
            let engine = RedactionEngine()
            XCTAssertEqual(scanned("pay to \(iban) today", engine: engine), "pay to redacted-1 today", iban)
            XCTAssertEqual(engine.currentReport.counts[.iban]?[.body], 1, iban)
            // Printed in groups of four.
            var grouped = ""
            for (i, c) in iban.enumerated() { grouped += (i > 0 && i % 4 == 0 ? " " : "") + String(c) }
            XCTAssertEqual(scanned("IBAN: \(grouped)."), "IBAN: redacted-1.", grouped)
        }
        XCTAssertEqual(body(#"{"iban": "DE89370400440532013000", "bic": "COBADEFFXXX"}"#),
                       #"{"iban": "redacted-1", "bic": "COBADEFFXXX"}"#)
    }

    func testNotIBANs() throws {
        let config = try only()
        for text in ["DE88370400440532013000", "ZZ89370400440532013000", "DE8937040044053201300", "DE893704004405320130001",
                     "XDE89370400440532013000", "DE89370400440532013000X", "de89370400440532013000",
                     "GB82 WEST 1234 5698 7654 33"] {
            XCTAssertEqual(scanned("x \(text) y", config: config), "x \(text) y", text)
        }
    }

    // MARK: Person names

    func testPersonNamesUnderEachNameKey() {
        let keys = ["firstName", "first_name", "lastName", "last_name", "fullName", "full_name", "givenName", "family_name",
                    "displayName", "display_name", "middleName", "surname", "nickname", "username", "user_name",
                    "contactName", "cardholderName", "cardholder", "customer_name", "recipientName", "senderName",
                    "billing_name", "shippingName", "ownerName", "authorName", "patientName", "legalName", "FIRST_NAME"]
        for key in keys {
            let engine = RedactionEngine()
            XCTAssertEqual(body(#"{"\#(key)": "Ann Smith", "n": 1}"#, engine: engine), #"{"\#(key)": "person-1", "n": 1}"#, key)
            XCTAssertEqual(engine.currentReport.counts[.personName]?[.body], 1, key)
        }
        XCTAssertEqual(body(#"{"firstName":"Alice","last_name":"Liddell","user":{"fullName":"Alice Liddell","nick":"al"},"author":"x","firstName2":"Alice"}"#),
                       #"{"firstName":"person-1","last_name":"person-2","user":{"fullName":"person-3","nick":"al"},"author":"x","firstName2":"Alice"}"#)
    }

    func testPersonNamesInMarkupAndAssignments() {
        XCTAssertEqual(scanned("<customer><firstName>Alice</firstName><ns:lastName>Liddell</ns:lastName></customer>"),
                       "<customer><firstName>person-1</firstName><ns:lastName>person-2</ns:lastName></customer>")
        XCTAssertEqual(scanned(#"<input type="text" name="lastName" value="Liddell" class="f">"#),
                       #"<input type="text" name="lastName" value="person-1" class="f">"#)
        XCTAssertEqual(scanned("[profile]\ndisplay_name = Alice Liddell\ntheme = dark"),
                       "[profile]\ndisplay_name = person-1\ntheme = dark")
        XCTAssertEqual(scanned("user:\n  full_name: Alice Liddell\n  role: admin"), "user:\n  full_name: person-1\n  role: admin")
        let r = redacted([makeEntry(url: "https://api.example.com/v1/search?first_name=Alice&limit=5")])
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/v1/search?first_name=person-1&limit=5")
    }

    func testNotPersonNames() {
        let input = #"{"name": "Widget", "firstNameLabel": "First name", "username": "12345", "company": "Acme", "displayName": ""}"#
        XCTAssertEqual(body(input), input)
        XCTAssertEqual(body(#"{"firstName": "person-4"}"#), #"{"firstName": "person-4"}"#, "a placeholder stays")
    }

    // MARK: Emails

    func testPercentEncodedEmailsInPathsAndQueries() {
        let r = redacted([
            makeEntry(index: 0, url: "https://api.example.com/users/ann%40corp.com/profile?cc=bob%40corp.com&x=1"),
            makeEntry(index: 1, url: "https://api.example.com/users/ann@corp.com"),
        ])
        XCTAssertEqual(r.log.entries[0].request.url,
                       "https://api.example.com/users/user1%40example.com/profile?cc=user2@example.com&x=1")
        XCTAssertEqual(r.log.entries[0].request.queryString[0].value, "user2@example.com")
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/users/user1@example.com", "the same address")
        XCTAssertEqual(scanned("mailto:ann%40corp.com?subject=hi"), "mailto:user1%40example.com?subject=hi")
        XCTAssertEqual(scanned("a%40b x%40localhost %40corp.com"), "a%40b x%40localhost %40corp.com")
        // An escape of a byte that is no local part ends the local part, as the byte itself does.
        XCTAssertEqual(scanned("to x%20c%40p.org now"), "to x%20user1%40example.com now")
        XCTAssertEqual(scanned("to x%3Cc%40p.org"), "to x%3Cuser1%40example.com")
        XCTAssertEqual(scanned("jane%2Edoe%40corp.com"), "user1%40example.com", "an escaped dot is part of it")
    }

    func testGitRemotesAreNotEmails() {
        for remote in ["git@github.com:org/app.git", "git@gitlab.com:group/sub/app.git", "ssh://git@github.com/org/app.git",
                       "git@bitbucket.org:~team/app.git", "hg@code.example.org:repo"] {
            XCTAssertEqual(scanned("remote \(remote) done"), "remote \(remote) done", remote)
        }
        XCTAssertEqual(scanned("from ann@corp.com: hello"), "from user1@example.com: hello", "a colon and a space is prose")
    }

    func testExampleAddressesAreIdempotent() {
        let text = "user1@example.com, user12@example.com and USER3@EXAMPLE.COM"
        XCTAssertEqual(scanned(text), text)
        let once = redacted([makeEntry(requestHeaders: [("From", "ann@corp.com")],
                                       responseBody: ("application/json", #"{"email":"bob@corp.com","cc":"user1@example.com"}"#))])
        let twice = redacted(once.log)
        XCTAssertEqual(twice.bytes, once.bytes)
        XCTAssertEqual(twice.report.total, 0)
    }

    /// The predicates that keep non-secrets under secret names, checked directly: each reads
    /// the bytes once without copying them, so every case and boundary is pinned here.
    func testValuesNoSecretNameHolds() {
        for word in ["true", "FALSE", "Yes", "no", "On", "off", "null", "None", "nil", "Undefined", "UNDEFINED",
                     "enabled", "Disabled", "required", "optional", "2025-03-01", "2025-03-01T10:00:00.123Z",
                     "2025-03-01 10:00:00+02:00"] {
            XCTAssertTrue(RedactionEngine.cannotBeSecret(word), word)
        }
        for value in ["", "truex", "tru", "undefinedx", "undefine", "nulls", "yes!", "sk_live_abc", "2025-03-01X",
                      "1234567890", "tr\u{fc}e", String(repeating: "a", count: 41), "p4ssw0rd"] {
            XCTAssertFalse(RedactionEngine.cannotBeSecret(value), value)
        }
        for count in ["1024", " 42", "1.5", "-3", "1 000", String(repeating: "9", count: 20)] {
            XCTAssertTrue(RedactionEngine.isCountValue(count), count)
        }
        for other in ["", "   ", "--", "12a", String(repeating: "9", count: 21), "0x10"] {
            XCTAssertFalse(RedactionEngine.isCountValue(other), other)
        }
    }

    func testCapitalizedNamesInPersonObjects() {
        let engine = RedactionEngine(rules: CompiledRules(RedactionConfiguration()), collectFindings: false)
        func reads(_ value: String) -> Bool {
            let json = Array("\"\(value)\"".utf8)
            return withExtendedLifetime(engine) {
                json.withUnsafeBufferPointer { p in
                    JSONRewriter(p: p, engine: engine, reading: .body, nestingLevel: 0).valueReadsAsCapitalizedName(at: 0)
                }
            }
        }
        for name in ["Ada", "Ada Lovelace", "Mateo Van der Berg", "  Ada  Lovelace ", "O'Brien-Smith Jr.", "\u{c9}mile Zola",
                     "A B C D E"] {
            XCTAssertTrue(reads(name), name)
        }
        for other in ["ada lovelace", "mike alpha hotel", "Ada Lovelace 3", "A B C D E F", "Ada, Lovelace", "Ada of the north",
                      "   ", String(repeating: "A", count: 81)] {
            XCTAssertFalse(reads(other), other)
        }
    }
}
