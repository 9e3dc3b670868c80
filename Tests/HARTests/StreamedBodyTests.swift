import TestSupport
import TextEncodings
import XCTest
@testable import HAR

/// What `harrec replay` needs to stream a body from the HAR file: a string's content decoded in
/// pieces (`JSONStringStream`) and lenient base64 decoded in pieces (`Base64LenientStream`), each
/// equal to decoding the whole at once wherever the pieces are cut, and the body's text found in
/// an entry's bytes and checked as the parser checks it (`entryLeavingOutResponseText`).
final class StreamedBodyTests: XCTestCase {
    /// `content` decoded by `JSONStringStream` in pieces cut at `cuts`.
    private func streamed(_ content: [UInt8], cuts: [Int]) -> [UInt8]? {
        var stream = JSONStringStream()
        var out: [UInt8] = []
        var start = 0
        for end in cuts + [content.count] where end >= start {
            let ok = content[start..<end].withUnsafeBufferPointer { stream.decode($0, isLast: end == content.count, into: &out) }
            guard ok else { return nil }
            start = end
        }
        return out
    }

    /// Every cut of short strings, and random cuts of long ones (errors included), give what the
    /// whole-string decoder gives.
    func testStringContentInPiecesEqualsTheWhole() {
        var rng = SplitMix64(seed: 41)
        for round in 0..<1_200 {
            let pieces = round < 600 ? Int(rng.next() % 12) : Int(rng.next() % 400)
            var content = JSONUnescapeEquivalenceTests.generate(&rng, pieces: pieces, errors: round % 3 == 0)
            if content.last == 0x22 { content.removeLast() }
            let whole = content.withUnsafeBufferPointer { JSONParser.unescapeStringContent($0) }
            // Against an independent byte-by-byte decoder (which also rejects what the stream
            // leaves to its caller: raw control characters and invalid UTF-8).
            if let reference = JSONUnescapeEquivalenceTests.reference(content + [0x22]) {
                XCTAssertEqual(whole, Array(reference.utf8), "round \(round)")
            } else if whole != nil {
                XCTAssertTrue(content.contains { $0 < 0x20 } || String(validating: whole!, as: UTF8.self) == nil, "round \(round)")
            }
            if content.count <= 40 {
                for cut in 0...content.count {
                    XCTAssertEqual(streamed(content, cuts: [cut]), whole, "round \(round), cut at \(cut)")
                }
                // Byte by byte.
                XCTAssertEqual(streamed(content, cuts: Array(0...content.count)), whole, "round \(round), byte by byte")
            } else {
                var cuts: [Int] = []
                var at = 0
                while at < content.count {
                    at += 1 + Int(rng.next() % 40)
                    cuts.append(min(at, content.count))
                }
                XCTAssertEqual(streamed(content, cuts: cuts), whole, "round \(round), \(cuts.count) pieces")
            }
        }
    }

