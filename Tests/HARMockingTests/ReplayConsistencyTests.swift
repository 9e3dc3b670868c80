import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import HARMocking

/// The replay consistency table (Fixtures/replay-consistency.json) through HARReplayProtocol.
/// Tests/e2e/test_replay.py runs the same table through `harrec replay`: both must give each
/// step's expected outcome, so they give the same responses for the same request sequence.
final class ReplayConsistencyTests: XCTestCase {
    func testTheSharedTableThroughHARReplayProtocol() throws {
        let table = try JSONSerialization.jsonObject(with: Data(contentsOf: TestFixtures.url("replay-consistency.json")))
            as! [String: Any]
        let har = try JSONSerialization.data(withJSONObject: table["har"]!)
        try HARReplayProtocol.load(harData: har)
        defer { HARReplayProtocol.unload() }
        let session = HTTP.session(HARReplayProtocol.configuration())
        defer { session.invalidateAndCancel() }

        let steps = table["steps"] as! [[String: Any]]
        XCTAssertGreaterThan(steps.count, 10)
        for (number, step) in steps.enumerated() {
            if step["reset"] as? Bool == true {
                HARReplayProtocol.server.reset()
                continue
            }
            let method = step["method"] as! String, url = step["url"] as! String
            let what = "step \(number + 1): \(method) \(url)"
            let fetched = HTTP.fetch(HTTP.request(method, url, body: step["body"] as? String), session: session)
            switch step["expect"] {
            case let expected as [String: Any] where expected["unmatched"] != nil:
                XCTAssertTrue(fetched.error is UnmatchedRequestError, "\(what): \(String(describing: fetched.error))")
                XCTAssertTrue(fetched.errorText.contains(expected["unmatched"] as! String), "\(what): \(fetched.errorText)")
            case let expected as [String: Any]:
                XCTAssertEqual(fetched.status, expected["status"] as? Int, "\(what): \(fetched.errorText)")
                XCTAssertEqual(fetched.data ?? Data(), Data(base64Encoded: expected["body_base64"] as! String), what)
            case "failure" as String:
                XCTAssertNotNil(fetched.error as? URLError, "\(what): a recorded failure fails the task")
                XCTAssertNil(fetched.response, what)
            default:
                XCTFail("\(what): unknown expectation \(String(describing: step["expect"]))")
            }
        }
    }
}
