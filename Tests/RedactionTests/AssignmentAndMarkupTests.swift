import HAR
@testable import Redaction
import TestSupport
import TextEncodings
import XCTest

/// `secret-assignments`: values named by a word in the text itself (.env and .ini files, YAML,
/// HTTP dumps, JavaScript objects, GraphQL arguments, XML elements and attributes, HTML inputs
/// and meta tags), and version names that keep their dotted quads.
final class AssignmentAndMarkupTests: XCTestCase {
    private func rulesOnly() throws -> RedactionConfiguration {
        try configuration(rules: #"{"disable": ["high-entropy"]}"#)
    }

    // MARK: .env and shell

    func testDotEnvLines() {
        let engine = RedactionEngine()
        let env = "# config\nexport API_TOKEN=abc123def456\nDB_PASSWORD=\"s3cr3t pass\"\nSECRET_KEY='k-9f8e7d'\nDEBUG=true\nPORT=8080\n"
        XCTAssertEqual(scanned(env, engine: engine),
                       "# config\nexport API_TOKEN=redacted-1\nDB_PASSWORD=\"redacted-2\"\nSECRET_KEY='redacted-3'\nDEBUG=true\nPORT=8080\n")
        XCTAssertEqual(engine.currentReport.counts[.secretAssignments]?[.body], 3)
        XCTAssertNil(engine.currentReport.counts[.secretParameters])
        // At the very start of the text `name=value` reads as a parameter (a query or form without
        // its '?'): the same placeholder, counted under secret-parameters.
        let first = RedactionEngine()
        XCTAssertEqual(scanned("GITHUB_TOKEN=tok-000111222 make deploy", engine: first), "GITHUB_TOKEN=redacted-1 make deploy")
        XCTAssertEqual(first.currentReport.counts[.secretParameters]?[.body], 1)
        XCTAssertEqual(scanned("curl -u x -d password=hunter2xx -d user=me"), "curl -u x -d password=redacted-1 -d user=me")
    }

    /// A name that starts where a replaced value ended (`]` stops a value, but is a name byte):
    /// the byte before it was the value's last, whatever it was, so it neither allows nor forbids
    /// the name. A second run reads the name after the placeholder, never through it; and a value
    /// that starts with a placeholder the next byte cannot go on with is that placeholder.
    func testANameRightAfterAReplacedValue() {
        assertScans([("key: Abcdefgh12345678X]token:xyz", "key: redacted-1]token:redacted-2"),
                     ("key: Abcdefgh12345678\u{0}]token=xyz", "key: redacted-1]token=redacted-2"),
                     ("key: redacted-1]key:A", "key: redacted-1]key:A"),
                     ("phone: +12015550100\u{FFFD}123456", "phone: +12015550100\u{FFFD}123456"),
                     ("phone: +1 415 555 0100", "phone: +12015550100")])
    }

    /// A label of words names the value after its colon when its last word says nothing alone
    /// (`Passport No:`, `Phone number:`), as the same words joined do as a JSON key. Each text is
    /// its own engine: a value known from an earlier text would be found by that instead.
    func testLabelsOfWords() {
        assertScans([("Passport No: CZ2VPTCXR", "Passport No: redacted-1"),
                     ("MRZ\nSurname: Lindqvist\nPassport number: C01X00T47\n", "MRZ\nSurname: person-1\nPassport number: redacted-1\n"),
                     ("Send your passport number: C01X00T47 today", "Send your passport number: redacted-1 today"),
                     ("Phone number: 415 555 0172", "Phone number: +12015550100"),
                     ("Driver license no: D1234567", "Driver license no: redacted-1"),
                     ("(full name: Karl Lindqvist)", "(full name: person-1)"),
                     // Labels whose words say nothing, and words glued to other text.
                     ("Order number: 12345678", "Order number: 12345678"),
                     ("Tracking no: 1Z999AA10123456784", "Tracking no: 1Z999AA10123456784"),
                     ("see passport_scan No: 12345678", "see passport_scan No: 12345678"),
                     ("Release version: 10.1.2.3", "Release version: 10.1.2.3")])
    }

    /// Codes of one shape after a secret name are each a value (`backup codes: A B C`); a word
    /// of another shape after one ends the list.
    func testListsOfCodes() {
        assertScans([("Your backup codes: 8K3F-9QWE 2MNB-7XCV 4TYU-1ASD", "Your backup codes: redacted-1 redacted-2 redacted-3"),
                     ("recovery_codes: a1b2c3d4, e5f6g7h8\n", "recovery_codes: redacted-1, redacted-2\n"),
                     ("token: 8K3F9QWE2MNB7XCV expires soon", "token: redacted-1 expires soon"),
                     ("password: hunter22 updated", "password: redacted-1 updated")])
    }

    func testNotAssignments() throws {
        let config = try rulesOnly()
        for text in ["TOKEN_TYPE=bearer", "PASSWORD_MIN_LENGTH=12", "export PATH=/usr/bin", "a==b", "x=token",
                     "if (password == null)", "password=", "keyboard=us", "token_expires_in=3600"] {
            XCTAssertEqual(scanned(text, config: config), text, text)
        }
    }

    /// Base64 padding is no assignment: random keys (a WebSocket handshake's, nonces, digests)
    /// under innocent names stay as they are, whatever words their letters happen to spell
    /// (`hDvPOzOfQmodL1pGGPwHsg==` once lost its last '=' to a `...Pw=` "assignment").
    func testRandomBase64UnderInnocentNamesIsKept() {
        var rng = SplitMix64(seed: 2026)
        let engine = RedactionEngine()
        for round in 0..<6000 {
            let bytes = (0..<[16, 17, 20, 32][round % 4]).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let key = Base64.encode(bytes)
            XCTAssertEqual(scanned(key, engine: engine), key, "bare \(key)")
            XCTAssertEqual(scanned("nonce=\(key)&v=1", engine: engine), "nonce=\(key)&v=1")
            guard round % 20 == 0 else { continue }  // whole entries cost more
            var e = makeEntry(requestHeaders: [("Sec-WebSocket-Key", key), ("Digest", "sha-256=\(key)")])
            e.response.headers = [HARHeader(name: "Sec-WebSocket-Accept", value: key)]
            let out = redacted([e]).log.entries[0]
            XCTAssertEqual(out.request.headers.first { $0.name == "Sec-WebSocket-Key" }?.value, key)
            XCTAssertEqual(out.request.headers.first { $0.name == "Digest" }?.value, "sha-256=\(key)")
            XCTAssertEqual(out.response.headers.first?.value, key)
        }
        XCTAssertEqual(scanned("hDvPOzOfQmodL1pGGPwHsg=="), "hDvPOzOfQmodL1pGGPwHsg==")
    }

    func testPrivateKeyInAnAssignment() {
        // The whole PEM block goes, and nothing after it.
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
        let env = scanned("PRIVATE_KEY=\"\(pem)\"\nDEBUG=true\nHOST=api.example.com\n")
        XCTAssertFalse(env.contains("MIIE") || env.contains("PRIVATE KEY"), env)
        // The lines after the key are kept: the block ends at its END line (it once ran to the end
        // of the text, taking DEBUG and HOST with it).
        XCTAssertTrue(env.hasSuffix("\nDEBUG=true\nHOST=api.example.com\n"), env)
        let yaml = scanned("tls:\n  private_key: \(pem)\n  port: 443\n")
        XCTAssertFalse(yaml.contains("MIIE") || yaml.contains("PRIVATE KEY"), yaml)
        // The same in YAML: `port: 443` stays.
        XCTAssertTrue(yaml.hasSuffix("\n  port: 443\n"), yaml)
    }

    // MARK: .ini

    func testIniLinesWithSpacesAroundTheEquals() {
        let ini = "[database]\nhost = db.example.com\npassword = hunter2 ; old one\napi_key\t=\tAbC123xYz789\nuser = app\n"
        XCTAssertEqual(scanned(ini), "[database]\nhost = db.example.com\npassword = redacted-1 ; old one\napi_key\t=\tredacted-2\nuser = app\n")
        XCTAssertEqual(scanned("[smtp]\r\nsmtp_password = two words here\r\nport = 25"),
                       "[smtp]\r\nsmtp_password = redacted-1\r\nport = 25", "the value runs to the end of the line")
        XCTAssertEqual(scanned("client_secret = \"quoted-value-1\" # note"), "client_secret = \"redacted-1\" # note")
    }

    // MARK: YAML

    func testYAMLOneTokenAndPhraseValues() {
        let yaml = """
        auth:
          token: abcdefgh12345678 expires soon
          password: hunter2 # rotated monthly
          secret: "quoted: value"
          api_key: null
          refresh_token: ~
          session: {ttl: 5}
        """
        XCTAssertEqual(scanned(yaml), """
        auth:
          token: redacted-1 expires soon
          password: redacted-2 # rotated monthly
          secret: "redacted-3"
          api_key: null
          refresh_token: ~
          session: {ttl: 5}
        """)
    }

    func testYAMLPhrasesRunToTheEndOfTheLine() {
        // A first word shorter than 8 bytes starts a phrase: the whole line is the value.
        // The whole phrase goes (its first word is short), not only its first 8 bytes.
        XCTAssertEqual(scanned("password: correct horse battery staple\nuser: x"), "password: redacted-1\nuser: x")
        XCTAssertEqual(scanned("passphrase: the same phrase for all # comment"), "passphrase: redacted-1 # comment")
    }

    func testYAMLListItemsAndNesting() {
        let yaml = "users:\n  - name: ann\n    password: pw-one-1\n  - secret: s-two-22\n    role: admin\n"
        XCTAssertEqual(scanned(yaml), "users:\n  - name: ann\n    password: redacted-1\n  - secret: redacted-2\n    role: admin\n")
    }

    // MARK: HTTP dumps

    func testHTTPDumpLinesKeepTheirScheme() {
        let dump = "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer abc.def.ghi123\r\nX-Api-Key: k-1234567890\r\nAccept: */*\r\n\r\n"
        XCTAssertEqual(scanned(dump),
                       "GET /v1/me HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer redacted-1\r\nX-Api-Key: redacted-2\r\nAccept: */*\r\n\r\n")
        XCTAssertEqual(scanned("Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==\n"), "Proxy-Authorization: Basic redacted-1\n")
        XCTAssertEqual(scanned("authorization: token ghx-not-a-format-123 extra"), "authorization: token redacted-1 extra")
        XCTAssertEqual(scanned("WWW-Authenticate: Bearer realm=\"api\""), "WWW-Authenticate: Bearer realm=\"api\"")
    }

    // MARK: JavaScript and GraphQL

    func testJavaScriptObjects() {
        let js = #"const cfg = { apiKey: "AbCdEf123456", region: "us-east-1", password: 'pw-1234', token: `t-${x}-99`, retries: 3 };"#
        XCTAssertEqual(scanned(js),
                       #"const cfg = { apiKey: "redacted-1", region: "us-east-1", password: 'redacted-2', token: `redacted-3`, retries: 3 };"#)
        XCTAssertEqual(scanned(#"init({'clientSecret': 'cs-777888999', debug: false})"#),
                       #"init({'clientSecret': 'redacted-1', debug: false})"#)
        XCTAssertEqual(scanned("window.__CONFIG__={sessionId:\"9f8e7d6c\",theme:\"dark\"}"),
                       "window.__CONFIG__={sessionId:\"redacted-1\",theme:\"dark\"}")
    }

    func testGraphQLArguments() {
        let query = #"mutation { login(username: "ann", password: "hunter2!") { token } }"#
        XCTAssertEqual(scanned(query), #"mutation { login(username: "person-1", password: "redacted-1") { token } }"#)
        let json = #"{"query": "mutation { setKey(apiKey: \"k_9f8e7d6c5b4a\", name: \"ci\") { id } }"}"#
        XCTAssertEqual(body(json), #"{"query": "mutation { setKey(apiKey: \"redacted-1\", name: \"ci\") { id } }"}"#)
    }

    // MARK: XML

    func testXMLElementsWithNamespacesAndCDATA() {
        let soap = "<soap:Envelope><soap:Body><auth:Login><auth:Username>ann</auth:Username><auth:Password>p@ss-w0rd</auth:Password></auth:Login></soap:Body></soap:Envelope>"
        XCTAssertEqual(scanned(soap),
                       "<soap:Envelope><soap:Body><auth:Login><auth:Username>person-1</auth:Username><auth:Password>redacted-1</auth:Password></auth:Login></soap:Body></soap:Envelope>")
        XCTAssertEqual(scanned("<password><![CDATA[s3cr3t<>&]]></password>"), "<password><![CDATA[redacted-1]]></password>")
        XCTAssertEqual(scanned("<wsse:Password Type=\"#PasswordText\">\n  pw-xml-99\n</wsse:Password>"),
                       "<wsse:Password Type=\"#PasswordText\">\n  redacted-1\n</wsse:Password>", "whitespace around the value kept")
        XCTAssertEqual(scanned("<apiKey owner=\"ann@corp.com\">k-abcdef123</apiKey>"),
                       "<apiKey owner=\"user1@example.com\">redacted-1</apiKey>", "the start tag's attributes are scanned")
        // Not secrets: innocent elements, empty ones, descriptions of a secret.
        for xml in ["<name>token</name>", "<password/>", "<password></password>", "<passwordPolicy>min 8</passwordPolicy>",
                    "<tokenType>bearer</tokenType>"] {
            XCTAssertEqual(scanned(xml), xml)
        }
    }

    func testXMLAttributes() {
        // (A `user` element is about a person: its `name` is theirs, as in a JSON `user` object.)
        XCTAssertEqual(scanned(#"<user name="ann" password="hunter2xyz" token='abc12345' role="admin"/>"#),
                       #"<user name="person-1" password="redacted-1" token='redacted-2' role="admin"/>"#)
        XCTAssertEqual(scanned(#"<connection host="db" secret="s-1" timeout="30">x</connection>"#),
                       #"<connection host="db" secret="redacted-1" timeout="30">x</connection>"#)
    }

    /// An element about an address, a person or a place gives its attributes and children the
    /// roles a JSON object under that name gives its members: `zip` in an `<Address>` is an
    /// address line, `lat` in a `<Location>` a coordinate; outside one they stay.
    func testXMLElementsWithAScope() {
        assertScans([
            (#"<ns:Address street="12 Main St" city="Portland" zip="97229" country="US"/>"#,
             #"<ns:Address street="redacted-1" city="Portland" zip="redacted-2" country="US"/>"#),
            ("<Address>\n  <Line1>12 Main St</Line1>\n  <Zip>97229</Zip>\n  <City>Portland</City>\n</Address>",
             "<Address>\n  <Line1>redacted-1</Line1>\n  <Zip>redacted-2</Zip>\n  <City>Portland</City>\n</Address>"),
            (#"<Customer name="Karl Lindqvist"><shippingAddress postalCode="97229"/><Zip>97229</Zip></Customer>"#,
             #"<Customer name="person-1"><shippingAddress postalCode="redacted-1"/><Zip>97229</Zip></Customer>"#),
            (#"<Location lat="51.50722" lng="-0.1275"/>"#, #"<Location lat="00.00000" lng="-0.0000"/>"#),
            ("<address>12 Main Street</address>", "<address>redacted-1</address>"),
            // Outside a scope, and an address element whose closing tag is missing.
            (#"<Item zip="97229" lat="51.5"/><Line1>Ground floor</Line1>"#, #"<Item zip="97229" lat="51.5"/><Line1>Ground floor</Line1>"#),
            ("<Address><Zip>97229</Zip>", "<Address><Zip>97229</Zip>"),
        ])
        // Scopes inside scopes are read to a fixed depth, so a deep nest costs no deep recursion.
        let deep = String(repeating: "<Address>", count: 5000) + "<Zip>97229</Zip>" + String(repeating: "</Address>", count: 5000)
        let out = scanned(deep)
        XCTAssertEqual(out, deep.replacingOccurrences(of: "<Zip>97229</Zip>", with: "<Zip>redacted-1</Zip>"),
                       "the innermost zip is an address line, and the rest stays")
    }

    /// A closing-tag search that found nothing is not read again by the next start tag of that
    /// name, but what lies past it still is: an element whose closing tag is farther than the
    /// first one's reach still gets its scope.
    func testClosingTagSearchesResumeWhereTheLastOneGaveUp() {
        let filler = String(repeating: "lorem ipsum ", count: 900)  // 10,800 bytes
        let cases: [(text: String, zipReplaced: Bool)] = [
            ("<Address><br/>" + filler + "<Address><br/>" + filler + "<Zip>97229</Zip></Address>", true),
            // Beyond every reach: no scope, nothing replaced.
            ("<Address><br/>" + filler + filler + "<Zip>97229</Zip></Address>", false),
            // Many unclosed start tags before a closed one.
            (String(repeating: "<Address>", count: 20_000) + "<Address><Zip>97229</Zip></Address>", true),
        ]
        for (index, c) in cases.enumerated() {
            let out = scanned(c.text)
            let expected = c.zipReplaced ? c.text.replacingOccurrences(of: "<Zip>97229</Zip>", with: "<Zip>redacted-1</Zip>") : c.text
            XCTAssert(out == expected, "case \(index): ends with \(out.suffix(60))")
        }
    }

    // MARK: HTML

    func testHTMLHiddenInputsAndMetaTags() {
        XCTAssertEqual(scanned(#"<form><input type="hidden" name="csrf_token" value="Zx9AbC123def456"></form>"#),
                       #"<form><input type="hidden" name="csrf_token" value="redacted-1"></form>"#)
        XCTAssertEqual(scanned(#"<meta name="csrf-token" content="Zx9AbC123def456">"#), #"<meta name="csrf-token" content="redacted-1">"#)
        XCTAssertEqual(scanned(#"<input value='tok-42-abcdef' id="authenticity_token" type=hidden />"#),
                       #"<input value='redacted-1' id="authenticity_token" type=hidden />"#, "value before the name")
        // Other attributes are scanned like any text.
        XCTAssertEqual(scanned(#"<input name="_csrf" value="v-1234567" data-owner="ann@corp.com" data-host="10.0.0.7">"#),
                       #"<input name="_csrf" value="redacted-1" data-owner="user1@example.com" data-host="192.0.2.1">"#)
        // Innocent inputs stay; their attributes are still scanned.
        XCTAssertEqual(scanned(#"<input name="q" value="search terms">"#), #"<input name="q" value="search terms">"#)
        XCTAssertEqual(scanned(#"<input name="email" value="ann@corp.com">"#), #"<input name="email" value="user1@example.com">"#)
        XCTAssertEqual(scanned(#"<meta name="viewport" content="width=device-width">"#), #"<meta name="viewport" content="width=device-width">"#)
        XCTAssertEqual(scanned(#"<input name="token_type" value="bearer">"#), #"<input name="token_type" value="bearer">"#)
    }

    /// Attribute names are read as HTML's tokenizer reads them, up to a space, '/', '=' or '>',
    /// quotes included: `x"value=abc` is the attribute `x"value`, not `value`, before and after a
    /// rule replaced text around it. Unquoted values, `/` and spaced-out attributes still work.
    func testHTMLAttributeNamesAreWholeNames() {
        let text = #"<input name=token "phone":41555=5"value=5>"#
        let once = scanned(text)
        XCTAssertEqual(once, #"<input name=token "phone":+12015550100"value=5>"#)
        XCTAssertEqual(scanned(once), once, "a second run changed it")
        XCTAssertEqual(scanned(#"<input name=token x"value=abc123def>"#), #"<input name=token x"value=abc123def>"#)
        XCTAssertEqual(scanned(#"<input name="api_key"/value="abc123def">"#), #"<input name="api_key"/value="redacted-1">"#)
        XCTAssertEqual(scanned("<input\n  name=api_key\n  value=abc123def\n>"), "<input\n  name=api_key\n  value=redacted-1\n>")
    }

    func testHTMLBodyOfAnEntry() {
        let html = #"<html><head><meta name="csrf-token" content="meta-tok-123456"></head><body><input type="hidden" name="csrf_token" value="meta-tok-123456"></body></html>"#
        let r = redacted([makeEntry(responseBody: ("text/html; charset=utf-8", html))])
        XCTAssertEqual(r.log.entries[0].response.content.text,
                       #"<html><head><meta name="csrf-token" content="redacted-1"></head><body><input type="hidden" name="csrf_token" value="redacted-1"></body></html>"#)
        XCTAssertEqual(r.report.counts[.secretAssignments]?[.body], 2)
    }

    // MARK: Versions

    func testVersionNamedValuesKeepDottedQuads() {
        XCTAssertEqual(body(#"{"firmwareVersion": "10.2.0.1", "app_version": "172.16.0.1", "host": "10.0.0.5"}"#),
                       #"{"firmwareVersion": "10.2.0.1", "app_version": "172.16.0.1", "host": "192.0.2.1"}"#)
        XCTAssertEqual(scanned("firmwareVersion=10.2.0.1 gateway=10.2.0.1"), "firmwareVersion=10.2.0.1 gateway=192.0.2.1")
        XCTAssertEqual(scanned("build: 192.168.1.1\nserver: 192.168.1.1"), "build: 192.168.1.1\nserver: 192.0.2.1")
        XCTAssertEqual(scanned("<fwVersion>10.0.0.1</fwVersion><ip>10.0.0.1</ip>"), "<fwVersion>10.0.0.1</fwVersion><ip>192.0.2.1</ip>")
        XCTAssertEqual(scanned("[device]\nos_version = 10.1.2.3\n"), "[device]\nos_version = 10.1.2.3\n")
        let r = redacted([makeEntry(url: "https://api.example.com/update?fw=10.0.0.1&via=10.0.0.1",
                                    requestHeaders: [("X-App-Version", "10.1.2.3"), ("X-Forwarded-For", "10.1.2.3")])])
        let request = r.log.entries[0].request
        XCTAssertEqual(request.url, "https://api.example.com/update?fw=10.0.0.1&via=192.0.2.1")
        XCTAssertEqual(request.headers.map(\.value), ["10.1.2.3", "192.0.2.2"])
        // Under a version name a secret is still a secret when a rule knows its shape.
        XCTAssertEqual(body(#"{"build": "AKIAIOSFODNN7EXAMPLE"}"#), #"{"build": "redacted-1"}"#)
    }
}
