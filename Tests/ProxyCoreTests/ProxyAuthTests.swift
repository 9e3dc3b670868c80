import HTTP1
@testable import ProxyCore
import XCTest

final class ProxyAuthTests: XCTestCase {
    private func fields(_ authorization: String?) -> HTTPFields {
        var fields = HTTPFields()
        fields.append(name: "Host", value: "a.test")
        if let authorization { fields.append(name: "Proxy-Authorization", value: authorization) }
        return fields
    }

    func testAnOpenProxyAdmitsEveryRequest() {
        XCTAssertTrue(ProxyAuth(credentials: nil).admits(fields(nil)))
        XCTAssertTrue(ProxyAuth(credentials: nil).admits(fields("Basic bm90OnVzZWQ=")))
    }

    func testBasicCredentialsMustMatchExactly() {
        let auth = ProxyAuth(credentials: ProxyCredentials(username: "user", password: "pa:ss"))
        XCTAssertTrue(auth.admits(fields("Basic dXNlcjpwYTpzcw==")), "base64 of user:pa:ss")
        XCTAssertTrue(auth.admits(fields("basic dXNlcjpwYTpzcw==")), "the scheme is case-insensitive")
        XCTAssertFalse(auth.admits(fields(nil)))
        XCTAssertFalse(auth.admits(fields("Basic dXNlcjpwYTpzcw")), "unpadded is another string")
        XCTAssertFalse(auth.admits(fields("Basic dXNlcjp3cm9uZw==")), "user:wrong")
        XCTAssertFalse(auth.admits(fields("Bearer dXNlcjpwYTpzcw==")))
        XCTAssertFalse(auth.admits(fields("Basic")))
    }
}
