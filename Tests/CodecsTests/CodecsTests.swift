import TestSupport
import XCTest
@testable import Codecs

/// Fixtures are made by Fixtures/codecs/generate.py with the gzip, brotli and zstd CLIs and Python zlib.
private let fixtureDirectory = PackagePaths.fixtures("codecs").path

private func fixture(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
    let path = fixtureDirectory + "/" + name
    guard let data = FileManager.default.contents(atPath: path) else {
        XCTFail("missing fixture \(path)", file: file, line: line)
        throw CocoaError(.fileNoSuchFile)
    }
    return [UInt8](data)
}

/// The 1 MiB "large" input: a 4 KiB LCG block repeated 256 times (same generator as generate.py).
private func largeInput() -> [UInt8] {
    var x: UInt32 = 1
    var block: [UInt8] = []
    for _ in 0..<4096 {
        x = (1_103_515_245 &* x &+ 12345) & 0x7FFF_FFFF
        block.append(UInt8((x >> 16) & 0xFF))
    }
    var out: [UInt8] = []
    out.reserveCapacity(block.count * 256)
    for _ in 0..<256 { out += block }
    return out
}

private func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
    return h
}

/// Extension → coding, for the per-format fixtures.
private let formats: [(ext: String, coding: ContentCoding)] = [
    ("gz", .gzip), ("br", .br), ("zst", .zstd), ("zlib", .deflate), ("deflate", .deflate),
]

private let MiB = 1024 * 1024

private func decodeError(_ body: () throws -> [UInt8], file: StaticString = #filePath, line: UInt = #line) -> ContentDecodingError? {
    do {
        let out = try body()
        XCTFail("expected an error, decoded \(out.count) bytes", file: file, line: line)
        return nil
    } catch let e as ContentDecodingError {
        XCTAssertEqual(e.description, e.message, file: file, line: line)
        XCTAssertTrue(e.message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F },
                      "one printable line: \(e.message.debugDescription)", file: file, line: line)
        return e
    } catch {
        XCTFail("unexpected error type \(error)", file: file, line: line)
        return nil
    }
}

final class ContentEncodingParseTests: XCTestCase {
    func testKnownCodings() {
        XCTAssertEqual(parseContentEncoding("gzip"), [.gzip])
        XCTAssertEqual(parseContentEncoding("x-gzip"), [.gzip])
        XCTAssertEqual(parseContentEncoding("GZip"), [.gzip])
        XCTAssertEqual(parseContentEncoding("deflate"), [.deflate])
        XCTAssertEqual(parseContentEncoding("br"), [.br])
        XCTAssertEqual(parseContentEncoding("zstd"), [.zstd])
        XCTAssertEqual(parseContentEncoding("identity"), [.identity])
        XCTAssertEqual(parseContentEncoding("br, gzip"), [.br, .gzip], "order of application")
        XCTAssertEqual(parseContentEncoding(" gzip ,\t, br\t"), [.gzip, .br], "OWS and empty elements")
        XCTAssertEqual(parseContentEncoding(""), [])
        XCTAssertEqual(parseContentEncoding(" , "), [])
    }

    func testUnknownCodings() {
        XCTAssertNil(parseContentEncoding("compress"))
        XCTAssertNil(parseContentEncoding("x-compress"))
        XCTAssertNil(parseContentEncoding("gzip, snappy"))
        XCTAssertNil(parseContentEncoding("gzip;q=1"))
        XCTAssertNil(parseContentEncoding("g zip"))
        XCTAssertNil(ContentCoding(token: "brotli"))
        XCTAssertEqual(ContentCoding(token: "ZSTD"), .zstd)
    }
}

final class ContentDecoderTests: XCTestCase {
    func testEmptyAndSmallFixturesEveryFormat() throws {
        for name in ["empty", "small"] {
            let expected = try fixture("\(name).txt")
            for (ext, coding) in formats {
                let encoded = try fixture("\(name).\(ext)")
                XCTAssertEqual(try ContentDecoder.decode(encoded, codings: [coding], limit: MiB), expected, "\(name).\(ext)")
            }
        }
    }

    func testLargeFixturesEveryFormat() throws {
        let expected = largeInput()
        XCTAssertEqual(expected.count, MiB)
        XCTAssertEqual(fnv1a64(expected), 0x3F36_B8B1_B3E3_A725, "generator matches generate.py")
        for (ext, coding) in formats {
            let out = try ContentDecoder.decode(try fixture("large.\(ext)"), codings: [coding], limit: MiB)
            XCTAssertEqual(out.count, MiB, ext)
            XCTAssertEqual(fnv1a64(out), 0x3F36_B8B1_B3E3_A725, ext)
            XCTAssertTrue(out == expected, ext)
        }
    }

