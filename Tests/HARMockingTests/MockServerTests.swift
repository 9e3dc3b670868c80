import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import HARMocking

/// The engine without URLSession in between, so many more threads hit the lock at once.
final class MockServerTests: XCTestCase {
    func testDecideIsExactlyOnceUnderContention() {
        let server = MockServer(owner: "Test", activation: "activate")
        var entries = (0..<200).map { _ in MockServer.Entry(item: item("GET", "/x", repeatability: .once)) }
        entries.append(MockServer.Entry(item: item("GET", "/x", repeatability: .times(300))))
        server.activate(entries, source: "test")
        let request = URLRequest(url: URL(string: "https://api.example.com/x")!)
        let picks = Locked<[Int?]>([])
        DispatchQueue.concurrentPerform(iterations: 600) { _ in
            let index: Int?
            if case .serve(let i, _) = server.decide(request) { index = i } else { index = nil }
            picks.withLock { $0.append(index) }
        }
        let all = picks.snapshot
        XCTAssertEqual(all.count, 600)
        for i in 0..<200 { XCTAssertEqual(all.filter { $0 == i }.count, 1, "item \(i)") }
        XCTAssertEqual(all.filter { $0 == 200 }.count, 300)
        XCTAssertEqual(all.filter { $0 == nil }.count, 100, "used up after 500 serves")
        XCTAssertEqual(server.calls.count, 600)
        XCTAssertEqual(server.unusedItems(), [])
        XCTAssertEqual(server.state.withLock { $0.queue.served }, Array(repeating: 1, count: 200) + [300])
    }

    func testNearestCandidatesPreferTheClosestPathAndSkipRepeats() {
        let server = MockServer(owner: "Test", activation: "activate()")
        server.activate([MockServer.Entry(item: item("GET", "/v1/feed", repeatability: .once, label: "#1 GET /v1/feed")),
                         MockServer.Entry(item: item("GET", "/v1/feed", repeatability: .once, label: "#2 GET /v1/feed")),
                         MockServer.Entry(item: item("GET", "/v1/feed", label: "#3 GET /v1/feed")),
                         MockServer.Entry(item: item("GET", "/v1/projects/42", label: "#4 GET /v1/projects/42"))],
                        source: "test")
        let request = URLRequest(url: URL(string: "https://api.example.com/v1/projects/43")!)
        guard case .fail(let error) = server.decide(request) else { return XCTFail("nothing matches /v1/projects/43") }
        let candidates = error.description.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.contains(". #") }
        XCTAssertEqual(candidates, [
            "  1. #4 GET /v1/projects/42: path: expected /v1/projects/42, got /v1/projects/43",
            "  2. #1 GET /v1/feed: path: expected /v1/feed, got /v1/projects/43",
        ])
    }

    func testUsedUpAndCandidatesAppearTogether() {
        let server = MockServer(owner: "Test", activation: "activate()")
        server.activate([MockServer.Entry(item: item("GET", "/x", query: [.equals("v", "1")], repeatability: .once, label: "#1 GET /x")),
                         MockServer.Entry(item: item("GET", "/x", query: [.equals("v", "2")], label: "#2 GET /x"))],
                        source: "test")
        let request = URLRequest(url: URL(string: "https://api.example.com/x?v=1")!)
        guard case .serve(0, _) = server.decide(request) else { return XCTFail("first request is served by #1") }
        guard case .fail(let error) = server.decide(request) else { return XCTFail("second request has no item left") }
        XCTAssertEqual(error.description, """
            Test: no response for GET https://api.example.com/x?v=1 in test (2 items).
            Nearest candidates:
              1. #2 GET /x: query item "v": expected "2", got "1"
            Matched but used up:
              #1 GET /x: already served once
            What to do: the app made this request more often than recorded: re-record, or give the item .always or .times(n); \
            if "v" changes from run to run, match it with .present("v"); check that activate() was called with the intended scenario.
            """)
    }

    func testLabelFallsBackToMethodAndPath() {
        let server = MockServer(owner: "Test", activation: "activate()")
        server.activate([MockServer.Entry(item: item("PUT", "/y"))], source: "test")
        guard case .fail(let error) = server.decide(URLRequest(url: URL(string: "https://api.example.com/x")!)) else {
            return XCTFail("must not match")
        }
        XCTAssertTrue(error.description.contains("  1. #1 PUT /y: method: expected PUT, got GET; path: expected /y, got /x"),
                      error.description)
    }

    func testHeaderFieldsJoinRepeatsCaseInsensitively() {
        XCTAssertEqual(MockServer.headerFields([HTTPHeader("Set-Cookie", "a=1"), HTTPHeader("set-cookie", "b=2"),
                                                HTTPHeader("X", "y")]),
                       ["Set-Cookie": "a=1, b=2", "X": "y"])
    }

    /// The byte-wise reading of an ASCII URL and the reading by characters agree on every URL
    /// made of the pieces that matter to the parser (schemes, userinfo, brackets, ports, paths,
    /// queries, fragments, CR LF), including the ones both refuse.
    func testURLPartsReadByBytesAsByCharacters() {
        let pieces = ["https", "HTTP", "ws", "a+b.c-d", "x_y", "://", ":/", "/", "//", "?", "#", "@", "user:pw@", "[", "]",
                      "[::1]", "[fe80::1]:8443", ":", ":443", ":99999", ":+80", ":-0", "Host.Example", "h", "a=1", "&",
                      "%41", "%zz", "=", "\r\n", " ", "é", "."]
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...9, using: &generator)
            var url = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            if Bool.random(using: &generator) { url = ["https://", "http://H:8080", "ws://[::1]"].randomElement(using: &generator)! + url }
            let bytewise = MockURLParts(url)
            XCTAssertEqual(bytewise, MockURLParts(characters: url), url)
            if bytewise != nil { accepted += 1 }
        }
        XCTAssertGreaterThan(accepted, 2_000, "the generator makes URLs both readers accept")
        XCTAssertEqual(MockURLParts("HTTPS://User@[FE80::1]:8443/A/b?Q=1#frag"),
                       MockURLParts(scheme: "https", host: "fe80::1", port: 8443, path: "/A/b", rawQuery: "Q=1"))
    }

    func testURLPartsEdgeCases() {
        XCTAssertNil(MockURLParts("relative/path"))
        XCTAssertNil(MockURLParts("https://host:99999/"))
        XCTAssertNil(MockURLParts("https:///nohost"))
        let p = MockURLParts("https://h.example?x=%ZZ&y=%E2%82%AC&z=a+b")
        XCTAssertEqual(p?.path, "/")
        XCTAssertEqual(p?.queryItems.map(\.name), ["x", "y", "z"])
        XCTAssertEqual(p?.queryItems.map(\.value), ["%ZZ", "€", "a+b"])
        XCTAssertEqual(MockJSON.canonical(#"{"a":1,"a":2,"b":[true,null,1.50]}"#), MockJSON.canonical(#"{"b":[true,null,1.5],"a":2}"#))
        XCTAssertNotEqual(MockJSON.canonical(#"{"a":"1"}"#), MockJSON.canonical(#"{"a":1}"#))
        XCTAssertNil(MockJSON.canonical("{nope"))
    }
}
