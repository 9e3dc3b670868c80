import Dispatch
import HAR
@testable import Redaction
import TextEncodings
import XCTest

/// The two passes over a whole file (`FileRedaction`): a value marked anywhere is replaced
/// everywhere it stands bare, in any encoding; placeholders are numbered in file order, after
/// those already in the input; the output is idempotent, independent of the order and threads
/// entries are processed on, and text that holds the engine's private-use marks is left as it was.
final class TwoPassTests: XCTestCase {
    /// No shape any rule knows, no secret word next to it where it is used bare: only pass 2 finds it.
    let token = "Zq7-tok3n-Lp9xV2"

    private func webSocket(_ messages: [String]) -> JSONFields {
        [(key: "_webSocketMessages", value: .array(messages.enumerated().map { i, data in
            .object([(key: "type", value: .string("send")), (key: "time", value: .double(1.5 + Double(i))),
                     (key: "opcode", value: .integer(1)), (key: "data", value: .string(data))])
        }))]
    }

    private func messages(_ entry: HAREntry) -> [String] {
        entry.custom.first { $0.key == "_webSocketMessages" }?.value.arrayValue?.compactMap { $0["data"]?.stringValue } ?? []
    }

    // MARK: Chasing a value

    func testAValueMarkedInEntryFiveIsReplacedInEntriesOneToThree() {
        let entries = [
            makeEntry(index: 0, url: "https://api.example.com/v1/files/\(token)/download"),
            makeEntry(index: 1, responseBody: ("application/json", #"{"ref": "\#(token)", "n": 1}"#)),
            makeEntry(index: 2, url: "wss://api.example.com/ws", requestHeaders: [("X-Trace", token)], status: 101,
                      custom: webSocket([#"{"type":"ping","id":"\#(token)"}"#, "echo \(token)!"])),
            makeEntry(index: 3, responseBody: ("application/json", #"{"password": "pw-other-1234"}"#)),
            makeEntry(index: 4, method: "POST", url: "https://api.example.com/v1/login",
                      responseBody: ("application/json", #"{"session_token": "\#(token)"}"#)),
        ]
        let r = redacted(entries)
        // Numbered in file order of the values the rules marked: entry 4's password comes first.
        XCTAssertEqual(r.log.entries[3].response.content.text, #"{"password": "redacted-1"}"#)
        XCTAssertEqual(r.log.entries[4].response.content.text, #"{"session_token": "redacted-2"}"#)
        XCTAssertEqual(r.log.entries[0].request.url, "https://api.example.com/v1/files/redacted-2/download")
        XCTAssertEqual(r.log.entries[1].response.content.text, #"{"ref": "redacted-2", "n": 1}"#)
        XCTAssertEqual(header(r.log.entries[2].request.headers, "X-Trace"), "redacted-2")
        XCTAssertEqual(messages(r.log.entries[2]), [#"{"type":"ping","id":"redacted-2"}"#, "echo redacted-2!"])
        XCTAssertFalse(text(r.bytes).contains(token))
        XCTAssertEqual(r.report.counts[.knownSecrets], [.url: 1, .body: 1, .header: 1, .webSocket: 2])
        // Content-Length follows the body pass 2 changed.
        XCTAssertEqual(header(r.log.entries[1].response.headers, "Content-Length"),
                       String(r.log.entries[1].response.content.text!.utf8.count))
    }

    func testEncodedFormsOfAKnownValue() throws {
        let secret = "Kx9/Pq2+Lm7Rt4wZ"  // '/' and '+': every encoding differs from the value
        let placeholder = "redacted-1"
        let lowerPercent = "Kx9/Pq2%2bLm7Rt4wZ"
        let state = Base64.encode(utf8(#"{"t":"\#(secret)"}"#))
        let entries = [
            makeEntry(index: 0, url: "https://api.example.com/v1/a?t=\(lowerPercent)&u=\(URLParts.percentEncodedQueryValue(secret))",
                      requestHeaders: [("X-State", state)],
                      responseBody: ("application/json",
                                     #"{"blob":"\#(Base64.encode(utf8(secret)))","b64u":"\#(Base64URL.encode(utf8(secret)))","path":"Kx9\/Pq2+Lm7Rt4wZ"}"#)),
            makeEntry(index: 1, responseBody: ("application/json", #"{"access_token": "\#(secret)"}"#)),
        ]
        let r = redacted(entries)
        let entry = r.log.entries[0]
        XCTAssertEqual(entry.request.url, "https://api.example.com/v1/a?t=\(placeholder)&u=\(placeholder)")
        XCTAssertEqual(entry.request.queryString.map(\.value), [placeholder, placeholder])
        XCTAssertEqual(header(entry.request.headers, "X-State"), Base64.encode(utf8(#"{"t":"\#(placeholder)"}"#)))
        XCTAssertEqual(entry.response.content.text,
                       #"{"blob":"\#(Base64.encode(utf8(placeholder)))","b64u":"\#(Base64URL.encode(utf8(placeholder)))","path":"\#(placeholder)"}"#)
        XCTAssertTrue(jsonIsValid(try XCTUnwrap(entry.response.content.text)))
    }

    func testTheSamePlaceholderForTheSameValueAcrossRules() {
        // A token found by a format rule in one entry and under a secret key in another is one value.
        let key = "AKIAIOSFODNN7EXAMPLE"
        let r = redacted([
            makeEntry(index: 0, responseBody: ("application/json", #"{"aws": {"accessKeyId": "\#(key)"}}"#)),
            makeEntry(index: 1, url: "https://api.example.com/?k=\(key)", requestHeaders: [("X-Amz-Key", key)]),
        ])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"aws": {"accessKeyId": "redacted-1"}}"#)
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/?k=redacted-1")
        XCTAssertEqual(r.log.entries[1].request.headers[0].value, "redacted-1")
    }

    // MARK: Numbering

    func testNumberingFollowsFileOrderWhateverTheCollectionOrder() {
        let entries = (0..<6).map { i in
            makeEntry(index: i, responseBody: ("application/json", #"{"token": "tok-\#(i % 3)-abcdefgh", "mail": "u\#(i % 4)@corp.com"}"#))
        }
        var log = makeLog(entries)
        let file = FileRedaction(config: RedactionConfiguration(), entryCount: log.entries.count)
        file.collectHead(&log)
        for i in log.entries.indices.reversed() { file.collect(&log.entries[i], index: i) }
        file.freeze()
        file.finalizeHead(&log)
        for i in log.entries.indices.reversed() { file.finalize(&log.entries[i], index: i) }
        let bodies = log.entries.map { $0.response.content.text ?? "" }
        XCTAssertEqual(bodies, (0..<6).map { i in #"{"token": "redacted-\#(i % 3 + 1)", "mail": "user\#(i % 4 + 1)@example.com"}"# })
        XCTAssertEqual(log.serialize(pretty: true), redacted(entries).bytes)
    }

    /// Entries released after pass 1 and built again for pass 2 (a bounded export) come out exactly
    /// as entries kept between the passes; each distinct value is stored once however many entries
    /// carry it.
    func testReleasedEntriesBuiltAgainGiveTheSameFile() {
        let entries = (0..<40).map { i in
            makeEntry(index: i, url: "https://api.example.com/v1/items?session=sess-\(i % 5)-abcdefgh",
                      responseBody: ("application/json", #"{"token": "tok-\#(i % 7)-abcdefgh", "mail": "u\#(i % 4)@corp.com", "ref": "Zq7-tok3n-Lp9xV2"}"#))
        }
        let expected = redacted(entries).bytes
        var log = makeLog(entries)
        let file = FileRedaction(config: RedactionConfiguration(), entryCount: log.entries.count)
        file.collectHead(&log)
        final class Kept: @unchecked Sendable { var entries: [HAREntry?] = []; var held: [[UInt8]?] = [] }
        let kept = Kept()
        kept.entries = Array(repeating: nil, count: entries.count)
        kept.held = Array(repeating: nil, count: entries.count)
        kept.entries.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let slots = slots
            DispatchQueue.concurrentPerform(iterations: 4) { part in
                for i in stride(from: part, to: entries.count, by: 4) {
                    var entry = entries[i]
                    file.collect(&entry, index: i)
                    // Every third entry is not kept: the export builds it again later, and what
                    // pass 1 held for it (the rewritten body) goes.
                    XCTAssertGreaterThan(file.heldBytes(i), 0, "the rewritten body is held for pass 2")
                    if i % 3 == 0 {
                        file.release(i)
                        XCTAssertEqual(file.heldBytes(i), 0)
                    } else if i % 3 == 1 {
                        // Spilled (as the export does past its budget): the entry goes through
                        // JSON, and what pass 1 held goes away as bytes until pass 2.
                        var writer = JSONWriter(pretty: false, reservingCapacity: 1024)
                        entry.write(to: &writer)
                        slots[i] = HAREntry(lenient: try! JSONParser.parse(writer.takeBytes()))
                        let held = file.takeHeld(i)
                        XCTAssertEqual(file.heldBytes(i), 0)
                        kept.held.withUnsafeMutableBufferPointer { $0[i] = held }
                    } else {
                        slots[i] = entry
                    }
                }
            }
        }
        file.freeze()
        file.finalizeHead(&log)
        for i in log.entries.indices {
            if var entry = kept.entries[i] {
                if i % 3 == 1 { file.restoreHeld(i, kept.held[i]) }
                file.finalize(&entry, index: i)
                log.entries[i] = entry
            } else {
                var entry = entries[i]
                file.redactAgain(&entry, index: i)
                log.entries[i] = entry
            }
        }
        XCTAssertEqual(log.serialize(pretty: true), expected)
        XCTAssertEqual(file.distinctValueCount, 5 + 7 + 4, "sessions, tokens and emails, each once (the ref under an innocent key is no value)")
    }

    func testPlaceholdersInTheInputKeepTheirNumbers() {
        let r = redacted([
            makeEntry(index: 0, responseBody: ("application/json",
                                               #"{"token": "redacted-7", "firstName": "person-4", "phone": "+12015550102"}"#)),
            makeEntry(index: 1, responseBody: ("application/json",
                                               #"{"password": "new-secret-1", "lastName": "Liddell", "mobile": "+14155552671"}"#)),
        ])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"token": "redacted-7", "firstName": "person-4", "phone": "+12015550102"}"#)
        XCTAssertEqual(r.log.entries[1].response.content.text,
                       #"{"password": "redacted-8", "lastName": "person-5", "mobile": "+12015550103"}"#)
        XCTAssertEqual(r.report.total, 3)
    }

    func testExampleAddressesAndHostsInTheInputKeepTheirNumbers() {
        // Email and host placeholders already in the file reserve their numbers too: the new
        // address is user4@example.com and the new host internal-3.example.invalid, so two people
        // (two hosts) never share one.
        let r = redacted([
            makeEntry(index: 0, responseBody: ("application/json", #"{"cc": "user3@example.com", "upstream": "internal-2.example.invalid"}"#)),
            makeEntry(index: 1, responseBody: ("application/json", #"{"cc": "ann@corp.com", "upstream": "db.corp"}"#)),
        ])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"cc": "user3@example.com", "upstream": "internal-2.example.invalid"}"#)
        XCTAssertEqual(r.log.entries[1].response.content.text, #"{"cc": "user4@example.com", "upstream": "internal-3.example.invalid"}"#)
    }

    // MARK: Idempotence and what is not chased

    func testRedactingTwiceGivesIdenticalBytes() {
        var entries = richLog().entries
        entries.append(makeEntry(index: 5, url: "https://api.example.com/v1/files/\(token)",
                                 responseBody: ("application/json", #"{"refresh_token": "\#(token)", "b": "\#(Base64.encode(utf8(token)))"}"#)))
        let once = redacted(entries)
        let twice = redacted(once.log)
        XCTAssertEqual(text(twice.bytes), text(once.bytes))
        XCTAssertEqual(twice.report.total, 0)
        XCTAssertTrue(findings(once.log).isEmpty)
    }

    func testDictionaryWordsAndNumbersAreNotChased() {
        let r = redacted([
            makeEntry(index: 0, responseBody: ("application/json", #"{"password": "sunshine", "pin": "12345678", "secret": "Summer2024!"}"#)),
            makeEntry(index: 1, url: "https://api.example.com/sunshine/12345678?q=sunshine",
                      responseBody: ("application/json", #"{"motto": "the sunshine state", "n": 12345678, "old": "Summer2024!"}"#)),
        ])
        XCTAssertEqual(r.log.entries[1].request.url, "https://api.example.com/sunshine/12345678?q=sunshine")
        XCTAssertEqual(r.log.entries[1].response.content.text, #"{"motto": "the sunshine state", "n": 12345678, "old": "redacted-3"}"#)
        XCTAssertEqual(r.report.counts[.knownSecrets], [.body: 1])
    }

    // MARK: Crafted marks

    /// Private-use text as the engine writes its marks, with other nonces, no nonce, or cut off.
    private let crafted = [
        "\u{E000}xyz0\u{E001}", "\u{E000}0\u{E001}", "\u{E000}xyz0#4\u{E001}", "\u{E002}xyzspdG9rZW4=\u{E003}xyz",
        "\u{E004}xyzQUFBQQ==\u{E005}xyz", "\u{E006}xyza b\u{E007}xyz", "\u{E001}\u{E000}", "tail \u{E000}xyz",
    ].joined(separator: " | ")

    /// Redacts with a fixed nonce, so no crafted mark can collide with the run's by chance.
    private func redactedWithNonce(_ entries: [HAREntry]) -> HARLog {
        var log = makeLog(entries)
        let file = FileRedaction(rules: CompiledRules(RedactionConfiguration(), syntax: MarkerSyntax(nonce: Array("abc".utf8))),
                                 entryCount: log.entries.count, collectFindings: false)
        file.collectHead(&log)
        for i in log.entries.indices { file.collect(&log.entries[i], index: i) }
        file.freeze()
        file.finalizeHead(&log)
        for i in log.entries.indices { file.finalize(&log.entries[i], index: i) }
        return log
    }

    func testCraftedMarksInTheInputAreInert() {
        let entries = [
            makeEntry(index: 0, url: "https://api.example.com/v1/x?note=\(URLParts.percentEncodedQueryValue(crafted))&token=tk-123456789",
                      requestHeaders: [("X-Note", crafted + " ann@corp.com")],
                      responseBody: ("application/json", #"{"note": "\#(crafted)", "password": "pw-crafted-1", "mail": "ann@corp.com"}"#),
                      custom: webSocket([crafted, #"{"m": "\#(crafted)", "token": "tk-123456789"}"#])),
            makeEntry(index: 1, responseBody: ("text/plain", crafted + "\nAKIAIOSFODNN7EXAMPLE\n" + crafted)),
        ]
        // And with a random nonce, as `redact` runs (skipped in the 1 in 140,608 runs whose nonce
        // is the crafted one).
        let engine = RedactionEngine()
        var random = makeLog(entries)
        if engine.syntax.nonce != Array("xyz".utf8) { engine.redact(&random) } else { random = redactedWithNonce(entries) }
        for log in [redactedWithNonce(entries), random] {
            let e0 = log.entries[0], e1 = log.entries[1]
            XCTAssertEqual(e0.request.queryString.map(\.value), [crafted, "redacted-1"])
            XCTAssertEqual(header(e0.request.headers, "X-Note"), crafted + " user1@example.com")
            XCTAssertEqual(e0.response.content.text, #"{"note": "\#(crafted)", "password": "redacted-2", "mail": "user1@example.com"}"#)
            XCTAssertEqual(messages(e0), [crafted, #"{"m": "\#(crafted)", "token": "redacted-1"}"#])
            XCTAssertEqual(e1.response.content.text, crafted + "\nredacted-3\n" + crafted)
        }
    }

    func testASecretHoldingPrivateUseCharactersIsReplacedWhole() {
        let r = redacted([makeEntry(responseBody: ("application/json", #"{"password": "\#(crafted)", "other": "\#(crafted)"}"#))])
        XCTAssertEqual(r.log.entries[0].response.content.text, #"{"password": "redacted-1", "other": "\#(crafted)"}"#)
    }

    // MARK: Threads

    /// Twenty entries that refer to each other's values in every direction.
    private func crossReferencingLog() -> HARLog {
        let tokens = (0..<7).map { "Tk\($0)-Yq8wLm3Zp\($0 * 7)x" }
        var entries = richLog().entries
        for k in 0..<20 {
            let index = entries.count
            entries.append(makeEntry(
                index: index, url: "https://api.example.com/v1/items/\(tokens[k % 7])?mail=u\(k % 5)%40corp.com",
                requestHeaders: [("X-Trace", tokens[(k + 3) % 7]), ("X-Forwarded-For", "10.0.\(k % 3).\(k % 4 + 1)")],
                responseBody: ("application/json", #"{"token": "\#(tokens[(k * 3) % 7])", "owner": "u\#(k % 5)@corp.com", "host": "db\#(k % 2).corp", "b": "\#(Base64.encode(utf8(tokens[(k + 1) % 7])))"}"#),
                custom: k % 4 == 0 ? webSocket(["ping \(tokens[(k + 5) % 7])"]) : []))
        }
        return makeLog(entries)
    }

    func testEntriesInParallelGiveTheSameBytesAsOneThread() {
        let log = crossReferencingLog()
        let sequential = redacted(log)
        for _ in 0..<3 {
            var copy = log
            let file = FileRedaction(config: RedactionConfiguration(), entryCount: copy.entries.count)
            file.collectHead(&copy)
            copy.entries.withUnsafeMutableBufferPointer { buffer in
                let entries = SendableBuffer(buffer)
                DispatchQueue.concurrentPerform(iterations: buffer.count) { i in file.collect(&entries.buffer[i], index: i) }
            }
            file.freeze()
            file.finalizeHead(&copy)
            copy.entries.withUnsafeMutableBufferPointer { buffer in
                let entries = SendableBuffer(buffer)
                DispatchQueue.concurrentPerform(iterations: buffer.count) { i in file.finalize(&entries.buffer[i], index: i) }
            }
            XCTAssertEqual(text(copy.serialize(pretty: true)), text(sequential.bytes))
            XCTAssertEqual(file.report.total, sequential.report.total)
            XCTAssertEqual(file.report.counts, sequential.report.counts)
        }
        XCTAssertGreaterThan(sequential.report.counts[.knownSecrets]?[.url] ?? 0, 10)
        XCTAssertFalse(text(sequential.bytes).contains("Yq8wLm3Zp"))
    }

    /// Response bodies kept as bytes between the passes (the entry's text nil) give exactly the
    /// file that keeping them as strings gives, sizes included.
    func testBodiesKeptAsBytesGiveTheSameFile() {
        let bodies: [(String, String, Bool)] = [
            ("application/json", #"{"token": "tok-1-abcdefgh", "mail": "u1@corp.com", "n": [1, 2.5, "x"]}"#, false),
            ("application/json", #"{"note": "caf\u00e9 \"quoted\" tok-1-abcdefgh", "password": "hunter2hunter2"}"#, false),
            ("application/json", #"{"token": "tok-2-abcdefgh", "cut": "#, false),  // broken JSON
            ("application/x-ndjson", "{\"token\": \"tok-3-abcdefgh\"}\n{\"mail\": \"u2@corp.com\"}", false),
            ("text/plain", "password=s3cr3t-v4lue-x9 and mail u3@corp.com tok-1-abcdefgh", false),
            ("application/x-www-form-urlencoded", "token=tok-4-abcdefgh&mail=u4%40corp.com", false),
            ("application/json", #"{"token": "tok-5-abcdefgh"}"#, true),
            ("application/json", #"{"plain": "nothing to see"}"#, false),
            ("application/json", #"{"mail": "\u00fcser@corp.com", "ref": "tok-2-abcdefgh"}"#, false),
        ]
        let entries = bodies.enumerated().map { i, body in
            makeEntry(index: i, url: "https://api.example.com/v1/items?session=sess-\(i % 3)-abcdefgh",
                      responseBody: (body.0, body.1), responseBase64: body.2)
        }
        func run(deferBodies: Bool) -> (bytes: [UInt8], deferred: Int, log: HARLog) {
            var log = makeLog(entries)
            let file = FileRedaction(rules: CompiledRules(RedactionConfiguration()), entryCount: log.entries.count,
                                     collectFindings: false, deferBodies: deferBodies)
            file.collectHead(&log)
            for i in log.entries.indices { file.collect(&log.entries[i], index: i) }
            let deferred = log.entries.filter { $0.response.content.text == nil }.count
            file.freeze()
            file.finalizeHead(&log)
            for i in log.entries.indices { file.finalize(&log.entries[i], index: i) }
            return (log.serialize(pretty: true), deferred, log)
        }
        let asBytes = run(deferBodies: true), asStrings = run(deferBodies: false)
        XCTAssertEqual(asStrings.deferred, 0)
        // The JSON, broken JSON and text bodies that changed (not the form, base64 or untouched ones).
        XCTAssertGreaterThanOrEqual(asBytes.deferred, 5)
        XCTAssertEqual(text(asBytes.bytes), text(asStrings.bytes))
        XCTAssertFalse(text(asBytes.bytes).contains("tok-1-abcdefgh"))
        for entry in asBytes.log.entries where entry.response.content.encoding == nil {
            XCTAssertEqual(entry.response.content.size, entry.response.content.text?.utf8.count)
        }
    }
}
