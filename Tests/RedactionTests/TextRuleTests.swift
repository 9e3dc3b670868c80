import XCTest
import HAR
@testable import Redaction

/// Rules that apply anywhere in text: JWTs, bearer tokens, well-known key formats, PEM blocks,
/// emails, internal hosts and private IPs.
final class TextRuleTests: XCTestCase {
    // MARK: JWT

    func testJWTIsReplacedByPlaceholderJWTKeepingAlgAndTyp() throws {
        let jwt = makeJWT(header: #"{"typ":"JWT","alg":"RS256","kid":"key-2024"}"#,
                          payload: #"{"sub":"alice","email":"alice@corp.com","name":"Alice Liddell","iat":1700000000}"#)
        let engine = RedactionEngine()
        let out = scanned("got \(jwt) end", engine: engine)
        XCTAssertTrue(out.hasPrefix("got ") && out.hasSuffix(" end"), out)
        let placeholder = String(out.dropFirst(4).dropLast(4))
        let parts = placeholder.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        for part in parts { XCTAssertTrue(part.utf8.allSatisfy(Base64URL.isAlphabet), String(part)) }
        let header = try XCTUnwrap(jwtPart(placeholder, 0))
        XCTAssertEqual(header.map(\.key), ["alg", "typ"], "alg and typ kept (in that order), kid dropped")
        XCTAssertEqual(header.first { $0.key == "alg" }?.value.stringValue, "RS256")
        XCTAssertEqual(header.first { $0.key == "typ" }?.value.stringValue, "JWT")
        let payload = try XCTUnwrap(jwtPart(placeholder, 1))
        let payloadText = text(JSONWriter.serialize(.object(payload), pretty: false))
        for claim in ["alice", "Alice", "corp.com", "1700000000"] { XCTAssertFalse(payloadText.contains(claim), payloadText) }
        XCTAssertFalse(parts[2].contains("c2lnbmF0dXJl"), "the real signature is gone")
        XCTAssertEqual(engine.currentReport.counts[.jwt]?[.body], 1)
        // Deterministic: the same JWT gets the same placeholder, another JWT another one.
        XCTAssertEqual(scanned("again \(jwt)", engine: engine), "again \(placeholder)")
        let other = makeJWT(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"bob"}"#)
        let otherOut = scanned(other, engine: engine)
        XCTAssertNotEqual(otherOut, placeholder)
        XCTAssertEqual(jwtPart(otherOut, 0)?.map(\.key), ["alg"])
        // A placeholder JWT is left alone: redacting twice changes nothing.
        XCTAssertEqual(scanned(placeholder), placeholder)
    }

    func testJWTIsFoundByStructureInURLsAndHeaders() {
        let jwt = makeJWT(header: #"{"alg":"ES256"}"#, payload: #"{"sub":"42"}"#)
        let e = makeEntry(url: "https://api.example.com/verify/\(jwt)?x=1",
                          requestHeaders: [("X-Custom", "id=\(jwt)")])
        let r = redacted([e])
        XCTAssertFalse(text(r.bytes).contains(jwt))
        let replaced = r.log.entries[0].request.url.dropFirst("https://api.example.com/verify/".count).prefix { $0 != "?" }
        XCTAssertEqual(r.log.entries[0].request.headers[0].value, "id=" + replaced)
        XCTAssertEqual(r.report.counts[.jwt]?[.url], 1)
        XCTAssertEqual(r.report.counts[.jwt]?[.header], 1)
    }

    func testNotAJWTWhenHeaderHasNoAlgOrIsNotJSON() throws {
        let noAlg = makeJWT(header: #"{"kind":"x"}"#, payload: #"{"sub":"1"}"#)
        // The JWT rule alone (the high-entropy safety net would replace the JWT look-alike).
        XCTAssertEqual(scanned(noAlg, config: try configuration(rules: #"{"disable": ["high-entropy"]}"#)), noAlg)
        XCTAssertEqual(scanned("eyJub3QganNvbg.abc.def"), "eyJub3QganNvbg.abc.def")
        XCTAssertEqual(scanned("eyJhbGciOiJIUzI1NiJ9.only-two"), "eyJhbGciOiJIUzI1NiJ9.only-two")
        XCTAssertEqual(scanned("keyJhbGciOiJIUzI1NiJ9.a.b"), "keyJhbGciOiJIUzI1NiJ9.a.b", "must start at a boundary")
    }

    // MARK: Bearer

    func testBearerTokensInText() {
        XCTAssertEqual(scanned("curl -H 'Authorization: Bearer abcDEF123456_-.~+/=' x"),
                       "curl -H 'Authorization: Bearer redacted-1' x")
        XCTAssertEqual(scanned("bearer   zzzzzzzz9"), "bearer   redacted-1")
        XCTAssertEqual(scanned("Bearer short"), "Bearer short", "below 8 characters it is a word, not a token")
        XCTAssertEqual(scanned("unbearer abcdefghijk"), "unbearer abcdefghijk")
        XCTAssertEqual(scanned("Bearer"), "Bearer")
        XCTAssertEqual(scanned("Bearer "), "Bearer ")
        XCTAssertEqual(scanned("Bearer redacted-7"), "Bearer redacted-7")
    }

    // MARK: Well-known formats

    func testWellKnownSecretFormats() {
        let cases: [(String, RedactionRule)] = [
            ("AKIAIOSFODNN7EXAMPLE", .awsAccessKey),
            ("ASIAY34FZKBOKMUTVV7A", .awsAccessKey),
            ("ghp_" + String(repeating: "a1B2", count: 9), .githubToken),
            ("gho_" + String(repeating: "Z9y8", count: 9), .githubToken),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", .githubToken),
            ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp", .slackToken),
            ("xoxp-0000000000-abcdef", .slackToken),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", .stripeKey),
            ("rk_live_51H8xyzABCDEFGHIJ", .stripeKey),
            ("AIzaSyD-1234567890abcdefghijklmnopqrstu", .googleAPIKey),
        ]
        for (secret, rule) in cases {
            let engine = RedactionEngine()
            XCTAssertEqual(scanned("found \"\(secret)\"; other", engine: engine), "found \"redacted-1\"; other", secret)
            XCTAssertEqual(engine.currentReport.counts[rule]?[.body], 1, "\(secret) → \(rule)")
            XCTAssertEqual(scanned("key=\"\(secret)\"; other"), "key=\"redacted-1\"; other", secret)
            XCTAssertEqual(scanned(secret), "redacted-1", "alone: \(secret)")
        }
    }

    func testWellKnownFormatsNeedBoundariesAndExactShape() throws {
        // The format rules alone: the high-entropy safety net would take some of these look-alikes.
        let formatsOnly = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        for text in ["AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPLEX", "xAKIAIOSFODNN7EXAMPLE", "AKIAiosfodnn7example",
                     "ghp_tooShort123", "xghp_" + String(repeating: "a", count: 36), "xoxz-1234567890123",
                     "xoxb-short", "ask_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_short", "AIzaTooShort",
                     "AIzaSyD-1234567890abcdefghijklmnopqrstuv"] {
            XCTAssertEqual(scanned(text, config: formatsOnly), text)
        }
    }

    func testPEMPrivateKeyBlockIsReplacedWhole() {
        // BEGIN and END lines included: a PEM shape left behind still trips every secret scanner.
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n-----END RSA PRIVATE KEY-----"
        let out = scanned("key:\n" + pem + "\ndone")
        XCTAssertEqual(out, "key:\nredacted-1\ndone")
        XCTAssertEqual(scanned(out), out, "idempotent")
        let generic = "-----BEGIN PRIVATE KEY-----\r\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\r\n-----END PRIVATE KEY-----\r\n"
        XCTAssertEqual(scanned(generic), "redacted-1\r\n")
        let openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
        XCTAssertEqual(scanned("k=" + openssh), "k=redacted-1")
        let cert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"
        XCTAssertEqual(scanned(cert), cert, "certificates are public")
        // Cut off before its END line: everything from BEGIN goes.
        XCTAssertEqual(scanned("x -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIr"), "x redacted-1")
        // Inside JSON the newlines are escapes; the block is found in the decoded string.
        let json2 = #"{"pem": "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2Vw\n-----END PRIVATE KEY-----\n"}"#
        XCTAssertEqual(body(json2), #"{"pem": "redacted-1\n"}"#)
    }

    // MARK: Emails

    func testEmailsBecomeNumberedExampleAddressesInOrder() {
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("from ann@corp.com to Bob.Smith+tag@mail.example.org, cc ANN@CORP.COM", engine: engine),
                       "from user1@example.com to user2@example.com, cc user1@example.com")
        XCTAssertEqual(scanned("later: bob.smith+tag@mail.example.org and zed@zed.io", engine: engine),
                       "later: user2@example.com and user3@example.com")
        XCTAssertEqual(engine.currentReport.counts[.email]?[.body], 5)
    }

    func testEmailsAcrossLocationsInOneFile() {
        let e0 = makeEntry(index: 0, url: "https://api.example.com/users/carol@corp.com",
                           responseBody: ("application/json", #"{"owner":"dave@corp.com","cc":["carol@corp.com"]}"#))
        let e1 = makeEntry(index: 1, url: "https://api.example.com/?who=dave%40corp.com",
                           requestHeaders: [("From", "erin@corp.com")])
        let r = redacted([e0, e1])
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/users/user1@example.com")
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"owner":"user2@example.com","cc":["user1@example.com"]}"#)
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/?who=user2@example.com")
        XCTAssertEqual(r.log.entries[1].request.queryString[0].value, "user2@example.com")
        XCTAssertEqual(header(r.log.entries[1].request.headers, "From"), "user3@example.com")
    }

    func testNotEmails() {
        for text in ["a@b", "@corp.com", "x@localhost", "name@123.456", "foo@bar.c", "user1@example.com", "@@@"] {
            XCTAssertEqual(scanned(text), text)
        }
        XCTAssertEqual(scanned("npm i @scope/pkg@1.2.3"), "npm i @scope/pkg@1.2.3")
    }

    // MARK: Internal hosts and IPs

    func testInternalHostsUnderDefaultSuffixes() {
        let engine = RedactionEngine()
        let hosts = ["api.internal", "git.corp", "printer.local", "nas.lan", "wiki.intranet", "box.localdomain"]
        for (i, host) in hosts.enumerated() {
            XCTAssertEqual(scanned("https://\(host)/x", engine: engine), "https://internal-\(i + 1).example.invalid/x")
        }
        XCTAssertEqual(scanned("API.Internal:8443", engine: engine), "internal-1.example.invalid:8443", "case-insensitive")
        XCTAssertEqual(scanned("deep.a-b.git.corp.", engine: engine), "internal-7.example.invalid.")
    }

    func testNotInternalHosts() {
        for text in ["api.corp.example.com", "www.corporate.com", "my.localhost", "window.location", "v1.lane",
                     ".corp alone", "x.internals", "intranet", "the corp."] {
            XCTAssertEqual(scanned(text), text)
        }
        // A JSON escape before the suffix stands for one byte, no part of a name.
        XCTAssertEqual(scanned(#"x\u0005.corp"#), #"x\u0005.corp"#)
        XCTAssertEqual(scanned(#"x\napi.corp"#), #"x\ninternal-1.example.invalid"#)
        XCTAssertEqual(scanned(#"x\\api.corp"#), #"x\\internal-1.example.invalid"#, "an escaped backslash escapes nothing")
    }

    func testExtraInternalSuffixesFromRulesAndOption() throws {
        var config = try configuration(rules: #"{"internalSuffixes": ["mycorp.net", ".svc.cluster"]}"#)
        config.internalSuffixes.append(".priv")
        XCTAssertEqual(scanned("a.mycorp.net b.mycorp.network c.ns.svc.cluster d.priv e.mycorp.net.", config: config),
                       "internal-1.example.invalid b.mycorp.network internal-2.example.invalid internal-3.example.invalid internal-4.example.invalid.")
    }

    func testInternalHostEverywhereAndPublicTargetKept() {
        let e = makeEntry(url: "https://billing.corp:8443/api?cb=https%3A%2F%2Fauth.corp%2Fdone",
                          requestHeaders: [("Host", "billing.corp:8443"), ("X-Forwarded-Host", "api.example.com")],
                          responseBody: ("application/json", #"{"upstream":"auth.corp","public":"api.example.com"}"#),
                          serverIPAddress: "10.20.30.40")
        let r = redacted([e])
        let entry = r.log.entries[0]
        XCTAssertEqual(entry.request.url, "https://internal-1.example.invalid:8443/api?cb=https://internal-2.example.invalid/done")
        XCTAssertEqual(header(entry.request.headers, "Host"), "internal-1.example.invalid:8443")
        XCTAssertEqual(header(entry.request.headers, "X-Forwarded-Host"), "api.example.com")
        XCTAssertEqual(entry.response.content.text, #"{"upstream":"internal-2.example.invalid","public":"api.example.com"}"#)
        XCTAssertEqual(entry.serverIPAddress, "192.0.2.1")
        let pub = redacted([makeEntry(url: "https://api.example.com/v1", requestHeaders: [("Host", "api.example.com")])])
        XCTAssertEqual(pub.log.entries[0].request.url, "https://api.example.com/v1")
        XCTAssertEqual(pub.log.entries[0].serverIPAddress, "93.184.215.14")
    }

    func testPrivateIPv4() {
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("10.0.0.1 172.16.5.4 172.31.255.255 192.168.1.10 169.254.169.254 10.0.0.1", engine: engine),
                       "192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4 192.0.2.5 192.0.2.1")
        for text in ["172.32.0.1", "172.15.0.1", "8.8.8.8", "127.0.0.1", "192.169.0.1", "10.0.0", "10.0.0.256",
                     "110.0.0.1", "10.0.0.1.5", "v10.0.0.1", "010.0.0.1", "1.10.0.0.1"] {
            XCTAssertEqual(scanned(text), text)
        }
        XCTAssertEqual(scanned("http://10.1.2.3:8080/x"), "http://192.0.2.1:8080/x")
    }

    func testPrivateIPv6() {
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("fd12:3456:789a::1 [fe80::1ff:fe23:4567:890a%eth0]:80 FC00::2 fd12:3456:789a::1", engine: engine),
                       "2001:db8::1 [2001:db8::2]:80 2001:db8::3 2001:db8::1")
        for text in ["2001:4860:4860::8888", "::1", "fe80", "feed::beef:cafe:babe:dead:beef:f00d:1:2", "fe:80", "fec0:::1"] {
            XCTAssertEqual(scanned(text), text)
        }
    }

    func testPlaceholdersAreNotRedactedAgain() {
        let already = "user1@example.com internal-3.example.invalid 192.0.2.4 2001:db8::5 Bearer redacted-9 token=redacted-2 [REDACTED]"
        XCTAssertEqual(scanned(already), already)
    }

    // MARK: User patterns and allow-list

    func testUserPatternsAndAllowList() throws {
        let config = try configuration(rules: #"""
        {"patterns": [{"name": "order-id", "regex": "ORD-[0-9]{8}"}],
         "allow": ["demo-public-token", "ORD-00000000", "support@corp.com"]}
        """#)
        let engine = RedactionEngine(config: config)
        XCTAssertEqual(scanned("order ORD-12345678 and ORD-00000000, ORD-12345678", engine: engine),
                       "order redacted-1 and ORD-00000000, redacted-1")
        XCTAssertEqual(engine.currentReport.counts[RedactionRule("order-id")]?[.body], 2)
        XCTAssertEqual(scanned("token=demo-public-token&x=1 mail support@corp.com", engine: engine),
                       "token=demo-public-token&x=1 mail support@corp.com")
        let r = redacted([makeEntry(url: "https://api.example.com/?api_key=demo-public-token",
                                    requestHeaders: [("X-Api-Key", "demo-public-token")])], config: config)
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/?api_key=demo-public-token")
        XCTAssertEqual(r.log.entries[0].request.headers[0].value, "demo-public-token")
        XCTAssertEqual(r.report.total, 0)
    }

    func testDisabledRulesByName() throws {
        let input = "mail ann@corp.com key AKIAIOSFODNN7EXAMPLE host db.corp ip 10.0.0.1"
        XCTAssertEqual(scanned(input, config: try configuration(rules: #"{"disable": ["email", "internal-host"]}"#)),
                       "mail ann@corp.com key redacted-1 host db.corp ip 192.0.2.1")
        XCTAssertEqual(scanned(input, config: try configuration(rules: #"{"disable": ["aws-access-key", "private-ip", "high-entropy"]}"#)),
                       "mail user1@example.com key AKIAIOSFODNN7EXAMPLE host internal-1.example.invalid ip 10.0.0.1")
        let noJSON = try configuration(rules: #"{"disable": ["json-keys"]}"#)
        XCTAssertEqual(body(#"{"password": "hunter2"}"#, config: noJSON), #"{"password": "hunter2"}"#)
        let noAuth = try configuration(rules: #"{"disable": ["authorization-header", "bearer-token"]}"#)
        let r = redacted([makeEntry(requestHeaders: [("Authorization", "Bearer abcdefghijkl")])], config: noAuth)
        XCTAssertEqual(r.log.entries[0].request.headers[0].value, "Bearer abcdefghijkl")
    }
}
