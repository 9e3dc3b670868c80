import XCTest
import HAR
@testable import Redaction

/// Headers: Authorization schemes, Cookie per cookie, Set-Cookie attributes, named secret headers.
final class HeaderAndCookieTests: XCTestCase {
    func testAuthorizationKeepsSchemeAndReplacesCredential() {
        let e = makeEntry(requestHeaders: [("Authorization", "Bearer abcDEF123456ghiJKL"),
                                           ("Proxy-Authorization", "Basic dXNlcjpodW50ZXIy")])
        let e2 = makeEntry(index: 1, requestHeaders: [("authorization", "Basic dXNlcjpodW50ZXIy"),
                                                      ("Authorization", "Digest username=\"bob\", response=\"6629fae49393a053\"")])
        let r = redacted([e, e2])
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Authorization"), "Bearer redacted-1")
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Proxy-Authorization"), "Basic redacted-2")
        // The same credential in a later entry gets the same placeholder.
        XCTAssertEqual(r.log.entries[1].request.headers[0].value, "Basic redacted-2")
        XCTAssertEqual(r.log.entries[1].request.headers[1].value, "Digest redacted-3")
        XCTAssertEqual(r.report.counts[.authorizationHeader]?[.header], 4)
        assertNoOccurrence(["abcDEF123456ghiJKL", "dXNlcjpodW50ZXIy", "6629fae49393a053"], in: r.bytes)
    }

    /// `_trailers` (chunked and HTTP/2 trailer fields) get the header rules: a secret-named
    /// trailer is replaced, with the same placeholder where the value stands elsewhere, a gRPC
    /// status stays, and `--check` sees a trailer left as it was.
    func testTrailersAreRedactedAsHeaders() {
        func trailers(_ pairs: [(String, String)]) -> JSONFields {
            [(key: "_trailers", value: .array(pairs.map { .object([(key: "name", value: .string($0.0)), (key: "value", value: .string($0.1))]) }))]
        }
        var e = makeEntry(requestHeaders: [("X-Session-Token", "s3cr3t-trailer-value-9f8e7d6c5b4a")])
        e.request.custom = trailers([("X-Request-Signature", "c2lnbmF0dXJlLW9mLXRoZS1ib2R5")])
        e.response.custom = trailers([("X-Session-Token", "s3cr3t-trailer-value-9f8e7d6c5b4a"), ("grpc-status", "0"), ("grpc-message", "ok")])
        let log = makeLog([e])
        XCTAssertTrue(findings(log).contains { $0.path.contains("_trailers") }, "--check reports the raw trailer")
        let r = redacted([e])
        guard case .array(let items)? = r.log.entries[0].response.custom.first(where: { $0.key == "_trailers" })?.value,
              case .array(let requestItems)? = r.log.entries[0].request.custom.first(where: { $0.key == "_trailers" })?.value else {
            return XCTFail("the trailers are gone")
        }
        let values = items.compactMap { item -> String? in
            if case .object(let fields) = item { return fields.first { $0.key == "value" }?.value.stringValue }
            return nil
        }
        XCTAssertEqual(values, ["redacted-1", "0", "ok"])
        XCTAssertEqual(header(r.log.entries[0].request.headers, "X-Session-Token"), "redacted-1", "one value, one placeholder")
        if case .object(let fields) = requestItems[0] {
            XCTAssertNotEqual(fields.first { $0.key == "value" }?.value.stringValue, "c2lnbmF0dXJlLW9mLXRoZS1ib2R5")
        }
        assertNoOccurrence(["s3cr3t-trailer-value-9f8e7d6c5b4a", "c2lnbmF0dXJlLW9mLXRoZS1ib2R5"], in: r.bytes)
        XCTAssertTrue(findings(r.log).isEmpty, "\(findings(r.log))")
    }

    func testAuthorizationWithoutSchemeIsReplacedWhole() {
        let r = redacted([makeEntry(requestHeaders: [("Authorization", "sk-some-opaque-token")])])
        XCTAssertEqual(r.log.entries[0].request.headers[0].value, "redacted-1")
    }

