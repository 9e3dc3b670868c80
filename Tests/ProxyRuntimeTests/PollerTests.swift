import Dispatch
#if canImport(Glibc)
import Glibc
private let streamType = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamType = SOCK_STREAM
#endif
@testable import ProxyRuntime
import XCTest

/// Both readiness backends report the same thing for the same descriptors: reads, writes, a
/// hang-up whatever the interest, removal, and the waker from another thread.
final class PollerTests: XCTestCase {
    private func pair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, streamType, 0, &fds), 0)
        for fd in fds { XCTAssertEqual(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0) }
        return (fds[0], fds[1])
    }

    private func ready(_ poller: Poller, timeout: Int32 = 200) -> [UInt64: Readiness] {
        var seen: [UInt64: Readiness] = [:]
        XCTAssertTrue(poller.wait(milliseconds: timeout) { token, readiness in seen[token, default: []].formUnion(readiness) })
        return seen
    }

    func testBothBackendsAgree() throws {
        #if os(Linux)
        let backends = [PollerBackend.epoll, .poll]
        #else
        let backends = [PollerBackend.poll]
        #endif
        for backend in backends {
            let poller = try Poller(backend: backend)
            let (a, b) = pair()
            defer { close(a) }
            poller.add(a, token: 7, interest: .read)
            XCTAssertNil(ready(poller, timeout: 20)[7], "\(backend): nothing to read yet")
            XCTAssertEqual(write(b, "x", 1), 1)
            XCTAssertEqual(ready(poller)[7]?.contains(.read), true, "\(backend)")
            poller.modify(a, token: 7, interest: [.read, .write])
            XCTAssertEqual(ready(poller)[7]?.contains(.write), true, "\(backend)")
            // A hang-up comes even with no interest.
            poller.modify(a, token: 7, interest: [])
            close(b)
            XCTAssertEqual(ready(poller)[7]?.contains(.hangup), true, "\(backend)")
            poller.remove(a)
            XCTAssertNil(ready(poller, timeout: 20)[7], "\(backend): removed")
            // The waker, from another thread.
            // wake() is the one call safe from any thread.
            nonisolated(unsafe) let waker = poller
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { waker.wake() }
            XCTAssertNotNil(ready(poller, timeout: 2_000)[Poller.wakeToken], "\(backend)")
            poller.drainWake()
        }
    }

    func testTheBackendComesFromTheEnvironment() {
        unsetenv("HARREC_POLLER")
        XCTAssertEqual(PollerBackend.fromEnvironment, .platformDefault)
        setenv("HARREC_POLLER", "POLL", 1)
        XCTAssertEqual(PollerBackend.fromEnvironment, .poll)
        setenv("HARREC_POLLER", "kqueue", 1)
        XCTAssertNil(PollerBackend.fromEnvironment)
        unsetenv("HARREC_POLLER")
    }
}
