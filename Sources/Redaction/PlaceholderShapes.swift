import HAR
import TextEncodings

/// Placeholder shapes. Each keeps the kind of value recognisable (an email stays an email, an IP
/// an IP, a JWT a JWT), none has the shape of a real key format, and each is recognised by
/// `PlaceholderText`, so redacting twice changes nothing.
enum PlaceholderFormat {
    static func make(_ kind: ValueKind, number n: Int, value: String) -> String {
        switch kind {
        case .secret:
            if let header = JWTShape.header(of: value) { return JWTShape.placeholder(header: header, number: n) }
            return numbered(secretPrefix, n, "")
        case .email: return numbered(emailPrefix, n, emailSuffix)
        case .host: return numbered(hostPrefix, n, hostSuffix)
        case .ipv4: return ipv4(n)
        case .ipv6: return ipv6(n)
        case .phone: return phone(n)
        case .card: return card(n)
        case .person: return numbered(personPrefix, n, "")
        }
    }

    /// `2001:db8::N` in the documentation prefix (RFC 3849), `N` in its last two groups, so an
    /// address stays one past the 65,535th (`2001:db8::1:0`).
    static func ipv6(_ n: Int) -> String {
        let low = String(n & 0xFFFF, radix: 16)
        return n <= 0xFFFF ? "2001:db8::" + low : "2001:db8::" + String(n >> 16 & 0xFFFF, radix: 16) + ":" + low
    }

    static let secretPrefix: StaticString = "redacted-", personPrefix: StaticString = "person-"
    static let emailPrefix: StaticString = "user", emailSuffix: StaticString = "@example.com"
    static let hostPrefix: StaticString = "internal-", hostSuffix: StaticString = ".example.invalid"

    /// `prefix`, the decimal `n`, `suffix`, written into one buffer: interpolation cost a string
    /// append and a `description` call per piece, for each of a large file's 300,000 values.
    static func numbered(_ prefix: StaticString, _ n: Int, _ suffix: StaticString) -> String {
        if n < 0 { return "\(prefix)\(n)\(suffix)" }
        var digits = 1, rest = n / 10
        while rest > 0 { digits += 1; rest /= 10 }
        let count = prefix.utf8CodeUnitCount + digits + suffix.utf8CodeUnitCount
        return String(unsafeUninitializedCapacity: count) { out in
            var k = 0
            for i in 0..<prefix.utf8CodeUnitCount { out[k] = prefix.utf8Start[i]; k += 1 }
            var m = n
            for i in stride(from: k + digits - 1, through: k, by: -1) { out[i] = UInt8(0x30 + m % 10); m /= 10 }
            k += digits
            for i in 0..<suffix.utf8CodeUnitCount { out[k] = suffix.utf8Start[i]; k += 1 }
            return k
        }
    }

    /// Documentation addresses (RFC 5737): 192.0.2.x, then 198.51.100.x and 203.0.113.x, then the
    /// reserved 240.0.0.0/4. An IP stays an IP, so URLs and serverIPAddress keep their shape.
    static func ipv4(_ number: Int) -> String {
        let n = number - 1
        if n < 762 { return ["192.0.2.", "198.51.100.", "203.0.113."][n / 254] + String(n % 254 + 1) }
        let m = n - 762 + 1
        return "240.\(m >> 16 & 0xFF).\(m >> 8 & 0xFF).\(m & 0xFF)"
    }

    /// E.164 numbers in the North American fictional range 555-0100...0199, a hundred per area
    /// code from 201 on: +12015550100, +12015550101, ...
    static func phone(_ number: Int) -> String {
        let n = number - 1
        let area = 201 + n / 100
        let line = n % 100
        return "+1\(area)\(phoneExchange)" + (line < 10 ? "0" : "") + String(line)
    }

    /// The exchange and the line's first digit: `+1AAA` `55501` `NN`.
    static let phoneExchange = "55501"

    /// Luhn-valid 16-digit numbers in the 400000 test range (apps that check the digit still accept
    /// them): 4000000000000010, 4000000000000028, ...
    static func card(_ number: Int) -> String {
        let digits = String(number)
        let body = "400000" + String(repeating: "0", count: max(0, 9 - digits.count)) + digits
        return body + String(luhnCheckDigit(body))
    }

    static func luhnCheckDigit(_ body: String) -> Int {
        var sum = 0
        for (i, c) in body.reversed().enumerated() {
            var d = Int(c.asciiValue! - 0x30)
            if i % 2 == 0 { d *= 2; if d > 9 { d -= 9 } }
            sum += d
        }
        return (10 - sum % 10) % 10
    }
}

/// Recognises values that are already placeholders (harrec's own, and the usual ones of other
/// tools), so that redacting twice changes nothing and `redact --check` passes on redacted files.
enum Placeholder {
    static func isPlaceholder(_ value: String) -> Bool {
        if isOtherToolsPlaceholder(value) { return true }
        var copy = value
        return copy.withUTF8 { p in PlaceholderText.find(in: p).first?.range == 0..<p.count }
    }

