import HAR

/// The kinds of replaced values; each has its own placeholder shape and its own numbering.
enum ValueKind: UInt8, CaseIterable, Sendable {
    case secret, email, host, ipv4, ipv6, phone, card, person
}

/// The replacements of one file. The same value gets the same placeholder everywhere in the file
/// (a token returned by /login and sent later in Authorization still correlates), numbered in
/// order of first appearance, so the output is deterministic and carries nothing derived from
/// the value itself (a counter, not a hash: low-entropy values cannot be guessed back).
///
/// An open-addressing table over hashes computed while the entries were collected (on every
/// core); a file's values go into the shards of a `ValueInterner` as they are found.
struct PlaceholderTable: Sendable {
    private struct Entry {
        var hash: UInt64
        var kind: ValueKind
        var key: String
        /// As first seen (a card's key is its digits; the value keeps its spaces).
        var value: String
        /// Where the value first occurs, in file order (`ValueInterner.position`).
        var first: UInt64
        var number: Int
        var placeholder: String
    }
    /// Open addressing by the hash's low bits. A slot holds the hash's top 32 bits and the entry
    /// id + 1 (0: empty), so a probe reads an entry only when those bits match: the table is
    /// large and probed at random, and reading each probed entry missed the cache.
    private var slots = [UInt64](repeating: 0, count: 64)
    private var entries: [Entry] = []
    private var counters = PlaceholderCounters()

    /// How many values have placeholders.
    var count: Int { entries.count }

    /// The key a value is looked up by: emails, hosts and IPv6 addresses compare case-insensitively.
    static func key(_ kind: ValueKind, _ value: String) -> String {
        switch kind {
        case .email, .host, .ipv6: return lowercasedIfNeeded(value)
        case .card: return value.filter(\.isNumber)
        default: return value
        }
    }

    /// Most values are lowercase already; lowercasing allocates, so only when needed.
    static func lowercasedIfNeeded(_ value: String) -> String {
        var copy = value
        let needed = copy.withUTF8 { p in p.contains { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 } }
        return needed ? value.lowercased() : value
    }

    /// A 64-bit hash of the key's bytes, eight at a time, with the kind and the length mixed in
    /// (every bit of the result depends on every byte: shards take the top bits, tables the low
    /// ones). Not for hostile input: a collision only costs a comparison of keys.
    static func hash(_ kind: ValueKind, key: String) -> UInt64 {
        var copy = key
        return copy.withUTF8 { p in
            let n = p.count
            var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ (UInt64(kind.rawValue) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(n)
            guard let base = p.baseAddress else { return Self.finish(h) }
            var i = 0
            while i &+ 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                h = (h ^ w) &* 0xBF58_476D_1CE4_E5B9
                h ^= h &>> 31
                i &+= 8
            }
            if i < n {
                var w: UInt64 = 0
                for k in i..<n { w |= UInt64(base[k]) &<< UInt64((k &- i) &* 8) }
                h = (h ^ w) &* 0x94D0_49BB_1331_11EB
                h ^= h &>> 29
            }
            return Self.finish(h)
        }
    }

    @inline(__always) private static func finish(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h &>> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        h ^= h &>> 32
        return h
    }

