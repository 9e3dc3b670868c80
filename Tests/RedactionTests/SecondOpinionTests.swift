import XCTest
import HAR
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
}
