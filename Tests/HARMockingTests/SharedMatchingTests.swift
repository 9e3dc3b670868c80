import HARScenarios
import XCTest

/// The matcher without URLSession: what a replaying proxy hands it is a method, a URL, headers and
/// a body (`MatchInput`), and it answers as HARMocking's mocks do.
final class SharedMatchingTests: XCTestCase {
    let condition = RequestCondition(method: "POST", scheme: "https", host: "api.test", path: "/v1/items",
                                     query: [.equals("page", "2"), .present("cursor")],
                                     body: .jsonSubset(#"{"kind":"note"}"#))

    func testAProxiedRequestMatchesLikeAURLRequest() {
        let input = MatchInput(method: "post", url: "https://api.test:443/v1/items?cursor=abc&page=2",
                               headers: ["Content-Type": "application/json"],
                               body: Array(#"{"kind":"note","text":"hi"}"#.utf8))
        let report = RequestMatcher.evaluate(condition, against: input)
        XCTAssertTrue(report.matches, "\(report.mismatches.map(\.explanation))")
        XCTAssertEqual(input.headers["content-type"], "application/json", "names are lowercased")
        XCTAssertEqual(input.requestLine, "POST https://api.test:443/v1/items?cursor=abc&page=2")
    }

    func testAMissSaysWhatDiffered() {
        let input = MatchInput(method: "POST", url: "https://api.test/v1/items?page=3", headers: [:],
                               body: Array(#"{"kind":"photo"}"#.utf8))
        let report = RequestMatcher.evaluate(condition, headers: [HeaderCondition(name: "X-Token", value: nil)], against: input)
        XCTAssertEqual(report.mismatches.map(\.explanation), [
            #"query item "page": expected "2", got "3""#,
            #"query item "cursor": expected present, missing in the request"#,
            #"body: expected JSON containing {"kind":"note"}, got "{"kind":"photo"}""#,
            "header X-Token: expected present, got none",
        ])
        XCTAssertEqual(report.matchedParts, 5, "method, scheme, host, port, path")
    }
}