    func testAuthorizationWithJWTGetsPlaceholderJWT() throws {
        let jwt = makeJWT(header: #"{"alg":"HS256","typ":"JWT"}"#, payload: #"{"sub":"alice","name":"Alice"}"#)
        let r = redacted([makeEntry(requestHeaders: [("Authorization", "Bearer " + jwt)])])
        let value = r.log.entries[0].request.headers[0].value
        XCTAssertTrue(value.hasPrefix("Bearer "), value)
        let token = String(value.dropFirst(7))
        XCTAssertNotEqual(token, jwt)
        XCTAssertEqual(jwtPart(token, 0).map { $0.map(\.key) }, ["alg", "typ"])
    }

    func testCookieHeaderIsRedactedPerCookieAndCookiesArrayAgrees() {
        let e = makeEntry(requestHeaders: [("Cookie", "sid=s3cr3tvalue; theme=dark;lang=en-GB")])
        let r = redacted([e])
        let req = r.log.entries[0].request
        XCTAssertEqual(header(req.headers, "Cookie"), "sid=redacted-1; theme=redacted-2;lang=redacted-3")
        XCTAssertEqual(req.cookies.map(\.name), ["sid", "theme", "lang"])
        XCTAssertEqual(req.cookies.map(\.value), ["redacted-1", "redacted-2", "redacted-3"])
        XCTAssertEqual(r.report.counts[.cookies]?[.cookie], 6)
        assertNoOccurrence(["s3cr3tvalue", "dark", "en-GB"], in: r.bytes)
    }

    func testCookieWithoutValueAndEmptyValueAreKept() {
        let r = redacted([makeEntry(requestHeaders: [("Cookie", "flag; empty=; sid=abc123")])])
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Cookie"), "flag; empty=; sid=redacted-1")
    }

    func testSetCookieValueReplacedAttributesKept() {
        let e = makeEntry(responseHeaders: [
            ("Set-Cookie", "session=abc123xyz; Path=/; Domain=app.corp; Expires=Wed, 21 Oct 2037 07:28:00 GMT; HttpOnly; Secure; SameSite=Lax"),
            ("Set-Cookie", "prefs=compact; Path=/app; Domain=example.com"),
        ])
        let r = redacted([e])
        let resp = r.log.entries[0].response
        XCTAssertEqual(resp.headers[0].value,
                       "session=redacted-1; Path=/; Domain=internal-1.example.invalid; Expires=Wed, 21 Oct 2037 07:28:00 GMT; HttpOnly; Secure; SameSite=Lax")
        XCTAssertEqual(resp.headers[1].value, "prefs=redacted-2; Path=/app; Domain=example.com")
        XCTAssertEqual(resp.cookies.map(\.value), ["redacted-1", "redacted-2"])
        XCTAssertEqual(resp.cookies[0].domain, "internal-1.example.invalid")
        XCTAssertEqual(resp.cookies[0].path, "/")
        XCTAssertEqual(resp.cookies[0].httpOnly, true)
        XCTAssertEqual(resp.cookies[0].sameSite, "Lax")
        XCTAssertEqual(resp.cookies[0].expires, "2037-10-21T07:28:00.000Z")
    }

    func testSetCookieThenCookieCorrelate() {
        let login = makeEntry(index: 0, responseHeaders: [("Set-Cookie", "sid=Zm9vYmFyYmF6; Path=/")])
        let next = makeEntry(index: 1, requestHeaders: [("Cookie", "sid=Zm9vYmFyYmF6")])
        let r = redacted([login, next])
        XCTAssertEqual(r.log.entries[0].response.cookies[0].value, "redacted-1")
        XCTAssertEqual(r.log.entries[1].request.cookies[0].value, "redacted-1")
        XCTAssertEqual(header(r.log.entries[1].request.headers, "Cookie"), "sid=redacted-1")
    }

    func testNamedSecretHeaders() {
        let names = ["X-Api-Key", "X-Auth-Token", "X-Access-Token", "X-CSRF-Token", "X-XSRF-Token", "X-Session-Token",
                     "X-Amz-Security-Token"]
        let e = makeEntry(requestHeaders: names.enumerated().map { ($0.element, "value-\($0.offset)-q8Zr") })
        let r = redacted([e])
        for (i, h) in r.log.entries[0].request.headers.prefix(names.count).enumerated() {
            XCTAssertEqual(h.value, "redacted-\(i + 1)", h.name)
        }
        XCTAssertEqual(r.report.counts[.secretHeaders]?[.header], names.count)
    }

    func testHeadersWhoseNameContainsASecretWord() {
        let secret = ["X-Refresh-Token", "X-Client-Secret", "X-Goog-Api-Key", "X-Session-Id", "X-Hub-Signature-256",
                      "my-apikey"]
        let plain = ["X-Request-Id", "Accept", "User-Agent", "X-Signed", "Sec-WebSocket-Key"]
        // Plain headers get values of their own: the secret headers' value, met again bare, would
        // be replaced by `known-secrets` whatever the header's name.
        let e = makeEntry(requestHeaders: secret.map { ($0, "opaque-7f3k9q") } + plain.map { ($0, "opaque-\($0)") })
        let r = redacted([e])
        let headers = r.log.entries[0].request.headers
        for h in headers.prefix(secret.count) { XCTAssertEqual(h.value, "redacted-1", h.name) }
        for h in headers.dropFirst(secret.count).prefix(plain.count) { XCTAssertEqual(h.value, "opaque-\(h.name)", h.name) }
    }

    func testResponseHeadersAreScannedToo() {
        let e = makeEntry(responseHeaders: [("X-Debug-Upstream", "http://10.1.2.3:8080/users?token=zz9911aa"),
                                            ("WWW-Authenticate", #"Bearer realm="api", error="invalid_token""#)])
        let r = redacted([e])
        XCTAssertEqual(r.log.entries[0].response.headers[0].value, "http://192.0.2.1:8080/users?token=redacted-1")
        XCTAssertEqual(r.log.entries[0].response.headers[1].value, #"Bearer realm="api", error="invalid_token""#)
    }

    func testWWWAuthenticateParametersAreNotTokens() {
        let value = #"Bearer authorization_uri="https://login.example.com/authorize", resource_id="api""#
        let r = redacted([makeEntry(status: 401, responseHeaders: [("WWW-Authenticate", value)])])
        XCTAssertEqual(r.log.entries[0].response.headers[0].value, value)
    }

    func testDisabledCookieRuleStillScansCookieValuesInBothPlaces() {
        let jwt = makeJWT(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"bob"}"#)
        let e = makeEntry(requestHeaders: [("Cookie", "theme=dark; auth=" + jwt)],
                          responseHeaders: [("Set-Cookie", "auth=\(jwt); Path=/")])
        let r = redacted([e], config: try! configuration(rules: #"{"disable": ["cookies", "set-cookies"]}"#))
        let req = r.log.entries[0].request
        XCTAssertTrue(header(req.headers, "Cookie")!.hasPrefix("theme=dark; auth=eyJ"))
        XCTAssertEqual(req.cookies[0].value, "dark")
        XCTAssertNotEqual(req.cookies[1].value, jwt)
        XCTAssertEqual(req.cookies[1].value, String(header(req.headers, "Cookie")!.dropFirst("theme=dark; auth=".count)))
        XCTAssertNotEqual(r.log.entries[0].response.cookies[0].value, jwt)
        assertNoOccurrence([jwt], in: r.bytes)
    }

    func testCookieValueLearnedFromHeaderIsReplacedInEchoedBody() {
        // An API that echoes request headers back (like httpbin) must not leak the cookie.
        let e = makeEntry(requestHeaders: [("Cookie", "sid=q7w8e9r0t1")],
                          responseBody: ("application/json", #"{"headers": [["Cookie", "sid=q7w8e9r0t1"]]}"#))
        let r = redacted([e])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"headers": [["Cookie", "sid=redacted-1"]]}"#)
    }
}
