import XCTest
@testable import HAR

final class HARValidatorTests: XCTestCase {
    var valid: JSONValue!
    /// How many documents the entry-by-entry validation also read.
    private var streamedCount = 0

    /// The problems of `bytes`, which the validation of the document read entry by entry (in
    /// memory and by ranges) must find too, in the same order.
    func validated(bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> [HARProblem] {
        let whole = HARValidator.validate(bytes: bytes)
        for windowed in [false, true] {
            let streamed = try? HARValidator.validateCountingEntries(reading: { () throws(HARReadError) -> HARLazyDocument? in
                windowed ? try HARLazyDocument(reading: .memory(bytes)) : try HARLazyDocument(bytes)
            })
            if let streamed = streamed ?? nil {
                XCTAssertEqual(streamed.problems, whole, "entry by entry", file: file, line: line)
                streamedCount += 1
            }
        }
        return whole
    }

    func validated(_ doc: JSONValue, file: StaticString = #filePath, line: UInt = #line) -> [HARProblem] {
        let whole = HARValidator.validate(doc)
        XCTAssertEqual(validated(bytes: JSONWriter.serialize(doc, pretty: true), file: file, line: line), whole, file: file, line: line)
        return whole
    }

    override func setUpWithError() throws {
        valid = try JSONParser.parse(makeSampleLog(entryCount: 3).serialize())
    }

    func testHarrecOutputIsValid() {
        XCTAssertEqual(validated(valid), [])
    }

    func testMitmproxySampleHasExactlyTheKnownProblems() throws {
        let problems = validated(bytes: try Fixtures.bytes("mitmproxy-12.3.1-sample.har"))
        for p in problems { print("mitmproxy sample: \(p) [\(p.rule.rawValue)]") }
        let found = Set(problems.map { "\($0.rule.rawValue) \($0.path)" })
        // From /work/shared/hars/README.md:
        XCTAssertTrue(found.contains("required log.entries[5].response.content.size"), "content {} lacks size")
        XCTAssertTrue(found.contains("required log.entries[5].response.content.mimeType"), "content {} lacks mimeType")
        XCTAssertTrue(found.contains("contentSize log.entries[1].response.content.size"), "compressed content.size")
        XCTAssertTrue(found.contains("sslInConnect log.entries[4].timings.ssl"), "ssl not in connect")
        XCTAssertTrue(found.contains("timeSum log.entries[4].time"), "time is not the sum")
        // ...and nothing else.
        XCTAssertEqual(problems.count, 5)
        XCTAssertEqual(found.count, 5)
        let size = problems.first { $0.rule == .contentSize }
        XCTAssertEqual(size?.message, "size 606 is not the decoded length of text (24380 bytes); it looks like the compressed (transferred) size")
    }

    /// Applies one mutation and expects exactly one problem.
    func expectOne(_ path: String, _ value: JSONValue?, rule: HARRule, at problemPath: String? = nil,
                   file: StaticString = #filePath, line: UInt = #line) {
        var doc = valid!
        mutate(&doc, path, value)
        let problems = validated(doc)
        XCTAssertEqual(problems.count, 1, "\(problems)", file: file, line: line)
        XCTAssertEqual(problems.first?.rule, rule, "\(problems)", file: file, line: line)
        XCTAssertEqual(problems.first?.path, problemPath ?? path, file: file, line: line)
        for p in problems {
            XCTAssertFalse(p.message.unicodeScalars.contains { $0.value < 0x20 }, file: file, line: line)
        }
    }

    func testJSONSyntax() {
        let problems = validated(bytes: utf8("{\"log\": {\n  \"entries\": [1,]\n}}"))
        XCTAssertEqual(problems, [HARProblem(path: "", message: "invalid JSON at line 2, column 17: trailing comma in array",
                                             rule: .jsonSyntax)])
    }

    func testRequired() {
        expectOne("log.entries[0].request.method", nil, rule: .required)
        expectOne("log.creator.name", nil, rule: .required)
        expectOne("log.entries[1].cache", nil, rule: .required)
        expectOne("log.entries[1].timings.wait", nil, rule: .required)
        expectOne("log.entries[1].response.redirectURL", nil, rule: .required)
        expectOne("log.entries[1].request.queryString", nil, rule: .required)
        expectOne("log.entries", nil, rule: .required)
        XCTAssertEqual(validated(.object([])).map(\.rule), [.required])
    }

    func testTypes() {
        expectOne("log.entries[0].request.headers", .string("x"), rule: .type)
        expectOne("log.entries[0].time", .string("12"), rule: .type)
        expectOne("log.entries[0].comment", .number("1"), rule: .type)
        expectOne("log.entries[0].serverIPAddress", .null, rule: .type)
        expectOne("log.entries[0].response.cookies[0].httpOnly", .string("true"), rule: .type)
        expectOne("log.entries[0].response.cookies[0].sameSite", .bool(true), rule: .type)
        expectOne("log.entries[0].request.headers[0].value", .number("1"), rule: .type)
        expectOne("log.entries[0].request.headers[1]", .string("Host: x"), rule: .type)
        expectOne("log.entries[1].request.postData.params[0].value", .number("1"), rule: .type)
        expectOne("log.entries[1].cache.beforeRequest", .string("x"), rule: .type)
        XCTAssertEqual(validated(.array([])).map(\.rule), [.type])
    }

    func testIntegers() {
        expectOne("log.entries[0].response.content.size", .number("12.5"), rule: .integer)
        expectOne("log.entries[0].response.status", .number("200.1"), rule: .integer)
        expectOne("log.entries[0].request.bodySize", .number("1e400"), rule: .integer)
        // Integral values in other spellings are integers (as in JSON Schema).
        var doc = valid!
        mutate(&doc, "log.entries[0].request.headersSize", .number("120.0"))
        XCTAssertEqual(validated(doc), [])
    }

    func testRanges() {
        expectOne("log.entries[0].request.headersSize", .integer(-2), rule: .range)
        expectOne("log.entries[0].response.bodySize", .integer(-5), rule: .range)
        expectOne("log.entries[0].response.status", .integer(1000), rule: .range)
        expectOne("log.entries[0].response.status", .integer(-1), rule: .range)
        expectOne("log.entries[0].response.content.compression", .number("1.5"), rule: .integer)
        expectOne("log.entries[0].time", .number("1e999"), rule: .range)
        var doc = valid!
        mutate(&doc, "log.entries[0].response.status", .integer(0))
        mutate(&doc, "log.entries[0].request.bodySize", .integer(-1))
        // A coding can make a tiny body larger: negative compression is the truth, not an error.
        mutate(&doc, "log.entries[0].response.content.compression", .integer(-20))
        XCTAssertEqual(validated(doc), [], "status 0, size -1 and negative compression are allowed")
    }

    func testDateTime() {
        expectOne("log.entries[0].startedDateTime", .string("2026-12-01T05:58:05Z"), rule: .dateTime)
        expectOne("log.entries[0].startedDateTime", .string("2026-12-01T05:58:05.123"), rule: .dateTime)
        expectOne("log.entries[0].startedDateTime", .string("2026-13-01T05:58:05.123Z"), rule: .dateTime)
        expectOne("log.entries[0].startedDateTime", .string("Tue, 01 Dec 2026 05:58:05 GMT"), rule: .dateTime)
        expectOne("log.pages[0].startedDateTime", .string("yesterday"), rule: .dateTime)
        expectOne("log.entries[0].response.cookies[0].expires", .string("Wed, 21 Oct 2015 07:28:00 GMT"), rule: .dateTime)
        var doc = valid!
        mutate(&doc, "log.entries[0].startedDateTime", .string("2026-12-01T06:58:05.00+01:00"))
        mutate(&doc, "log.entries[0].response.cookies[0].expires", .string("2027-01-01T00:00:00Z"))
        XCTAssertEqual(validated(doc), [], "offsets, any fraction length; cookie expires without fraction")
    }

    func testVersion() {
        expectOne("log.version", .string("1.3"), rule: .version)
    }

    func testEntryOrder() {
        expectOne("log.entries[2].startedDateTime", .string("2026-12-01T05:58:04.000Z"), rule: .entryOrder)
        // The same instant with a different offset is still in order.
        var doc = valid!
        mutate(&doc, "log.entries[1].startedDateTime", .string("2026-12-01T06:58:05.0125+01:00"))
        XCTAssertEqual(validated(doc), [])
    }

    func testTimingRanges() {
        expectOne("log.entries[0].timings.send", .integer(-1), rule: .timing)
        expectOne("log.entries[0].timings.dns", .number("-2"), rule: .timing)
        expectOne("log.pages[0].pageTimings.onLoad", .number("-0.5"), rule: .timing)
        var doc = valid!
        mutate(&doc, "log.entries[0].timings.blocked", .number("-1"))
        mutate(&doc, "log.entries[0].time", .number("15.251"))
        XCTAssertEqual(validated(doc), [], "-1 is allowed and excluded from the sum")
    }

    func testSSLMustBeInsideConnect() {
        expectOne("log.entries[0].timings.ssl", .number("3.6"), rule: .sslInConnect)
        var doc = valid!
        mutate(&doc, "log.entries[0].timings.connect", .number("-1"))
        mutate(&doc, "log.entries[0].time", .number("11.876"))
        let problems = validated(doc)
        XCTAssertEqual(problems.map(\.rule), [.sslInConnect])
        XCTAssertEqual(problems.first?.path, "log.entries[0].timings.ssl")
    }

    func testTimeSum() {
        expectOne("log.entries[0].time", .number("15.4"), rule: .timeSum)
        // Within the tolerance.
        var doc = valid!
        mutate(&doc, "log.entries[0].time", .number("15.383"))
        XCTAssertEqual(validated(doc), [])
    }

    func testEncodingAndBase64() {
        expectOne("log.entries[0].response.content.encoding", .string("gzip"), rule: .encoding)
        // entries[2] is the base64 one.
        expectOne("log.entries[2].response.content.text", .string("AAE"), rule: .base64)
        expectOne("log.entries[2].response.content.text", .string("AA E"), rule: .base64)
        expectOne("log.entries[2].response.content.text", .string("AB=="), rule: .base64)
    }

    func testContentSize() {
        expectOne("log.entries[0].response.content.size", .integer(5), rule: .contentSize)
        expectOne("log.entries[2].response.content.size", .integer(51), rule: .contentSize)
        var doc = valid!
        mutate(&doc, "log.entries[0].response.content.size", .integer(-1))
        XCTAssertEqual(validated(doc), [], "-1 (unknown) is not compared")
    }

    func testURL() {
        expectOne("log.entries[0].request.url", .string("/relative"), rule: .url)
        expectOne("log.entries[0].request.url", .string("http://h/x#frag"), rule: .url)
        expectOne("log.entries[0].request.url", .string("http:///x"), rule: .url)
        expectOne("log.entries[0].request.url", .string("http://user@:80/x"), rule: .url)
        expectOne("log.entries[0].request.url", .string("http://h/a b"), rule: .url)
        expectOne("log.entries[0].request.url", .string("mailto:x@y"), rule: .url)
    }

    func testPostDataTextOrParamsAloneIsFine() {
        for removed in ["params", "text"] {
            var doc = valid!
            mutate(&doc, "log.entries[1].request.postData.\(removed)", nil)
            XCTAssertEqual(validated(doc), [], "without \(removed)")
        }
    }

    func testPostDataNeedsTextOrParams() {
        var doc = valid!
        mutate(&doc, "log.entries[1].request.postData.params", nil)
        mutate(&doc, "log.entries[1].request.postData.text", nil)
        let problems = validated(doc)
        XCTAssertEqual(problems.map(\.rule), [.postData])
        XCTAssertEqual(problems.first?.path, "log.entries[1].request.postData")
    }

    func testCustomFieldNames() {
        expectOne("log.entries[0].foo", .integer(1), rule: .customField)
        expectOne("log.entries[0].request.headers[0].sameSite", .string("x"), rule: .customField)
        expectOne("log.extra", .null, rule: .customField)
        var doc = valid!
        mutate(&doc, "log.entries[0]._anything", .object([("nested", .null)]))
        mutate(&doc, "log.entries[0].response.cookies[0].sameSite", .string("Strict"))
        XCTAssertEqual(validated(doc), [])
    }

    func testDuplicateKeys() {
        let problems = validated(bytes: utf8(#"{"log": {"version": "1.2", "version": "1.2", "creator": {"name": "a", "version": "b"}, "entries": []}}"#))
        XCTAssertEqual(problems, [HARProblem(path: "log.version", message: "duplicate key \"version\"", rule: .duplicateKey)])
    }

    func testPageref() {
        expectOne("log.entries[0].pageref", .string("nope"), rule: .pageref)
        var doc = valid!
        mutate(&doc, "log.pages", nil)
        XCTAssertEqual(validated(doc).map(\.rule), [.pageref, .pageref, .pageref], "pageref without pages")
    }

    func testEveryRuleHasANegativeTest() {
        // Keep this list in sync with the tests above.
        let covered: Set<HARRule> = [.jsonSyntax, .required, .type, .integer, .range, .dateTime, .version, .entryOrder,
                                     .timing, .sslInConnect, .timeSum, .encoding, .base64, .contentSize, .url, .postData,
                                     .customField, .duplicateKey, .pageref]
        XCTAssertEqual(covered, Set(HARRule.allCases))
    }

    func testMessagesQuoteValuesSafely() {
        var doc = valid!
        mutate(&doc, "log.entries[0].request.url", .string("\u{1B}[31mred\n"))
        let p = validated(doc)
        XCTAssertEqual(p.count, 1)
        XCTAssertFalse(p[0].message.unicodeScalars.contains { $0.value < 0x20 })
    }

    /// The entry-by-entry validation reads the ordinary documents of these tests (the others fall
    /// back to the whole parse), and a syntax error inside an entry comes before one after the
    /// entries, as in the whole parse.
    func testEntryByEntryValidationAgrees() throws {
        _ = validated(valid)
        _ = validated(bytes: try Fixtures.bytes("mitmproxy-12.3.1-sample.har"))
        XCTAssertEqual(streamedCount, 4)
        streamedCount = 0
        let twoErrors = utf8("{\"log\": {\"version\": \"1.2\", \"entries\": [{},\n{\"time\": tru}],\n\"comment\": nul}}")
        let problems = validated(bytes: twoErrors)
        XCTAssertEqual(problems.map(\.message), ["invalid JSON at line 2, column 10: invalid literal, expected 'true'"])
        XCTAssertEqual(streamedCount, 2)
        // Found by scripts/fuzz (har-json): an entry the scan ends at a delimiter but the parser
        // ends earlier (`8r`) or cuts (`10e,`) is reported as the whole parse reports it.
        for text in [#"{"log": {"entries": [8r(:, [1,}]}}"#, "{\"log\": {\"entries\": [10e, null,ro\u{01}\0\0\u{1B}]}}",
                     #"{"log": {"entries": [{"a": 1} , 10e ]}}"#, #"{"log": {"entries": [truex]}}"#] {
            streamedCount = 0
            XCTAssertEqual(validated(bytes: utf8(text)).map(\.rule), [.jsonSyntax], text)
            XCTAssertEqual(streamedCount, 2, text)
        }
    }
}
