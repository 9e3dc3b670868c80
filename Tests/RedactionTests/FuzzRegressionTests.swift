import Foundation
import HAR
@testable import Redaction
import XCTest

/// Inputs `scripts/fuzz` found (Fuzz/redaction.swift): each is redacted as the harness does (the
/// same `FuzzInput.log`), and the output must be a fixed point.
final class FuzzRegressionTests: XCTestCase {
    func assertFixedPoint(_ base64: String, absent: [String] = [], present: [String] = [],
                          file: StaticString = #filePath, line: UInt = #line) {
        let input = [UInt8](Data(base64Encoded: base64)!)
        // One engine for both runs, as the harness keeps one for every input: what an engine
        // learns from one log must not change what it does to the next.
        let engine = RedactionEngine()
        var first = FuzzInput.log(input)
        engine.redact(&first)
        var second = first
        engine.redact(&second)
        let a = String(decoding: first.serialize(pretty: true), as: UTF8.self)
        let b = String(decoding: second.serialize(pretty: true), as: UTF8.self)
        for secret in absent { XCTAssertFalse(a.contains(secret), "\(secret) survived the first run", file: file, line: line) }
        for kept in present { XCTAssertTrue(a.contains(kept), "\(kept) was changed", file: file, line: line) }
        if a != b {
            let la = a.split(separator: "\n"), lb = b.split(separator: "\n")
            let diff = zip(la, lb).filter { $0 != $1 }.prefix(4).map { "- \($0)\n+ \($1)" }.joined(separator: "\n")
            XCTFail("redacting the output again changed it:\n\(diff)", file: file, line: line)
        }
    }

    func testFormBodyWithControlBytesAndEncodedEmail() {
        // `jane@corp.examplne@corp.example.org`: the first run replaces the first address; the
        // placeholder it leaves must not make `example.com@corp.example.org` an address next time.
        assertFixedPoint("AnBhc3MPDw8PDw8PDw8PDw8PDw8PDw8PDw8PYQ8PDw8PDw8P/////////////////////////////////////////////////////wJwYepzc3dvNjEYAQAAAAkAAGNvcnAuZXg9aHVudGlsZXIyJnVzZXI9amFuZSU0MGNvcnAuZXhhbXBsbmUlNDBjb3JwLmV4YW1wbGUub3JnAXg9ZS5vcv//////////////AAAAAAAAAAT/////////ZwF4PTEBa2V5OiFBQU3/OQ==")
    }