    func testAnEscapeCutAtThePieceEndWaitsForTheNext() {
        let content = Array(#"a\ud83d\ude00b\"c\u00e9"#.utf8)
        for cut in 0...content.count {
            XCTAssertEqual(streamed(content, cuts: [cut]), Array("a😀b\"cé".utf8), "cut at \(cut)")
        }
        XCTAssertEqual(streamed(Array(#"x\ud83d"#.utf8), cuts: [3]), Array("x\u{FFFD}".utf8), "a lone surrogate at the end")
        XCTAssertNil(streamed(Array(#"x\"#.utf8), cuts: []), "a backslash at the very end")
        XCTAssertNil(streamed(Array(#"x\q"#.utf8), cuts: [2]))
    }

    /// The lenient decoder as it was written before it streamed: the reference.
    private static func referenceLenient(_ bytes: [UInt8]) -> [UInt8]? {
        var values: [UInt8] = []
        var padding = 0
        for c in bytes {
            let v: UInt8
            switch c {
            case 0x41...0x5A: v = c - 0x41
            case 0x61...0x7A: v = c - 0x61 + 26
            case 0x30...0x39: v = c - 0x30 + 52
            case 0x2B, 0x2D: v = 62
            case 0x2F, 0x5F: v = 63
            case 0x3D: padding += 1; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            if padding > 0 { return nil }
            values.append(v)
        }
        guard padding <= 2, values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i + 4 <= values.count {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6 | UInt32(values[i + 3])
            out += [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        let rest = values.count - i
        if rest >= 2 {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | (rest == 3 ? UInt32(values[i + 2]) << 6 : 0)
            out.append(UInt8(n >> 16 & 0xFF))
            if rest == 3 { out.append(UInt8(n >> 8 & 0xFF)) }
        }
        return out
    }

    private func base64Streamed(_ text: [UInt8], cuts: [Int]) -> [UInt8]? {
        var stream = Base64LenientStream()
        var out: [UInt8] = []
        var start = 0
        for end in cuts + [text.count] where end >= start {
            guard text[start..<end].withUnsafeBufferPointer({ stream.decode($0, into: &out) }) else { return nil }
            start = end
        }
        return stream.finish(into: &out) ? out : nil
    }

    /// Text from both alphabets with whitespace, padding and the odd stray byte: every cut gives
    /// the reference's answer, as do `decodeLenient` and `decodedCountLenient`.
    func testLenientBase64InPiecesEqualsTheReference() {
        var rng = SplitMix64(seed: 43)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_".utf8)
        var rejected = 0
        for round in 0..<2_000 {
            var text: [UInt8] = []
            for _ in 0..<Int(rng.next() % 30) {
                switch rng.next() % 40 {
                case 0: text.append(0x3D)
                case 1: text.append([0x20, 0x0A, 0x0D, 0x09][Int(rng.next() % 4)])
                case 2 where round % 4 == 0: text.append([0x2A, 0x2E, 0xC3, 0x00][Int(rng.next() % 4)])
                default: text.append(alphabet[Int(rng.next() % UInt64(alphabet.count))])
                }
            }
            let expected = Self.referenceLenient(text)
            if expected == nil { rejected += 1 }
            for cut in 0...text.count {
                XCTAssertEqual(base64Streamed(text, cuts: [cut]), expected, "round \(round), cut at \(cut)")
            }
            XCTAssertEqual(base64Streamed(text, cuts: Array(0...text.count)), expected, "round \(round), byte by byte")
            let string = String(decoding: text, as: UTF8.self)
            if String(validating: text, as: UTF8.self) != nil {
                XCTAssertEqual(Base64.decodeLenient(string), expected, "round \(round)")
                XCTAssertEqual(Base64.decodedCountLenient(string), expected?.count, "round \(round)")
            }
        }
        XCTAssertGreaterThan(rejected, 100, "the inputs include text that is not base64")
        XCTAssertLessThan(rejected, 1_900, "and text that is")
    }

    private func document(_ entries: [String]) throws -> HARLazyDocument {
        let text = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["#
            + entries.joined(separator: ",") + "]}}"
        return try HARLazyDocument(Array(text.utf8))
    }

    private func entry(content: String, response extra: String = "", postData: String? = nil) -> String {
        #"{"startedDateTime":"2026-12-06T00:00:00.000Z","time":1,"request":{"method":"GET","url":"http://a.test/","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"queryString":[],"headersSize":-1,"bodySize":0"#
            + (postData.map { #","postData":"# + $0 } ?? "") + "},"
            + #""response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":"#
            + content + #","redirectURL":"","headersSize":-1,"bodySize":-1"# + extra + #"},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}"#
    }

    /// The entry parses as it does whole, but for its text, which is found where the file holds
    /// it with the lengths the parser and the base64 decoder give; shapes a reader could misread,
    /// and text the parser would reject, are refused.
    func testTheBodyTextIsLeftOutAndFoundInTheEntrysBytes() throws {
        let escaped = #"{\"a\":\"caf\u00e9 \ud83d\ude00 ü\",\"b\":[1,2]}\n"#
        let doc = try document([
            entry(content: #"{"size":1,"mimeType":"application/json","text":""# + escaped + #""}"#),
            entry(content: #"{"mimeType":"x","text":"\"in a string: \\\"content\\\": {\"text\": 1}\"","size":2}"#,
                  response: #","_extra":{"content":{"text":"decoy"}}"#),
            entry(content: #"{"size":1,"encoding":"BASE64","text":"AAEC\nAw-_","mimeType":"x"}"#),
            entry(content: #"{"size":1,"text":"first","text":"second","mimeType":"x"}"#),
            entry(content: #"{"size":1,"t\u0065xt":"named by an escape","mimeType":"x"}"#),
            entry(content: #"{"size":1,"mimeType":"x"}"#),
            entry(content: #"{"size":1,"encoding":"base64","text":"AA*A","mimeType":"x"}"#),
            entry(content: #"{"size":1,"mimeType":"x","text":"bad \q escape"}"#),
        ])
        for index in 0..<3 {
            let whole = try doc.entry(index)
            let (entry, left) = try XCTUnwrap(doc.entryLeavingOutResponseText(index), "entry \(index)")
            var expected = whole
            expected.response.content.text = ""
            XCTAssertEqual(entry, expected, "entry \(index): all but the text as parsed whole")
            let text = try XCTUnwrap(whole.response.content.text)
            let source = try XCTUnwrap(doc.sourceRange(ofEntry: index))
            XCTAssertTrue(source.contains(left.range.lowerBound) && left.range.upperBound <= source.upperBound)
            let raw = try XCTUnwrap(doc.withEntryBytes(index) { bytes, start in
                Array(bytes[(left.range.lowerBound - start)..<(left.range.upperBound - start)])
            })
            XCTAssertEqual(raw.withUnsafeBufferPointer { JSONParser.unescapeStringContent($0) }, Array(text.utf8), "entry \(index)")
            XCTAssertEqual(left.textCount, text.utf8.count)
            XCTAssertEqual(left.base64, index == 2)
            XCTAssertEqual(left.bodyCount, index == 2 ? Base64.decodeLenient(text)!.count : text.utf8.count)
        }
        for index in 3..<8 {
            XCTAssertNil(doc.entryLeavingOutResponseText(index), "entry \(index)")
        }
        // Text the parser rejects is not streamed either: the caller's whole parse reports it.
        let prefix = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["#
        for bad: [UInt8] in [[0xC3, 0x28], [0xED, 0xA0, 0x80], [0x01], [0xE2, 0x82]] {
            let parts = (prefix + entry(content: #"{"size":1,"mimeType":"x","text":"ab@@cd"}"#) + "]}}").components(separatedBy: "@@")
            let file = Array(parts[0].utf8) + bad + Array(parts[1].utf8)
            let doc = try HARLazyDocument(file)
            XCTAssertNil(doc.entryLeavingOutResponseText(0), "\(bad)")
            XCTAssertThrowsError(try doc.entry(0), "the parser rejects \(bad) too")
        }
    }

    /// UTF-8 checked in pieces agrees with `String(validating:)` wherever the pieces are cut.
    func testUTF8InPiecesAgreesWithTheWholeCheck() {
        var rng = SplitMix64(seed: 47)
        let pieces: [[UInt8]] = [Array("a".utf8), Array("é".utf8), Array("€".utf8), Array("😀".utf8), Array("abcdefghij".utf8),
                                 [0x80], [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                                 [0xF0], [0xE2, 0x82], [0xFF]]
        var invalid = 0
        for round in 0..<3_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 8) {
                let r = Int(rng.next() % 100)
                bytes += pieces[r < 90 ? r % 5 : 5 + r % 8]
            }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            if !expected { invalid += 1 }
            for cut in 0...bytes.count {
                var check = UTF8Check()
                let ok = bytes[..<cut].withUnsafeBufferPointer { check.feed($0) }
                    && bytes[cut...].withUnsafeBufferPointer { check.feed($0) } && check.isComplete
                XCTAssertEqual(ok, expected, "round \(round), cut at \(cut): \(bytes)")
            }
        }
        XCTAssertGreaterThan(invalid, 300)
    }

    /// A leading byte-order mark moves every position by three: the range is the file's.
    func testRangesCountAByteOrderMark() throws {
        let text = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["#
            + entry(content: #"{"size":1,"mimeType":"x","text":"abc\ndef"}"#) + "]}}"
        let file = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        let doc = try HARLazyDocument(file)
        let left = try XCTUnwrap(doc.entryLeavingOutResponseText(0)).text
        XCTAssertEqual(Array(file[left.range]), Array(#"abc\ndef"#.utf8))
    }

    /// A large base64 body is left in the file (`entryDeferringLargeBodies`): the entry is the
    /// whole parse but for its text, and the deferred body is the text decoded, whatever its line
    /// breaks and escapes; a body under the threshold or not base64 is parsed whole.
    func testALargeBase64BodyIsLeftInTheFile() throws {
        let body = (0..<(HARDeferredBody.threshold + 5)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        var wrapped = Base64.encode(body)
        // Line breaks every 76 digits (MIME), one written as an escape, and an escaped slash.
        var lines: [String] = []
        var rest = Substring(wrapped)
        while !rest.isEmpty { lines.append(String(rest.prefix(76))); rest = rest.dropFirst(76) }
        wrapped = lines.joined(separator: "\\n").replacingOccurrences(of: "/", with: "\\/")
        let doc = try document([
            entry(content: #"{"size":\#(body.count),"mimeType":"video/mp4","encoding":"base64","text":""# + wrapped + #""}"#),
            entry(content: #"{"size":3,"mimeType":"video/mp4","encoding":"base64","text":"AAEC"}"#),
        ])
        let whole = try doc.entry(0)
        let deferred = try XCTUnwrap(doc.entryDeferringLargeBodies(0))
        var expected = whole
        expected.response.content.text = nil
        var got = deferred
        let body0 = try XCTUnwrap(got.response.content.deferred)
        got.response.content.deferred = nil
        XCTAssertEqual(got, expected, "all but the text as parsed whole")
        XCTAssertEqual(body0.count, body.count)
        XCTAssertEqual(body0.prefix, Array(body.prefix(body0.prefix.count)))
        XCTAssertEqual(try body0.base64Text(), Base64.encode(body), "the text decoded, written canonical")
        XCTAssertNil(doc.entryDeferringLargeBodies(1), "small: parsed whole")
    }

    /// An upload is left in the file as a response is, alone or beside one; a large text that is
    /// not base64 stays in the entry while the other side's base64 is left out. In memory and
    /// read by ranges alike, after a BOM too.
    func testALargeBase64UploadIsLeftInTheFileBesideTheResponse() throws {
        let up = (0..<(HARDeferredBody.threshold + 3)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 7) }
        let down = (0..<(HARDeferredBody.threshold + 9)).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ $0 >> 11) }
        let bigText = String(repeating: "plain text, not base64. ", count: HARDeferredBody.threshold / 20)
        let upload = #"{"mimeType":"application/octet-stream","encoding":"base64","text":"\#(Base64.encode(up))"}"#
        let download = #"{"size":\#(down.count),"mimeType":"video/mp4","encoding":"base64","text":"\#(Base64.encode(down))"}"#
        let entries = [
            entry(content: #"{"size":0,"mimeType":"x"}"#, postData: upload),
            entry(content: download, postData: upload),
            entry(content: download, postData: #"{"mimeType":"text/plain","text":"\#(bigText)"}"#),
            entry(content: #"{"size":1,"mimeType":"text/plain","text":"\#(bigText)"}"#, postData: upload),
            entry(content: #"{"size":1,"mimeType":"text/plain","text":"\#(bigText)"}"#),
        ]
        let text = #"{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":["# + entries.joined(separator: ",") + "]}}"
        let file = Array(text.utf8), withBOM = [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        for doc in [try HARLazyDocument(file), try HARLazyDocument(reading: .memory(file)),
                    try HARLazyDocument(withBOM), try HARLazyDocument(reading: .memory(withBOM))] {
            var sides: [[String]] = []
            for index in 0..<entries.count {
                let whole = try doc.entry(index)
                guard var got = doc.entryDeferringLargeBodies(index) else { sides.append([]); continue }
                var expected = whole
                var left: [String] = []
                if let body = got.request.postData?.deferred {
                    XCTAssertEqual(try body.base64Text(), Base64.encode(up), "entry \(index)")
                    got.request.postData?.deferred = nil
                    expected.request.postData?.text = nil
                    left.append("request")
                }
                if let body = got.response.content.deferred {
                    XCTAssertEqual(try body.base64Text(), Base64.encode(down), "entry \(index)")
                    got.response.content.deferred = nil
                    expected.response.content.text = nil
                    left.append("response")
                }
                XCTAssertEqual(got, expected, "entry \(index): all but the texts left out as parsed whole")
                sides.append(left)
            }
            XCTAssertEqual(sides, [["request"], ["request", "response"], ["response"], ["request"], []])
        }
    }
}
