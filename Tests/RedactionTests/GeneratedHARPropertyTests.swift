import HAR
@testable import Redaction
import TestSupport
import TextEncodings
import XCTest

/// Property tests over generated HARs with planted secrets (seeded, so a failure names the
/// seed that reproduces it).
final class GeneratedHARPropertyTests: XCTestCase {
    static let harCount = 200

    func testPlantedSecretsNeverSurviveAndOutputStaysValid() throws {
        continueAfterFailure = false  // the first failing seed is enough to reproduce
        var totalPlanted = 0
        for seed in 0..<UInt64(Self.harCount) {
            var generator = HARGenerator(seed: seed)
            let log = generator.makeLog()
            totalPlanted += generator.planted.count
            let out = redacted(log)
            let context = "seed \(seed)"

            // No planted secret anywhere in the serialized bytes.
            let outText = text(out.bytes)
            for secret in generator.planted where outText.contains(secret) {
                XCTFail("\(context): planted '\(secret)' survived")
            }
            // `redact --check` on the output finds nothing; redacting again changes nothing.
            let reread = try HARLog.parse(out.bytes)
            let left = findings(reread)
            XCTAssertTrue(left.isEmpty, "\(context): \(left.map { "\($0.path) \($0.rule) \($0.preview)" })")
            let again = text(redacted(reread).bytes)
            if again != outText {
                let a = again.split(separator: "\n"), b = outText.split(separator: "\n")
                let k = Array(zip(a, b)).firstIndex { $0 != $1 } ?? min(a.count, b.count)
                XCTFail("\(context): not idempotent at line \(k + 1):\n  once:  \(k < b.count ? b[k].prefix(400) : "")\n  twice: \(k < a.count ? a[k].prefix(400) : "")")
            }
            // The HAR is still valid HAR.
            let problems = HARValidator.validate(bytes: out.bytes)
            XCTAssertTrue(problems.isEmpty, "\(context): \(problems.prefix(3))")
            // Every body that was JSON is still JSON.
            for (before, after) in zip(log.entries, out.log.entries) {
                for (a, b) in zip(Self.bodies(before), Self.bodies(after)) where jsonIsValid(a) {
                    XCTAssertTrue(jsonIsValid(b), "\(context): JSON body no longer parses: \(b.prefix(300))")
                }
            }
        }
        XCTAssertGreaterThan(totalPlanted, Self.harCount * 5, "the generator plants secrets")
    }

    /// Request body, response body (decoded from base64) and WebSocket text messages.
    static func bodies(_ e: HAREntry) -> [String] {
        var out: [String] = []
        if let post = e.request.postData?.text {
            let b64 = e.request.postData!.encoding == "base64"
            out.append(b64 ? Base64.decode(post).map(text) ?? "" : post)
        }
        if let t = e.response.content.text {
            out.append(e.response.content.encoding == "base64" ? Base64.decode(t).map(text) ?? "" : t)
        }
        for field in e.custom where field.key == "_webSocketMessages" {
            for m in field.value.arrayValue ?? [] where m["opcode"]?.intValue == 1 {
                out.append(m["data"]?.stringValue ?? "")
            }
        }
        return out
    }

    func testGeneratorIsDeterministic() {
        var a = HARGenerator(seed: 42), b = HARGenerator(seed: 42), c = HARGenerator(seed: 43)
        let la = a.makeLog().serialize(), lb = b.makeLog().serialize(), lc = c.makeLog().serialize()
        XCTAssertEqual(la, lb)
        XCTAssertNotEqual(la, lc)
        XCTAssertEqual(a.planted, b.planted)
    }

    func testGeneratedSecretsAreActuallyInTheInput() {
        var g = HARGenerator(seed: 5)
        let input = text(g.makeLog().serialize())
        for secret in g.planted {
            // JSON-escaped forms (a "/" inside base64) would not match: the generator avoids them.
            XCTAssertTrue(input.contains(secret) || g.encodedOnly.contains(secret), "generator bug: '\(secret)' not planted")
        }
    }
}

/// Builds random but valid HARs with secrets in every location, remembering what it planted.
struct HARGenerator {
    var rng: SplitMix64
    var planted: [String] = []
    /// Planted secrets that only appear encoded (base64 bodies), not as is in the input bytes.
    var encodedOnly: Set<String> = []
    private var encoding = false

    init(seed: UInt64) { rng = SplitMix64(seed: seed &* 0x1000_0001 &+ 17) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }

