import XCTest
import HAR
import TextEncodings
@testable import Redaction

/// A response body left in the journal (`HARDeferredBody`) is redacted a window at a time as the
/// HAR is written. Its output must be the output of the same body held whole, byte for byte,
/// whatever the windows and the pieces its source hands over.
final class DeferredBodyTests: XCTestCase {
    private let token = "tok_9fQ2xLm4Zp8Rv6Ta3Wc1Yb7Ne5Gh0Jd"
    /// Sent in the URL's query, so only pass 2 finds it bare in a body (`KnownValueIndex`).
    private let password = "correct horse battery"

    /// Random bytes with printable runs planted at seeded places: an address, the bearer token
    /// the request sent (a known value for pass 2), and a run cut by a window's edge would be
    /// (long enough to cross the small windows used here).
    private func body(_ seed: UInt64, count: Int) -> [UInt8] {
        var rng = SeededRandom(seed)
        var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let plants = ["mail ann.lee@corp-mail.net today", "auth=\(token);", "Bearer \(token) end",
                      "seen \(password) bare",
                      String(repeating: "printable run without a value ", count: 300) + "bob@other-mail.org"]
        for plant in plants where plant.utf8.count + 2 < count {
            for _ in 0..<3 {
                let at = Int(rng.next() % UInt64(count - plant.utf8.count - 2))
                bytes.replaceSubrange(at..<(at + plant.utf8.count + 2), with: [0x01] + Array(plant.utf8) + [0x02])
            }
        }
        return bytes
    }

    private func entries(_ bodies: [(mimeType: String, bytes: [UInt8])], deferred: Bool, window: Int, piece: Int) -> [HAREntry] {
        bodies.enumerated().map { k, body in
            var entry = makeEntry(index: k, method: "POST", url: "https://api.example.com/v1/up?user=ann&password=correct+horse+battery",
                                  requestHeaders: [("Authorization", "Bearer \(token)")])
            func deferredBody() -> HARDeferredBody {
                let d = HARDeferredBody(bytes: body.bytes, pieceSize: piece)
                d.windowBytes = window
                return d
            }
            var content = HARContent(size: body.bytes.count, mimeType: body.mimeType, encoding: "base64")
            var post = HARPostData(mimeType: body.mimeType, encoding: "base64")
            if deferred {
                content.deferred = deferredBody()
                post.deferred = deferredBody()
            } else {
                content.text = Base64.encode(body.bytes)
                post.text = Base64.encode(body.bytes)
            }
            entry.response.content = content
            // The same bytes sent as an upload.
            entry.request.postData = post
            entry.request.bodySize = body.bytes.count
            return entry
        }
    }

    /// Both passes, then the parallel writer (which streams deferred bodies): the HAR's bytes.
    private func redactedHAR(_ input: [HAREntry]) throws -> (bytes: [UInt8], report: RedactionReport) {
        let file = FileRedaction(config: RedactionConfiguration(), entryCount: input.count)
        var entries = input
        for i in entries.indices { file.collect(&entries[i], index: i) }
        for (k, entry) in entries.enumerated() where input[k].response.content.deferred != nil {
            let binary = k != 3 && k != 4
            XCTAssertEqual(entry.response.content.deferred != nil, binary, "body \(k): read whole only when it is text")
            XCTAssertEqual(entry.request.postData?.deferred != nil, binary, "upload \(k)")
        }
        file.freeze()
        for i in entries.indices { file.finalize(&entries[i], index: i) }
        let log = HARLog(creator: HARCreator(name: "test", version: "1"), entries: [])
        let out = SendableBox<[UInt8]>([])
        let built = entries
        try log.serialize(entryCount: built.count, entry: { built[$0] }, to: { bytes in out.value += bytes })
        return (out.value, file.report)
    }