    private func find(_ kind: ValueKind, _ key: String, _ hash: UInt64) -> (slot: Int, entry: Int?) {
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: hash) & mask
        let tag = hash >> 32
        while true {
            let slot = slots[s]
            if slot == 0 { return (s, nil) }
            if slot >> 32 == tag {
                let e = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if entries[e].hash == hash && entries[e].kind == kind && entries[e].key == key { return (s, e) }
            }
            s = (s + 1) & mask
        }
    }

    func lookup(_ kind: ValueKind, _ value: String) -> String? {
        let key = Self.key(kind, value)
        return find(kind, key, Self.hash(kind, key: key)).entry.map { entries[$0].placeholder }
    }

    /// Room for `n` values without growing.
    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        var capacity = slots.count
        while capacity < n * 2 { capacity <<= 1 }
        if capacity > slots.count { rehash(capacity) }
    }

    private mutating func rehash(_ capacity: Int) {
        slots = [UInt64](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (e, entry) in entries.enumerated() {
            var s = Int(truncatingIfNeeded: entry.hash) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Self.slot(entry.hash, e)
        }
    }

    @inline(__always) private static func slot(_ hash: UInt64, _ id: Int) -> UInt64 {
        (hash >> 32) << 32 | UInt64(id + 1)
    }

    /// The placeholder of `value`, numbering it when it is new (the next number of its kind).
    @discardableResult
    mutating func assign(_ kind: ValueKind, _ value: String) -> String {
        let (id, new) = insert(kind, value, hash: nil, first: 0)
        if new {
            entries[Int(id)].number = counters.next(kind)
            entries[Int(id)].placeholder = Self.make(entries[Int(id)])
        }
        return entries[Int(id)].placeholder
    }

    /// Adds `value` when it is new, without a number yet (`ValueInterner` numbers the values of a
    /// file in order, then `makePlaceholders`): its id, and whether it was new. `hash`: the key's
    /// hash when the caller has it (`ValueCollector` computes it in pass 1); `first`: where this
    /// occurrence stands in file order. Values may be added in any order: each keeps its earliest
    /// occurrence, and its text as it stands there.
    mutating func insert(_ kind: ValueKind, _ value: String, key givenKey: String? = nil, hash given: UInt64?,
                         first: UInt64) -> (id: Int32, new: Bool) {
        let key = givenKey ?? Self.key(kind, value)
        let hash = given ?? Self.hash(kind, key: key)
        let (slot, found) = find(kind, key, hash)
        if let found {
            if first < entries[found].first {
                entries[found].first = first
                entries[found].value = value
            }
            return (Int32(found), false)
        }
        let id = Int32(entries.count)
        slots[slot] = Self.slot(hash, Int(id))
        entries.append(Entry(hash: hash, kind: kind, key: key, value: value, first: first, number: 0, placeholder: ""))
        if entries.count * 2 > slots.count { rehash(slots.count * 2) }
        return (id, true)
    }

    /// Only secrets use the value (a JWT keeps its header), and a secret's key is its value.
    private static func make(_ entry: Entry) -> String {
        PlaceholderFormat.make(entry.kind, number: entry.number, value: entry.key)
    }

    /// Makes the placeholder of every value added by `insert`: value `id` gets `numbers[id]`.
    /// In place, field by field: copying each entry out (three strings retained and released)
    /// was a few percent of a redaction's sequential numbering.
    mutating func makePlaceholders(numbers: [Int]) {
        entries.withUnsafeMutableBufferPointer { buffer in
            for e in buffer.indices {
                buffer[e].number = numbers[e]
                buffer[e].placeholder = PlaceholderFormat.make(buffer[e].kind, number: numbers[e], value: buffer[e].key)
            }
        }
    }

    /// Each value's first occurrence and kind, by id (for numbering in file order), without its
    /// strings: retaining a key per value showed in the sequential part of numbering.
    var occurrences: [(first: UInt64, kind: ValueKind)] {
        entries.withUnsafeBufferPointer { b in b.map { ($0.first, $0.kind) } }
    }

    /// The lookup key of the value with id `id` (to order values of the same position).
    func key(_ id: Int32) -> String { entries[Int(id)].key }

    /// The value with id `id`, as first seen.
    func value(_ id: Int32) -> String { entries[Int(id)].value }

    /// The placeholder of the value numbered `id` (after `makePlaceholders`).
    func placeholder(_ id: Int32) -> String { entries[Int(id)].placeholder }

    /// The id of a value numbered before.
    func id(_ kind: ValueKind, _ value: String) -> Int32? {
        let key = Self.key(kind, value)
        return find(kind, key, Self.hash(kind, key: key)).entry.map(Int32.init)
    }

    /// Numbers after `number` are free for `kind` (an input placeholder used it).
    mutating func reserve(_ kind: ValueKind, _ number: Int) { counters.reserve(kind, number) }
}

/// The last number used per kind; placeholders already in the input raise it, so a new value
/// never reuses a number an earlier redaction gave to another one.
struct PlaceholderCounters: Sendable {
    private var last = [Int](repeating: 0, count: ValueKind.allCases.count)

    /// Numbers after `number` are free for `kind` (an input placeholder used it).
    mutating func reserve(_ kind: ValueKind, _ number: Int) {
        let k = Int(kind.rawValue)
        last[k] = max(last[k], min(number, 1 << 40))
    }

    /// The next number of `kind`.
    mutating func next(_ kind: ValueKind) -> Int {
        last[Int(kind.rawValue)] += 1
        return last[Int(kind.rawValue)]
    }
}

/// A buffer written from several threads at distinct indexes.
struct SendableBuffer<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}

/// Placeholder shapes. Each keeps the kind of value recognisable (an email stays an email, an IP
/// an IP, a JWT a JWT), none has the shape of a real key format, and each is recognised by
/// `Placeholder.parse`, so redacting twice changes nothing.
enum PlaceholderFormat {
    static func make(_ kind: ValueKind, number n: Int, value: String) -> String {
        switch kind {
        case .secret:
            if let header = JWTShape.header(of: value) { return JWTShape.placeholder(header: header, number: n) }
            return numbered("redacted-", n, "")
        case .email: return numbered("user", n, "@example.com")
        case .host: return numbered("internal-", n, ".example.invalid")
        case .ipv4: return ipv4(n)
        case .ipv6: return "2001:db8::" + String(n, radix: 16)
        case .phone: return phone(n)
        case .card: return card(n)
        case .person: return numbered("person-", n, "")
        }
    }

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
        return "+1\(area)55501" + (line < 10 ? "0" : "") + String(line)
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
