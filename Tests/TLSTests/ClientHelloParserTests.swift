import TestSupport
import XCTest
@testable import TLS

/// Fixtures are real ClientHellos captured by Fixtures/tls/capture.py from `openssl s_client`
/// and Python's ssl module.
let tlsFixtureDirectory = PackagePaths.fixtures("tls").path

func helloFixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
    let path = tlsFixtureDirectory + "/" + name + ".hex"
    let text = try String(contentsOfFile: path, encoding: .utf8).filter { !$0.isWhitespace }
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        guard let byte = UInt8(text[index..<next], radix: 16) else {
            XCTFail("bad hex in \(path)", file: file, line: line)
            return []
        }
        bytes.append(byte)
        index = next
    }
    return bytes
}

/// Builds ClientHellos from parts, for the malformed cases.
struct HelloBuilder {
    var legacyVersion: UInt16 = 0x0303
    var sessionID: [UInt8] = Array(repeating: 7, count: 32)
    var cipherSuites: [UInt16] = [0x1301, 0x1302, 0xC02F]
    var compression: [UInt8] = [0]
    var extensions: [(UInt16, [UInt8])]? = []

    static func u16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)] }

    static func serverName(_ name: String) -> (UInt16, [UInt8]) {
        let host = Array(name.utf8)
        let entry = [0] + u16(host.count) + host
        return (0, u16(entry.count) + entry)
    }

    static func alpn(_ names: [String]) -> (UInt16, [UInt8]) {
        let list = names.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        return (16, u16(list.count) + list)
    }

    static func supportedVersions(_ versions: [UInt16]) -> (UInt16, [UInt8]) {
        let list = versions.flatMap { u16(Int($0)) }
        return (43, [UInt8(list.count)] + list)
    }

    var body: [UInt8] {
        var bytes = HelloBuilder.u16(Int(legacyVersion))
        bytes += Array(repeating: 0xAB, count: 32)
        bytes += [UInt8(sessionID.count)] + sessionID
        let suites = cipherSuites.flatMap { HelloBuilder.u16(Int($0)) }
        bytes += HelloBuilder.u16(suites.count) + suites
        bytes += [UInt8(compression.count)] + compression
        if let extensions {
            let encoded = extensions.flatMap { HelloBuilder.u16(Int($0.0)) + HelloBuilder.u16($0.1.count) + $0.1 }
            bytes += HelloBuilder.u16(encoded.count) + encoded
        }
        return bytes
    }

    var handshake: [UInt8] {
        let body = self.body
        return [1, UInt8(body.count >> 16), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF)] + body
    }

    /// The handshake message in records of at most `fragment` bytes.
    func records(fragment: Int = 16_384) -> [UInt8] {
        HelloBuilder.records(handshake, fragment: fragment)
    }

    static func records(_ handshake: [UInt8], fragment: Int, version: UInt16 = 0x0301) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < handshake.count {
            let end = min(offset + fragment, handshake.count)
            out += [22] + u16(Int(version)) + u16(end - offset) + handshake[offset..<end]
            offset = end
        }
        return out
    }
}

/// The handshake bytes carried by a sequence of records.
func handshakeBytes(of records: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var offset = 0
    while offset + 5 <= records.count {
        let length = Int(records[offset + 3]) << 8 | Int(records[offset + 4])
        out += records[(offset + 5)..<min(records.count, offset + 5 + length)]
        offset += 5 + length
    }
    return out
}

final class ClientHelloParserTests: XCTestCase {
    struct Expected {
        var name: String
        var serverName: String?
        var alpn: [String]
        var offersTLS13: Bool
    }

    let fixtures: [Expected] = [
        Expected(name: "openssl-sni-alpn", serverName: "example.com", alpn: ["h2", "http/1.1"], offersTLS13: true),
        Expected(name: "openssl-no-sni", serverName: nil, alpn: [], offersTLS13: true),
        Expected(name: "openssl-tls12", serverName: "tls12.example.org", alpn: [], offersTLS13: false),
        Expected(name: "openssl-multi-record",
                 serverName: String(repeating: "a", count: 60) + "." + String(repeating: "b", count: 60) + "."
                    + String(repeating: "c", count: 60) + ".example",
                 alpn: (0..<40).map { String(format: "proto-%02d", $0) }, offersTLS13: true),
        Expected(name: "python-sni-alpn", serverName: "api.example.com", alpn: ["h2", "http/1.1"], offersTLS13: true),
        Expected(name: "python-ip-no-sni", serverName: nil, alpn: [], offersTLS13: true),
    ]