    /// The placeholders `value` is made of, with punctuation between them (`+12015550100;`,
    /// what a first run left of a value it replaced); empty for another tool's (`[REDACTED]`);
    /// nil when it is anything else.
    static func parts(of value: String) -> [PlaceholderText.Found]? {
        if isOtherToolsPlaceholder(value) { return [] }
        var copy = value
        return copy.withUTF8 { PlaceholderText.onlyPlaceholders(in: $0) }
    }

    /// The usual placeholders of other tools and people (`[REDACTED]`, `***`, `xxxx`,
    /// `[FILTERED]`), and a binary body's bare same-length placeholder (`******`), with the
    /// punctuation a value reader may take beside it (`******[`).
    private static func isOtherToolsPlaceholder(_ value: String) -> Bool {
        guard let first = value.utf8.first else { return false }
        if value.utf8Contains(UInt8(ascii: "*")) {
            let star = UInt8(ascii: "*")
            func isEdge(_ b: UInt8) -> Bool { b != star && b < 0x80 && !RedactionEngine.isAlnum(b) }
            let core = value.utf8.drop(while: isEdge).reversed().drop(while: isEdge)
            return !core.isEmpty && core.allSatisfy { $0 == star }
        }
        // Every literal starts with one of these and is 3 to 10 bytes; lowercasing allocates.
        guard (3...10).contains(value.utf8.count), "rR[<(xXfF".utf8.contains(first) else { return false }
        switch value.lowercased() {
        case "redacted", "[redacted]", "<redacted>", "(redacted)", "xxx", "xxxx", "[filtered]", "filtered":
            return true
        default:
            return false
        }
    }
}

/// JWT structure: three base64url parts, the first decoding to a JSON object with "alg".
enum JWTShape {
    static let placeholderSignature = "cmVkYWN0ZWQ"  // base64url("redacted")

    /// The decoded header object of a JWT, or nil when `value` is not one.
    static func header(of value: String) -> JSONFields? {
        guard mayBeJWT(value) else { return nil }
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

    /// Whether `value` may be a JWT: a JWT header is a JSON object, so its base64url starts with
    /// "ey" ('{' then a quote or whitespace). Checking that first keeps ordinary secrets off the
    /// decoding path.
    static func mayBeJWT(_ value: String) -> Bool { value.utf8.starts(with: "ey".utf8) }

    static func placeholder(header: JSONFields, number: Int) -> String {
        var kept: JSONFields = []
        for key in ["alg", "typ"] {
            if let value = header.first(where: { $0.key == key })?.value { kept.append((key: key, value: value)) }
        }
        let headerJSON = JSONWriter.serialize(.object(kept), pretty: false)
        let payloadJSON = Array("{\"sub\":\"redacted-\(number)\"}".utf8)
        return Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON) + "." + placeholderSignature
    }

    /// The N of a placeholder JWT (payload `{"sub":"redacted-N"}`, signature "redacted").
    static func placeholderNumber(_ value: String) -> Int? {
        let parts = value.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].elementsEqual(placeholderSignature.utf8),
              let payload = Base64URL.decode(parts[1]),
              let object = try? JSONParser.parse(payload).objectValue, object.count == 1,
              object[0].key == "sub", let sub = object[0].value.stringValue
        else { return nil }
        let digits = sub.utf8.dropFirst(9)
        guard sub.utf8.starts(with: "redacted-".utf8), !digits.isEmpty, digits.count <= 12, digits.allSatisfy(RedactionEngine.isDigit)
        else { return nil }
        return Int(Substring(digits))
    }
}

/// base64url without padding (RFC 4648 §5), as JWTs use it; decoding also takes the standard
/// alphabet and padding.
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

    static func encode(_ bytes: [UInt8]) -> String { encode(bytes, urlSafe: true, padded: false) }

    /// base64 of `bytes` in either alphabet, with or without '=' padding.
    static func encode(_ bytes: [UInt8], urlSafe: Bool, padded: Bool) -> String {
        if !urlSafe && padded { return Base64.encode(bytes) }
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        let a62: UInt8 = urlSafe ? 0x2D : 0x2B, a63: UInt8 = urlSafe ? 0x5F : 0x2F
        func symbol(_ v: UInt32) -> UInt8 {
            let i = Int(v & 63)
            return i == 62 ? a62 : (i == 63 ? a63 : alphabet[i])
        }
        var i = 0
        while i + 3 <= bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [symbol(v >> 18), symbol(v >> 12), symbol(v >> 6), symbol(v)]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = UInt32(bytes[i]) << 16
            out += [symbol(v >> 18), symbol(v >> 12)]
            if padded { out += [0x3D, 0x3D] }
        } else if rest == 2 {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [symbol(v >> 18), symbol(v >> 12), symbol(v >> 6)]
            if padded { out.append(0x3D) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
