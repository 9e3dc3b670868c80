import XCTest
import HAR
import TextEncodings
@testable import Redaction

/// `redact --check`'s second reader: it finds what the engine's switched-off rules and blind
/// spots leave, and stays quiet on what redaction writes.
final class SecondOpinionTests: XCTestCase {
    private func secondOpinion(_ entry: HAREntry) -> [String] {
        SecondOpinion.findings(in: entry, index: 0).map { "\($0.rule.name) \($0.path)" }
    }

    func testFormatsAndSecretNamesAreFoundWithTheRulesOff() throws {
        let key = "sk_live_" + String(repeating: "4eC39HqLyjWDarjt", count: 2)
        let entry = makeEntry(url: "https://api.example.com/v1/charges?k=x\(key)",
                              requestHeaders: [("Authorization", "Bearer abc123DEF456ghi789")],
                              responseBody: ("application/json", #"{"user": {"password": "hunter2hunter2", "token_type": "Bearer", "max_tokens": 1024, "tokenizer": "cl100k_base"}}"#))
        let found = secondOpinion(entry)
        XCTAssertTrue(found.contains("check-format log.entries[0].request.url"), "\(found)")
        XCTAssertTrue(found.contains { $0.hasPrefix("check-secret-name") && $0.contains("request.headers") }, "\(found)")
        XCTAssertTrue(found.contains("check-secret-name log.entries[0].response.content.text.user.password"), "\(found)")
        XCTAssertFalse(found.contains { $0.contains("token_type") || $0.contains("max_tokens") || $0.contains("tokenizer") }, "\(found)")
        // With every rule that would find them switched off, the check still fails.
        let config = try configuration(rules: #"{"disable": ["json-keys", "stripe-key", "authorization-header", "high-entropy", "secret-parameters", "known-secrets"]}"#)
        XCTAssertFalse(findings(makeLog([entry]), config: config).isEmpty)
    }

    func testWhatRedactionWritesPassesTheSecondReader() {
        let entry = makeEntry(url: "https://api.example.com/v1/charges?key=sk_live_4eC39HqLyjWDarjt4eC39HqLyjWDarjt",
                              requestHeaders: [("Authorization", "Bearer abc123DEF456ghi789"), ("Cookie", "sid=9f8e7d6c5b4a3f2e")],
                              responseBody: ("application/json", #"{"password": "hunter2hunter2", "apiKey": "AKIAIOSFODNN7EXAMPLE", "created_at": "2024-01-01T00:00:00Z"}"#))
        let r = redacted([entry])
        XCTAssertEqual(secondOpinion(r.log.entries[0]), [])
        XCTAssertFalse(secondOpinion(entry).isEmpty)
    }

    func testBinaryBodiesAreNotReadAsText() {
        let blob = String(repeating: "AQE", count: 1) + String(repeating: "k9+Zq/Lm", count: 20)
        let entry = makeEntry(responseBody: ("application/octet-stream", blob))
        XCTAssertEqual(secondOpinion(entry), [])
    }

    /// Base64 of random bytes holds a catalogued shape by chance (`/EAA` and 85 letters or
    /// digits reads as a Facebook token about once in 25 MB), in an upload or a binary
    /// WebSocket message as in a download. The check reads what redaction reads: the decoded
    /// text when it is UTF-8, and no base64 text of binary bytes.
    func testBase64OfBinaryIsNotReadAsTextOnAnySide() throws {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] = 0xFF  // never UTF-8
        var text = Array(Base64.encode(bytes).utf8)
        let shape = Array(("/EAA" + String(repeating: "x9Qz", count: 22)).utf8)
        text.replaceSubrange(400..<(400 + shape.count), with: shape)
        let blob = String(decoding: text, as: UTF8.self)
        XCTAssertNotNil(Base64.decode(blob))
        XCTAssertNil(String(validating: Base64.decode(blob) ?? [], as: UTF8.self))
        // The same text read plainly is reported, so the shape is one the check knows.
        XCTAssertFalse(secondOpinion(makeEntry(method: "POST", requestBody: ("text/plain", blob))).isEmpty)

        var upload = makeEntry(method: "POST", requestBody: ("application/octet-stream", ""))
        upload.request.postData = HARPostData(mimeType: "application/octet-stream", text: blob, encoding: "base64")
        XCTAssertEqual(secondOpinion(upload), [])
        var download = makeEntry(responseBody: ("application/json", ""))
        download.response.content = HARContent(size: bytes.count, mimeType: "application/json", text: blob, encoding: "base64")
        XCTAssertEqual(secondOpinion(download), [])
        let message: JSONValue = .object([("type", .string("receive")), ("opcode", .number("2")), ("data", .string(blob))])
        let socket = makeEntry(custom: [("_webSocketMessages", .array([message]))])
        XCTAssertEqual(secondOpinion(socket), [])

        // Base64 of UTF-8 text is read decoded, on every side.
        let key = "sk_live_" + String(repeating: "4eC39HqLyjWDarjt", count: 2)
        let note = "note: \(key)"
        let textMessage: JSONValue = .object([("type", .string("send")), ("opcode", .number("2")),
                                              ("data", .string(Base64.encode(Array(note.utf8))))])
        let found = secondOpinion(makeEntry(method: "POST", requestBody: ("application/octet-stream", note), requestBase64: true,
                                            responseBody: ("text/plain", note), responseBase64: true,
                                            custom: [("_webSocketMessages", .array([textMessage]))]))
        XCTAssertEqual(found.sorted(), ["check-format log.entries[0]._webSocketMessages[0].data",
                                        "check-format log.entries[0].request.postData.text",
                                        "check-format log.entries[0].response.content.text"])
    }
}