    func info(_ result: ClientHelloParseResult, file: StaticString = #filePath, line: UInt = #line) -> ClientHelloInfo? {
        guard case .clientHello(let info) = result else {
            XCTFail("expected a ClientHello, got \(result)", file: file, line: line)
            return nil
        }
        return info
    }

    func testFixturesWhole() throws {
        for expected in fixtures {
            let bytes = try helloFixture(expected.name)
            guard let info = info(ClientHelloParser.parse(bytes)) else { continue }
            XCTAssertEqual(info.serverName, expected.serverName, expected.name)
            XCTAssertEqual(info.alpnProtocols, expected.alpn, expected.name)
            XCTAssertEqual(info.offersTLS13, expected.offersTLS13, expected.name)
            XCTAssertEqual(info.legacyVersion, 0x0303, expected.name)
            XCTAssertEqual(info.recordVersion, 0x0301, expected.name)
            XCTAssertEqual(info.recordBytes, bytes.count, expected.name)
            XCTAssertFalse(info.cipherSuites.isEmpty, expected.name)
            if expected.offersTLS13 {
                XCTAssertEqual(info.supportedVersions.first, 0x0304, expected.name)
            } else {
                XCTAssertEqual(info.supportedVersions, [], expected.name)
            }
        }
    }

    func testMultiRecordFixtureSpansTwoRecords() throws {
        let bytes = try helloFixture("openssl-multi-record")
        let firstLength = Int(bytes[3]) << 8 | Int(bytes[4])
        XCTAssertEqual(firstLength, 512)
        XCTAssertGreaterThan(bytes.count, 5 + firstLength + 5)
        XCTAssertEqual(bytes[5 + firstLength], 22, "second record is a handshake record")
        // The first record alone is not enough.
        XCTAssertEqual(ClientHelloParser.parse(Array(bytes[0..<(5 + firstLength)])), .needMoreData)
    }

    func testByteByByteMatchesWhole() throws {
        for expected in fixtures {
            let bytes = try helloFixture(expected.name)
            let whole = ClientHelloParser.parse(bytes)
            var parser = ClientHelloParser()
            for (index, byte) in bytes.enumerated() {
                let result = parser.feed([byte])
                if index < bytes.count - 1 {
                    XCTAssertEqual(result, .needMoreData, "\(expected.name) at byte \(index)")
                } else {
                    XCTAssertEqual(result, whole, expected.name)
                }
            }
            XCTAssertEqual(parser.bufferedBytes, bytes, "the parser does not consume bytes")
        }
    }

    func testSplitAtEveryPosition() throws {
        for expected in fixtures {
            let bytes = try helloFixture(expected.name)
            let whole = ClientHelloParser.parse(bytes)
            for split in 0...bytes.count {
                var parser = ClientHelloParser()
                let first = parser.feed(bytes[0..<split])
                if split < bytes.count { XCTAssertEqual(first, .needMoreData) }
                XCTAssertEqual(parser.feed(bytes[split...]), whole, "\(expected.name) split at \(split)")
            }
        }
    }

    func testTruncatedAtEveryPositionNeedsMoreData() throws {
        for expected in fixtures {
            let bytes = try helloFixture(expected.name)
            for length in 0..<bytes.count {
                XCTAssertEqual(ClientHelloParser.parse(Array(bytes[0..<length])), .needMoreData, "\(expected.name) truncated to \(length)")
            }
        }
    }

    func testRefragmentedIntoManyRecords() throws {
        for expected in fixtures {
            let original = try helloFixture(expected.name)
            guard var reference = info(ClientHelloParser.parse(original)) else { continue }
            let handshake = handshakeBytes(of: original)
            for fragment in [1, 2, 3, 4, 5, 7, 33, 100, 255, 256, 511, 1000] {
                let records = HelloBuilder.records(handshake, fragment: fragment)
                reference.recordBytes = records.count
                XCTAssertEqual(ClientHelloParser.parse(records), .clientHello(reference), "\(expected.name) in \(fragment)-byte records")
            }
        }
        // 1-byte records fed one byte at a time.
        let records = HelloBuilder.records(handshakeBytes(of: try helloFixture("python-sni-alpn")), fragment: 1)
        var parser = ClientHelloParser()
        var last = ClientHelloParseResult.needMoreData
        for byte in records { last = parser.feed([byte]) }
        XCTAssertEqual(info(last)?.serverName, "api.example.com")
    }

