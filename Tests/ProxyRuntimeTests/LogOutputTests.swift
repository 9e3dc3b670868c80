#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import ProxyRuntime
import XCTest

/// The live log dims lines only on a terminal, and never with NO_COLOR; control characters from
/// the wire stay escaped either way.
final class LogOutputTests: XCTestCase {
    private func readAll(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        return String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
    }

    func testDimOnlyOnATerminal() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        let piped = LogOutput(fd: fds[1])
        piped.line("GET http://a.test/ 200 \u{1B}[31m", style: LogOutput.Style.dim)
        piped.flush()
        XCTAssertEqual(readAll(fds[0]), "GET http://a.test/ 200 \\x1b[31m\n", "no style codes into a pipe, and the wire's escaped")

        let (master, name) = try openPseudoTerminal()
        defer { close(master) }
        let slave = open(name, O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(slave, 0)
        defer { close(slave) }
        unsetenv("NO_COLOR")
        let terminal = LogOutput(fd: slave)
        terminal.line("skipped", style: LogOutput.Style.dim)
        terminal.line("kept")
        terminal.flush()
        usleep(20_000)
        let shown = readAll(master)
        XCTAssertTrue(shown.contains("\u{1B}[2mskipped\u{1B}[0m"), shown.debugDescription)
        XCTAssertTrue(shown.contains("kept"), shown.debugDescription)
        XCTAssertFalse(shown.contains("\u{1B}[2mkept"), shown.debugDescription)

        setenv("NO_COLOR", "1", 1)
        defer { unsetenv("NO_COLOR") }
        let plain = LogOutput(fd: slave)
        plain.line("skipped", style: LogOutput.Style.dim)
        plain.flush()
        usleep(20_000)
        XCTAssertFalse(readAll(master).contains("\u{1B}["))
    }
}

/// A pseudo-terminal's controlling end and the path of its other end.
private func openPseudoTerminal() throws -> (Int32, String) {
    #if os(Linux)
    // /dev/ptmx, unlocked (TIOCSPTLCK), and its numbered other end (TIOCGPTN); the request
    // numbers are the generic Linux ones (_IOW/_IOR of type T). (Glibc's module hides the POSIX
    // calls below, which need _XOPEN_SOURCE.)
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    XCTAssertGreaterThanOrEqual(master, 0)
    var unlock: Int32 = 0
    XCTAssertEqual(ioctl(master, 0x4004_5431, &unlock), 0)
    var number: UInt32 = 0
    XCTAssertEqual(ioctl(master, 0x8004_5430, &number), 0)
    return (master, "/dev/pts/\(number)")
    #else
    let master = posix_openpt(O_RDWR | O_NOCTTY)
    XCTAssertGreaterThanOrEqual(master, 0)
    XCTAssertEqual(grantpt(master), 0)
    XCTAssertEqual(unlockpt(master), 0)
    return (master, try XCTUnwrap(ptsname(master).map { String(cString: $0) }))
    #endif
}