    func testJSONBodyWithAnEscapeInsideAJWT() {
        // The body is not JSON (`\0` is no JSON escape), so the lenient path runs: it must still
        // redact the JSON inside the "nested" string and keep the version under "version".
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjogImV5SmhiR2NpT2lKSVV6STFOaUo5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzVOWlhnXDBuM0k5UGxGVVAwVEhzUjhVIiwgImVtYSlsIjogImphbmVAY29ycC5leGFtcGxlLm9yZyIsICJwaG9uZSI6ICIrMSA0MTUgNTU1IDAxMDAiLCAiY2FyZCI6ICI0MTExIDExMTEgMTExMSAxMTExIiwgIm5lc3RlZCI6ICJ7XCJwYXNzd29yZFwiOlwiaHVudGVyMjJcIn0iLCAidmVyc2lvbiI6ICIxMC40LjEuNyJ9AXRva2VuPWFiYzEyM2RlZjQ1NmdoaSZwYWdlPTImYXBpX2tleT1zay1wcm9qLUFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaMDEyMzQ1AUJlYXJlciBhYmMuZGVmLmdoaQ==",
                         absent: ["hunter22", "jane@corp"], present: ["10.4.1.7"])
    }

    func testBinaryBodyWithAJWTFollowedByATilde() {
        assertFixedPoint("DwoQZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4SW4wLnNpZzEyM340NTc4EgNhYmMBAQ==",
                         absent: ["eyJzdWIiOiIxIn0"])
    }

    /// `key: <run>` with `password=huntS` inside the run: the first run replaces the password; the
    /// placeholder's digit must not make the run look like a token under the bare `key` next time.
    func testAssignmentsInAHeaderWithBinaryNoise() {
        assertFixedPoint("BGRh/////////////////////3RhOiB0b2tlbiI6InRvay0xMjM0NTY3ODkwYWIAAAAAAAAAB2NkZWYifQoK////AAJwYXNzd29yZD1odW50UwoQbXlKaGJHY2lPrWhiVf///////wAWaTcN////4ODg4ODg4ODg4ODg4P////8DLwoKMThmMzQxNQoQYQEBYmMBcmcBeD0xAWtleTogQUtJWEFNUExFZO11bHRpcGGcdP///////wACcGFzc3dvcmQ9aHVudFMKEG15SmhiR2NpT61oYlX///////8AFmk3Df///+Dg4ODg4ODg4ODg4OD/////Ay8KCjE4ZjM0MTUKEGEBAWJjAXJnAXg9MQFrZXk6IEFLSVhBTVBMRQ==")
    }

    /// A binary body: `password=hunter2e%40corp...` became `password=user1@example.com****` (the
    /// value is an address, fitted to its length); the padded address is a placeholder too.
    func testSameLengthEmailPlaceholderUnderASecretName() {
        assertFixedPoint("DwoQZXlKaGIKAAAAR2NpT3pJZSU0MGNvcnAuZXhhbXBON0VYaUpVSTBOaUo5LmV5SnpkV0lpT2lJeEluNS5zaWcxMjM0NTY3OBICcGFzc3dvcmQ9aHVudGVyMmUlNDBjb3JwLmV4YW1wtTdFWGlKVUkwTmlKOS5leUp6ZFdJaU9pSXhJbjUuc2lnMTIzNDU2N2E6IHsidG9rZW4iOiJhYmNkZQIAAAB1bnQ=", absent: ["hunter2e"])
    }

    /// `...er=jane%40corpx.ep@ele.or` in a binary body: the first run replaces the address before the
    /// second '@'; `example.com@ele.or` after it is no address the second time either.
    func testChainedAddressAfterAnEncodedOne() {
        assertFixedPoint("DwoQc3dvcmQ9aHVudGVyMiZ1c2VyPWphbmUlNDBjb0l4MG5JLnNpZzEyMzXMNzY4EgJwYXNzd29yXWQ9aHVudGVyztmKiGVyPWphbmUlNDBjb3JweC5lcEBlbGUub3IDZwF4PTEBa2V5OiBBS0lBbXBsZS5vcgNnAXg9MQFrZXk6AQFF")
    }

    /// `"ac\fcess_token": "eyJ...jVm, "version": "10.4.1.7"`: the quoted value ends in ", "; the
    /// separator stays, so `version` is still a name (and its dotted quad a version) next time.
    func testQuotedAssignmentValueKeepsItsTrailingSeparator() {
        assertFixedPoint("ADB7ImFjDGNlc3NfdG9rZW4iOiAiZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4TWpNMC1wcm9qLUFCTlRZM09Ea3dJbjAuZG96amdOcnlQNEozalZtLCAidmVyc2lvbiI6ICIxMC40LjEuNyJ9AXRva2VuPWFiYzEyM2RlZjQ1NmdoaSZwYWdlPTImYXBpX2tleT1zay1wcm9qLUFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaMDEyMzQ1AUJlYXJlciBhYmMuZGVmLmdoaQ==", present: ["10.4.1.7"])
    }

    /// `token=abc061def456ghi#page=2`: the first run replaces the value with the random-looking
    /// run it belongs to and leaves `token=redacted-1=2`; the placeholder is the value next time.
    func testPlaceholderValueFollowedByTheRestOfARun() {
        assertFixedPoint("BTxpbnB1dCB0cGU9eSJoaWRkZW8iIGxhbWU9AAAAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAOyAiY3NyZl90b2tlbiIgdmFsdWU9ImM1ZjBhOGUyYjdkOTRlMWZhMyI+PHNjcmlwdD52YXIgYzkuZXlKemRXSWlPaUl4TWpNME5UWTNPRGt3SW4wLmRvempnTnJ5UDRKM2pWbSwgInZlcnNpb24iOiAiMTAuNP///wkuMS43J30BdG9rZW49YWJjMDYxZGVmNDU2Z2hpI3BhZ2U9MiZhcGlfa2V5PXNrLXByb2otQUJDRURGR0hJSktMTU5PUFFSra1VVldYZmc9eyJhcGlzdHUifTwvc2NyaXB0PgEB", absent: ["abc061def456ghi"])
    }

    /// An HTML body: a hidden `csrf_token` input and an inline `apiKey` split by control bytes.
    func testHiddenInputAndInlineKeyWithControlBytes() {
        assertFixedPoint("BTxpbnB1dCB0cGU9eSJoaWRkZW8iIGw9ImM1ZjBhOGUyYjdkOTQJAGZhMyI+PHNjcmlwdD52YXJgY2ZnPXs+dmFyIGNmZz17InQ+AWFwaUtleSI6IkFJemFTeUEtMTIzNDU2Nzg5MGFiY2QBZWZnaGlqa2xtbm9wcSIFPGlucHV0IGFwaXN0dSJ9PC9zY3JpcHR5cGVLZT0iaGlkZGVuIiBuYW1lPSJjc3JmX3Rva2VuIiB2YWx1ZT0iYzVmMGE4ZTJiN2Q5NGUxZmEzIj48c2NyaXB0PnZhciBjZmc9eyJ0PgFhcGlLZXkiOiJBSXphU3lBLTEyMzQ1Njc4OTBhYmNkAWVmZ2hpamtsbW5vcHFyc3R1In08L3NjcmlwdD4BAQ==",
                         absent: ["c5f0a8e2b7d94e1fa3"])
    }

    /// A multipart part (`name="api_token"`) whose value runs into JSON-like text with NULs.
    func testMultipartTokenRunningIntoBrokenJSON() {
        assertFixedPoint("Ay0gbmFtZT0iYXBpX3Rva2VuIg0KDQpzZWNyZXQtdG9rZW5hY2Nlc/pzX3Rva2VuIjogImV5SmhiR2NpT2lKSVV6STFOaUo5LmV5SgZ0LXRva2VuYWNjZXP6c190b2tlbiI6ICJleUpoYkdjaU9pSklVekkxTmlKOS5leUoGZFdJaU9pSXhNak0wTlRZM09EpHdJbjAuZG96amdOcnlQNEozalZtLCAidmVycwB7ImFjY2VzcwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABkV0lpT2lJeE1qTTBOVFkzT0Skd0luMC5kb3pqZ05yeVA0SjNqVm0sICJ2ZXJzAHsiYWNjZXNzAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAGlvbiI6ICIxNC4AAAAANAAuLXZhbHVlLTEyMw0KLS1YeVotLQ0iaGlkZHUifWJvdW4=")
    }

    /// A JSON-like body with NULs and a nested `{\"password\"...}` string that is cut short.
    func testBrokenJSONWithANestedPasswordAndNULs() {
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjogImV5SmhiR2NpT2hKSVV6STFOaUo5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzVOX1hnTDBuM0k5UGxGVVAwVEhzWjhVIiwgImVtYWlsIjogImphbmUAAAAJcC5leGFtcGxlLm9yZyIsICJwaG9uZSI6ICIrMSA0MTUgNTU1IDAxMGVkIjogIntcInBhc3N3b3JkAnBhc3N3b3JkPWh1XCI6XCJodW50ZXIyMlwifSIsICJ2ZXJzaW9uIjogIjEwLjQu//8AAAAE//////8xLjcifQEKQ29udGVudC1EaXNwb3NpdGlvbjoiZm9ybS1kYXRhOyBuYW1lIj1hcGlfdG9rZW4MDG50ZQxyDA==")
    }

    func testQuotedAssignmentKeepsTheSeparatorBeforeTheNextName() {
        // `csrf_tokame="...yP4J3jVm, "version": "10.4.1.7"`: the quoted value ends at the quote
        // that opens "version"; replacing its trailing ", " too left `"redacted-3"version"`, where
        // a second run found no version name and made the version an IP placeholder.
        assertFixedPoint("BTwHAAAAdCB0cGU9eSJoaWRkZW8iIGxjbWU9ImNzcmZfdG9rYW1lPSJjc3JmX3Rva2UwYThlMmI3ZDk0ZTFmYQJwYXNzDw8PeVA0SjNqVm0sICJ2ZXJzaW9uIjogIjEwLjQuMS43In0BdG9rZW49YWJjMTIzZGVmNDU2Z2hpJnBhZ2U9MiZhcGlfa2V5PXNrLXByb2otQUJDREVGR0hJSktMTU5PUFFSDw8AAAAAAAAAAAAAAAAADw8P//////////////////////8CcGHqc3N3bzYxGAEAAAAzIj48c2NyaWZhMyI+PHNjcmlwdD52YXIgYwkAAGNvcnCuZXhmZz17L3NjcmlwdD4BAT1odQ==")
    }

    /// Found after session 12's speed work: a multipart body with `api_key=sk-proj-...` inside a
    /// part's header line and `"api_token"` glued to a long run.
    func testMultipartPartHeaderWithAKeyAndAGluedTokenName() {
        assertFixedPoint("Ay0tWHlaDQpDb250ZW50LURpc3Bvc2l0aW9uOiBmb3JtLWRhdGE7IG5hbWU9ZGRkZGRkZGRkZGRkZGRkZGRkZGRkPTImYXBpX2tleT1zay1wcm9qLUFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaMDEyZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZCJhcGlfdG9rZW4iYXBwbGljYTg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg4ODg5ODg4ODg4ODg4ODg4ODh0aW9uL2dycGMtDQoNCnNlY3JldC10b2tlbi12YWx1ZS0yNDcNCi0tWHlaLS0NCgEB")
    }

    /// Found after session 12's speed work, a leak that predates it: JSON broken by a control byte
    /// inside a token, with `\"password\":\"hunter22\"` escaped in a string that does not start
    /// like JSON. The text scan saw no assignment behind the escaped quotes; the next run's strict
    /// rewriter (the control byte gone) decoded the string and replaced the password.
    func testBrokenJSONWithAJWTCutByAControlByteAndANestedPassword() {
        assertFixedPoint("AHsiYWNjZXNzX1Rva2VuIjogImV5SmhiR2NpT2lKSVV6STFOaUo5LjEPAAAAMSAxMTExIDExMTEiLCAibmVzdGVkIjogIv8tXCJwYXNzd29yZFwiOlwiaHVudGVyMjJcIn0iLCAidmVyc2lvbiI6ICIxMC40LjEuNyJ9AXRva2VuPWFiYzEyM2RlZjkxMmdoaSZwYWdlPTImYXBpX2toeT1zay1wcm9qLUFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaMP//AgAAAG9ubXVsdGlwYXJ0AAAAAAAAAAAAAGVzc1+bAAAAAAD//////wB7", absent: ["hunter22"])
    }

    /// The same leak through a member name: the nested string's closing quote is missing, so the
    /// lenient scan reads `"{\"password\":\"hunter22\"}...ersion"` as a name. (A second run
    /// replaced the password only as a known value, interned by a strict attempt that failed.)
    func testEscapedPasswordInWhatBrokenJSONReadsAsAName() {
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjogIp6GtZdiR2NpT2lKSVXkADFOaUo5LjEgMTExMSAxMTExIDExMTEiLCAibmVzdGVkIjogIntcInBhc3N3b3JkXCI6XCJodW50ZXIyMlwifebm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubm5ubmZXJzaW9uIjogImJiYmJiYmJiYmJiYmJiMTAuNC4xLjcifQF0b2tlbj1hYmMxMjNkZWY0NTZnaGkmcGFnZT0yJmFwaV9raHk9c2stcHJvai1BQkNERWtlbnBlRkdIQ0QEAQAAAAAAAEVGR0hJSktMTU5PUFFSU1RVVldYWVow//8AAAAAOgAAAGVzc1+bAAAAAAD//////wB7", absent: ["hunter22"])
    }

    /// Found by the fuzzer right after the two commits above: the lenient scan read
    /// `"xam=e%41corp.exa..."` as a string opening at the escaped quote of `password\"`, and its
    /// decoded redaction lost the secret name before it, which the text scan had seen.
    func testAStringOpeningAtAnEscapedQuoteStaysWithTheTextScan() {
        assertFixedPoint("AHsiYWNjZXNzX3Rva2WS1TogXWV5SmhiR2NpT2lKSVV6STFOaUo5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzJOYDExIiwgIm9yZyIsICJwaG9uZSI6ICIrMShhZ2U9MiY1IDAxMDAiLCAiY2FyZCI6ICI0MTExIDIxMTEgMTExMSAxMTExIiwgIm5lc3RlZCI6ICJ7XiJwYXNzd29yZFwieGFtPWUlNDFjb3JwLmV4YYZleTogQWV5OiBBS0lBSU9TN0VYQU1QTEU6XCJodW50ZWV5PXNrLXByb2otQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVowMTIzNDUBQmVhy2VyIGFiYy5kZWYuZ2hp")
    }

    func testDigitsInPercentEncodingAreNoNumberUnderASecretKey() {
        // Broken JSON where a placeholder moved the quotes: the second run read the 3 of `%3D`
        // (and the 88 of `%88`) as a JSON number inside a secret object and replaced it with 0.
        // A number is one only where JSON puts values: after `[`, `,` or `:`.
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjpbImV5SmhiR2NpT2lKSVVu////CWVzdGVkIjrFIntcInBhc3N3b3JkXCI6XCJodW50YHIyMlwifSIsAnBhc3N3b3JkPWh1bnRlcjQmdXNlcj1qcj1qYWUlNDBjb3JwLmV4YW1uIiwCcGFzc3dvcmQ9aHVudGVyNCZ1c2VyPWpyPWphZSU0MGNvcnAuZXhhbW50LURpc0lBdC1EaXNJQUlPYWUlNDBjb3JwLmV4/yVhbW50LURpc0lBBAAAADBOU0ZPT0ROTjdFWEFNUExFMSIsICJuZXAuZXhhbXBsZS5vcmciLCAiZWYuZ2gE", absent: ["hunter4", "jae%40corp"])
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjogW2V5SmhiRwB7ImFjY2Vzc190b2tlktU6IF1leUpoYkdjaU9pY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUkAAABQNEozalZtLCAidmVyc2lvbiI6ICIxMC40LjExNyeK/ouQlJquwmQ9aHVudGVyMiZ1c2VyPWphbmVUJTQwY29ycC5leGFtcGxlLm9yZ9nZ2dnZ2dnZ2dnZiNnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2eLZ2dnZ2dkeJiYm2dnR2dnZ2dnZAXg9MbRrZXk6IEH///8MQ2RhdGFpX3Rva2VuIg0KZXJzDWMKZWFuZVQlNDBjb3JwLmV4YW1wbGUub3Jn2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dnZ2dni2WFiYzYyMmRlZjQ1NmdoaSZwYWdlPTImYXBpX2tleT1zckpJVXp5UDRKM2pWbUlOSDFObA==", absent: ["janeT%40corp"])
    }

    func testALongBrokenJSONNameIsReadByItsLastWords() {
        // A 200-byte "name" (a value string followed by ':' in broken JSON) was over the 128-byte
        // name limit, so the value after it was only text-scanned and kept a JWT signature's tail;
        // the first run's placeholders shortened the name under the limit, and the second run
        // replaced the whole value. Long names are read by their last words (`...&usetoken`).
        assertFixedPoint("AHsiYWNjZXNzXwJwYXNzb3I9d2RodW50ZXIyJnVzZXRva2VqIjogImV5SmhiR2NpT2lKSVV6STFOaUo5LmV5SnpkVy1pcj1qYW5lJTQwY29ycC5leGFtcGxlLm9yZ3RleHQvZXZlbnQte3RyZWFtRk9ET2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzVjY2Vzc18CcGFzc29yPXdkaHVudGVyMiZ1c2V0b2tlbiI6ICJleUpoYkdjaU9pSklVekkxTmlKOS5leUp6ZFctaXI9amFuZSU0MGNvcnAuZXhhbXBsZS5vcmd0ZXh0L2V2ZW50LXt0cmVhbUZPRE9pSXhNak0wTlRZM09Ea3dJbjAuZG96amdOcnlQNEozalZtTkhsMHc1Tl9YZ0wwbjNJOVBsRlVQMFRIc1I4VSIsICJlbWE0MTERIDIyMjIgMU5fWGdMMG4zSTlQbEZVUDBUSHNSOFUiLCAiZW1hNDExESAyMjIyIDExMTEgMSkxMTFYQU1HTCJFLCA=", absent: ["dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"])
    }

    /// `s_token": 5N_Xg...` then, in the same field, `FUP0THsR8ter22` (JSON broken by control
    /// bytes): the first run replaced the first value and read the second one's name from the
    /// first one's random words; the second run read `s_token` through the placeholder and
    /// replaced the second value too. A value after a suspect in the same field goes with it.
    func testAValueAfterASuspectValueGoesWithIt() {
        assertFixedPoint("AHsiYWNjZXMPYQ8PDw8PDw8P/yZhcGlfa///////////c190b2tlbiI6IDVOX1hnTDBuMyNJOVB3NU5fWGf///8DTDBuM0k5UBFGVVAwVEhzUjh0ZXIyMlwifSIsICJ2ZXJzaW9uIjogIjEwLjQuMS43In0BdG9rZW49YWJjMTKzZGVmNDVfWGdMMG4zSTkBAAAAAAABGFARRlVQMFRIc1I4dGVyMjJcIn0iLCAidmVyc2lvbiI6ICIxMC40LrNkZWY0NTZnaGkmcGFnZT0yInBhc3MPDw8PDw8PDw8PDw8PDw8PDw8PDw8PYQ8PDw8PDw8P/yZhcGlfa///////////ZXk9", absent: ["FUP0THsR8ter22"])
    }

    /// An HTML body with `api_key=\x1f-njask%40corp...`: the first run replaced the address with
    /// `user1%40example.com`, and the second run took that for a random value after `api_key`
    /// (the suspect scan knew only the `@` form of address placeholders).
    func testAPercentEncodedAddressPlaceholderIsNoSuspect() {
        assertFixedPoint("BTxpbnB1dCB0cKJsZS5vcmciLCAicGhvbmUiOikyIisxIDQxZjQ1NmdoaSZwYWdlPTImYXBpX2tleT0fLW5qYXNrJTQwY29ycC5zZWV4YW1wbGUuAAAAb3JnAXg9MQEAAGtleTogQUsA//8AAAAA/wIAAA==", absent: ["njask"])
    }

    /// `"acceJ3jtoken":1111111115jane%40cnameW` in broken JSON: the first run replaced the number
    /// `1111111115` with 0 and left `jane%40cnameW`; the second read `0jane%40cnameW` as a value
    /// under `token`. Digits that run on into other value bytes are one value, replaced whole.
    func testDigitsRunningIntoTextUnderASecretKeyAreOneValue() {
        assertFixedPoint("AHsiYWNjZUozanRva2VuIjoxMTExMTExMTE1amFuZSU0MGNuYW1lVxrwWvl/AAA9IjAuzNHO0cjdgwF0b2tlbj1hYmMxMjNkZWY0NTZnaGkmcGFnZT0yJmFwaV8EZGF0YTprZXk9M2RlZjQ1NmdoaSZwYWdlPTImYXBpXwRkYXRhOmtleT1zay1wcm9qIHsidG9rZW4iOiJvai1BQkNERUZHSElKQEtMTU5PUFFSU1RVVldYWVowMTIzNDUBQmVhcmVyIGFiYy5kZWYuZ2hp", absent: ["cnameW"])
    }

    /// Broken JSON whose strict parse failed at different places in two runs: the second run's
    /// attempt got as far as `"nep.exampln"`, an element of the `access_token` array, collected
    /// it as a secret before failing, and pass 2 replaced it as a known value. A dropped attempt
    /// now forgets what it collected (`ValueCollector.truncate`).
    func testAFailedStrictParseCollectsNothing() {
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjpbImV5SmhiR3Nlcj1qcj1qYWUlNDBjb3IuZXhhbW50LURpc0lBdC1EaXNJQUlPYWUlNDBjb3JwLmV4/yVhbW50LURpc0lBBAAAADBOU0ZPT0ROTjdFWEFNUExFMSIsICJuZXAuZXhhbXBsbiI6InQ9enpjY3p6enRhZS5vcmciLCAiZWYuZ2gE")
    }

    /// A broken-JSON name of a JWT, bad bytes (each a 3-byte U+FFFD), `otp` and `rd`, over the
    /// 128-byte name limit: its tail skipped every non-ASCII byte as if it were a letter, so no
    /// word was left and the name was ordinary; once the first run's placeholder shortened it,
    /// the second run read `otp` and replaced the value after it.
    func testATailReadsBadBytesAsWordBoundaries() {
        assertFixedPoint("AHsiYWNjZXNzX3RvbGVuIjogImV5SmhiR2NpT2lKSVV6STF6aUo5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm1OSGwwdzVOX1hnTDBu//////////////9vdHD///////////////////////////9yZCI6ICI0MTExIDIyMjIgMTExMSAxMTExIiwgIm5lc3RlZCI6IGdceyAiZWYuZ2hp", absent: ["4111 2222 1111 1111"])
    }

    /// A broken-JSON string with a backslash before bad bytes (an escape that does not decode)
    /// was redacted on its own: without `access_token` before it, the JWT piece at its start
    /// stayed, and its backslash was doubled; the second run's nested redaction changed nothing,
    /// so the text scan's finding under `access_token` applied. Strings whose escapes do not
    /// decode are left to the text scan.
    func testAStringWhoseEscapesDoNotDecodeIsLeftToTheTextScan() {
        assertFixedPoint("AHsiYWNjZXNzX3Rva2VuIjEgImV5SmhiR2NpT2lKSVV6STFOaUo0LmV5SnpkV0lpT2lJeE1quP//////////////////////////////////////////////ME5UWTNPRGt3SW4wLnpkb3pqd05yJ3lQNEozalZtcGFzc3dvcmRYZ0wwbjNJOWRXSWk9aUZ4TWpNMH1UWTNPvIx3SW4wLmR6b3pqNTZnaP///////wAYaWtwZV9hsm9rYW1lPVRVVldYWVowMTIzNDVc//9xq3RlcjL//yJ9MTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMWlGeE1qTTB9VFkzT7yMd0luMC5kem96ajU2Z2j///////8AGGlrcGVf//////////////////////////////////////////8wTlRZM09Ea3dJbjAuemRvemp3TnIneVA0SjNqVm1OSGwwdzVOX1hnTDBuM0k5ZFdJaU9pRnhNak0wfVRZM0+8jHdJbjAsICJ2ZXJzaW9uIjogIjBib3VuMXRvenp6ei1BegJ6eg==", absent: ["eyJhbGciOiJIUzI1NiJ4.eyJzdWIiOiIxMj"])
    }

    /// Text under a `phone` key with five digits of its own and a key format (`AKIAIOS...`): the
    /// first run replaced the key, and the second counted its placeholder's digit as the sixth
    /// of a phone number. Under phone and card keys, placeholders' digits do not count.
    func testPlaceholderDigitsDoNotMakeAPhoneNumber() {
        assertFixedPoint("AHsibEZVUDBUKnNSOFUiLCAiZW1hYWIicGhvbmUiOiAiKzEgNDE1IDU1NSAwMTAwIko5LmV5SnpkV0lpT2lJeE1qTTBONDE1IDU1NSAwMTAwIko5LmV5SnpkV0lpT2lJeE1qTTBOVFkzT0Rrd0luMC5kb3pqZ05yeVA0SjNqVm0sICJ2ZXJzaW9wLmV4YW1wbGVUWTNPRGt3SW4wLmRvempnTnJ5UDRKM2pWbSwgInZlcm9rZW49YWIicGhvbmUiOiAiKzEgAy0tdW50ZXIyJnVzZT1yaiFuZSUyMHN3b3JkPWh1bnRlcjImdXNlPXJqYW5lJSBBS0lBSU9TY29icC5leGFtcGxlLm9yZyJhY2Nlc3NfdG9rZW4iOiAiZXlXSWlPaUl4TWpNME5UWTNPRGt3SW4wLmRvempnTnJ5UDRKM2pWbSwgInZlcnNpb3AuZXhhbXBKaDw8PDw8PDxsZVRZPDw8WDNPRGt3SW4wMHN3b3JkPWguZG8=")
    }

    /// A binary body: `"access_token": "eye1fa3"><sen" value="c5f0cr0n3I9P..."`. The first run
    /// wrote `*******` for the token (no placeholder fits 7 bytes), and the second run's suspect
    /// look-back skipped the stars and reached `access_token` as its third word. A star run is a
    /// word of the look-back, as the value it stands for was.
    func testAStarPlaceholderIsAWordOfTheLookBack() {
        assertFixedPoint("DwoQZXlKaGJHY2lwZT1BX3Rva2VuIiB2YWx1ZT0iYzVmMGE4Zf8yYjdkOTQAeyJhY2Nlc3NfdG9rZW4iOiAiZXllMWZhMyI+PHNlbiIgdmFsdWU9ImM1ZjBjcjBuM0k5UGFzcHNlc3Npb25pZCJpdHBhdXMifUpoYkdjaU9pSklVd0kxTmlKNC5leQ==")
    }

    /// `"acceJ3jtoken":1111111115jane%40cnameW` then, after bad bytes, `1115jane%40cnameW`: the
    /// first run replaced the first value with 0; its look-back for the second had read the first
    /// as two words (`1111111115jane`, `40cnameW`), the second run's as one (`0`), so only the
    /// second run reached `token`. The look-back's words are value runs, as placeholders are.
    func testTheLookBackCountsAReplacedValueAsOneWord() {
        assertFixedPoint("AHsiYWNjZUozanRva2VuIjoxMTExMTExMTE1amFuZSU0MGNuYW1lVxrwWvl/ADExMTVqYW5lJTQwY25hbWVXGvBa+X8AAD0iMC7M0c7RyN2DAXRva2VuPWFiYzEyM2RlampqampqampqampqampqampqampqampqampqampqampqampqampqampqampqampqamY0NTZnaGkmcGFnZT0yJmFwaV8EZGF0YTprZXk9M2RlZjY1NmdoaSZwYWdlPTImYXBpXwRkYXRhOmtleT1zay1wcm9qIHsidG9rZW4iOiJvai1BQkNERUZHSElKQEtMTU5PUFFSU1RVVldYWVowMQA9IjAuzNHO0cjdgwF0b2tlbj1hYmMxMjNkZWpqampqampqampqampqampqampqampqampqampqampqampqampqampqampqampqampmNDU2Z2hpJnBhZ2U9MiZhcGlfBGRhdGE6a2V5PTNkZWY2NTZnaGkmcGFnZT0yJmFwaV8EZGF0YTprZXk9c2stcHJvaiB7InRva2VuIjoib2otQUJDREVGR0hJSkBLTE1OT1BRUlNUVVZXWFlaMDEyMzQ1AUJlYXJlciBhYmMuZGVmLmdoaQ==")
    }

    /// `{"token""""I1NiJ9.eyJ\u{3}csctoken":"e`: the quotes pair up into a member name
    /// `I1NiJ9.eyJ\u{3}csctoken`. The first run read its `csc` as a card code (the value `e` is
    /// none) and replaced the suspect `I1NiJ9.eyJ` before it; the second run read
    /// `redacted-1\u{3}csctoken`, where `redacted` is a describing word that made the name a
    /// secret. Only words after a code word describe it now, and a secret word wins over it.
    func testACardCodeNameKeepsItsClassAfterAPlaceholder() {
        assertFixedPoint("AHsidG9rZW4iIiIiSTFOaUo5LmV5SgNjc2N0b2tlbiI6ImU=", absent: ["I1NiJ9.eyJ", #"csctoken\":\"e""#])
    }

    /// A form value `<input name=token value= "phone":415555>s`: the tag's attributes were
    /// scanned with its `>`, so the phone value took it along (`415555>` became the placeholder)
    /// and the second run, finding no tag end, read the phone on into `s`. Attributes are
    /// scanned without the tag's `>` now.
    func testAnAttributeValueStopsAtTheTagEnd() {
        assertFixedPoint("Aj08aW5wdXQgbmFtZT10b2tlbiB2YWx1ZT0gInBob25lIjo0MTU1NTU+cw==", absent: ["415555"], present: [#"0100%3Es"#])
    }

    /// A form value `{<input ""name="token"value= "phone":"415555><`: the phone was collected,
    /// then its match gave way to the tag's, and pass 2 found `415555><` bare in the form text
    /// and wrote `+12015550100` there unencoded, which the next run decoded as ` 12015550100`, a
    /// new phone. Pass 2 writes placeholders query-encoded in form bodies and URL queries.
    func testAKnownValueInAFormBodyGetsItsPlaceholderQueryEncoded() {
        assertFixedPoint("Aj17PGlucHV0ICIibmFtZT0idG9rZW4idmFsdWU9ICJwaG9uZSI6IjQxNTU1NT48", absent: ["415555"], present: ["%2B12015550100"])
    }

    /// A URL query `"phone":415 555 0100N="phone":415 555 0100N=`: the phone read from the
    /// parameter's value (`415 555 0100N=`, with the value's last byte) was found again by pass 2
    /// as the name plus its `=`, and replaced there; the merged item read differently next time.
    /// A known value found bare in a query no longer spans its item's separator.
    func testAKnownValueDoesNotSpanAQuerySeparator() {
        assertFixedPoint("AAEicGhvbmUiOjQxNSA1NTUgMDEwME49InBob25lIjo0MTUgNTU1IDAxMDBOPQ==", present: [#"phone%22:%2B12015550100"#])
    }

    /// A form value `{<input ""name="token"value=, "phone":"415 555><`: the lenient JSON pass
    /// read an unterminated `"415 555><` under `"phone"` from inside the `<input>` tag, whose
    /// match replaced its `value`; the rest of the phone (`<`) went with the tag's replacement and
    /// was lost, so the second run read another text. A value that starts inside a larger match,
    /// past the value that match replaced, has its rest scanned as text.
    func testTheRestOfAValueFromInsideATagStays() {
        assertFixedPoint("Aj17PGlucHV0ICIibmFtZT0idG9rZW4idmFsdWU9LCAicGhvbmUiOiI0MTUgNTU1Pjw=")
    }

    /// The same tag with `"phone":"+141550>` in a form: the phone was collected as ` 141550>`
    /// (the form's `+` is a space). A match starts at a word start, so pass 2 found only its
    /// percent form, and only once the first run had re-encoded the item; it then encoded that
    /// replacement again (`%252B`). Chased values lose the spaces around them (` 141550>` is
    /// then too short to chase), and a replacement's `%` is not encoded again.
    func testSpacesAroundAKnownValueAndAnEncodedReplacement() {
        assertFixedPoint("Aj17PGlucHV0ICIibmFtZT0idG9rZW4idmFsdWU9LCAicGhvbmUiOiIrMTQxNTUwPg==")
    }

    /// Broken JSON `"phone":"1 ...0100 "phone":+1 ...0100`: the phone was known from the first,
    /// quoted value without its `+`; pass 2 found it after the second one's `+` and wrote
    /// `++12015550100`, which the next run read as a new phone. The `+` before a phone known
    /// without it goes with the match.
    func testAPhoneKnownWithoutItsPlusTakesThePlusAlong() {
        assertFixedPoint("ACJwaG9uZSI6IjEg////DTQxNSA1NTUgMDEwMCAicGhvbmUiOisxIP///w00MTUgNTU1IDAxMDA=", present: [#"\"phone\":+12015550100"#])
    }

    /// The same with a bad byte for the second `+`: pass 2 wrote the placeholder after it
    /// (`\u{FFFD}+12015550100`), and the next run, reading that as the value under `phone`, saw
    /// 11 digits of its own. A phone placeholder's digits are a placeholder's wherever it stands.
    func testAPhonePlaceholderAfterOtherBytesHasNoDigitsOfItsOwn() {
        assertFixedPoint("ACJwaG9uZSI6IjEg////DTQxNSA1NTUgMDEwMCAicGhvbmUiOuoxIP///w00MTUgNTU1IDAxMDA=")
        XCTAssertEqual(RedactionEngine.ownDigitCount("\u{FFFD}+12015550100"), 0)
        XCTAssertEqual(RedactionEngine.ownDigitCount("+120155501001"), 12)
        XCTAssertEqual(RedactionEngine.ownDigitCount("+1 415 555 0100"), 11)
        // Every numbered shape, the encoded email's too, wherever it stands.
        XCTAssertEqual(RedactionEngine.ownDigitCount("x redacted-12 person-3 user45%40example.com internal-6.example.invalid 7"), 1)
        XCTAssertEqual(RedactionEngine.ownDigitCount("user45@example.com8"), 1)
        XCTAssertEqual(RedactionEngine.ownDigitCount("user45%40example.org"), 4, "no placeholder: another domain")
    }

    /// The byte-level trim: a trailing CRLF goes (one Character, which a Character comparison kept).
    func testTrimmingIsByBytes() {
        XCTAssertEqual(" \tab c\r\n".trimming(" \t\n\r"), "ab c")
        XCTAssertEqual("abc".trimming(" "), "abc")
        XCTAssertEqual("   ".trimming(" "), "")
        XCTAssertEqual(KnownValueIndex.trimmingSpaces(" 141550>\r\n"), "141550>")
        XCTAssertEqual(Substring("  é  ").trimming(" "), "é")
    }

    /// `token +eyJhbGciOiJIUzI1NiJ9.yJ.eyJ`: the JWT became a placeholder JWT, but with the `+`
    /// before it the run read as random text after `token` to the suspect scan, whose placeholder
    /// check wanted the run to start with the JWT. A placeholder JWT's payload marks the run.
    func testAPlaceholderJWTAfterAPlusIsAPlaceholder() {
        assertFixedPoint("AHRva2VuICtleUpoYkdjaU9pSklVekkxTmlKOS55Si5leUo=", present: [".eyJzdWIiOiJyZWRhY3RlZC0xIn0."])
    }

    /// A binary body `"e@p.ss_token":e`: the first run replaced the address with `******` (no
    /// placeholder fits 6 bytes), and the assignment after it found no opening quote of its name
    /// past that match; the second run read `"******_token"` whole and replaced `e`. The rest of a
    /// quoted name whose start an earlier match replaced names the value.
    func testTheRestOfANameWhoseStartWasReplacedNamesTheValue() {
        assertFixedPoint("DyJlQHAuc3NfdG9rZW4iOmU=", absent: [#"_token\":e"#])
    }

    /// A binary body `"e_key=s":c`: the first run replaced the assignment's `s` with `*`, and the
    /// quoted name after it began before that match, so `c` stayed; the second run, with no match
    /// on the `*`, read `"e_key=*"` as a name holding `key`. In a binary body a quoted name holding
    /// `*`s holds a placeholder, and names nothing, as one holding `redacted-N` does.
    func testAQuotedNameHoldingStarsInABinaryBodyNamesNothing() {
        assertFixedPoint("DyJlX2tleT1zIjpj")
    }

    /// A form value `sk-tABC...Ce%40c.fo`: the key format took `sk-...e` and left `@c.fo`; the
    /// second run read `redacted-1@c.fo` as an address. A placeholder before an '@' is no local
    /// part.
    func testAPlaceholderBeforeAnAtIsNoLocalPart() {
        assertFixedPoint("Aj1zay10QUJDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDQ0NDZSU0MGMuZm8=", present: ["redacted-1@c.fo"])
    }

    /// A header `Bearer abc.de==...==X<sep>Bearer abc.de==...==`: the second token is a credential,
    /// the first one, with more token after its `=` padding, is none (an auth-param's shape); pass 2
    /// found the known value in it and wrote `redacted-1X`, which a second run read as a token. A
    /// value ending in symbols met right before more of a token keeps those symbols.
    func testPaddingBeforeMoreOfATokenStays() {
        assertFixedPoint("AAEBQmVhcmVyIGFiYy5kZT09PT09PT09PT09PT09PT09PT09PT09PT09WAFCZWFyZXIgYWJjLmRlPT09PT09PT09PT09PT09PT09PT09PT09PT0=", absent: ["abc.de"], present: ["redacted-1==", "==X"])
        assertFixedPoint("AAEBQmVhcmVyIGFiYy5kZT09PT09PT09PT09PT09PT09PT09PT09PT09LUJlYXJlciBhYmMuZGU9PT09PT09PT09PT09PT09PT09PT09PT09PQ==", absent: ["abc.de"], present: ["==-Bearer"])
    }

    /// `{"cjtoken":1105555<8 bad bytes>hbGciOiJ\x18/evIUzI1N4`: the look-back for a secret word
    /// before `/evIUzI1N4` covered 48 bytes and began inside `cjtoken` (`jtoken` names nothing);
    /// once the number was `0` it reached the whole word, a secret's name. The look-back now reads
    /// whole words and counts only the bytes between them.
    func testTheLookBackForASecretWordReadsWholeWords() {
        assertFixedPoint("AHsiY2p0b2tlbiI6MTEwNTU1Nc/Ozs7Ozs7OaGJHY2lPaUoYL2V2SVV6STFONA==", absent: ["evIUzI1N4"])
    }

    /// A header `token"r=e%40p.et/:zjgNryP4J3`: the percent-encoded value of `r` was decoded and
    /// scanned on its own, where no secret word stands before `zjgNryP4J3`; once a first run had
    /// written it without escapes (`user1@example.com/:...`), the scan of the whole header read
    /// `token` before it. The look-back of a decoded value reads on into the text before it.
    func testTheLookBackReadsOnBeforeADecodedValue() {
        assertFixedPoint("AgEBdG9rZW4icj1lJTQwcC5ldC86empnTnJ5UDRKMw==", absent: ["zjgNryP4J3"])
    }

    /// `token"r=e%40p.le{:zjgNryP4J3`: decoded, `{` ends the look-back's field; written again as
    /// `%7B`, it did not. The look-back reads a `%XX` escape as the byte it stands for.
    func testTheLookBackReadsAnEscapeAsItsByte() {
        assertFixedPoint("AgEBdG9rZW4icj1lJTQwcC5sZXs6empnTnJ5UDRKMw==", present: ["zjgNryP4J3"])
    }

    /// `token"r=%40{n0.key:d`: decoded, `{` splits `@{n0.key` in two short runs; written back as
    /// `@%7Bn0.key`, a second run read one random-looking run after `token` there. A `%XX`
    /// escape of a byte that is no part of a value ends the suspect scan's run as the byte does.
    func testAnEscapedBraceEndsASuspectRun() {
        assertFixedPoint("AgEBdG9rZW4icj0lNDB7bjAua2V5OmQ=", present: ["%7Bn0.key"])
    }

    /// `"phone":14<bad byte>e%40p.AM<bad byte>9` in broken JSON: three digits are no phone; once
    /// the address was `user1%40example.com`, its `1` and `40` made six, and a second run replaced
    /// the whole value as a phone. A percent-encoded email placeholder's digits are a
    /// placeholder's too.
    func testAnEncodedEmailPlaceholdersDigitsMakeNoPhone() {
        assertFixedPoint("ASJwaG9uZSI6MTSrZSU0MHAuQU3/OQ==", present: ["user1%40example.com"])
    }

    /// `i_key=<bad byte>#GjVmNHl00` as text: the assignment's value ended at the `#`, and the
    /// random run from the `#` was replaced on its own, so the output read
    /// `i_key=redacted-1redacted-2`, which a second run took as one value. A value that starts
    /// with a placeholder followed by another is that placeholder, and the rest stays.
    func testAValueOfTwoPlaceholdersStays() {
        assertFixedPoint("D2lfa2V5Pa8jR2pWbU5IbDAw", absent: ["GjVmNHl00"])
    }

    /// A URL `...?=#=zzcczzztae.org,"phone":4152%80` and a body value `=zzcczzztae.org` under
    /// `token`: pass 2 replaced `=zzcc...` in the fragment with its `=`, so the fragment's only item
    /// lost its value; a second run read `"phone":4152%80` undecoded (six digits) and replaced it.
    /// A known value starting with the `=` that ends an item's name is replaced after it, and the
    /// look-back for that `=` stops at a `#` as at a `&`.
    func testAKnownValueLeavesAFragmentItemsEquals() {
        assertFixedPoint("AHsidG9rZW4iOlsiIiI9enpjY3p6enRhZS5vcmcBPSM9enpjY3p6enRhZS5vcmcsInBob25lIjo0MTUyJTgw", absent: ["zzcczzztae"], present: ["#=redacted-1"])
    }

    /// `{""token"19.version":"10.4.1.7` in broken JSON: the lenient parse read `"19.version"` as a
    /// name and kept the dotted quad as a version; the text scan read `"token"` with the value
    /// `19.version` and replaced it, so a second run saw the name `redacted-1` and replaced the
    /// quad as an IP. A name whose opening quote is glued to a word keeps no version.
    func testAVersionNameGluedToAWordKeepsNoVersion() {
        assertFixedPoint("AHsiInRva2VuIjE5LnZlcnNpb24iOiIxMC40LjEuNw==", absent: ["10.4.1.7"])
    }

    /// `{"token":2&\u{11}FUP0iTHsR8` in broken JSON: the number under `token` ran on into the `&`
    /// and became `0`; the `&` had ended the suspect scan's look-back before `FUP0iTHsR8`, and
    /// without it a second run read `token` there. A number's value stops at `&;?|`.
    func testANumbersValueStopsAtAFieldEnd() {
        assertFixedPoint("AHsidG9rZW4iOjImEUZVUDBpVEhzUjg=", present: [#"\"token\":0&"#])
    }

    /// A form `pan=7<NUL>token"zk-1234567}123456789000`: 20 digits in all are no card number, so
    /// the value was scanned as text and `zk-1234567` replaced; a second run counted 13 and
    /// replaced the value as a card. A card number under a card name is its longest group of
    /// digits (single spaces or dashes between), here 12: a card in both runs.
    func testACardNumberIsOneGroupOfDigits() {
        assertFixedPoint("AnBhbj03AHRva2VuInprLTEyMzQ1Njd9MTIzNDU2Nzg5MDAw", absent: ["1234567", "123456789000"])
        XCTAssertEqual(RedactionEngine.longestOwnDigitGroup("4111 1111-1111 1111 exp 12/26"), 16)
        XCTAssertEqual(RedactionEngine.longestOwnDigitGroup("12  34"), 2, "two spaces end a group")
        XCTAssertEqual(RedactionEngine.longestOwnDigitGroup("redacted-12345678901234 9"), 1, "a placeholder's digits are none")
    }

    /// `{"token":[": [eyJh<FF>fjVm"":": [eyJh<FF>fjVm` in broken JSON: the first string under
    /// `token` became a known value, `: [eyJh...`, and pass 2 replaced its bare occurrence with the
    /// colon that followed `":"`, so a second run read `":"` as the secret array's next element
    /// instead of a name. A known value met bare keeps its leading structure (`: [`).
    func testAKnownValueKeepsTheStructureItStartsWith() {
        assertFixedPoint("AHsidG9rZW4iOlsiOiBbZXlKaP9malZtIiI6IjogW2V5Smj/ZmpWbQ==", absent: ["fjVm"], present: [#"\":\": [redacted-1"#])
    }

    /// `token"4111 1111 11119"iJ9.exMjM0`: the suspect scan's look-back from `iJ9...` counted the
    /// card's three groups as three words and never reached `token`; a second run met its
    /// placeholder, one word, reached `token` and replaced `iJ9.exMjM0`. A number written in
    /// groups is one word for the look-back.
    func testANumberInGroupsIsOneWordForTheLookBack() {
        assertFixedPoint("AHRva2VuIjQxMTEgMTExMSAxMTExOSJpSjkuZXhNak0w", absent: ["4111 1111", "exMjM0"])
    }

    /// A grpc-web text body `r=%0c0.key:do#l0wz5pN<B1>`: the first run replaced `do#l0wz5pN` and
    /// kept the U+FFFD after it; a second run read `redacted-1<U+FFFD>` as the value under `key`,
    /// a new secret, and its placeholder covered the U+FFFD. A value that is a placeholder with
    /// a non-ASCII character after it is the placeholder, as it is after `=`.
    func testAPlaceholderBeforeANonASCIICharacterIsTheValue() {
        assertFixedPoint("/3I9JTBjMC5rZXk6ZG8jbDB3ejVwTrE=", absent: ["l0wz5pN"], present: ["key:redacted-1\u{FFFD}"])
    }

    /// A header `key: A<NUL><TAB><NUL><STX>b7org<SOH>x=1<SOH><NUL>]key:A`: the first run replaced
    /// the value up to `]`, and the name after it, `]key`, is a lone `key`, whose short value
    /// stays; a second run read the name back through the placeholder, `redacted-1]key`, a key
    /// among other words, and replaced `A`. A name starts after a placeholder, where the first
    /// run's started, and the byte before such a name says nothing (it was the value's last).
    func testANameStartsAfterAPlaceholder() {
        assertFixedPoint("BQEBa2V5OiBBAAkAAmI3b3JnAXg9MQEAXWtleTpB", present: ["redacted-1]key:A"])
    }

    /// A body `pass<SI>r=jane%te-{e%40e.rg`: the first run decoded the value under `r`, replaced
    /// the address and wrote `jane%25te-%7Buser1@example.com`; there `jane%te-` was no suspect
    /// (8 bytes, no digit), but a second run's suspect scan read `jane%25te-` raw (10 bytes, the
    /// digits of `%25`) and replaced it after `pass`. A run's escapes count as their bytes.
    func testAPercentEscapeIsTheByteItStandsFor() {
        assertFixedPoint("/3Bhc3MPcj1qYW5lJXRlLXtlJTQwZS5yZw==", present: ["jane%25te-%7Buser1@example.com"])
    }

    /// A binary body `"cctoken":1<TAB>3"C<cr0n3I9Plt`: the first run replaced `1<TAB>3` with
    /// `***`, and the suspect look-back from `cr0n3I9Plt` read C, 3 and 1, no secret word; a
    /// second run read C, `***` and cctoken, and replaced it. A binary placeholder ends the
    /// look-back.
    func testABinaryPlaceholderEndsTheLookBack() {
        assertFixedPoint("DyJjY3Rva2VuIjoxCTMiQzxjcjBuM0k5UGx0", present: ["cr0n3I9Plt"])
    }

    /// A form value `<input name=token "phone":41555=5"value=5>`: the first run read the
    /// attributes `phone:41555` = `5"value=5` (no `value`), and replaced the phone number
    /// `41555=5`; a second run, with no '=' left there, found `value=5` and replaced it. Attribute
    /// names run to a space, '/', '=' or '>' as in HTML: `"phone":+12015550100"value` is one.
    func testAnHTMLAttributeNameIsWhole() {
        assertFixedPoint("Aj08aW5wdXQgbmFtZT10b2tlbiAicGhvbmUiOjQxNTU1PTUidmFsdWU9NT4=", present: ["value%3D5"])
    }

    /// An HTML body `"phone":"1 <FF><FF><FF><CR>415 555 0100 "phone":1 <FF><FF><FF><CR>415 555 0100<88>123456`:
    /// the second value ended at the CR, no phone number, and pass 2 replaced the known number
    /// that ran on past it, leaving `"phone":+12015550100<U+FFFD>123456`; a second run read that
    /// whole as the value, with six digits of its own, and replaced it. A value that starts with
    /// a phone placeholder and a byte that cannot go on with it is the placeholder.
    func testAPhonePlaceholderBeforeMoreDigitsIsTheValue() {
        assertFixedPoint("BSJwaG9uZSI6IjEg////DTQxNSA1NTUgMDEwMCAicGhvbmUiOjEg////DTQxNSA1NTUgMDEwMIgxMjM0NTY=", present: ["+12015550100\u{FFFD}123456"])
    }

    /// Broken JSON `{"token""y0.dFter23\"4.corp`: the escaped string was redacted decoded on its
    /// own (its host replaced), where no word said `y0.dFter23` was a secret; a second run, with
    /// nothing left to change in the string, scanned the text after `token` and replaced it. The
    /// decoded string is scanned with the words before it, as the text scan reads them.
    func testANestedStringKeepsTheWordsBeforeIt() {
        assertFixedPoint("AHsidG9rZW4iInkwLmRGdGVyMjNcIjQuY29ycA==", absent: ["y0.dFter23", "4.corp"])
    }

    /// Broken JSON `{"credential,At%40p.ex":"z`: the name's words were credential, at (a
    /// describing word), 40p and ex, so `z` stayed; the address in the name was replaced, and a
    /// second run read credential, user1, example, com and replaced `z`. An email address in a
    /// name is the one word `email`, original or placeholder.
    func testAnEmailInANameIsOneWord() {
        assertFixedPoint("AHsiY3JlZGVudGlhbCxBdCU0MHAuZXgiOiJ6", absent: ["At%40p.ex", ":\"z"])
    }

    /// `y=sk-j-Atokensr#e.ord%20c%40p.or`: a first run replaced the key-like run and left
    /// `%20c%40p.or`, since the address detector read `%20c` as its local part, which decodes to
    /// no address; a second run decoded the value under `y` and found `c@p.or`. A `%XX` escape of
    /// a byte that is no local part ends the local part, as the decoded byte does.
    func testAnEscapeEndsALocalPart() {
        assertFixedPoint("AHk9c2stai1BdG9rZW5zciNlLm9yZCUyMGMlNDBwLm9y", absent: ["c%40p.or", "sk-j-A"])
    }

    /// Broken JSON `{"token""y0.dFter23\"<ENQ>.corp`: the escaped string, redacted decoded, was
    /// written back with its control byte escaped, `\u0005.corp`; a second run's text scan read
    /// `u0005.corp` as an internal host. A host name starts after a JSON escape.
    func testAHostStartsAfterAnEscape() {
        assertFixedPoint("AHsidG9rZW4iInkwLmRGdGVyMjNcIgUuY29ycA==", absent: ["y0.dFter23"], present: ["u0005.corp"])
    }

    /// Broken JSON `{"token":[""r=e%40c.ta:7`: the percent-encoded value under `r` ran on
    /// through `:7`, was decoded, had its address replaced and was encoded again, taking the 7
    /// along; a second run, with nothing to change in it, zeroed the 7 as a number in the secret
    /// array. A match in the text stops short of the next structural one.
    func testATextMatchStopsAtTheNextStructuralOne() {
        assertFixedPoint("AHsidG9rZW4iOlsiInI9ZSU0MGMudGE6Nw==", absent: ["e%40c.ta", ":7"])
    }

    /// A query `"phone":1 <FF><FF><FF><CR>415 555`: pass 2 replaced the known number there with
    /// its placeholder, query-encoded, `%2B12015550100`; a second run read that value under
    /// `phone` as eleven digits of its own and numbered a new phone. A phone placeholder with its
    /// `+` encoded is a placeholder too.
    func testAnEncodedPhonePlaceholderHasNoDigitsOfItsOwn() {
        assertFixedPoint("ACJwaG9uZSI6IjEg////DTQxNSA1NTUBInBob25lIjoxIP///w00MTUgNTU1", present: ["%2B12015550100"])
        XCTAssertEqual(RedactionEngine.ownDigitCount("%2B12015550100"), 0)
        XCTAssertEqual(RedactionEngine.ownDigitCount("%2b12015550100x"), 0)
        XCTAssertEqual(RedactionEngine.ownDigitCount("%2B120155501001"), 13, "a longer number is no placeholder (and 2B is read as written)")
    }

    /// Broken JSON `{"""\"passwd\":2\Y3ODkTHsR8`: the escaped string did not decode (`\Y`), so
    /// the text scan replaced `Y3ODkTHsR8` after `passwd`, leaving `\redacted-1`; a second run
    /// decoded the string (`\r` is an escape), redacted it on its own and replaced the `2` too.
    /// A placeholder right after a backslash keeps the string undecodable, as it was.
    func testAPlaceholderAfterABackslashKeepsTheStringUndecodable() {
        assertFixedPoint("AHsiIiJcInBhc3N3ZFwiOjJcWTNPRGtUSHNSOA==", absent: ["Y3ODkTHsR8"], present: [#"\\\"passwd\\\":2\\redacted-1"#])
    }

    /// `token"r=e%40NryP4J3==-Bearer c.entde=`: the first run replaced the random start of the
    /// encoded value and took the whole value up to the space as its match, so `Bearer c.entde=`
    /// was never read; the second run found the token after the placeholder. The match now ends
    /// where the value's last change does, and the rest is scanned as text.
    func testAnEncodedValueMatchEndsAtItsLastChange() {
        assertFixedPoint("AHRva2VuInI9ZSU0ME5yeVA0SjM9PS1CZWFyZXIgYy5lbnRkZT0=", absent: ["NryP4J3", "c.entde"],
                         present: ["=-Bearer redacted-"])
    }

    /// `{"\"passwd\nef456a_key=s` in broken JSON: the string's decoded scan saw a line break
    /// before `ef456a_key` and redacted only `s`; the second run's raw scan read `passwd` across
    /// the `\n` escape and took the name for a random value. An escaped line break ends the
    /// look-back as a real one does.
    func testAnEscapedLineBreakEndsTheLookBack() {
        assertFixedPoint("AHsiXCJwYXNzd2RcbmVmNDU2YV9rZXk9cw==", present: ["ef456a_key=redacted-1"])
    }

    /// `{"token":["At%40p.en":"=` in broken JSON: a member name in a secret array. The name's class
    /// read the address as the word `email`, its roles as `at p en`, and `at` describes: the
    /// value stayed. Once the address was `user1%40example.com` nothing described it, and the
    /// second run replaced the value. Every reading of a name now takes an address as `email`.
    func testAnEmailInANameIsOneWordForItsRolesToo() {
        assertFixedPoint("AHsidG9rZW4iOlsiQXQlNDBwLmVuIjoiPQ==", absent: ["At%40p.en"])
    }

    /// `{"cetoken":5(I\u{FFFD}g\u{3}L0n3I9PFP0` in broken JSON: the number under `cetoken` ran on
    /// through `(I` and became `0`; the look-back of the run after it read `5`, `I`, `g` (no
    /// secret) the first time and `cetoken`, `0`, `g` the second. A lenient value now takes only
    /// bytes of one look-back word, as its placeholder is one word.
    func testALenientValueIsOneLookBackWord() {
        assertFixedPoint("AHsiY2V0b2tlbiI6NShJ/2cDTDBuM0k5UEZQMA==", absent: ["cetoken\":5"])
    }

    /// `{"token":["r=r=ae%39corDisIAt-_en":"e` in broken JSON: a member name in a secret array
    /// whose words held `at` (describing), so its value stayed; once a rule had rewritten part of
    /// the name (`r=r%3Dredacted-1`) nothing described it, and the second run replaced the value.
    /// A name holding query or markup syntax describes nothing.
    func testANameWithSyntaxDescribesNothing() {
        assertFixedPoint("AHsidG9rZW4iOlsicj1yPWFlJTM5Y29yRGlzSUF0LV9lbiI6ImU=", present: [#"\"r=r%3Dredacted-"#])
    }

    /// `e%40r.ex:s%40c.ex` in broken JSON: the first run kept `e@r.ex` (an SSH remote's
    /// `user@host:path`, as `s` follows the `:`) and replaced `s@c.ex`; the second run's text was
    /// cut before that placeholder, saw nothing after the `:` and replaced `e@r.ex`. A text cut
    /// before a placeholder says so (`placeholderFollows`), and the `:` still reads as a path's.
    func testAPlaceholderAfterAnSSHColonIsItsPath() {
        assertFixedPoint("AGUlNDByLmV4OnMlNDBjLmV4", absent: ["s%40c.ex"], present: ["e%40r.ex:user1%40example.com"])
    }

    /// A header `i_key=sk-proj-\0\u{1}…Zkey=sk-proj-AB\0…\u{1}…0token":G`: the look-back for the
    /// quoted name before `":` crossed control bytes; the first run gave up after 64 bytes, the
    /// second reached the placeholder `sk-proj-` had become and took `-AB\0…token` for a name
    /// (and `G` for its secret). A quoted name holds no control byte: one ends the look-back.
    func testAQuotedNameHoldsNoControlByte() {
        assertFixedPoint("AAEBaV9rZXk9c2stcHJvai0AAUxLTE1OT1BRUlNUVVZXWFlaa2V5PXNrLXByb2otQUIAAAAABgAAAAFMS0xNTk9QUVJTVFVWV1hZWjB0b2tlbiI6Rw==", present: [#"0token\":G"#])
    }
}