    func testEmptyBodyDecodesToEmptyForEveryCoding() throws {
        for coding in ContentCoding.allCases {
            XCTAssertEqual(try ContentDecoder.decode([], codings: [coding], limit: 0), [])
        }
    }

    func testIdentityAndNoCodings() throws {
        let data: [UInt8] = [1, 2, 3]
        XCTAssertEqual(try ContentDecoder.decode(data, codings: [], limit: 3), data)
        XCTAssertEqual(try ContentDecoder.decode(data, codings: [.identity], limit: 3), data)
        XCTAssertEqual(decodeError { try ContentDecoder.decode(data, codings: [.identity], limit: 2) }?.kind, .limitExceeded)
    }

    func testMultiMemberGzip() throws {
        let out = try ContentDecoder.decode(try fixture("multi-member.gz"), codings: [.gzip], limit: MiB)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "first member\nsecond member\n")
    }

    func testGzipTrailingZerosIgnoredGarbageRejected() throws {
        let gz = try fixture("small.gz"), text = try fixture("small.txt")
        XCTAssertEqual(try ContentDecoder.decode(gz + [0, 0, 0, 0], codings: [.gzip], limit: MiB), text)
        let e = decodeError { try ContentDecoder.decode(gz + Array("junk".utf8), codings: [.gzip], limit: MiB) }
        XCTAssertEqual(e?.kind, .corrupt)
        XCTAssertEqual(e?.message, "gzip: 4 bytes of trailing garbage after the last gzip member")
        XCTAssertEqual(decodeError { try ContentDecoder.decode(gz + [0x1F], codings: [.gzip], limit: MiB) }?.kind, .truncated)
        XCTAssertEqual(decodeError { try ContentDecoder.decode(gz + [0x1F, 0x8B], codings: [.gzip], limit: MiB) }?.kind, .truncated)
    }

    func testMultiFrameAndUnsizedZstd() throws {
        let out = try ContentDecoder.decode(try fixture("multi-frame.zst"), codings: [.zstd], limit: MiB)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "frame one\nframe two\n")
        XCTAssertEqual(try ContentDecoder.decode(try fixture("no-content-size.zst"), codings: [.zstd], limit: MiB),
                       try fixture("small.txt"))
    }

    func testZstdWindowAboveRFC9659LimitRejected() throws {
        let e = decodeError { try ContentDecoder.decode(try fixture("window-16MiB.zst"), codings: [.zstd], limit: MiB) }
        XCTAssertEqual(e?.kind, .corrupt)
        XCTAssertTrue(e?.message.hasPrefix("zstd: ") ?? false)
    }

    func testStackedCodings() throws {
        let text = try fixture("small.txt")
        let stacked = try fixture("small.gz.br")
        XCTAssertEqual(try ContentDecoder.decode(stacked, codings: parseContentEncoding("gzip, br")!, limit: MiB), text)
        XCTAssertEqual(try ContentDecoder.decode(stacked, codings: [.identity, .gzip, .identity, .br], limit: MiB), text)
        XCTAssertNotNil(decodeError { try ContentDecoder.decode(stacked, codings: [.br, .gzip], limit: MiB) }, "wrong order")
    }

    func testLimitIsExact() throws {
        let text = try fixture("small.txt")
        for (ext, coding) in formats {
            let encoded = try fixture("small.\(ext)")
            XCTAssertEqual(try ContentDecoder.decode(encoded, codings: [coding], limit: text.count), text, ext)
            let e = decodeError { try ContentDecoder.decode(encoded, codings: [coding], limit: text.count - 1) }
            XCTAssertEqual(e?.kind, .limitExceeded, ext)
        }
    }

    func testBombsRefused() throws {
        for (name, coding) in [("bomb-10MiB.gz", ContentCoding.gzip), ("bomb-10MiB.deflate", .deflate),
                               ("bomb-100MiB.br", .br), ("bomb-100MiB.zst", .zstd)] {
            let e = decodeError { try ContentDecoder.decode(try fixture(name), codings: [coding], limit: MiB) }
            XCTAssertEqual(e?.kind, .limitExceeded, name)
            XCTAssertEqual(e?.message, "decoded body exceeds the limit of 1048576 bytes (possible decompression bomb)", name)
        }
        // With room to spare the same data decodes.
        let out = try ContentDecoder.decode(try fixture("bomb-10MiB.gz"), codings: [.gzip], limit: 10 * MiB)
        XCTAssertEqual(out.count, 10 * MiB)
        XCTAssertTrue(out.allSatisfy { $0 == 0 })
    }

    func testNegativeLimitActsAsZero() throws {
        XCTAssertEqual(decodeError { try ContentDecoder.decode(try fixture("small.gz"), codings: [.gzip], limit: -5) }?.kind, .limitExceeded)
        XCTAssertEqual(try ContentDecoder.decode(try fixture("empty.gz"), codings: [.gzip], limit: -5), [])
    }

    func testTruncatedInputs() throws {
        for name in ["small", "large"] {
            for (ext, coding) in formats {
                let encoded = try fixture("\(name).\(ext)")
                for cut in [encoded.count / 2, encoded.count - 1] {
                    let e = decodeError { try ContentDecoder.decode(Array(encoded.prefix(cut)), codings: [coding], limit: 2 * MiB) }
                    XCTAssertEqual(e?.kind, .truncated, "\(name).\(ext) cut at \(cut) of \(encoded.count): \(e?.message ?? "")")
                }
            }
        }
    }

    func testCorruptInputs() throws {
        let text = try fixture("small.txt")
        // Flipped payload byte: caught by the gzip CRC-32, zlib Adler-32, zstd XXH64 checksum.
        for (ext, coding) in [("gz", ContentCoding.gzip), ("zlib", .deflate), ("zst", .zstd)] {
            var encoded = try fixture("small.\(ext)")
            encoded[encoded.count / 2] ^= 0x55
            let e = decodeError { try ContentDecoder.decode(encoded, codings: [coding], limit: MiB) }
            XCTAssertEqual(e?.kind, .corrupt, "\(ext): \(e?.message ?? "")")
        }
        // Not compressed at all.
        for coding in [ContentCoding.gzip, .br, .zstd, .deflate] {
            let e = decodeError { try ContentDecoder.decode(text, codings: [coding], limit: MiB) }
            XCTAssertEqual(e?.kind, .corrupt, "\(coding): \(e?.message ?? "")")
        }
        let e = decodeError { try ContentDecoder.decode(Array("hello".utf8), codings: [.gzip], limit: MiB) }
        XCTAssertEqual(e?.message, "gzip: corrupt data (incorrect header check)")
        // Trailing data after single-stream codings.
        for (ext, coding) in [("br", ContentCoding.br), ("zlib", .deflate), ("deflate", .deflate), ("zst", .zstd)] {
            let encoded = try fixture("small.\(ext)") + [0x42, 0x42, 0x42, 0x42]
            XCTAssertEqual(decodeError { try ContentDecoder.decode(encoded, codings: [coding], limit: MiB) }?.kind, .corrupt, ext)
        }
    }

    func testSeededGarbageNeverCrashes() {
        var state: UInt64 = 0xC0DEC
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let prefixes: [[UInt8]] = [[], [0x1F, 0x8B, 8, 0], [0x78, 0x9C], [0x28, 0xB5, 0x2F, 0xFD]]
        for i in 0..<2000 {
            let n = Int(next() % 200)
            let body = prefixes[i % prefixes.count] + (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) }
            for coding in [ContentCoding.gzip, .deflate, .br, .zstd] {
                do {
                    let out = try ContentDecoder.decode(body, codings: [coding], limit: 64 * 1024)
                    XCTAssertLessThanOrEqual(out.count, 64 * 1024)
                } catch let e as ContentDecodingError {
                    XCTAssertFalse(e.message.isEmpty)
                } catch {
                    XCTFail("\(error)")
                }
            }
        }
    }
}

