import HAR

/// The replacements of one run. The same secret gets the same placeholder everywhere in a file
/// (a token returned by /login and sent later in Authorization still correlates), numbered in
/// order of first appearance, so the output is deterministic and carries nothing derived from
/// the secret itself (a counter, not a hash: low-entropy values cannot be guessed back).
struct PlaceholderTable {
    private var secrets: [String: String] = [:]
    private var emails: [String: String] = [:]
    private var hosts: [String: String] = [:]
    private var ipv4: [String: String] = [:]
    private var ipv6: [String: String] = [:]
    private var secretCount = 0

    func knownSecret(_ value: String) -> String? { secrets[value] }

    func knownEmail(_ value: String) -> String? { emails[Self.lowercasedIfNeeded(value)] }

    /// Most emails are lowercase already; lowercasing allocates, so only when needed.
    static func lowercasedIfNeeded(_ value: String) -> String {
        value.utf8.contains { $0 >= 0x41 && $0 <= 0x5A } || !value.utf8.allSatisfy({ $0 < 0x80 }) ? value.lowercased() : value
    }

    /// `redacted-N`, or for a JWT a placeholder JWT: the header's alg/typ kept, payload
    /// `{"sub":"redacted-N"}`, signature "redacted" (base64url), so apps that split or decode
    /// tokens keep working and nothing of the user's identity survives.
    mutating func secret(_ value: String) -> String {
        if let known = secrets[value] { return known }
        secretCount += 1
        let placeholder: String
        if let header = JWTShape.header(of: value) {
            placeholder = JWTShape.placeholder(header: header, number: secretCount)
        } else {
            placeholder = "redacted-\(secretCount)"
        }
        secrets[value] = placeholder
        return placeholder
    }

    /// `userN@example.com`; emails compare case-insensitively.
    mutating func email(_ value: String) -> String {
        let key = Self.lowercasedIfNeeded(value)
        if let known = emails[key] { return known }
        let placeholder = "user\(emails.count + 1)@example.com"
        emails[key] = placeholder
        return placeholder
    }

    /// `internal-N.example.invalid` (RFC 2606 reserves .invalid); hosts compare case-insensitively.
    mutating func host(_ value: String) -> String {
        let key = value.lowercased()
        if let known = hosts[key] { return known }
        let placeholder = "internal-\(hosts.count + 1).example.invalid"
        hosts[key] = placeholder
        return placeholder
    }

    /// Documentation addresses (RFC 5737): 192.0.2.x, then 198.51.100.x and 203.0.113.x, then the
    /// reserved 240.0.0.0/4. An IP stays an IP, so URLs and serverIPAddress keep their shape.
    mutating func ipv4Address(_ value: String) -> String {
        if let known = ipv4[value] { return known }
        let n = ipv4.count
        let placeholder: String
        if n < 762 {
            let prefix = ["192.0.2.", "198.51.100.", "203.0.113."][n / 254]
            placeholder = prefix + String(n % 254 + 1)
        } else {
            let m = n - 762 + 1
            placeholder = "240.\(m >> 16 & 0xFF).\(m >> 8 & 0xFF).\(m & 0xFF)"
        }
        ipv4[value] = placeholder
        return placeholder
    }

    /// 2001:db8::N (RFC 3849).
    mutating func ipv6Address(_ value: String) -> String {
        let key = value.lowercased()
        if let known = ipv6[key] { return known }
        let placeholder = "2001:db8::" + String(ipv6.count + 1, radix: 16)
        ipv6[key] = placeholder
        return placeholder
    }
}

