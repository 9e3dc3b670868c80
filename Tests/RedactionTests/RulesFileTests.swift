import XCTest
import HAR
@testable import Redaction

/// The rules file: every member, and errors that name the line and the field.
final class RulesFileTests: XCTestCase {
    private func error(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> RulesFileError? {
        var c = RedactionConfiguration()
        do {
            try c.apply(rulesFile: utf8(json))
            XCTFail("accepted: \(json)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testEveryMemberApplies() throws {
        let c = try configuration(rules: """
        {
          "disable": ["email", "private-ip"],
          "headers": ["X-Device-Id"],
          "queryParams": ["Session_Key"],
          "jsonKeys": ["pin"],
          "patterns": [{"name": "order-id", "regex": "ORD-[0-9]{8}"}],
          "internalSuffixes": ["mycorp.net", ".Svc"],
          "allow": ["demo-token"]
        }
        """)
        XCTAssertEqual(c.disabled, [.email, .privateIP])
        XCTAssertFalse(c.isEnabled(.email))
        XCTAssertTrue(c.isEnabled(.jwt))
        XCTAssertTrue(c.secretHeaderNames.contains("x-device-id"))
        XCTAssertTrue(c.secretHeaderNames.contains("x-api-key"), "defaults kept")
        XCTAssertTrue(c.secretParameterNames.contains("session_key"))
        XCTAssertTrue(c.secretJSONKeys.contains("pin"))
        XCTAssertEqual(c.patterns.map(\.name), ["order-id"])
        XCTAssertEqual(Array(c.internalSuffixes.suffix(2)), [".mycorp.net", ".svc"])
        XCTAssertEqual(c.allowedValues, ["demo-token"])
        let r = redacted([makeEntry(url: "https://h.mycorp.net/?session_key=s-1&token=demo-token",
                                    requestHeaders: [("X-Device-Id", "dev-42")],
                                    responseBody: ("application/json", #"{"pin": 1234, "mail": "a@corp.com", "o": "ORD-12345678"}"#),
                                    serverIPAddress: "10.0.0.1")], config: c)
        let e = r.log.entries[0]
        XCTAssertEqual(e.request.url, "https://internal-1.example.invalid/?session_key=redacted-1&token=demo-token")
        XCTAssertEqual(e.request.headers[0].value, "redacted-2")
        XCTAssertEqual(e.response.content.text, #"{"pin": 0, "mail": "a@corp.com", "o": "redacted-3"}"#)
        XCTAssertEqual(e.serverIPAddress, "10.0.0.1")
    }

    func testEmptyObjectIsTheDefaults() throws {
        let c = try configuration(rules: "{}")
        XCTAssertEqual(c.disabled, [])
        XCTAssertEqual(c.secretParameterNames, RedactionConfiguration.defaultSecretParameterNames)
    }

    func testBadJSONGivesLine() {
        let e = error("{\n  \"disable\": [\"email\",]\n}")
        XCTAssertEqual(e?.line, 2)
        XCTAssertEqual(e?.field, "(document)")
        XCTAssertTrue(e?.reason.contains("invalid JSON") ?? false, e?.reason ?? "")
        XCTAssertEqual(error("")?.field, "(document)")
        XCTAssertEqual(error("[\"email\"]")?.reason, "the rules file must be a JSON object")
    }

    func testUnknownMemberGivesLineAndField() {
        let e = error("{\n  \"headers\": [],\n  \"disabel\": [\"email\"]\n}")
        XCTAssertEqual(e?.line, 3)
        XCTAssertEqual(e?.field, "disabel")
        XCTAssertTrue(e?.description.hasPrefix("line 3, field disabel: unknown member") ?? false, e?.description ?? "")
    }

    func testUnknownRuleGivesLineAndField() {
        let e = error("{\n  \"disable\": [\n    \"email\",\n    \"emails\"\n  ]\n}")
        XCTAssertEqual(e?.line, 4)
        XCTAssertEqual(e?.field, "disable[1]")
        XCTAssertTrue(e?.reason.contains("unknown rule 'emails'") ?? false)
        XCTAssertTrue(e?.reason.contains("internal-host") ?? false, "lists the rules")
    }

    func testBadRegexGivesLineAndField() {
        let e = error("{\n\"patterns\": [\n {\"name\": \"ok\", \"regex\": \"a+\"},\n {\"name\": \"broken\", \"regex\": \"(unclosed\"}\n]}")
        XCTAssertEqual(e?.line, 4)
        XCTAssertEqual(e?.field, "patterns[1].regex")
        XCTAssertTrue(e?.reason.contains("not a valid regular expression") ?? false)
    }

    func testWrongTypesGiveLineAndField() {
        let cases: [(String, Int, String)] = [
            ("{\n\"headers\": \"X-Foo\"\n}", 2, "headers"),
            ("{\n\n\"queryParams\": [1]\n}", 3, "queryParams[0]"),
            ("{\"jsonKeys\": [\"pin\", \"\"]}", 1, "jsonKeys[1]"),
            ("{\n\"allow\": {\"a\": 1}}", 2, "allow"),
            ("{\n\"internalSuffixes\": [null]}", 2, "internalSuffixes[0]"),
            ("{\n\"disable\": \"email\"}", 2, "disable"),
            ("{\n\"patterns\": {\"name\": \"x\"}}", 2, "patterns"),
            ("{\n\"patterns\": [{\"regex\": \"a\"}]}", 2, "patterns[0].name"),
            ("{\n\"patterns\": [\n{\"name\": \"nr\", \"regex\": 5}]}", 3, "patterns[0].regex"),
            ("{\n\"patterns\": [\n{\"name\": \"email\", \"regex\": \"x\"}]}", 3, "patterns[0].name"),
            ("{\n\"patterns\": [\"ORD-[0-9]+\"]}", 2, "patterns[0].name"),
        ]
        for (json, line, field) in cases {
            let e = error(json)
            XCTAssertEqual(e?.line, line, json)
            XCTAssertEqual(e?.field, field, json)
        }
    }

    func testExampleRulesFileIsValidAndDocumented() throws {
        let bytes = try RedactionFixtures.bytes("rules-example.json")
        var c = RedactionConfiguration()
        try c.apply(rulesFile: bytes)
        XCTAssertFalse(c.patterns.isEmpty)
        XCTAssertFalse(c.allowedValues.isEmpty)
        let doc = try JSONParser.parse(bytes)
        for member in RedactionConfiguration.rulesFileMembers {
            XCTAssertNotNil(doc[member], "the example shows \(member)")
        }
    }
}