final class InflaterTests: XCTestCase {
    func testContextTakeoverAcrossMessages() throws {
        let inflater = try Inflater()
        let one = try inflater.inflate(try fixture("pmd-1.deflate"), limit: 1024)
        XCTAssertEqual(String(decoding: one, as: UTF8.self), "hello hello hello websocket message one")
        let two = try inflater.inflate(try fixture("pmd-2.deflate"), limit: 1024)
        XCTAssertEqual(String(decoding: two, as: UTF8.self), "hello websocket message one, again")
        XCTAssertFalse(inflater.isFinished, "sync flush does not end the stream")

        // Without the first message's window, the second refers to data it never saw.
        let fresh = try Inflater()
        XCTAssertEqual(decodeError { try fresh.inflate(try fixture("pmd-2.deflate"), limit: 1024) }?.kind, .corrupt)
    }

    func testByteByByteMatchesWhole() throws {
        let expected = try fixture("small.txt")
        let inflater = try Inflater(raw: true)
        var out: [UInt8] = []
        for b in try fixture("small.deflate") { out += try inflater.inflate([b], limit: 1024) }
        XCTAssertEqual(out, expected)
        XCTAssertTrue(inflater.isFinished)
        XCTAssertEqual(decodeError { try inflater.inflate([0], limit: 1024) }?.kind, .corrupt)
        try inflater.reset()
        XCTAssertFalse(inflater.isFinished)
        XCTAssertEqual(try inflater.inflate(try fixture("small.deflate"), limit: 1024), expected)
    }

