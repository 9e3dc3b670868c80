import XCTest
@testable import SOCKS5

/// How a test splits its input.
private enum Feeding: CaseIterable {
    case whole, byteByByte, twoHalves
}

/// Feeds `input` split as `feeding` says, draining `next()` after every feed.
private func drive(_ hs: inout SOCKS5ServerHandshake, _ input: [UInt8], _ feeding: Feeding) -> [SOCKS5Event] {
    var events: [SOCKS5Event] = []
    func drain() { while let e = hs.next() { events.append(e) } }
    switch feeding {
    case .whole:
        hs.feed(input); drain()
    case .byteByByte:
        for b in input { hs.feed([b]); drain() }
    case .twoHalves:
        let mid = input.count / 2
        hs.feed(Array(input[..<mid])); drain()
        hs.feed(Array(input[mid...])); drain()
    }
    drain()
    return events
}

private let greetingNoAuth: [UInt8] = [5, 1, 0]
private let greetingUserPass: [UInt8] = [5, 2, 0, 2]
private let creds = SOCKS5Credentials(username: "alice", password: "s3cret")
private func authRequest(_ user: String, _ pass: String) -> [UInt8] {
    let u = Array(user.utf8), p = Array(pass.utf8)
    return [1, UInt8(u.count)] + u + [UInt8(p.count)] + p
}
private func connectIPv4(_ a: [UInt8], _ port: UInt16) -> [UInt8] {
    [5, 1, 0, 1] + a + [UInt8(port >> 8), UInt8(port & 0xFF)]
}
private func connectDomain(_ name: [UInt8], _ port: UInt16) -> [UInt8] {
    [5, 1, 0, 3, UInt8(name.count)] + name + [UInt8(port >> 8), UInt8(port & 0xFF)]
}
private func connectIPv6(_ a: [UInt8], _ port: UInt16) -> [UInt8] {
    [5, 1, 0, 4] + a + [UInt8(port >> 8), UInt8(port & 0xFF)]
}

final class SOCKS5HandshakeTests: XCTestCase {

    // MARK: Happy paths, every feeding mode

