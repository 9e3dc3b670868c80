import XCTest
import HAR
@testable import Redaction

/// Personal data and look-alikes of issue 32's classes, each in the place it was found: CSV
/// exports, objects that scope their members, message text, source code in documentation.
final class GeneralizationTests: XCTestCase {
    private func csv(_ text: String) -> String {
        let r = redacted([makeEntry(responseBody: ("text/csv", text))])
        return r.log.entries[0].response.content.text ?? ""
    }

    func testCSVColumnsAreRedactedByTheirHeader() {
        let out = csv("id,first_name,last_name,email,dob,zip,plan\n1,Grace,Hopper,grace@navy.mil,1906-12-09,10001,pro\n"
                      + "2,\"Alan, Jr.\",Turing,alan@bletchley.uk,1912-06-23,\"02139\",free\n")
        for gone in ["Grace", "Hopper", "grace@navy.mil", "1906-12-09", "10001", "Alan", "Turing", "02139"] {
            XCTAssertFalse(out.contains(gone), "\(gone) survived: \(out)")
        }
        XCTAssertTrue(out.hasPrefix("id,first_name,last_name,email,dob,zip,plan\n1,person-1,person-2,"), out)
        XCTAssertTrue(out.contains(",pro\n") && out.contains(",free\n"), "ordinary columns stay: \(out)")
        XCTAssertTrue(out.contains(",1970-01-01,"), out)
        // A table of products: `name` is no person's, `zip` no address.
        XCTAssertEqual(csv("sku,name,zip\nA-1,Widget,94107\n"), "sku,name,zip\nA-1,Widget,94107\n")
        // Redacting twice changes nothing.
        XCTAssertEqual(csv(out), out)
    }

    func testOneTimeCodesInMessageText() {
        XCTAssertEqual(scanned("G-5695 is your sign-in code."), "G-0000 is your sign-in code.")
        XCTAssertEqual(scanned("482913 is your Acme verification code"), "000000 is your Acme verification code")
        XCTAssertEqual(scanned("Your login code: 123-456"), "Your login code: 000-000")
        for text in ["error code 4041", "status code 200", "zip code 94107", "code 123456", "4041 is the error code"] {
            XCTAssertEqual(scanned(text), text)
        }
    }

    func testDevicesNamedAfterTheirOwners() {
        XCTAssertEqual(scanned("host Quentins-iPhone up"), "host person-1 up")
        XCTAssertEqual(scanned("Ingrid's iPad"), "person-1")
        XCTAssertEqual(scanned("the iPhone app and an iPad"), "the iPhone app and an iPad")
    }

