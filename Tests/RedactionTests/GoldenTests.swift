import Foundation
import XCTest
import HAR
@testable import Redaction

/// Golden fixtures: each Fixtures/redaction/NAME.in.har, redacted with the default rules (or
/// with NAME.json when it exists, e.g. rules-example.json), must give NAME.out.har byte for
/// byte. HARREC_UPDATE_GOLDEN=1 rewrites the expected files (review the diff before committing).
final class GoldenTests: XCTestCase {
    static let names = ["headers-urls", "bodies", "websocket", "login-flow", "rules-example", "mitmproxy-12.3.1-sample"]

    func testEveryInputHasAnExpectedOutput() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: RedactionFixtures.directory.path)
        let inputs = files.filter { $0.hasSuffix(".in.har") }.map { String($0.dropLast(".in.har".count)) }.sorted()
        XCTAssertEqual(inputs, Self.names.sorted(), "every input is in the golden list")
    }

    func testHeadersAndURLs() throws { try check("headers-urls") }
    func testBodies() throws { try check("bodies") }
    func testWebSocket() throws { try check("websocket") }
    func testLoginFlow() throws { try check("login-flow") }
    func testRulesExample() throws { try check("rules-example") }
    func testMitmproxySample() throws { try check("mitmproxy-12.3.1-sample") }

    /// What the expected outputs promise beyond "the bytes did not change": no raw secret of the
    /// inputs is left, the outputs are valid, and check finds nothing in them.
    func testExpectedOutputsHoldNoSecrets() throws {
        let secrets = ["at-5f1e0c9b77", "sk-opaque-4b1d9e62c0a7", "cHJveHl1c2VyOnByb3h5cGFzcw", "9d8c7b6a5f", "xk-77aa88bb99",
                       "csrf-0c0ffee0", "FwoGZXIvYXdzEFakeSessionToken", "rt-header-1234", "oauth-code-777", "new-session-321",
                       "hunter2", "git.corp", "sso.corp", "sso-tok-55", "10.12.0", "Tr0ub4dor", "cs-9a8b7c", "fd12:3456",
                       "192.168.40.2", "fe80::1", "mia.chen", "acme-corp.com", "u-8812", "rt-31a7c9", "912837465",
                       "nested-tok-42", "deep-pw", "AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A", "ghp_1234", "github_pat_11",
                       "xoxb-1234", "sk_live_4e", "rk_live_51", "AIzaSyD", "cli-bearer", "db-pass-1", "db1.internal",
                       "Qm9ndXNLZXlGb3JUZXN0c09ubHlOb3RSZWFs", "b64-body-token-9", "mp-secret-pw", "pk-55", "trunc-tok-77",
                       "trunc-rt-", "ws-access-123", "ws-sess-9", "10.0.3.4", "api.internal", "ws-pw-in-string",
                       "ws-bearer-abcdef12", "ws-url-tok-1", "ws-cookie-1", "at-flow-8c1f2e9d4b", "rt-flow-0a9b8c7d",
                       "flow-sess-77", "flow-pw-1", "at-flow-second-1", "sk-77", "123456&", "device-abc-1", "tenant-42",
                       "ORD-12345678", "CUST-AB12CD", "\"pin\": 4321", "123-45-6789", "mycorp.net", "svc.cluster", "hunter2", "s3cr3t",
                       "k-123", "sample.user@example.org", "eyJzdWIiOiJzYW1wbGUifQ", "abc123&"]
        for name in Self.names {
            let out = try RedactionFixtures.bytes(name + ".out.har")
            let outText = text(out)
            for secret in secrets where outText.contains(secret) {
                XCTFail("\(name).out.har still holds '\(secret)'")
            }
            let log = try HARLog.parse(out)
            let config = try Self.configuration(for: name)
            XCTAssertEqual(findings(log, config: config).map { "\($0.path) \($0.rule)" }, [], name)
            if name != "mitmproxy-12.3.1-sample" {
                XCTAssertEqual(HARValidator.validate(bytes: out).map(\.description), [], name)
            }
        }
    }

    static func configuration(for name: String) throws -> RedactionConfiguration {
        var config = RedactionConfiguration()
        let rules = RedactionFixtures.directory.appendingPathComponent(name + ".json")
        if FileManager.default.fileExists(atPath: rules.path) {
            try config.apply(rulesFile: [UInt8](try Data(contentsOf: rules)))
        }
        return config
    }

    private func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = try RedactionFixtures.bytes(name + ".in.har")
        var log = try HARLog.parse(input)
        RedactionEngine(config: try Self.configuration(for: name)).redact(&log)
        let actual = log.serialize(pretty: true)
        let expectedURL = RedactionFixtures.directory.appendingPathComponent(name + ".out.har")
        if ProcessInfo.processInfo.environment["HARREC_UPDATE_GOLDEN"] == "1" {
            try Data(actual).write(to: expectedURL)
            return
        }
        guard let expected = try? [UInt8](Data(contentsOf: expectedURL)) else {
            XCTFail("missing \(expectedURL.path); run with HARREC_UPDATE_GOLDEN=1 and review it", file: file, line: line)
            return
        }
        if actual != expected {
            XCTFail("\(name): redacted output differs from \(name).out.har\n" + Self.diff(expected: text(expected), actual: text(actual)),
                    file: file, line: line)
        }
    }

    /// A short line diff: the first differing lines with their numbers.
    static func diff(expected: String, actual: String, limit: Int = 12) -> String {
        let e = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let a = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var lines: [String] = []
        var shown = 0
        for k in 0..<max(e.count, a.count) where shown < limit {
            let el = k < e.count ? String(e[k]) : "<end of file>"
            let al = k < a.count ? String(a[k]) : "<end of file>"
            if el != al {
                lines.append("  line \(k + 1):\n    expected: \(el.prefix(300))\n    actual:   \(al.prefix(300))")
                shown += 1
            }
        }
        if e.count != a.count { lines.append("  (\(e.count) expected lines, \(a.count) actual)") }
        return lines.joined(separator: "\n")
    }
}