    func testLargeInChunks() throws {
        let encoded = try fixture("large.deflate")
        let inflater = try Inflater()
        var out: [UInt8] = []
        var i = 0
        while i < encoded.count {
            let n = min(777, encoded.count - i)
            out += try inflater.inflate(Array(encoded[i..<(i + n)]), limit: MiB)
            i += n
        }
        XCTAssertTrue(out == largeInput())
    }

    func testZlibWrapped() throws {
        let inflater = try Inflater(raw: false)
        XCTAssertEqual(try inflater.inflate(try fixture("small.zlib"), limit: 1024), try fixture("small.txt"))
        XCTAssertTrue(inflater.isFinished)
    }

    func testLimitAndRecovery() throws {
        let inflater = try Inflater()
        let e = decodeError { try inflater.inflate(try fixture("bomb-10MiB.deflate"), limit: MiB) }
        XCTAssertEqual(e?.kind, .limitExceeded)
        try inflater.reset()
        XCTAssertEqual(try inflater.inflate(try fixture("small.deflate"), limit: 1024), try fixture("small.txt"))
    }

    func testTrailingDataAfterFinalBlock() throws {
        let inflater = try Inflater()
        let e = decodeError { try inflater.inflate(try fixture("small.deflate") + [1, 2], limit: 1024) }
        XCTAssertEqual(e?.message, "deflate: 2 bytes of data after the end of the stream")
    }

    func testWindowBitsValidation() throws {
        XCTAssertThrowsError(try Inflater(windowBits: 7))
        XCTAssertThrowsError(try Inflater(windowBits: 16))
        let small = try Inflater(windowBits: 8)
        XCTAssertEqual(try small.inflate(try fixture("pmd-1.deflate"), limit: 1024).count, 39)
        XCTAssertEqual(try Inflater(windowBits: 9).inflate([], limit: 0), [])
    }
}

/// The libdeflate fast path must agree with zlib and step aside for everything unusual.
final class WholeBufferGzipTests: XCTestCase {
    func testSingleMemberTakesTheFastPathWithIdenticalOutput() throws {
        for name in ["small.gz", "large.gz"] {
            let data = try fixture(name)
            let fast = try XCTUnwrap(WholeBufferGzip.decode(data, limit: 1 << 30), name)
            XCTAssertEqual(fast, try ZlibDecoding.decode(data, format: .gzip, limit: 1 << 30), name)
        }
    }

    func testUnusualInputFallsBackToZlib() throws {
        XCTAssertNil(WholeBufferGzip.decode(try fixture("multi-member.gz"), limit: 1 << 30), "several members")
        let small = try fixture("small.gz")
        XCTAssertNil(WholeBufferGzip.decode(small, limit: 3), "stated size over the limit")
        XCTAssertNil(WholeBufferGzip.decode(Array(small.dropLast(1)), limit: 1 << 30), "truncated")
        var wrongSize = small
        wrongSize[wrongSize.count - 4] &+= 1
        XCTAssertNil(WholeBufferGzip.decode(wrongSize, limit: 1 << 30), "trailer size disagrees")
        XCTAssertThrowsError(try ContentDecoder.decode(wrongSize, codings: [.gzip], limit: 1 << 30),
                             "the zlib path reports the damage")
        var corrupt = small
        corrupt[corrupt.count / 2] ^= 0xFF
        XCTAssertNil(WholeBufferGzip.decode(corrupt, limit: 1 << 30), "corrupt")
    }
}
