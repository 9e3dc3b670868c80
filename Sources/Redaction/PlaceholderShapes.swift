import HAR

/// Placeholder shapes. Each keeps the kind of value recognisable (an email stays an email, an IP
/// an IP, a JWT a JWT), none has the shape of a real key format, and each is recognised by
/// `Placeholder.parse`, so redacting twice changes nothing.
enum PlaceholderFormat {
    static func make(_ kind: ValueKind, number n: Int, value: String) -> String {
        switch kind {
        case .secret:
            if let header = JWTShape.header(of: value) { return JWTShape.placeholder(header: header, number: n) }
            return numbered(secretPrefix, n, "")
        case .email: return numbered(emailPrefix, n, emailSuffix)
        case .host: return numbered(hostPrefix, n, hostSuffix)
        case .ipv4: return ipv4(n)
        case .ipv6: return "2001:db8::" + String(n, radix: 16)
        case .phone: return phone(n)
        case .card: return card(n)
        case .person: return numbered(personPrefix, n, "")
        }
    }

    static let secretPrefix: StaticString = "redacted-", personPrefix: StaticString = "person-"
    static let emailPrefix: StaticString = "user", emailSuffix: StaticString = "@example.com"
    static let hostPrefix: StaticString = "internal-", hostSuffix: StaticString = ".example.invalid"