    func testAWindowedBodyIsRedactedAsTheWholeBodyIs() throws {
        let bodies: [(mimeType: String, bytes: [UInt8])] = [
            ("application/octet-stream", body(1, count: 300_000)),
            ("image/png", body(2, count: 70_001)),
            ("video/mp4", body(3, count: 5)),
            ("application/octet-stream", Array("{\"email\":\"ann.lee@corp-mail.net\",\"n\":1}".utf8)),
            ("application/json", Array("[\"bob@other-mail.org\", \"\(token)\"]".utf8)),
            // Starts like a JSON document but is no UTF-8: binary, and never read whole.
            ("application/octet-stream", Array("  [".utf8) + body(4, count: 60_000)),
        ]
        let whole = try redactedHAR(entries(bodies, deferred: false, window: 0, piece: 0))
        let text = String(decoding: whole.bytes, as: UTF8.self)
        XCTAssertFalse(text.contains(token), "the token is replaced in the header")
        for (window, piece) in [(1 << 12, 1_000), (1 << 12, 7), (1 << 16, 1 << 20), (1, 333), (1 << 22, 4_096)] {
            let streamed = try redactedHAR(entries(bodies, deferred: true, window: window, piece: piece))
            XCTAssertEqual(streamed.report.total, whole.report.total, "window \(window), piece \(piece)")
            XCTAssertEqual(streamed.report.binaryBodies, whole.report.binaryBodies)
            if streamed.bytes != whole.bytes {
                let at = zip(streamed.bytes, whole.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(streamed.bytes.count, whole.bytes.count)
                XCTFail("window \(window), piece \(piece): differs from byte \(at) of \(whole.bytes.count)")
            }
        }
        // What the whole body's redaction did: every planted value is gone from every body, and
        // each binary body kept its length.
        let har = try JSONParser.parse(whole.bytes)
        let written = har["log"]?["entries"]?.arrayValue ?? []
        XCTAssertEqual(written.count, bodies.count)
        for (k, entry) in written.enumerated() {
            let content = entry["response"]?["content"]
            let bytes = Base64.decode(content?["text"]?.stringValue ?? "") ?? []
            let sent = Base64.decode(entry["request"]?["postData"]?["text"]?.stringValue ?? "") ?? []
            XCTAssertEqual(sent, bytes, "body \(k): the upload is redacted as the answer is")
            let seen = String(decoding: bytes, as: UTF8.self)
            for planted in [token, password, "ann.lee@corp-mail.net", "bob@other-mail.org"] {
                XCTAssertFalse(seen.contains(planted), "body \(k) still holds \(planted)")
            }
            if k < 3 { XCTAssertEqual(bytes.count, bodies[k].bytes.count, "body \(k) keeps its length") }
        }
    }

    /// `--check` reads a deferred binary body through a window at a time, writing nothing: its
    /// findings (what the rules replace in pass 1, the known values pass 2 replaces) are those of
    /// the same bodies held whole. A body of a binary type that is UTF-8 text is read whole, as the
    /// check's second opinion reads it as text.
    func testTheCheckFindsInAWindowedBodyWhatItFindsInTheWholeBody() {
        let bodies: [(mimeType: String, bytes: [UInt8])] = [
            ("application/octet-stream", body(1, count: 300_000)),
            ("image/png", body(2, count: 70_001)),
            ("application/octet-stream", Array("  [".utf8) + body(4, count: 60_000)),
            ("application/octet-stream", Array("note for ann.lee@corp-mail.net: Bearer \(token), seen \(password) bare".utf8)),
        ]
        func findings(_ input: [HAREntry]) -> [String] {
            let file = FileRedaction(config: RedactionConfiguration(), entryCount: input.count, collectFindings: true)
            var entries = input
            for i in entries.indices { file.collect(&entries[i], index: i) }
            for (k, entry) in entries.enumerated() where input[k].response.content.deferred != nil {
                XCTAssertEqual(entry.response.content.deferred != nil, k != 3, "body \(k): read whole only when it is UTF-8")
            }
            file.freeze()
            for i in entries.indices { file.finalize(&entries[i], index: i) }
            return file.report.findings.map { "\($0.path) \($0.rule.name) \($0.preview)" }.sorted()
        }
        let whole = findings(entries(bodies, deferred: false, window: 0, piece: 0))
        for k in bodies.indices {
            XCTAssertTrue(whole.contains { $0.hasPrefix("log.entries[\(k)]") && $0.contains(" email ") }, "body \(k): \(whole)")
            XCTAssertTrue(whole.contains { $0.hasPrefix("log.entries[\(k)] (body) known-secrets") }, "body \(k): \(whole)")
        }
        for (window, piece) in [(1 << 12, 1_000), (1 << 16, 7), (1, 333), (1 << 22, 4_096)] {
            XCTAssertEqual(findings(entries(bodies, deferred: true, window: window, piece: piece)), whole,
                           "window \(window), piece \(piece)")
        }
    }
}

/// A value shared with the writer's closure (the test reads it after the write returns).
private final class SendableBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

/// splitmix64: the same bytes on every run and machine.
private struct SeededRandom {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