    func testBytesAfterTheHelloAreIgnored() throws {
        let bytes = try helloFixture("openssl-sni-alpn")
        // A ChangeCipherSpec record and application data after the hello (0-RTT style).
        let extra: [UInt8] = [20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 2, 0xAA, 0xBB]
        let result = info(ClientHelloParser.parse(bytes + extra))
        XCTAssertEqual(result?.recordBytes, bytes.count)
        XCTAssertEqual(result?.serverName, "example.com")
    }

    func testBuiltHelloWithoutExtensions() {
        var builder = HelloBuilder()
        builder.extensions = nil
        let result = info(ClientHelloParser.parse(builder.records()))
        XCTAssertEqual(result?.serverName, nil)
        XCTAssertEqual(result?.extensionTypes, [])
        XCTAssertEqual(result?.cipherSuites, [0x1301, 0x1302, 0xC02F])
    }

    func testBuiltHelloFields() {
        var builder = HelloBuilder()
        builder.extensions = [HelloBuilder.serverName("Mixed.Example.COM"), HelloBuilder.alpn(["http/1.1", "\u{1}x"]),
                              HelloBuilder.supportedVersions([0x7A7A, 0x0304, 0x0303]), (0xFF01, [0])]
        let result = info(ClientHelloParser.parse(builder.records()))
        XCTAssertEqual(result?.serverName, "Mixed.Example.COM")
        XCTAssertEqual(result?.alpnProtocols, ["http/1.1", "0x0178"])
        XCTAssertEqual(result?.supportedVersions, [0x7A7A, 0x0304, 0x0303])
        XCTAssertEqual(result?.extensionTypes, [0, 16, 43, 0xFF01])
    }

