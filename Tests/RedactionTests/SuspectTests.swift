import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// `SuspectScanner`, the independent net: credential prefixes anywhere and high-entropy values
/// next to a secret word, but not random-looking data with no secret word near it, nor
/// placeholders. As the `high-entropy` rule it redacts; in `redact --check` it reports suspects.
final class SuspectTests: XCTestCase {
    /// The values the scanner flags in `text`.
    private func suspects(_ text: String) -> [String] {
        var memo = NameMemo(NameMatcher())
        var copy = text
        return copy.withUTF8 { p in
            SuspectScanner.scan(p, memo: &memo).map { String(decoding: UnsafeBufferPointer(rebasing: p[$0]), as: UTF8.self) }
        }
    }

    // MARK: Flagged

    func testHighEntropyValuesNextToASecretWord() {
        let cases: [(String, String)] = [
            ("my api key is 8fJ2kqZ0x7Lm", "8fJ2kqZ0x7Lm"),
            ("token 9c1fA7b2E4d6F8a0", "9c1fA7b2E4d6F8a0"),
            ("password: Xk29vLq8Zm", "Xk29vLq8Zm"),
            ("secret\t=\t'Lm4Np8Qr2St6'", "Lm4Np8Qr2St6"),
            ("Authorization=Bearer Qw3rTy7uI9oP", "Qw3rTy7uI9oP"),
            (#"{"note": "the client_secret is aZ3xK9pQ2wL7"}"#, "aZ3xK9pQ2wL7"),
            ("x-api-key: 4fG7hJ2kL9mN3pQ8/rS+tV==", "4fG7hJ2kL9mN3pQ8/rS+tV=="),
        ]
        for (text, value) in cases { XCTAssertEqual(suspects(text), [value], text) }
    }

    /// JSON escapes are not part of a value: `\u0002password` is a control character and a word,
    /// and a value after `\n` is the value without the `n`. An escaped line break ends the field
    /// the look-back reads, as a real one does in the decoded string.
    func testJSONEscapesAreNoPartOfAValue() {
        XCTAssertEqual(suspects(#"{\"password\u0002password=x\":1}"#), [])
        XCTAssertEqual(suspects(#"token:\t9c1fA7b2E4d6F8a0"#), ["9c1fA7b2E4d6F8a0"])
        XCTAssertEqual(suspects(#"token:\n9c1fA7b2E4d6F8a0"#), [])
        XCTAssertEqual(suspects("token:\n9c1fA7b2E4d6F8a0"), [])
        XCTAssertEqual(suspects(#"token:\u00e99c1fA7b2E4d6F8a0"#), ["9c1fA7b2E4d6F8a0"])
    }

    /// A run written with `%XX` escapes is judged by its decoded bytes, as a first run judges a
    /// percent-encoded value it decoded to scan on its own: length, letters and digits, entropy
    /// and prefixes. Its range is still the raw run.
    func testPercentEscapesCountAsTheBytesTheyStandFor() {
        XCTAssertEqual(suspects("pass r=jane%25te-%7Bx"), [], "`jane%te-`: 8 bytes and no digit")
        XCTAssertEqual(suspects("token aB3dE5gH7jK9mN%2B1pQ"), ["aB3dE5gH7jK9mN%2B1pQ"])
        XCTAssertEqual(suspects("sk-%41%42cdefghijklmnop12"), ["sk-%41%42cdefghijklmnop12"], "sk-ABcd...: a prefix decoded")
        XCTAssertEqual(suspects("token ab%31%32%33%34%35%36"), [], "ab123456: 8 bytes")
    }

    /// A binary body's placeholder, a run of `*`s as long as the value it replaced, ends the
    /// look-back: the value may have been several words (`1<TAB>3`), which a first run counted.
    func testABinaryPlaceholderEndsTheLookBack() {
        XCTAssertEqual(suspects(#""cctoken":1\#t3"C<cr0n3I9Plt"#), [], "C, 3, 1: no secret word")
        XCTAssertEqual(suspects(#""cctoken":***"C<cr0n3I9Plt"#), [], "C, then the placeholder")
        XCTAssertEqual(suspects(#""cctoken":1"C<cr0n3I9Plt"#), ["cr0n3I9Plt"], "C, 1, cctoken")
    }

    func testCredentialPrefixesAnywhere() {
        let jwt = makeJWT(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"42"}"#)
        let cases: [(String, [String])] = [
            ("see ghp_ABCDEFGHIJKLMNOPQRST123 here", ["ghp_ABCDEFGHIJKLMNOPQRST123"]),
            ("id=AKIAIOSFODNN7EXAMPLE&x=1", ["AKIAIOSFODNN7EXAMPLE"]),
            ("xoxb-1234567890-abcdef", ["xoxb-1234567890-abcdef"]),
            ("(sk-proj-abcdefghijklmnop1)", ["sk-proj-abcdefghijklmnop1"]),
            ("jwt: \(jwt) end", [jwt]),
        ]
        for (text, values) in cases { XCTAssertEqual(suspects(text), values, text) }
        // The block ends at its END line, whatever its label.
        for label in ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"] {
            let block = "-----BEGIN \(label)-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50\n-----END \(label)-----"
            // The block alone, for every label: it ends at its END line, not at the end of the text.
            XCTAssertEqual(suspects("k " + block + "\nafter: text"), [block], label)
        }
        // A prefix with a tail of plain lowercase letters is a word.
        XCTAssertEqual(suspects("see ghp_abcdefghijklmnopqrstuv here"), [])
        XCTAssertEqual(suspects("ghp_ABC1"), [], "too short")
    }

    /// A value after a suspect value in the same field goes with it: a later run reads the first
    /// one's placeholder and the secret word before it, so the first run must not read the first
    /// value's random bytes as the second one's name. A field boundary ends the field.
    func testAValueAfterASuspectInTheSameFieldIsSuspect() {
        XCTAssertEqual(suspects("s_token: 5N_XgL0n3I9Pw5N_Xg x\u{3}L0n3I9P FUP0THsR8ter22"),
                       ["5N_XgL0n3I9Pw5N_Xg", "FUP0THsR8ter22"])
        XCTAssertEqual(suspects("s_token: 5N_XgL0n3I9Pw5N_Xg, build FUP0THsR8ter22"), ["5N_XgL0n3I9Pw5N_Xg"])
        // A value is one word of the look-back, however many identifier words it holds.
        XCTAssertEqual(suspects("token:1111111115jane%40cnameW Z 1115jane%40cnameW"), ["1115jane%40cnameW"])
        XCTAssertEqual(suspects("token:0 Z 1115jane%40cnameW"), ["1115jane%40cnameW"])
        // A binary body's star placeholder ends the look-back (it stands for a value of any
        // number of words): the words after it decide.
        XCTAssertEqual(suspects(#"access_token: "*******"><sen value="c5f0cr0n3I9Paspsessionid""#), [])
        XCTAssertEqual(suspects(#"access_token: "*******"><value="c5f0cr0n3I9Paspsessionid""#), [])
        XCTAssertEqual(suspects(#"x: "*******"><token="c5f0cr0n3I9Paspsessionid""#), ["c5f0cr0n3I9Paspsessionid"])
        XCTAssertEqual(suspects("s_token: 5N_XgL0n3I9Pw5N_Xg and then a long stretch of plain words that goes on and on FUP0THsR8ter22"),
                       ["5N_XgL0n3I9Pw5N_Xg"], "beyond the look-back")
    }

    // MARK: Not flagged

    func testRandomLookingDataWithoutASecretWordNearby() {
        let texts = [
            "request 550e8400-e29b-41d4-a716-446655440000 done",
            #"<script src="https://cdn.example.com/lib.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC" crossorigin="anonymous"></script>"#,
            #"etag: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855""#,
            "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 by ann",
            "my token was rotated yesterday 8fJ2kqZ0x7Lm",
            "token, and later on 8fJ2kqZ0x7Lm",
            #"{"token": "ok", "trace": "8fJ2kqZ0x7Lm"}"#,
            "build 7Gh3Kl9Qw2Zx4Vb8",
        ]
        for text in texts { XCTAssertEqual(suspects(text), [], text) }
    }

    func testWordsAndLowEntropyValuesAfterASecretWord() {
        for text in ["password hunter2hunter2", "token expires 2024-01-15", "secret is aaaaaaaa11111111", "password: correcthorse"] {
            XCTAssertEqual(suspects(text), [], text)
        }
    }

    func testPlaceholdersAreNotSuspects() {
        let placeholderJWT = JWTShape.placeholder(header: [(key: "alg", value: .string("HS256"))], number: 3)
        for text in ["token redacted-12", "api_key: redacted-3x9", "token \(placeholderJWT)", "password redacted-1*****",
                     "token REDACTED-0001", "secret ************", "api_key=user1%40example.com.", "bearer \(placeholderJWT)**"] {
            XCTAssertEqual(suspects(text), [], text)
        }
    }

    // MARK: As a rule

    func testHighEntropyRuleRedactsWhatTheOtherRulesMiss() throws {
        let engine = RedactionEngine()
        XCTAssertEqual(scanned("my api key is 8fJ2kqZ0x7Lm, thanks", engine: engine), "my api key is redacted-1, thanks")
        XCTAssertEqual(engine.currentReport.counts[.highEntropy]?[.body], 1)
        let off = try configuration(rules: #"{"disable": ["high-entropy"]}"#)
        XCTAssertEqual(scanned("my api key is 8fJ2kqZ0x7Lm, thanks", config: off), "my api key is 8fJ2kqZ0x7Lm, thanks")
        // A precise rule that matches the same bytes is the one counted.
        let precise = RedactionEngine()
        XCTAssertEqual(scanned("aws key AKIAIOSFODNN7EXAMPLE", engine: precise), "aws key redacted-1")
        XCTAssertEqual(precise.currentReport.counts[.awsAccessKey]?[.body], 1)
        XCTAssertNil(precise.currentReport.counts[.highEntropy])
    }

    // MARK: redact --check

    func testCheckReportsASuspectWhenTheRulesAreOff() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy", "aws-access-key"]}"#)
        let log = makeLog([makeEntry(requestHeaders: [("X-Note", "AKIAIOSFODNN7EXAMPLE")],
                                     responseBody: ("application/json", #"{"note": "key AKIAI44QH8DHBEXAMPLE"}"#))])
        let all = findings(log, config: config)
        XCTAssertTrue(all.allSatisfy(\.isSuspect))
        // The check's second reader finds the keys by their format too, whatever the rules say.
        XCTAssertEqual(all.filter { $0.rule == SecondOpinion.formatRule }.map(\.path),
                       ["log.entries[0].request.headers[0]", "log.entries[0].response.content.text.note"])
        let found = all.filter { $0.rule == SuspectCheck.rule }
        XCTAssertEqual(found.count, 2, "\(found)")
        XCTAssertEqual(found.map(\.location), [.header, .body])
        XCTAssertEqual(found.first?.path, "log.entries[0].request.headers[0].value")
        XCTAssertEqual(found.first?.preview, "AK… (20 chars)")
        for finding in all { XCTAssertFalse(finding.preview.contains("IOSFODNN") || finding.preview.contains("44QH8DHB")) }
        // The same value allowed by the rules file is no suspect.
        let allowed = try configuration(rules: #"{"disable": ["high-entropy", "aws-access-key"], "allow": ["AKIAIOSFODNN7EXAMPLE", "AKIAI44QH8DHBEXAMPLE"]}"#)
        XCTAssertEqual(findings(log, config: allowed), [])
    }

    func testCheckFindsSuspectsInBinaryBodies() throws {
        let config = try configuration(rules: #"{"disable": ["high-entropy", "github-token"]}"#)
        let bytes: [UInt8] = [0x00, 0xFF] + Array("ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8) + [0x01]
        var e = makeEntry()
        e.response.content = HARContent(size: bytes.count, mimeType: "application/octet-stream", text: Base64.encode(bytes), encoding: "base64")
        let found = findings(makeLog([e]), config: config)
        XCTAssertEqual(found.map(\.isSuspect), [true])
        XCTAssertEqual(found.first?.path, "log.entries[0].response.content.text")
    }

    func testWithDefaultsTheRedactedOutputHasNoFindings() {
        var entries = richLog().entries
        entries.append(makeEntry(index: 5, url: "https://api.example.com/?q=my%20api%20key%20is%208fJ2kqZ0x7Lm",
                                 requestHeaders: [("X-Note", "AKIAIOSFODNN7EXAMPLE ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")],
                                 responseBody: ("text/plain", "token 9c1fA7b2E4d6F8a0\nsk-proj-abcdefghijklmnop1")))
        let log = makeLog(entries)
        let before = findings(log)
        XCTAssertFalse(before.isEmpty)
        XCTAssertTrue(before.allSatisfy { !$0.isSuspect }, "\(before.filter(\.isSuspect))")
        XCTAssertEqual(findings(redacted(log).log), [])
    }
}
