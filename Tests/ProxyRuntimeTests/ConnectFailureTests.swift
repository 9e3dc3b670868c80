#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
@testable import ProxyRuntime
import XCTest

/// The runtime's one classification of connect errors; the SOCKS5 layer turns the kind into its
/// reply code, the HTTP side into 502 or 504.
final class ConnectFailureTests: XCTestCase {
    func testErrnoValuesMapToTheirKinds() {
        let cases: [(Int32, UpstreamFailure.Kind)] = [
            (ECONNREFUSED, .refused), (EHOSTUNREACH, .unreachable), (EHOSTDOWN, .unreachable),
            (EADDRNOTAVAIL, .unreachable), (ENETUNREACH, .networkUnreachable), (ENETDOWN, .networkUnreachable),
            (ETIMEDOUT, .timeout), (ECONNRESET, .reset), (EACCES, .notAllowed), (EPERM, .notAllowed),
            (EAFNOSUPPORT, .addressFamily), (EIO, .other),
        ]
        for (code, kind) in cases {
            let failure = failure(forErrno: code)
            XCTAssertEqual(failure.kind, kind, String(cString: strerror(code)))
            XCTAssertFalse(failure.message.isEmpty)
        }
        XCTAssertEqual(failure(forErrno: ECONNREFUSED).message, "connection refused")
    }
}
