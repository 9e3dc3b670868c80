import XCTest
import HAR
@testable import Redaction

/// Query parameters and form fields, in every place a URL or form can be.
final class QueryAndURLTests: XCTestCase {
    func testEveryDefaultParameterNameInURLAndQueryString() {
        let names = ["token", "access_token", "id_token", "refresh_token", "api_key", "apikey", "key", "secret",
                     "client_secret", "password", "passwd", "code", "signature", "sig", "X-Amz-Signature",
                     "X-Amz-Credential", "X-Goog-Signature"]
        let query = names.enumerated().map { "\($0.element)=v\($0.offset)x9Q" }.joined(separator: "&")
        let url = "https://api.example.com/v1/search?page=2&" + query + "&q=barcode"
        let r = redacted([makeEntry(url: url)])
        let req = r.log.entries[0].request
        let expected = names.enumerated().map { "\($0.element)=redacted-\($0.offset + 1)" }.joined(separator: "&")
        XCTAssertEqual(req.url, "https://api.example.com/v1/search?page=2&" + expected + "&q=barcode")
        XCTAssertEqual(req.queryString.count, names.count + 2)
        XCTAssertEqual(req.queryString.first?.value, "2")
        XCTAssertEqual(req.queryString.last?.value, "barcode")
        for (i, item) in req.queryString.dropFirst().prefix(names.count).enumerated() {
            XCTAssertEqual(item.value, "redacted-\(i + 1)", item.name)
        }
        XCTAssertEqual(r.report.counts[.secretParameters]?[.url], names.count)
        XCTAssertEqual(r.report.counts[.secretParameters]?[.query], names.count)
    }

    func testParameterNamesAreWholeAndCaseInsensitive() {
        let url = "https://api.example.com/?API_KEY=abc123def&barcode=123456&encode=utf8&keyword=shoes&codec=h264&made=1&tokenizer=bpe&sigma=2"
        let r = redacted([makeEntry(url: url)])
        XCTAssertEqual(r.log.entries[0].request.url,
                       "https://api.example.com/?API_KEY=redacted-1&barcode=123456&encode=utf8&keyword=shoes&codec=h264&made=1&tokenizer=bpe&sigma=2")
    }