/// Recognises values that are already placeholders (harrec's own, and the usual ones of other
/// tools), so that redacting twice changes nothing and `redact --check` passes on redacted files.
enum Placeholder {
    static func isPlaceholder(_ value: String) -> Bool {
        guard let first = value.utf8.first else { return true }
        // Every placeholder starts with one of these; most values are rejected by this alone.
        switch first {
        case UInt8(ascii: "r"), UInt8(ascii: "R"), UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "("),
             UInt8(ascii: "*"), UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "f"), UInt8(ascii: "F"),
             UInt8(ascii: "u"), UInt8(ascii: "e"):
            break
        default:
            return false
        }
        let bytes = Array(value.utf8)
        if hasNumberedPrefix(bytes, "redacted-", suffix: []) { return true }
        switch value.lowercased() {
        case "redacted", "[redacted]", "<redacted>", "(redacted)", "***", "****", "xxx", "xxxx", "[filtered]", "filtered":
            return true
        default:
            break
        }
        if hasNumberedPrefix(bytes, "user", suffix: Array("@example.com".utf8)) { return true }
        if JWTShape.isPlaceholder(value) { return true }
        return false
    }

    /// `prefix` + 1 or more digits + `suffix`.
    static func hasNumberedPrefix(_ bytes: [UInt8], _ prefix: String, suffix: [UInt8]) -> Bool {
        let p = Array(prefix.utf8)
        guard bytes.count > p.count + suffix.count, bytes.starts(with: p), bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return false }
        let digits = bytes[p.count..<bytes.count - suffix.count]
        return !digits.isEmpty && digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}

/// JWT structure: three base64url parts, the first decoding to a JSON object with "alg".
enum JWTShape {
    static let placeholderSignature = "cmVkYWN0ZWQ"  // base64url("redacted")

    /// The decoded header object of a JWT, or nil when `value` is not one.
    static func header(of value: String) -> JSONFields? {
        // A JWT header is a JSON object, so its base64url starts with "ey" ('{' then a quote or
        // whitespace); checking that first keeps ordinary secrets off the decoding path.
        guard value.utf8.starts(with: "ey".utf8) else { return nil }
        var parts = value.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        let headerPart = parts.removeFirst()
        guard let decoded = Base64URL.decode(headerPart), decoded.first == UInt8(ascii: "{"),
              let object = try? JSONParser.parse(decoded).objectValue,
              object.contains(where: { $0.key == "alg" })
        else { return nil }
        for part in parts where !part.allSatisfy(Base64URL.isAlphabet) { return nil }
        return object
    }

    static func placeholder(header: JSONFields, number: Int) -> String {
        var kept: JSONFields = []
        for key in ["alg", "typ"] {
            if let value = header.first(where: { $0.key == key })?.value { kept.append((key: key, value: value)) }
        }
        let headerJSON = JSONWriter.serialize(.object(kept), pretty: false)
        let payloadJSON = Array("{\"sub\":\"redacted-\(number)\"}".utf8)
        return Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON) + "." + placeholderSignature
    }

    static func isPlaceholder(_ value: String) -> Bool {
        let parts = value.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].elementsEqual(placeholderSignature.utf8),
              let payload = Base64URL.decode(parts[1]),
              let object = try? JSONParser.parse(payload).objectValue, object.count == 1,
              object[0].key == "sub", let sub = object[0].value.stringValue
        else { return false }
        return Placeholder.hasNumberedPrefix(Array(sub.utf8), "redacted-", suffix: [])
    }
}

/// base64url without padding (RFC 4648 §5), as JWTs use it.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    @inline(__always)
    static func isAlphabet(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x5F
    }

    static func value(_ b: UInt8) -> UInt32? {
        switch b {
        case 0x41...0x5A: return UInt32(b - 0x41)
        case 0x61...0x7A: return UInt32(b - 0x61 + 26)
        case 0x30...0x39: return UInt32(b - 0x30 + 52)
        case 0x2D, 0x2B: return 62  // '-' (and '+', which some encoders use)
        case 0x5F, 0x2F: return 63  // '_' (and '/')
        default: return nil
        }
    }

    static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var acc: UInt32 = 0
        var bits = 0
        for b in text {
            if b == 0x3D { break }  // tolerate padding
            guard let v = value(b) else { return nil }
            acc = acc << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(acc >> UInt32(bits) & 0xFF))
            }
        }
        return bits >= 6 ? nil : out
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(v >> 18)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)], alphabet[Int(v & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = UInt32(bytes[i]) << 16
            out += [alphabet[Int(v >> 18)], alphabet[Int(v >> 12 & 63)]]
        } else if rest == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(v >> 18)], alphabet[Int(v >> 12 & 63)], alphabet[Int(v >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