    /// The numbered shapes as bytes around the number, for finding placeholders anywhere in text
    /// (`RedactionEngine.withoutNumberedPlaceholders`); an email's also query-encoded.
    static let numberedShapes: [(prefix: [UInt8], suffix: [UInt8])] = {
        func bytes(_ s: StaticString) -> [UInt8] { Array(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount)) }
        return [(bytes(secretPrefix), []), (bytes(personPrefix), []), (bytes(emailPrefix), bytes(emailSuffix)),
                (bytes(emailPrefix), Array("%40".utf8) + bytes(emailSuffix).dropFirst()),
                (bytes(hostPrefix), bytes(hostSuffix))]
    }()

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

    /// Whether a phone placeholder (`+1AAA55501NN`) stands at `i`, not followed by another digit:
    /// also where pass 2 wrote one next to other bytes (`\u{FFFD}+12015550100`).
    static func isPhone<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at i: Int) -> Bool where Bytes.Index == Int {
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        guard i + 12 <= bytes.count, bytes[i] == 0x2B, bytes[i + 1] == 0x31,
              bytes[(i + 2)..<(i + 5)].allSatisfy(isDigit), bytes[(i + 5)..<(i + 10)].elementsEqual(phoneExchange.utf8),
              bytes[(i + 10)..<(i + 12)].allSatisfy(isDigit) else { return false }
        return i + 12 == bytes.count || !isDigit(bytes[i + 12])
    }

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
        guard let first = value.utf8.first else { return true }
        // Every placeholder starts with one of these; most values are rejected by this alone.
        switch first {
        case UInt8(ascii: "r"), UInt8(ascii: "R"), UInt8(ascii: "["), UInt8(ascii: "<"), UInt8(ascii: "("),
             UInt8(ascii: "*"), UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "f"), UInt8(ascii: "F"),
             UInt8(ascii: "u"), UInt8(ascii: "e"), UInt8(ascii: "p"), UInt8(ascii: "+"), UInt8(ascii: "4"),
             UInt8(ascii: "i"), UInt8(ascii: "1"), UInt8(ascii: "2"):
            break
        default:
            return false
        }
        if parse(value) != nil { return true }
        // The literal placeholders are 3 to 10 bytes; lowercasing allocates, so only for those.
        guard value.utf8.count <= 10 || value.utf8Contains(UInt8(ascii: "*")) else { return false }
        switch value.lowercased() {
        case "redacted", "[redacted]", "<redacted>", "(redacted)", "***", "****", "xxx", "xxxx", "[filtered]", "filtered":
            return true
        default:
            break
        }
        let bytes = Array(value.utf8)
        // A same-length placeholder from a binary body: any placeholder (or nothing), then '*'s.
        if let star = bytes.firstIndex(of: UInt8(ascii: "*")), bytes[star...].allSatisfy({ $0 == UInt8(ascii: "*") }) {
            return star == 0 || parse(String(decoding: bytes[..<star], as: UTF8.self)) != nil
        }
        return false
    }

    /// `value` without the '*'s that pad a same-length placeholder.
    static func unpadded(_ value: String) -> String {
        guard value.utf8.last == UInt8(ascii: "*") else { return value }
        var rest = Substring(value)
        while rest.last == "*" { rest = rest.dropLast() }
        return String(rest)
    }

    /// The kind and number of one of harrec's own placeholders.
    static func parse(_ value: String) -> (ValueKind, Int)? {
        guard mayBePlaceholder(value) else { return nil }
        let bytes = Array(value.utf8)
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "r"):
            return numbered(bytes[...], "redacted-", suffix: []).map { (.secret, $0) }
        case UInt8(ascii: "u"):
            return numbered(bytes[...], "user", suffix: Array("@example.com".utf8)).map { (.email, $0) }
        case UInt8(ascii: "i"):
            return numbered(bytes[...], "internal-", suffix: Array(".example.invalid".utf8)).map { (.host, $0) }
        case UInt8(ascii: "p"):
            return numbered(bytes[...], "person-", suffix: []).map { (.person, $0) }
        case UInt8(ascii: "e"):
            return JWTShape.placeholderNumber(value).map { (.secret, $0) }
        case UInt8(ascii: "+"):
            // +1AAA55501LL
            guard bytes.count == 12, bytes[1] == UInt8(ascii: "1"), bytes.dropFirst().allSatisfy(RedactionEngine.isDigit),
                  bytes[5...9].elementsEqual("55501".utf8), let area = Int(String(decoding: bytes[2..<5], as: UTF8.self)),
                  area >= 201, let line = Int(String(decoding: bytes[10...], as: UTF8.self)) else { return nil }
            return (.phone, (area - 201) * 100 + line + 1)
        case UInt8(ascii: "1"), UInt8(ascii: "2"):
            // Documentation addresses: what private IPs become (RFC 5737, RFC 3849).
            for (prefix, kind) in [("192.0.2.", ValueKind.ipv4), ("198.51.100.", .ipv4), ("203.0.113.", .ipv4),
                                   ("2001:db8::", .ipv6)] where bytes.starts(with: prefix.utf8) {
                let rest = bytes.dropFirst(prefix.utf8.count)
                if kind == .ipv4, !rest.isEmpty, rest.count <= 3, rest.allSatisfy(RedactionEngine.isDigit) { return (kind, 0) }
                if kind == .ipv6, !rest.isEmpty, rest.count <= 4, rest.allSatisfy(RedactionEngine.isHex) { return (kind, 0) }
            }
            return nil
        case UInt8(ascii: "4"):
            guard bytes.count == 16, bytes.allSatisfy(RedactionEngine.isDigit), bytes.starts(with: "400000".utf8),
                  let n = Int(String(decoding: bytes[6..<15], as: UTF8.self)), n > 0,
                  PlaceholderFormat.card(n) == value else { return nil }
            return (.card, n)
        default:
            return nil
        }
    }

    /// A screen before `parse` copies the bytes: most values fail on their first bytes.
    private static func mayBePlaceholder(_ value: String) -> Bool {
        let u = value.utf8
        guard let first = u.first else { return false }
        switch first {
        case UInt8(ascii: "r"): return u.starts(with: "redacted-".utf8)
        case UInt8(ascii: "u"): return u.starts(with: "user".utf8)
        case UInt8(ascii: "i"): return u.starts(with: "internal-".utf8)
        case UInt8(ascii: "p"): return u.starts(with: "person-".utf8)
        case UInt8(ascii: "e"): return u.starts(with: "eyJ".utf8)
        case UInt8(ascii: "+"): return u.count == 12
        case UInt8(ascii: "4"): return u.count == 16
        case UInt8(ascii: "1"), UInt8(ascii: "2"): return u.starts(with: "19".utf8) || u.starts(with: "20".utf8)
        default: return false
        }
    }

    /// `prefix` + 1 or more digits + `suffix`: the number.
    static func numbered(_ bytes: ArraySlice<UInt8>, _ prefix: String, suffix: [UInt8]) -> Int? {
        let p = Array(prefix.utf8)
        guard bytes.count > p.count + suffix.count, bytes.starts(with: p), bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return nil }
        let digits = bytes[(bytes.startIndex + p.count)..<(bytes.endIndex - suffix.count)]
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy(RedactionEngine.isDigit) else { return nil }
        return Int(String(decoding: digits, as: UTF8.self))
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
        return Placeholder.numbered(Array(sub.utf8)[...], "redacted-", suffix: [])
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