    func testExtraParameterNameDoesNotMatchInsideOtherWords() throws {
        let config = try configuration(rules: #"{"queryParams": ["de"]}"#)
        let r = redacted([makeEntry(url: "https://api.example.com/?made=1&de=berlin&code_de=2")], config: config)
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/?made=1&de=redacted-1&code_de=2")
        XCTAssertEqual(scanned("made=1 and de=berlin, encode=x", config: config), "made=1 and de=redacted-1, encode=x")
    }

    func testPercentEncodedValuesMatchQueryStringPlaceholders() {
        let url = "https://api.example.com/cb?code=a%2Fb%2Bc%3D&email=bob%40corp.com"
        let r = redacted([makeEntry(url: url)])
        let req = r.log.entries[0].request
        XCTAssertEqual(req.url, "https://api.example.com/cb?code=redacted-1&email=user1@example.com")
        XCTAssertEqual(req.queryString.map(\.value), ["redacted-1", "user1@example.com"])
    }

    func testFormBodyParamsAndTextAgreeAndSizesFollow() {
        let form = "user=bob&password=hunter2&code=9876&next=%2Fhome"
        let e = makeEntry(method: "POST", url: "https://api.example.com/login",
                          requestBody: ("application/x-www-form-urlencoded", form))
        let r = redacted([e])
        let post = r.log.entries[0].request.postData!
        XCTAssertEqual(post.text, "user=bob&password=redacted-1&code=redacted-2&next=%2Fhome")
        XCTAssertEqual(post.params?.map(\.name), ["user", "password", "code", "next"])
        XCTAssertEqual(post.params?.map(\.value), ["bob", "redacted-1", "redacted-2", "/home"])
        let size = post.text!.utf8.count
        XCTAssertEqual(r.log.entries[0].request.bodySize, size)
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Content-Length"), String(size))
        XCTAssertEqual(r.report.counts[.secretParameters]?[.body], 4)
    }

    func testFormBodyPlusMeansSpace() {
        let e = makeEntry(method: "POST", requestBody: ("application/x-www-form-urlencoded", "password=two+words&q=a+b"))
        let r = redacted([e])
        XCTAssertEqual(r.log.entries[0].request.postData?.text, "password=redacted-1&q=a+b")
        XCTAssertEqual(r.log.entries[0].request.postData?.params?.first?.value, "redacted-1")
    }

    func testURLsInRefererLocationOriginAndRedirectURL() {
        let e = makeEntry(requestHeaders: [("Referer", "https://app.example.com/cb?code=abc123&state=xyz"),
                                           ("Origin", "https://admin:pw1234@portal.corp")],
                          status: 302,
                          responseHeaders: [("Location", "https://app.example.com/home#access_token=tok987654&token_type=bearer"),
                                            ("Content-Location", "/x?sig=deadbeef")])
        let r = redacted([e])
        let req = r.log.entries[0].request, resp = r.log.entries[0].response
        XCTAssertEqual(header(req.headers, "Referer"), "https://app.example.com/cb?code=redacted-1&state=xyz")
        // The password of userinfo is dropped, not replaced: `user:placeholder@` still reads as
        // basic-auth credentials to every secret scanner.
        XCTAssertEqual(header(req.headers, "Origin"), "https://redacted-2@internal-1.example.invalid")
        XCTAssertEqual(header(resp.headers, "Location"), "https://app.example.com/home#access_token=redacted-3&token_type=bearer")
        XCTAssertEqual(resp.redirectURL, "https://app.example.com/home#access_token=redacted-3&token_type=bearer")
        XCTAssertEqual(header(resp.headers, "Content-Location"), "/x?sig=redacted-4")
    }

    func testURLsInsideBodies() {
        XCTAssertEqual(scanned("see https://x.example.com/a?token=abc123xyz&b=1 now"),
                       "see https://x.example.com/a?token=redacted-1&b=1 now")
        XCTAssertEqual(body(#"{"next": "https://x.example.com/p?page=3&sig=a1b2c3d4", "n": 1}"#),
                       #"{"next": "https://x.example.com/p?page=3&sig=redacted-1", "n": 1}"#)
        XCTAssertEqual(scanned("<a href=\"/reset?token=Q1w2E3r4&amp;x=1\">"),
                       "<a href=\"/reset?token=redacted-1&amp;x=1\">")
    }

    func testURLUserinfoEverywhere() {
        let e = makeEntry(url: "https://deploy:gh-pass-99@git.example.com/repo.git",
                          responseBody: ("text/plain", "mirror: ftp://anon:anon-pw@files.example.org/pub and postgres://app:s3cr3t@db.example.net:5432/app"))
        let r = redacted([e])
        XCTAssertEqual(r.log.entries[0].request.url, "https://redacted-1@git.example.com/repo.git")
        XCTAssertEqual(r.log.entries[0].response.content.text,
                       "mirror: ftp://redacted-2@files.example.org/pub and postgres://redacted-3@db.example.net:5432/app")
        XCTAssertFalse(text(r.bytes).contains("gh-pass-99") || text(r.bytes).contains("anon-pw") || text(r.bytes).contains("s3cr3t"))
        // A service user with no password is no secret.
        XCTAssertEqual(scanned("ssh://git@github.com/org/app.git"), "ssh://git@github.com/org/app.git")
        XCTAssertEqual(r.report.counts[.urlUserinfo]?[.url], 2)
        XCTAssertEqual(r.report.counts[.urlUserinfo]?[.body], 4)
        XCTAssertNil(r.report.counts[.email], "the password@host of userinfo is not an email")
    }

    func testQueryParametersInMultipartAndParams() {
        let boundary = "----harrecBoundary7MA4YWxk"
        let parts = [
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nalice\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nhunter2!\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"profile\"\r\nContent-Type: application/json\r\n\r\n{\"email\": \"alice@corp-mail.com\", \"api_key\": \"k-1234\"}\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{1}PNG token=notreallytext\r\n",
            "--\(boundary)--\r\n",
        ]
        let text = parts.joined()
        let e = makeEntry(method: "POST", requestBody: ("multipart/form-data; boundary=\(boundary)", text))
        let r = redacted([e])
        let out = r.log.entries[0].request.postData!.text!
        let expected = [
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nperson-1\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nredacted-1\r\n",
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"profile\"\r\nContent-Type: application/json\r\n\r\n{\"email\": \"user1@example.com\", \"api_key\": \"redacted-2\"}\r\n",
            // A binary part keeps its length: the placeholder is padded to the value's 13 bytes.
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\u{1}PNG token=redacted-3***\r\n",
            "--\(boundary)--\r\n",
        ].joined()
        XCTAssertEqual(out, expected)
        XCTAssertEqual(r.report.binaryBodies, 1, "the image part is scanned as binary and counted")
        XCTAssertEqual(r.log.entries[0].request.bodySize, out.utf8.count)
        XCTAssertEqual(header(r.log.entries[0].request.headers, "Content-Length"), String(out.utf8.count))
    }

    /// Queries and cookie headers are split as bytes: every piece kept, empty ones too, and a
    /// separator next to a combining mark (one Character with it) still separates.
    func testSplittingAtBytes() {
        XCTAssertEqual("".pieces(splitAt: 0x26), [""])
        XCTAssertEqual("&a=1&&b=é&".pieces(splitAt: 0x26), ["", "a=1", "", "b=é", ""])
        XCTAssertEqual("x=1&\u{301}y=2".pieces(splitAt: 0x26).count, 2)
        let sub = "k=v; sid=abc"[...]
        XCTAssertEqual(sub.pieces(splitAt: 0x3B), ["k=v", " sid=abc"])
        XCTAssertEqual(sub.firstIndex(ofByte: 0x3D).map { sub[sub.index(afterByte: $0)...] }, "v; sid=abc")
        let r = redacted([makeEntry(url: "https://api.example.com/a?x=1&\u{301}token=Zq7tok3nLp9xV2aa&y=%C3%A9#f=1",
                                    requestHeaders: [("Cookie", "sid=Yq8wLm3Zp7tok3nQ; theme=dark;;=x")])])
        let request = r.log.entries[0].request
        XCTAssertFalse(request.url.contains("Zq7tok3nLp9xV2aa"))
        XCTAssertTrue(request.url.hasSuffix("&y=%C3%A9#f=1"))
        XCTAssertEqual(header(request.headers, "Cookie"), "sid=redacted-2; theme=redacted-3;;=redacted-4")
    }
}