    func testNotTLS() {
        let cases: [(String, [UInt8])] = [
            ("http", Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)),
            ("connect", Array("CONNECT a:443 HTTP/1.1\r\n\r\n".utf8)),
            ("socks5", [5, 1, 0]),
            ("sslv2", [0x80, 0x2E, 0x01, 0x00, 0x02]),
            ("alert first", [21, 3, 3, 0, 2, 2, 40]),
            ("version major 2", [22, 2, 0, 0, 4]),
        ]
        for (name, bytes) in cases {
            guard case .notTLS(let reason) = ClientHelloParser.parse(bytes) else {
                XCTFail("\(name): \(ClientHelloParser.parse(bytes))")
                continue
            }
            XCTAssertFalse(reason.isEmpty)
        }
        // One byte is enough to know.
        if case .notTLS = ClientHelloParser.parse([UInt8(ascii: "G")]) {} else { XCTFail("one byte") }
        XCTAssertEqual(ClientHelloParser.parse([]), .needMoreData)
        XCTAssertEqual(ClientHelloParser.parse([22]), .needMoreData)
        XCTAssertEqual(ClientHelloParser.parse([22, 3]), .needMoreData)
    }

    func expectInvalid(_ bytes: [UInt8], _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        let result = ClientHelloParser.parse(bytes)
        guard case .invalid(let reason) = result else {
            XCTFail("expected invalid (\(fragment)), got \(result)", file: file, line: line)
            return
        }
        XCTAssertTrue(reason.contains(fragment), "\(reason) should mention \(fragment)", file: file, line: line)
        XCTAssertFalse(reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, file: file, line: line)
        // Byte by byte reaches the same verdict.
        var parser = ClientHelloParser()
        var last = ClientHelloParseResult.needMoreData
        for byte in bytes { last = parser.feed([byte]) }
        XCTAssertEqual(last, result, file: file, line: line)
    }

    func testInvalid() throws {
        var builder = HelloBuilder()
        expectInvalid([22, 3, 1, 0, 0], "zero-length")
        expectInvalid([22, 3, 1, 0x40, 0x01], "exceeds 16384")
        expectInvalid([22, 3, 9, 0, 4, 1, 0, 0, 0], "record version")
        expectInvalid([22, 3, 1, 0, 4, 2, 0, 0, 40], "not client_hello")
        expectInvalid([22, 3, 1, 0, 4, 1, 0x01, 0x00, 0x01], "exceeds 65536")

        // A handshake record then an alert record in the middle of the hello.
        let handshake = builder.handshake
        let split = HelloBuilder.records(Array(handshake[0..<20]), fragment: 100) + [21, 3, 3, 0, 2, 2, 40]
        expectInvalid(split, "content type 21")

        // A record longer than the hello.
        expectInvalid(HelloBuilder.records(handshake + [0, 0], fragment: 16_384), "after the ClientHello")

        builder.extensions = [HelloBuilder.serverName("a.example"), HelloBuilder.serverName("b.example")]
        expectInvalid(builder.records(), "duplicate extension 0")
        builder.extensions = [HelloBuilder.serverName("bad host")]
        expectInvalid(builder.records(), "host_name contains byte 0x20")
        builder.extensions = [HelloBuilder.serverName("evil\r\nx")]
        expectInvalid(builder.records(), "0x0d")
        builder.extensions = [HelloBuilder.serverName("")]
        expectInvalid(builder.records(), "empty host_name")
        builder.extensions = [HelloBuilder.alpn([""])]
        expectInvalid(builder.records(), "empty ALPN protocol name")
        builder.extensions = [(16, [0, 0])]
        expectInvalid(builder.records(), "empty ALPN list")
        builder.extensions = [(43, [3, 3, 4, 3])]
        expectInvalid(builder.records(), "supported_versions length 3")
        builder.extensions = [(0, [0, 9, 0, 0, 3, 0x61])]
        expectInvalid(builder.records(), "truncated")
        builder.extensions = []
        builder.cipherSuites = []
        expectInvalid(builder.records(), "cipher suites")
        builder.cipherSuites = [0x1301]
        builder.compression = []
        expectInvalid(builder.records(), "compression")
        builder.compression = [0]
        builder.sessionID = Array(repeating: 1, count: 33)
        expectInvalid(builder.records(), "session id length 33")
        builder.sessionID = []
        builder.legacyVersion = 0x0202
        expectInvalid(builder.records(), "ClientHello version 0x0202")
        builder.legacyVersion = 0x0303
        // Trailing bytes after the extensions block.
        let body = builder.body + [0xEE]
        let handshakeWithTrailer = [1, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        expectInvalid(HelloBuilder.records(handshakeWithTrailer, fragment: 16_384), "trailing")
    }

    func testMaximumSizeHelloAccepted() {
        // A hello just under the limit, with a padding extension, in 16 KiB records.
        var builder = HelloBuilder()
        let base = builder.body.count  // includes the empty extensions vector's length
        let sni = HelloBuilder.serverName("big.example")
        let padding = ClientHelloParser.maximumClientHelloLength - base - 8 - sni.1.count
        builder.extensions = [sni, (21, Array(repeating: 0, count: padding))]
        XCTAssertEqual(builder.body.count, ClientHelloParser.maximumClientHelloLength)
        XCTAssertEqual(info(ClientHelloParser.parse(builder.records()))?.serverName, "big.example")
    }

    func testGarbageNeverCrashes() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<5_000 {
            let length = Int.random(in: 0...300, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if !bytes.isEmpty, Bool.random(using: &rng) { bytes[0] = 22 }
            if bytes.count > 1, Bool.random(using: &rng) { bytes[1] = 3 }
            _ = ClientHelloParser.parse(bytes)
        }
    }

    /// 20,000 seeded mutations of real hellos: flipped bytes, inserted and deleted bytes,
    /// truncations. Never a crash; a verdict reached byte by byte equals the whole-buffer one.
    func testFuzzedHellos() throws {
        let corpus = try fixtures.map { try helloFixture($0.name) }
        var rng = SplitMix64(seed: 20_000)
        var verdicts = [String: Int]()
        for iteration in 0..<20_000 {
            var bytes = corpus[Int.random(in: 0..<corpus.count, using: &rng)]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let position = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            if Int.random(in: 0..<8, using: &rng) == 0 {
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            }
            let whole = ClientHelloParser.parse(bytes)
            switch whole {
            case .needMoreData: verdicts["needMoreData", default: 0] += 1
            case .clientHello(let info):
                verdicts["clientHello", default: 0] += 1
                XCTAssertLessThanOrEqual(info.recordBytes, bytes.count)
            case .notTLS(let reason), .invalid(let reason):
                verdicts["rejected", default: 0] += 1
                XCTAssertFalse(reason.unicodeScalars.contains { $0.value < 0x20 })
            }
            if iteration % 50 == 0 {
                var parser = ClientHelloParser()
                var last = ClientHelloParseResult.needMoreData
                var index = 0
                while index < bytes.count {
                    let step = Int.random(in: 1...64, using: &rng)
                    last = parser.feed(bytes[index..<min(bytes.count, index + step)])
                    index += step
                }
                XCTAssertEqual(last, whole, "iteration \(iteration)")
            }
        }
        XCTAssertGreaterThan(verdicts["rejected", default: 0], 1_000)
        XCTAssertGreaterThan(verdicts["clientHello", default: 0], 100)
    }
}
