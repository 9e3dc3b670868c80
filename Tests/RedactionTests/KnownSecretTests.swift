import Foundation
import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// `known-secrets`: a value another rule replaced anywhere in the file, met again bare, before or
/// after the place that marked it, in any encoding.
final class KnownSecretTests: XCTestCase {
    let token = "s3ssionTok3nValue-9QzX"  // 22 bytes, no shape any other rule knows

    /// Login returns a token under a JSON key; later requests carry it as a path segment, a
    /// header value under an innocent name and a query value under an innocent name.
    private func loginFlow() -> [HAREntry] {
        [makeEntry(index: 0, method: "POST", url: "https://api.example.com/v1/login",
                   responseBody: ("application/json", #"{"token":"\#(token)","user":7}"#)),
         makeEntry(index: 1, url: "https://api.example.com/v1/sessions/\(token)/items;view=\(token)?page=2&ref=\(token)",
                   requestHeaders: [("X-Trace", token), ("Accept", "application/json")]),
         makeEntry(index: 2, url: "https://api.example.com/v1/files/%73\(token.dropFirst())")]
    }

    func testBareReuseAfterTheRuleThatFoundItIsReplaced() {
        let r = redacted(loginFlow())
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"token":"redacted-1","user":7}"#)
        let req = r.log.entries[1].request
        XCTAssertEqual(req.url, "https://api.example.com/v1/sessions/redacted-1/items;view=redacted-1?page=2&ref=redacted-1")
        XCTAssertEqual(req.queryString.map(\.value), ["2", "redacted-1"])
        XCTAssertEqual(req.headers.map(\.value), ["redacted-1", "application/json"])
        // A percent-encoded segment is compared decoded.
        XCTAssertEqual(r.log.entries[2].request.url, "https://api.example.com/v1/files/redacted-1")
        XCTAssertFalse(String(decoding: r.bytes, as: UTF8.self).contains(String(token.dropFirst())))
        XCTAssertEqual(r.report.counts[.knownSecrets]?[.url], 4, "\(r.report.counts)")
        XCTAssertEqual(r.report.counts[.knownSecrets]?[.query], 1)
        XCTAssertEqual(r.report.counts[.knownSecrets]?[.header], 1)
    }

    /// In a URL's query and a form body a known value is replaced where it stands as part of a
    /// value (base64 padding after the item's `=` too), with its placeholder query-encoded, but
    /// not across the query's syntax: a value ending in `=` found as a parameter name plus its
    /// `=` would merge the name into the value.
    func testKnownValuesInQueriesKeepTheQuerySyntax() {
        let padded = "dGhpcyBpcyBhIHRva2Vu=="
        let entries = [
            makeEntry(index: 0, responseBody: ("application/json", #"{"token":"\#(padded)","secret":"n4meP4rt-x="}"#)),
            makeEntry(index: 1, url: "https://api.example.com/v1/x?t=\(padded)&n4meP4rt-x=1",
                      requestBody: ("application/x-www-form-urlencoded", "a=\(padded)&n4meP4rt-x=2&b=x+n4meP4rt-x=")),
        ]
        let r = redacted(entries)
        let request = r.log.entries[1].request
        XCTAssertEqual(request.url, "https://api.example.com/v1/x?t=redacted-1&n4meP4rt-x=1")
        XCTAssertEqual(request.postData?.text, "a=redacted-1&n4meP4rt-x=2&b=x+redacted-2")
    }

    func testShortSecretsAndPartsOfWordsStay() {
        // "42" was a secret (a session number) but also a project id: too short to chase. A secret
        // that is only part of a longer word is a different word.
        let entries = [
            makeEntry(index: 0, responseBody: ("application/json", #"{"session":"42","password":"hunter2hunter"}"#)),
            makeEntry(index: 1, url: "https://api.example.com/v1/projects/42/x-hunter2hunter/hunter2hunterX?q=42",
                      requestHeaders: [("X-Note", "hunter2hunter and more")]),
        ]
        let r = redacted(entries)
        XCTAssertEqual(r.log.entries[1].request.url,
                       "https://api.example.com/v1/projects/42/x-redacted-2/hunter2hunterX?q=42")
        XCTAssertEqual(r.log.entries[1].request.headers[0].value, "redacted-2 and more")
        XCTAssertEqual(r.report.counts[.knownSecrets], [.url: 1, .header: 1])
    }

    func testPlainWordsAndNumbersAreNotChased() {
        // A password that is a dictionary word must not rename every "password" key; an id that
        // is a number may stand inside JSON numbers.
        let entries = [
            makeEntry(index: 0, responseBody: ("application/json", #"{"password":"password","pin":"123456789012"}"#)),
            makeEntry(index: 1, responseBody: ("application/json", #"{"password_policy":"password rules","n":123456789012}"#)),
        ]
        let r = redacted(entries)
        XCTAssertEqual(r.log.entries[1].response.content.text, #"{"password_policy":"password rules","n":123456789012}"#)
    }

    func testEncodedFormsAreReplaced() {
        let token = "tok+en/9QzX=Kp2Lm"
        let entries = [
            makeEntry(index: 0, responseBody: ("application/json", #"{"access_token":"\#(token)"}"#)),
            makeEntry(index: 1, url: "https://api.example.com/v1/a?t=" + URLParts.percentEncodedQueryValue(token),
                      requestHeaders: [("X-Echo", Base64.encode(Array(token.utf8))),
                                       ("X-Echo-Url", Base64URL.encode(Array(token.utf8)))]),
        ]
        let r = redacted(entries)
        let out = text(r.bytes)
        XCTAssertFalse(out.contains(URLParts.percentEncodedQueryValue(token)))
        XCTAssertFalse(out.contains(Base64.encode(Array(token.utf8))))
        XCTAssertFalse(out.contains(Base64URL.encode(Array(token.utf8))))
        XCTAssertEqual(r.log.entries[1].request.headers[0].value, Base64.encode(Array("redacted-1".utf8)))
    }

    func testASecretMarkedLaterReachesBack() {
        // File order: the path and a header under an innocent name come first, the key that marks
        // the value secret afterwards. With two passes it is replaced everywhere.
        let r = redacted(Array(loginFlow().reversed()).enumerated().map { index, entry in
            var entry = entry
            entry.startedDateTime = makeEntry(index: index).startedDateTime
            return entry
        })
        XCTAssertFalse(text(r.bytes).contains(token))
        XCTAssertTrue(r.log.entries[1].request.url.contains("/sessions/redacted-1/"))
    }

    func testCanBeSwitchedOff() throws {
        let config = try configuration(rules: #"{"disable": ["known-secrets"]}"#)
        let r = redacted(loginFlow(), config: config)
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"token":"redacted-1","user":7}"#)
        XCTAssertTrue(r.log.entries[1].request.url.contains("/sessions/\(token)/"))
        XCTAssertNil(r.report.counts[.knownSecrets])
    }

    func testIdempotent() {
        let once = redacted(loginFlow())
        let twice = redacted(once.log)
        XCTAssertEqual(twice.bytes, once.bytes)
        XCTAssertTrue(findings(once.log).isEmpty)
    }
}

/// The index itself, past the size where two threads build it (each owning half the slots).
final class KnownValueIndexTests: XCTestCase {
    /// Digit groups joined by hyphens or dots are chased bare too (an SSN, a phone, an IPv4
    /// address found under a name, met again in a URL path); a plain number or one JSON could
    /// hold is not.
    func testSeparatedDigitGroupsAreChasedNumbersAreNot() {
        let ssn = "078-05-1120"
        let r = redacted([makeEntry(index: 0, method: "POST", url: "https://api.example.com/v1/people",
                                    requestBody: ("application/json", #"{"ssn":"\#(ssn)","count":12345678}"#)),
                          makeEntry(index: 1, url: "https://api.example.com/v1/people/\(ssn)/profile?n=12345678")])
        XCTAssertFalse(String(decoding: r.bytes, as: UTF8.self).contains(ssn))
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/v1/people/redacted-1/profile?n=12345678")
        for value in ["078-05-1120", "415-555-0100", "4242-4242-4242-4242", "81.2.69.160", "1990-01-02"] {
            XCTAssertTrue(KnownValueIndex.isIndexable(value), value)
        }
        for value in ["12345678", "-12345.678", "1.5e+10", "10.0.19041", "1-2", "1.2.3.4.5", "-078-05-1120", "078--05-1120",
                      "078-05-1120-", "1.2-3.4"] {
            XCTAssertFalse(KnownValueIndex.isIndexable(value), value)
        }
    }

    func testALargeIndexFindsEveryValueLongestFirst() {
        // 30,000 values (over 100,000 forms with the encoded ones); every tenth shares its first
        // 8 bytes with a longer one, so chains hold several lengths.
        var pairs: [(value: String, placeholder: String)] = []
        for k in 0..<30_000 {
            let stem = "tok\(String(k, radix: 36))Qx9"
            let value = k % 10 == 0 ? String((stem + "zzzzzzzz").prefix(8)) + "A7b" : stem + "Zk\(k)"
            pairs.append((value, "redacted-\(k)"))
            if k % 10 == 0 { pairs.append((value + "Longer/+", "redacted-long-\(k)")) }
        }
        let index = KnownValueIndex(pairs: pairs)
        XCTAssertFalse(index.isEmpty)
        func found(_ text: String) -> String? {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { p in
                index.match(p, at: 0).map { m in
                    let r = index.replacement(of: m.form)
                    return String(decoding: r, as: UTF8.self) + "|\(m.end)"
                }
            }
        }
        for (value, placeholder) in pairs where KnownValueIndex.isIndexable(value) {
            XCTAssertEqual(found(value + " rest"), "\(placeholder)|\(value.utf8.count)", value)
        }
        // The longer value wins where both match; the shorter where the longer does not.
        let short = pairs[0].value
        XCTAssertEqual(found(short + "Longer/+ x"), "redacted-long-0|\(short.utf8.count + 8)")
        XCTAssertEqual(found(short + "Longer x"), nil, "no word end after the short value, and the long one differs")
        XCTAssertNil(found("unrelatedValue123 x"))
        // An encoded form of a value indexed by the other half.
        let base64 = Array(pairs[12_345].value.utf8).base64EncodedForTest()
        XCTAssertEqual(found(base64 + " x")?.components(separatedBy: "|").first,
                       Array(pairs[12_345].placeholder.utf8).base64EncodedForTest())
    }
}

/// Pass 2 probes the index only at a word whose length and next byte some form starts with.
final class KnownValueWordShapeTests: XCTestCase {
    private let pairs: [(value: String, placeholder: String)] = [
        ("ab-cdef12x", "redacted-1"),       // a 2-letter word, then '-'
        ("Jane Q Doe", "person-2"),         // a 4-letter word, then a space
        ("x_y1234567", "redacted-3"),       // a 1-letter word, then '_'
        ("abcdefghij12", "redacted-4"),     // a word of 8 or more
        ("(415) 555-0199", "+12015550101"), // a symbol first
    ]

    private func finalized(_ text: String) -> String {
        var f = Finalizer(syntax: MarkerSyntax(nonce: Array("abc".utf8)), placeholders: UnitPlaceholders([]),
                          known: KnownValueIndex(pairs: pairs))
        let out = Array(text.utf8).withUnsafeBufferPointer { f.bytes($0, sameLength: false) }
        return out.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    func testEachShapeIsFound() {
        XCTAssertEqual(finalized("see ab-cdef12x, Jane Q Doe; x_y1234567/abcdefghij12 (415) 555-0199."),
                       "see redacted-1, person-2; redacted-3/redacted-4 +12015550101.")
        // At the very end of the text, and as the whole text.
        XCTAssertEqual(finalized("Jane Q Doe"), "person-2")
        XCTAssertEqual(finalized("id=abcdefghij12"), "id=redacted-4")
    }

    func testOtherShapesAreLeft() {
        // The same words followed by other bytes, or shorter ones: no form starts so.
        let text = "ab cdef12x ab_cdef12x Jane-Q-Doe x-y1234567 abcdefg abcdefghij123 Jane"
        XCTAssertEqual(finalized(text), text)
        let index = KnownValueIndex(pairs: pairs)
        XCTAssertTrue(index.mayStart(wordOf: 2, before: UInt8(ascii: "-")))
        XCTAssertTrue(index.mayStart(wordOf: 4, before: UInt8(ascii: " ")))
        XCTAssertTrue(index.mayStart(wordOf: 1, before: UInt8(ascii: "_")))
        XCTAssertTrue(index.mayStart(wordOf: 9, before: nil))
        XCTAssertFalse(index.mayStart(wordOf: 2, before: UInt8(ascii: " ")))
        XCTAssertFalse(index.mayStart(wordOf: 4, before: UInt8(ascii: "-")))
        XCTAssertFalse(index.mayStart(wordOf: 4, before: nil), "a form is 8 bytes or more: none ends a text 4 bytes on")
        XCTAssertFalse(index.mayStart(wordOf: 3, before: UInt8(ascii: "-")))
    }
}

private extension Array where Element == UInt8 {
    func base64EncodedForTest() -> String { Data(self).base64EncodedString() }
}
