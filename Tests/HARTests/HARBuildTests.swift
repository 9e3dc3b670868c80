@testable import HAR
import TestSupport
import TextEncodings
import XCTest

final class HARBuildTests: XCTestCase {
    func testCookieHeader() {
        let c = HARBuild.cookies(fromCookieHeader: " a=1;b=2 ;  c = \"quoted value\" ; ;empty=; flag; d=x=y")
        XCTAssertEqual(c.map(\.name), ["a", "b", "c", "empty", "", "d"])
        XCTAssertEqual(c.map(\.value), ["1", "2", "quoted value", "", "flag", "x=y"])
        XCTAssertEqual(HARBuild.cookies(fromCookieHeader: ""), [])
        XCTAssertEqual(HARBuild.cookies(fromCookieHeader: " ; "), [])
        XCTAssertNil(c[0].httpOnly, "request cookies carry no attributes")
    }

    func testSetCookieFull() {
        let c = HARBuild.cookie(fromSetCookie: "sid=abc; Path=/app; Domain=.example.com; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Secure; HttpOnly; SameSite=Lax")
        XCTAssertEqual(c, HARCookie(name: "sid", value: "abc", path: "/app", domain: ".example.com",
                                    expires: "2015-10-21T07:28:00.000Z", httpOnly: true, secure: true, sameSite: "Lax"))
    }

    func testSetCookieDefaultsAndOddities() {
        let c = HARBuild.cookie(fromSetCookie: "  theme = \"dark\"  ")
        XCTAssertEqual(c, HARCookie(name: "theme", value: "dark", httpOnly: false, secure: false))
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; secure; HTTPONLY; samesite=None; path=/")?.secure, true)
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; secure; HTTPONLY; samesite=None")?.httpOnly, true)
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; SameSite")?.sameSite, nil)
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Expires=garbage")?.expires, nil)
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Unknown=1; Partitioned")?.name, "a")
        XCTAssertNil(HARBuild.cookie(fromSetCookie: ""))
        XCTAssertNil(HARBuild.cookie(fromSetCookie: "=; Path=/"))
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "token; Path=/")?.value, "token")
    }

    func testSetCookieDateFormats() {
        let expected = "2015-10-21T07:28:00.000Z"
        for date in ["Wed, 21 Oct 2015 07:28:00 GMT",       // IMF-fixdate
                     "Wednesday, 21-Oct-15 07:28:00 GMT",    // RFC 850
                     "Wed Oct 21 07:28:00 2015",             // asctime
                     "Wed, 21-Oct-2015 07:28:00 GMT",        // Netscape
                     "wed, 21 oct 2015 7:28:0 gmt"] {
            XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Expires=\(date)")?.expires, expected, date)
        }
        XCTAssertEqual(HARDate.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HARDate.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT"), 784_111_777)
        XCTAssertEqual(HARDate.parseHTTPDate("Sun Nov  6 08:49:37 1994"), 784_111_777)
        XCTAssertNil(HARDate.parseHTTPDate("Wed, 31 Feb 2015 07:28:00 GMT"))
        XCTAssertNil(HARDate.parseHTTPDate("Wed, 21 Oct 2015 25:28:00 GMT"))
        XCTAssertNil(HARDate.parseHTTPDate("21 Oct 2015"))
    }

    func testSetCookieMaxAge() {
        let now = 1_445_412_480.0  // 2015-10-21T07:28:00Z
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Max-Age=60", receivedAt: now)?.expires, "2015-10-21T07:29:00.000Z")
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Expires=Wed, 21 Oct 2030 07:28:00 GMT; Max-Age=60", receivedAt: now)?.expires,
                       "2015-10-21T07:29:00.000Z", "Max-Age wins over Expires")
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Max-Age=0", receivedAt: now)?.expires, "0001-01-01T00:00:00.000Z")
        XCTAssertNil(HARBuild.cookie(fromSetCookie: "a=b; Max-Age=60")?.expires, "ignored without receivedAt")
        XCTAssertEqual(HARBuild.cookie(fromSetCookie: "a=b; Max-Age=60; Expires=Wed, 21 Oct 2015 07:28:00 GMT")?.expires,
                       "2015-10-21T07:28:00.000Z")
    }

    func testQueryString() {
        let q = HARBuild.queryString(fromURL: "https://h/p?a=1&b=two+words&c=%41%zz%4&&d&e=x=y&%E2%82%AC=%FF#frag=1&x=2")
        XCTAssertEqual(q.map(\.name), ["a", "b", "c", "d", "e", "\u{20AC}"])
        XCTAssertEqual(q.map(\.value), ["1", "two words", "A%zz%4", "", "x=y", "\u{FFFD}"])
        XCTAssertEqual(HARBuild.queryString(fromURL: "https://h/p"), [])
        XCTAssertEqual(HARBuild.queryString(fromURL: "https://h/p?"), [])
        XCTAssertEqual(HARBuild.queryString(fromURL: "https://h/p#a?b=1"), [])
        XCTAssertEqual(HARBuild.queryString(fromURL: "https://h/p?x=%"), [HARQueryParam(name: "x", value: "%")])
        XCTAssertEqual(HARBuild.queryString(fromURL: "https://h/p?=v"), [HARQueryParam(name: "", value: "v")])
    }

    func testFormParams() {
        let p = HARBuild.formParams(fromURLEncoded: utf8("a=1&token=abc123&b=two%20words&c=x+y&&z"))
        XCTAssertEqual(p, [HARPostParam(name: "a", value: "1"), HARPostParam(name: "token", value: "abc123"),
                           HARPostParam(name: "b", value: "two words"), HARPostParam(name: "c", value: "x y"),
                           HARPostParam(name: "z", value: "")])
        XCTAssertEqual(HARBuild.formParams(fromURLEncoded: []), [])
    }

    func testBase64() {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                                           ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(utf8(plain)), encoded)
            XCTAssertEqual(Base64.decode(encoded), utf8(plain))
            XCTAssertEqual(Base64.decodedCount(encoded), plain.utf8.count)
        }
        let all = (0..<256).map { UInt8($0) }
        XCTAssertEqual(Base64.decode(Base64.encode(all)), all)
        XCTAssertEqual(Base64.encode([0xFB, 0xFF]), "+/8=")
        for bad in ["Zg", "Zg=", "Zg===", "Z===", "====", "Zm9v\n", "Zm 9v", "Zm9-", "Zm_v", "Zh==", "Zm9=", "Zg==Zg==", "=Zg="] {
            XCTAssertNil(Base64.decode(bad), bad)
            XCTAssertNil(Base64.decodedCount(bad), bad)
        }
        var rng = SplitMix64(seed: 99)
        for n in 0..<300 {
            let bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let encoded = Base64.encode(bytes)
            XCTAssertEqual(encoded.utf8.count, (n + 2) / 3 * 4)
            XCTAssertEqual(Base64.decode(encoded), bytes)
        }
    }
}