    static let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    mutating func alnum(_ n: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: n)
        for k in 0..<n { bytes[k] = Self.alphabet[Int(rng.next() % 62)] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A fresh secret, recorded as planted.
    mutating func secret(_ prefix: String = "", length: Int = 16) -> String {
        let s = prefix + alnum(length)
        plant(s)
        return s
    }

    mutating func plant(_ s: String) {
        planted.append(s)
        if encoding { encodedOnly.insert(s) }
    }

    mutating func email() -> String {
        let e = "\(pick(["ann", "bo.b", "c_d", "eve+x"]))\(alnum(6).lowercased())@\(pick(["corp", "mail", "home"]))-\(alnum(5).lowercased()).com"
        plant(e)
        return e
    }

    mutating func internalHost() -> String {
        let h = "\(pick(["api", "db", "auth"]))-\(alnum(6).lowercased()).\(pick(["internal", "corp", "local", "lan", "intranet"]))"
        plant(h)
        return h
    }

    mutating func privateIP() -> String {
        let ip: String
        switch int(0...3) {
        case 0: ip = "10.\(int(0...255)).\(int(0...255)).\(int(1...254))"
        case 1: ip = "172.\(int(16...31)).\(int(0...255)).\(int(1...254))"
        case 2: ip = "192.168.\(int(0...255)).\(int(1...254))"
        default: ip = "169.254.\(int(1...254)).\(int(1...254))"
        }
        plant(ip)
        return ip
    }

    mutating func jwt() -> String {
        let subject = "subj-" + alnum(10)
        plant(subject)
        encodedOnly.insert(subject)
        let payload = Base64URL.encode(utf8("{\"sub\":\"\(subject)\",\"iat\":\(int(1_600_000_000...1_800_000_000))}"))
        let token = makeJWT(header: pick([#"{"alg":"HS256","typ":"JWT"}"#, #"{"alg":"RS256"}"#, #"{"typ":"JWT","alg":"ES256","kid":"k1"}"#]),
                            payload: #"{"x":1}"#).split(separator: ".")[0] + "." + payload + "." + alnum(30)
        plant(String(token))
        plant(payload)
        return String(token)
    }

    mutating func wellKnown() -> String {
        let s: String
        switch int(0...6) {
        case 0: s = "AKIA" + alnum(16).uppercased()
        case 1: s = "ghp_" + alnum(36)
        case 2: s = "github_pat_" + alnum(30)
        case 3: s = "xoxb-" + alnum(12) + "-" + alnum(10)
        case 4: s = "sk_live_" + alnum(24)
        case 5: s = "AIza" + alnum(35)
        default: s = "rk_live_" + alnum(20)
        }
        plant(s)
        return s
    }

    /// Text that mentions secrets the text rules find.
    mutating func secretText() -> String {
        var parts: [String] = []
        for _ in 0..<int(1...4) {
            switch int(0...8) {
            case 0: parts.append("contact \(email()) please")
            case 1: parts.append("Authorization: Bearer \(secret("bt", length: 24))")
            case 2: parts.append("host \(internalHost()):8443")
            case 3: parts.append("from \(privateIP())")
            case 4: parts.append("jwt \(jwt())")
            case 5: parts.append("key \(wellKnown()) here")
            case 6: parts.append("https://\(secret("usr", length: 6)):\(secret("pw", length: 10))@files.example.com/x")
            case 7: parts.append("see https://app.example.com/cb?code=\(secret("cd", length: 12))&state=ok")
            default: parts.append("-----BEGIN PRIVATE KEY-----\n\(secret("MII", length: 40))\n-----END PRIVATE KEY-----")
            }
            parts.append(pick(["", "barcode encode made tokenizer", "api.corp.example.com", "ünïcødé ✓"]))
        }
        return parts.joined(separator: pick([" ", "\n", ", "]))
    }

    mutating func secretKey() -> String {
        pick(["password", "accessToken", "access_token", "refresh-token", "client_secret", "id_token", "apiKey", "session",
              "X-Auth-Token", "authorization", "cookie", "sessionToken"])
    }

    /// A JSON document with secrets under secret keys, in text, and in nested JSON strings.
    mutating func json(depth: Int = 0) -> String {
        var members: [String] = []
        for _ in 0..<int(1...5) {
            switch int(0...7) {
            case 0: members.append("\"\(secretKey())\": \"\(secret(length: 18))\"")
            case 1:
                let n = String(int(100_000_000_000...999_999_999_999))
                plant(n)
                members.append("\"\(secretKey())\": \(n)")
            case 2: members.append("\"note\": \(quote(secretText()))")
            case 3 where depth < 2: members.append("\"nested\": \(json(depth: depth + 1))")
            case 4 where depth < 2: members.append("\"payload\": \(quote(json(depth: depth + 1)))")
            case 5: members.append("\"items\": [\(int(0...9)), \"plain\", {\"\(secretKey())\": \"\(secret(length: 14))\"}]")
            case 6: members.append("\"token_type\": \"Bearer\", \"expires_in\": 3600")
            default: members.append("\"user\": {\"email\": \"\(email())\", \"id\": \(int(1...9999))}")
            }
        }
        let pretty = chance(0.5)
        return pretty ? "{\n  " + members.joined(separator: ",\n  ") + "\n}" : "{" + members.joined(separator: ",") + "}"
    }

    func quote(_ s: String) -> String { text(JSONWriter.serialize(.string(s), pretty: false)) }

    mutating func makeLog() -> HARLog {
        var entries: [HAREntry] = []
        let host = chance(0.3) ? internalHost() : pick(["api.example.com", "app.example.org"])
        for index in 0..<int(1...6) {
            var query = "page=\(int(1...9))"
            if chance(0.6) { query += "&\(pick(["token", "api_key", "sig", "code", "access_token", "X-Amz-Signature"]))=\(secret(length: 12))" }
            if chance(0.3) { query += "&email=\(email())" }
            var requestHeaders: [(String, String)] = [("Host", host), ("Accept", "*/*")]
            if chance(0.6) { requestHeaders.append(("Authorization", pick(["Bearer ", "Basic ", "Token "]) + secret(length: 24))) }
            if chance(0.4) { requestHeaders.append(("Authorization", "Bearer " + jwt())) }
            if chance(0.6) {
                requestHeaders.append(("Cookie", "sid=\(secret(length: 20)); theme=\(pick(["dark", "light"]))\(alnum(8)); csrftoken=\(secret(length: 22))"))
            }
            if chance(0.4) { requestHeaders.append((pick(["X-Api-Key", "X-CSRF-Token", "X-Client-Secret", "X-Session-Id"]), secret(length: 20))) }
            if chance(0.3) { requestHeaders.append(("Referer", "https://app.example.com/p?token=\(secret(length: 12))")) }
            var requestBody: (mimeType: String, text: String)?
            var requestBase64 = false
            switch int(0...4) {
            case 0: requestBody = ("application/json", json())
            case 1: requestBody = ("application/x-www-form-urlencoded", "user=x&password=\(secret(length: 12))&next=%2Fhome")
            case 2:
                requestBody = ("multipart/form-data; boundary=ZZ",
                               "--ZZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\n\(secret(length: 12))\r\n--ZZ\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n\(json())\r\n--ZZ--\r\n")
            case 3:
                encoding = true
                requestBody = ("application/json", json())
                encoding = false
                requestBase64 = true
            default: break
            }
            var responseHeaders: [(String, String)] = []
            if chance(0.4) { responseHeaders.append(("Set-Cookie", "session=\(secret(length: 20)); Path=/; Domain=\(chance(0.5) ? "example.com" : internalHost()); HttpOnly")) }
            var status = 200
            if chance(0.2) {
                status = 302
                responseHeaders.append(("Location", "https://app.example.com/cb#access_token=\(secret(length: 16))&token_type=bearer"))
            }
            var responseBody: (mimeType: String, text: String)?
            var responseBase64 = false
            switch int(0...4) {
            case 0, 1: responseBody = ("application/json", json())
            case 2: responseBody = ("text/html; charset=utf-8", "<html><body>\(secretText())</body></html>")
            case 3:
                encoding = true
                responseBody = ("application/json", json())
                encoding = false
                responseBase64 = true
            default: responseBody = ("text/plain", secretText())
            }
            var custom: JSONFields = []
            if chance(0.25) {
                var messages: [JSONValue] = []
                for k in 0..<int(1...4) {
                    let data = chance(0.5) ? json() : secretText()
                    messages.append(.object([(key: "type", value: .string(k % 2 == 0 ? "send" : "receive")),
                                             (key: "time", value: .double(startBase + Double(index) + Double(k) / 10)),
                                             (key: "opcode", value: .integer(1)), (key: "data", value: .string(data))]))
                }
                messages.append(.object([(key: "type", value: .string("receive")), (key: "time", value: .double(startBase + Double(index) + 0.9)),
                                         (key: "opcode", value: .integer(2)), (key: "data", value: .string(Base64.encode(binaryBytes(40, seed: UInt64(index)))))]))
                custom = [(key: "_resourceType", value: .string("websocket")), (key: "_webSocketMessages", value: .array(messages))]
            }
            let userinfo = chance(0.2) ? "\(secret("u", length: 6)):\(secret("p", length: 10))@" : ""
            entries.append(makeEntry(index: index, method: requestBody == nil ? "GET" : "POST",
                                     url: "https://\(userinfo)\(host)/v\(int(1...3))/\(pick(["items", "me", "login"]))?\(query)",
                                     requestHeaders: requestHeaders, requestBody: requestBody, requestBase64: requestBase64,
                                     status: status, responseHeaders: responseHeaders, responseBody: responseBody,
                                     responseBase64: responseBase64,
                                     serverIPAddress: chance(0.5) ? privateIP() : "93.184.215.14", custom: custom))
        }
        return RedactionTests.makeLog(entries)
    }
}