    func testNoAuthConnectIPv4AllFeedings() {
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: nil)
            XCTAssertEqual(hs.state, .greeting)
            let events = drive(&hs, greetingNoAuth + connectIPv4([192, 0, 2, 7], 443), f)
            XCTAssertEqual(events, [
                .send([5, 0]),
                .connect(SOCKS5Target(host: .ipv4("192.0.2.7"), port: 443)),
            ], "\(f)")
            XCTAssertEqual(hs.state, .awaitingConnect)
            XCTAssertEqual(hs.takeBufferedBytes(), [])
        }
    }

    func testUserPassConnectDomainAllFeedings() {
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: creds)
            let input = greetingUserPass + authRequest("alice", "s3cret") + connectDomain(Array("example.com".utf8), 80)
            let events = drive(&hs, input, f)
            XCTAssertEqual(events, [
                .send([5, 2]),
                .send([1, 0]),
                .connect(SOCKS5Target(host: .domain("example.com"), port: 80)),
            ], "\(f)")
            XCTAssertEqual(hs.state, .awaitingConnect)
        }
    }

    func testIPv6TargetAllFeedings() {
        let addr: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: nil)
            let events = drive(&hs, greetingNoAuth + connectIPv6(addr, 8443), f)
            guard case .connect(let t)? = events.last else { return XCTFail("no connect \(events)") }
            XCTAssertEqual(t.host, .ipv6("2001:db8::1"))
            XCTAssertEqual(t.hostString, "2001:db8::1")
            XCTAssertEqual(t.authority, "[2001:db8::1]:8443")
            XCTAssertEqual(t.port, 8443)
        }
    }

    func testPipelinedHandshakeKeepsEarlyData() {
        let early: [UInt8] = Array("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n".utf8)
        let input = greetingUserPass + authRequest("alice", "s3cret") + connectIPv4([10, 0, 0, 1], 8080) + early
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: creds)
            let events = drive(&hs, input, f)
            XCTAssertEqual(events.count, 3, "\(f)")
            XCTAssertEqual(hs.state, .awaitingConnect)
            XCTAssertEqual(hs.bufferedByteCount, early.count)
            // More early data while the caller connects.
            hs.feed([0xAA, 0xBB])
            XCTAssertNil(hs.next())
            XCTAssertEqual(hs.takeBufferedBytes(), early + [0xAA, 0xBB], "\(f)")
            XCTAssertEqual(hs.takeBufferedBytes(), [])
            let reply = hs.replyToConnect(.succeeded, bindAddress: .ipv4("127.0.0.1"), bindPort: 1080)
            XCTAssertEqual(reply, [5, 0, 0, 1, 127, 0, 0, 1, 0x04, 0x38])
            XCTAssertEqual(hs.state, .done)
            XCTAssertNil(hs.next())
        }
    }

    func testStatesStepByStep() {
        var hs = SOCKS5ServerHandshake(credentials: creds)
        XCTAssertEqual(hs.state, .greeting)
        XCTAssertNil(hs.next())
        hs.feed([5, 1])
        XCTAssertNil(hs.next())
        XCTAssertEqual(hs.state, .greeting)
        hs.feed([2])
        XCTAssertEqual(hs.next(), .send([5, 2]))
        XCTAssertEqual(hs.state, .authenticating)
        XCTAssertNil(hs.next())
        hs.feed(authRequest("alice", "s3cret"))
        XCTAssertEqual(hs.next(), .send([1, 0]))
        XCTAssertEqual(hs.state, .awaitingRequest)
        hs.feed(connectIPv4([1, 2, 3, 4], 5))
        XCTAssertEqual(hs.next(), .connect(SOCKS5Target(host: .ipv4("1.2.3.4"), port: 5)))
        XCTAssertEqual(hs.state, .awaitingConnect)
        XCTAssertNil(hs.next())
        _ = hs.replyToConnect(.succeeded)
        XCTAssertEqual(hs.state, .done)
        hs.finish()
        XCTAssertNil(hs.next(), "EOF after done is the caller's business")
    }

    func testReplyToConnectFailureMovesToFailed() {
        var hs = SOCKS5ServerHandshake(credentials: nil)
        _ = drive(&hs, greetingNoAuth + connectIPv4([1, 2, 3, 4], 80), .whole)
        let r = hs.replyToConnect(.connectionRefused)
        XCTAssertEqual(r, [5, 5, 0, 1, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(hs.state, .failed)
        XCTAssertNil(hs.next())
    }

    func testUnparsedBytesAfterRequestDoNotProduceMoreEvents() {
        var hs = SOCKS5ServerHandshake(credentials: nil)
        let events = drive(&hs, greetingNoAuth + connectIPv4([1, 2, 3, 4], 80) + greetingNoAuth, .whole)
        XCTAssertEqual(events.count, 2)
        XCTAssertEqual(hs.takeBufferedBytes(), greetingNoAuth)
    }

    // MARK: Greeting failures

    private func expectFail(_ creds: SOCKS5Credentials?, _ input: [UInt8], reply: [UInt8], reason: String,
                            priorEvents: Int = -1, file: StaticString = #filePath, line: UInt = #line) {
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: creds)
            let events = drive(&hs, input, f)
            guard case .fail(let r, let why)? = events.last else {
                XCTFail("\(f): expected fail, got \(events)", file: file, line: line); continue
            }
            XCTAssertEqual(r, reply, "\(f)", file: file, line: line)
            XCTAssertEqual(why, reason, "\(f)", file: file, line: line)
            if priorEvents >= 0 { XCTAssertEqual(events.count, priorEvents + 1, "\(f)", file: file, line: line) }
            XCTAssertEqual(hs.state, .failed, file: file, line: line)
            XCTAssertNil(hs.next(), file: file, line: line)
            hs.feed([5, 1, 0])
            XCTAssertNil(hs.next(), "feed after failure is ignored", file: file, line: line)
            XCTAssertEqual(hs.bufferedByteCount, 0, file: file, line: line)
        }
    }

    func testSOCKS4IsRejected() {
        expectFail(nil, [4, 1, 0, 80, 1, 2, 3, 4, 0], reply: [0x00, 0x5B, 0, 0, 0, 0, 0, 0],
                   reason: "SOCKS4 is not supported; use SOCKS5", priorEvents: 0)
    }

    func testHTTPIsNotAGreeting() {
        expectFail(nil, Array("GET / HTTP/1.1\r\n".utf8), reply: [], reason: "not a SOCKS5 greeting (first byte 0x47)", priorEvents: 0)
        expectFail(nil, [0x16, 3, 1], reply: [], reason: "not a SOCKS5 greeting (first byte 0x16)", priorEvents: 0)
        expectFail(nil, [0x00], reply: [], reason: "not a SOCKS5 greeting (first byte 0x00)", priorEvents: 0)
    }

    func testZeroMethods() {
        expectFail(nil, [5, 0], reply: [5, 0xFF], reason: "SOCKS5 greeting offers no authentication methods", priorEvents: 0)
    }

    func testNoAcceptableMethod() {
        expectFail(nil, [5, 1, 2], reply: [5, 0xFF],
                   reason: "no acceptable SOCKS5 authentication method: need 00 (no authentication), client offered 02")
        expectFail(creds, [5, 2, 0, 1], reply: [5, 0xFF],
                   reason: "no acceptable SOCKS5 authentication method: need 02 (username/password), client offered 00 01")
        let many = [UInt8](repeating: 0x80, count: 255)
        expectFail(nil, [5, 255] + many, reply: [5, 0xFF],
                   reason: "no acceptable SOCKS5 authentication method: need 00 (no authentication), client offered "
                       + [String](repeating: "80", count: 16).joined(separator: " ") + " ...")
    }

    func testGreetingWithManyMethodsIncludingWanted() {
        var hs = SOCKS5ServerHandshake(credentials: nil)
        let methods = [UInt8](repeating: 0x7F, count: 254) + [0]
        XCTAssertEqual(drive(&hs, [5, 255] + methods, .byteByByte), [.send([5, 0])])
    }

    // MARK: Authentication failures

    func testAuthFailures() {
        let g = greetingUserPass
        let failed = "SOCKS5 authentication failed"
        expectFail(creds, g + authRequest("alice", "wrong"), reply: [1, 1], reason: failed, priorEvents: 1)
        expectFail(creds, g + authRequest("bob", "s3cret"), reply: [1, 1], reason: failed, priorEvents: 1)
        expectFail(creds, g + authRequest("alice", "s3cretX"), reply: [1, 1], reason: failed)
        expectFail(creds, g + authRequest("alice", "s3cre"), reply: [1, 1], reason: failed)
        expectFail(creds, g + authRequest("alic", "s3cret"), reply: [1, 1], reason: failed)
        expectFail(creds, g + [1, 0, 1, 0x41], reply: [1, 1], reason: "SOCKS5 authentication failed (empty username)")
        expectFail(creds, g + [1, 1, 0x41, 0], reply: [1, 1], reason: "SOCKS5 authentication failed (empty password)")
        expectFail(creds, g + [5, 1, 0x41, 1, 0x41], reply: [1, 1],
                   reason: "bad SOCKS5 username/password sub-negotiation version 0x05")
    }

    func testAuthFailureReasonNeverContainsCredentials() {
        var hs = SOCKS5ServerHandshake(credentials: creds)
        let events = drive(&hs, greetingUserPass + authRequest("alice", "guess-s3cret"), .whole)
        guard case .fail(_, let reason)? = events.last else { return XCTFail() }
        XCTAssertFalse(reason.contains("alice"))
        XCTAssertFalse(reason.contains("s3cret"))
        XCTAssertFalse(reason.contains("guess"))
    }

    func testMaximalCredentials() {
        let u = String(repeating: "u", count: 255), p = String(repeating: "p", count: 255)
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: SOCKS5Credentials(username: u, password: p))
            let events = drive(&hs, greetingUserPass + authRequest(u, p) + connectIPv4([1, 1, 1, 1], 53), f)
            XCTAssertEqual(events.count, 3, "\(f)")
            XCTAssertEqual(events[1], .send([1, 0]))
        }
    }

    func testUTF8Credentials() {
        let c = SOCKS5Credentials(username: "jörg", password: "pässwörd")
        var hs = SOCKS5ServerHandshake(credentials: c)
        let events = drive(&hs, greetingUserPass + authRequest("jörg", "pässwörd"), .byteByByte)
        XCTAssertEqual(events, [.send([5, 2]), .send([1, 0])])
    }

    // MARK: Request failures

    func testRequestFailures() {
        let g = greetingNoAuth
        func r(_ c: SOCKS5ReplyCode) -> [UInt8] { SOCKS5ServerHandshake.reply(c) }
        expectFail(nil, g + [4, 1, 0, 1, 1, 2, 3, 4, 0, 80], reply: r(.generalFailure), reason: "bad SOCKS5 request version 0x04", priorEvents: 1)
        expectFail(nil, g + [5, 2, 0, 1, 1, 2, 3, 4, 0, 80], reply: r(.commandNotSupported), reason: "SOCKS5 BIND is not supported")
        expectFail(nil, g + [5, 3, 0, 1, 1, 2, 3, 4, 0, 80], reply: r(.commandNotSupported), reason: "SOCKS5 UDP ASSOCIATE is not supported")
        expectFail(nil, g + [5, 9, 0, 1, 1, 2, 3, 4, 0, 80], reply: r(.commandNotSupported), reason: "unknown SOCKS5 command 0x09")
        expectFail(nil, g + [5, 0, 0, 1, 1, 2, 3, 4, 0, 80], reply: r(.commandNotSupported), reason: "unknown SOCKS5 command 0x00")
        expectFail(nil, g + [5, 1, 1, 1, 1, 2, 3, 4, 0, 80], reply: r(.generalFailure), reason: "SOCKS5 request reserved byte is 0x01, not 0x00")
        expectFail(nil, g + [5, 1, 0, 2, 1, 2, 3, 4, 0, 80], reply: r(.addressTypeNotSupported), reason: "unsupported SOCKS5 address type 0x02")
        expectFail(nil, g + [5, 1, 0, 0xFF], reply: r(.addressTypeNotSupported), reason: "unsupported SOCKS5 address type 0xFF")
        expectFail(nil, g + [5, 1, 0, 3, 0, 0, 80], reply: r(.generalFailure), reason: "SOCKS5 request has an empty domain name")
        let nonPrintable = "SOCKS5 domain name contains bytes other than printable ASCII"
        expectFail(nil, g + connectDomain(Array("a b".utf8), 80), reply: r(.generalFailure), reason: nonPrintable)
        expectFail(nil, g + connectDomain([0x61, 0x0A, 0x62], 80), reply: r(.generalFailure), reason: nonPrintable)
        expectFail(nil, g + connectDomain([0x61, 0x7F], 80), reply: r(.generalFailure), reason: nonPrintable)
        expectFail(nil, g + connectDomain(Array("bücher.de".utf8), 80), reply: r(.generalFailure), reason: nonPrintable)
        expectFail(nil, g + connectIPv4([1, 2, 3, 4], 0), reply: r(.generalFailure), reason: "SOCKS5 request for port 0")
        expectFail(nil, g + connectDomain(Array("x.test".utf8), 0), reply: r(.generalFailure), reason: "SOCKS5 request for port 0")
    }

    func testLongestDomain() {
        let name = [UInt8](repeating: 0x61, count: 255)
        for f in Feeding.allCases {
            var hs = SOCKS5ServerHandshake(credentials: nil)
            let events = drive(&hs, greetingNoAuth + connectDomain(name, 65535), f)
            XCTAssertEqual(events.last, .connect(SOCKS5Target(host: .domain(String(repeating: "a", count: 255)), port: 65535)))
        }
    }

    // MARK: EOF in every state

    func testFinishInEveryState() {
        let reason = "client closed during SOCKS5 handshake"
        // greeting, nothing received
        var hs = SOCKS5ServerHandshake(credentials: nil)
        hs.finish()
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))
        XCTAssertEqual(hs.state, .failed)
        XCTAssertNil(hs.next())

        // greeting, partial
        hs = SOCKS5ServerHandshake(credentials: nil)
        hs.feed([5, 2, 0])
        hs.finish()
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))

        // complete greeting buffered, then EOF: the greeting is answered first
        hs = SOCKS5ServerHandshake(credentials: nil)
        hs.feed(greetingNoAuth)
        hs.finish()
        XCTAssertEqual(hs.next(), .send([5, 0]))
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))

        // authenticating
        hs = SOCKS5ServerHandshake(credentials: creds)
        XCTAssertEqual(drive(&hs, greetingUserPass + [1, 5], .whole), [.send([5, 2])])
        XCTAssertEqual(hs.state, .authenticating)
        hs.finish()
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))

        // awaitingRequest
        hs = SOCKS5ServerHandshake(credentials: nil)
        _ = drive(&hs, greetingNoAuth + [5, 1, 0], .whole)
        XCTAssertEqual(hs.state, .awaitingRequest)
        hs.finish()
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))

        // awaitingConnect
        hs = SOCKS5ServerHandshake(credentials: nil)
        _ = drive(&hs, greetingNoAuth + connectIPv4([1, 2, 3, 4], 80), .whole)
        XCTAssertEqual(hs.state, .awaitingConnect)
        hs.finish()
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: reason))
        XCTAssertEqual(hs.state, .failed)
    }

    // MARK: Limits

    func testBufferLimit() {
        var hs = SOCKS5ServerHandshake(credentials: nil)
        _ = drive(&hs, greetingNoAuth + connectIPv4([1, 2, 3, 4], 80), .whole)
        hs.feed([UInt8](repeating: 0, count: SOCKS5Limits.maxBufferedBytes))
        XCTAssertNil(hs.next(), "exactly at the limit is fine")
        XCTAssertEqual(hs.bufferedByteCount, SOCKS5Limits.maxBufferedBytes)
        hs.feed([1])
        XCTAssertEqual(hs.next(), .fail(reply: [], reason: "SOCKS5 client sent more than 65536 bytes before the handshake completed"))
        XCTAssertEqual(hs.state, .failed)

        hs = SOCKS5ServerHandshake(credentials: nil)
        hs.feed([UInt8](repeating: 5, count: SOCKS5Limits.maxBufferedBytes + 1))
        guard case .fail? = hs.next() else { return XCTFail() }
    }

    func testLimitsCoverLongestMessages() {
        XCTAssertGreaterThanOrEqual(SOCKS5Limits.maxHandshakeMessageBytes, 3 + 255 + 255)
        XCTAssertGreaterThanOrEqual(SOCKS5Limits.maxBufferedBytes, (2 + 255) + (3 + 255 + 255) + (7 + 255))
    }

    // MARK: Replies

    func testReplyEncoding() {
        typealias H = SOCKS5ServerHandshake
        XCTAssertEqual(H.reply(.succeeded), [5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(H.reply(.generalFailure), [5, 1, 0, 1, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(H.reply(.hostUnreachable, bindAddress: .ipv4("10.1.2.3"), bindPort: 0x1234),
                       [5, 4, 0, 1, 10, 1, 2, 3, 0x12, 0x34])
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .ipv6("::1"), bindPort: 80),
                       [5, 0, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0, 80])
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .domain("ab"), bindPort: 1), [5, 0, 0, 3, 2, 0x61, 0x62, 0, 1])
        // Unparseable addresses fall back to 0.0.0.0.
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .ipv4("1.2.3"), bindPort: 0), H.reply(.succeeded))
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .ipv6("1::2::3"), bindPort: 0), H.reply(.succeeded))
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .domain(""), bindPort: 0), H.reply(.succeeded))
        XCTAssertEqual(H.reply(.succeeded, bindAddress: .domain(String(repeating: "a", count: 256)), bindPort: 0), H.reply(.succeeded))
        let all: [SOCKS5ReplyCode] = [.succeeded, .generalFailure, .connectionNotAllowed, .networkUnreachable,
                                      .hostUnreachable, .connectionRefused, .ttlExpired, .commandNotSupported,
                                      .addressTypeNotSupported]
        for (i, c) in all.enumerated() { XCTAssertEqual(H.reply(c)[1], UInt8(i)) }
    }

    // MARK: Helpers

    func testConstantTimeEquals() {
        XCTAssertTrue(constantTimeEquals([], []))
        XCTAssertTrue(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2]))
        XCTAssertFalse(constantTimeEquals([1, 2], [1, 2, 3]))
        XCTAssertFalse(constantTimeEquals([], [0]))
        XCTAssertFalse(constantTimeEquals([0], []), "a zero byte past the end must not look like padding")
        XCTAssertFalse(constantTimeEquals([0, 0], [0]))
        let long = [UInt8](repeating: 7, count: 300)
        XCTAssertTrue(constantTimeEquals(long, long))
        var other = long; other[299] = 8
        XCTAssertFalse(constantTimeEquals(long, other))
        XCTAssertFalse(constantTimeEquals(long, Array(long.prefix(299))))
        // Length differences of multiples of 256 must not cancel out.
        XCTAssertFalse(constantTimeEquals([UInt8](repeating: 0, count: 256), []))
    }

    func testIPv6Formatting() {
        func f(_ groups: [UInt16]) -> String {
            var b: [UInt8] = []
            for g in groups { b.append(UInt8(g >> 8)); b.append(UInt8(g & 0xFF)) }
            return SOCKS5Address.formatIPv6(b[...])
        }
        XCTAssertEqual(f([0, 0, 0, 0, 0, 0, 0, 0]), "::")
        XCTAssertEqual(f([0, 0, 0, 0, 0, 0, 0, 1]), "::1")
        XCTAssertEqual(f([1, 0, 0, 0, 0, 0, 0, 0]), "1::")
        XCTAssertEqual(f([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]), "2001:db8::1")
        XCTAssertEqual(f([0x2001, 0xdb8, 0, 1, 1, 1, 1, 1]), "2001:db8:0:1:1:1:1:1", "single zero group stays")
        XCTAssertEqual(f([0x2001, 0, 0, 1, 0, 0, 0, 1]), "2001:0:0:1::1", "longest run wins")
        XCTAssertEqual(f([0x2001, 0xdb8, 0, 0, 1, 0, 0, 1]), "2001:db8::1:0:0:1", "first run wins a tie")
        XCTAssertEqual(f([0xABCD, 0xEF01, 0x23, 0x4567, 0x89, 0xA, 0xB, 0xC]), "abcd:ef01:23:4567:89:a:b:c")
        XCTAssertEqual(f([0, 0, 0, 0, 0, 0xFFFF, 0xC000, 0x0201]), "::ffff:192.0.2.1")
        XCTAssertEqual(f([0xfe80, 0, 0, 0, 0x1, 0x2, 0x3, 0x4]), "fe80::1:2:3:4")
    }

    func testIPv6Parsing() {
        XCTAssertEqual(SOCKS5Address.parseIPv6("::"), [UInt8](repeating: 0, count: 16))
        XCTAssertEqual(SOCKS5Address.parseIPv6("[::1]"), [UInt8](repeating: 0, count: 15) + [1])
        XCTAssertEqual(SOCKS5Address.parseIPv6("::ffff:1.2.3.4"), [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF, 1, 2, 3, 4])
        XCTAssertEqual(SOCKS5Address.parseIPv6("1:2:3:4:5:6:7:8")?.count, 16)
        for bad in ["", ":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", "g::", "1:2:3:4:5:6:7", ":1::2", "1::2:", "::1.2.3"] {
            XCTAssertNil(SOCKS5Address.parseIPv6(bad), bad)
        }
        // Round trip through the formatter.
        for text in ["2001:db8::1", "::", "fe80::1:2:3:4", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8", "2001:0:0:1::1"] {
            guard let b = SOCKS5Address.parseIPv6(text) else { XCTFail(text); continue }
            XCTAssertEqual(SOCKS5Address.formatIPv6(b[...]), text)
        }
    }

    func testIPv4Parsing() {
        XCTAssertEqual(SOCKS5Address.parseIPv4("255.0.10.1"), [255, 0, 10, 1])
        for bad in ["", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "+1.2.3.4", "0001.2.3.4", "a.b.c.d", "1.2.3.4 "] {
            XCTAssertNil(SOCKS5Address.parseIPv4(bad), bad)
        }
    }
}