    func testMembersOfASecretThatDescribeItKeepTheirValues() {
        let input = #"{"auth": {"client_id": "app-42", "client_secret": "cs-9f8e7d6c", "token_type": "Bearer", "expires_in": 3600, "tokenUrl": "https://auth.example.org/oauth2/token", "max_login_attempts": 5}}"#
        XCTAssertEqual(body(input), #"{"auth": {"client_id": "redacted-1", "client_secret": "redacted-2", "token_type": "Bearer", "expires_in": 3600, "tokenUrl": "https://auth.example.org/oauth2/token", "max_login_attempts": 5}}"#)
    }

    func testAURLUnderASecretNameStaysAURL() {
        XCTAssertEqual(body(#"{"secret": "https://app.example.org/reset/8f7a6b5c4d3e2f1a"}"#),
                       #"{"secret": "https://app.example.org/redacted-1"}"#)
        // Userinfo is a secret too: the whole value goes.
        XCTAssertEqual(body(#"{"dsn": "https://3663fb756bd1385d7810f3118eb83f36@o1.ingest.sentry.io/2"}"#), #"{"dsn": "redacted-1"}"#)
    }

    func testDocumentationStandInsAndCodeAreNoSecrets() {
        for text in ["Authorization: Bearer YOUR_API_KEY", "let apiKey = loadKey()", "const token = await getToken();",
                     "KestrelClient(apiKey: apiKey)", "api_key = os.environ['API_KEY']", "token: ${API_TOKEN}",
                     "password: <your-password>", "export SECRET_KEY={{secret_key}}"] {
            XCTAssertEqual(scanned(text), text)
        }
        // A literal is still a secret.
        XCTAssertEqual(scanned(#"let apiKey = "kq8Zr2Lm4Np6""#), #"let apiKey = "redacted-1""#)
        XCTAssertEqual(scanned("password: hunter2hunter2"), "password: redacted-1")
    }

    func testBareKeysThatAreWordsStay() {
        XCTAssertEqual(body(#"{"key": "feature.checkout_v2", "other": {"key": "8f3a9b2c7d1e4f5a6b7c"}}"#),
                       #"{"key": "feature.checkout_v2", "other": {"key": "redacted-1"}}"#)
        XCTAssertTrue(RedactionEngine.isWordyIdentifier("ios-app-store_v2"))
        XCTAssertFalse(RedactionEngine.isWordyIdentifier("sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
    }

    func testPublicAddressesInTextAfterAnAddressWord() {
        XCTAssertEqual(scanned("user joined from 81.2.69.160"), "user joined from 192.0.2.1")
        XCTAssertEqual(scanned("client_ip=81.2.69.160"), "client_ip=192.0.2.1")
        XCTAssertEqual(scanned("resolver 8.8.8.8 and version 4.2.1.0"), "resolver 8.8.8.8 and version 4.2.1.0")
    }

    /// An object with a personal member (an email, a birth date, a phone) is about a person:
    /// its bare `name` is the person's, before or after that member.
    func testANameBesideAPersonalMemberIsAPersonsName() {
        XCTAssertEqual(body(#"{"id": "CUS-1", "name": "Leopold Nguyen", "email": "ln@posteo.de"}"#),
                       #"{"id": "CUS-1", "name": "person-1", "email": "user1@example.com"}"#)
        XCTAssertEqual(body(#"{"dob": "1959-03-28", "name": "Leopold Nguyen"}"#),
                       #"{"dob": "1970-01-01", "name": "person-1"}"#)
        // A name not written as a person's stays (a catalogue's lowercase words beside a
        // contact email), and so do those words elsewhere.
        XCTAssertEqual(body(#"{"items": [{"name": "mike alpha hotel", "email": "ops@acme.io", "description": "alpha hotel mike"}]}"#),
                       #"{"items": [{"name": "mike alpha hotel", "email": "user1@example.com", "description": "alpha hotel mike"}]}"#)
        // A product's name stays, also beside nested objects that hold an email of their own.
        let product = #"{"name": "Widget", "sku": "W-1", "vendor": {"email": "sales@acme.example"}}"#
        XCTAssertEqual(body(product), #"{"name": "Widget", "sku": "W-1", "vendor": {"email": "user1@example.com"}}"#)
    }

    func testABirthDateInText() {
        XCTAssertEqual(scanned("Customer Ada, born 1964-06-06, account 42"), "Customer Ada, born 1970-01-01, account 42")
        XCTAssertEqual(scanned("born on 06/06/1964"), "born on 01/01/1970")
        XCTAssertEqual(scanned("reborn 2 times in 1999"), "reborn 2 times in 1999")
    }

    func testFormatsFoundAtAMarker() {
        let tf = "AbCdEfGhIjKlMn.atlasv1." + String(repeating: "Zq9-x_", count: 11)
        XCTAssertEqual(scanned("token \(tf) end"), "token redacted-1 end")
        XCTAssertEqual(body(#"{"value": "0123456789abcdef0123456789abcdef0123NRAL"}"#), #"{"value": "redacted-1"}"#)
        // A lead glued to more letters is no lead.
        let glued = "x" + tf
        XCTAssertEqual(scanned("see \(glued)", config: try! configuration(rules: #"{"disable": ["high-entropy"]}"#)), "see \(glued)")
    }
}
