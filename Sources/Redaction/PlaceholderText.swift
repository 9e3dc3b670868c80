import HAR
import TextEncodings

/// Where harrec's own placeholders stand in text: the one place that knows their shapes there.
///
/// Every placeholder comes from a reserved namespace (`redacted-N`, `person-N`,
/// `userN@example.com`, `internal-N.example.invalid`, `+1AAA55501NN`, RFC 5737 and RFC 3849
/// addresses, the 400000 test card range, the placeholder JWT). `scanBytes` finds them before any
/// detector runs and keeps them as they are: no detector starts inside one, none looks back into
/// one, and none runs on into one. So a second run changes nothing by construction, and no
/// detector has to recognise placeholders of its own.
enum PlaceholderText {
    struct Found: Equatable {
        var range: Range<Int>
        var kind: ValueKind
        /// The placeholder's number (0 where it has none: a number past 12 digits).
        var number: Int
    }

    /// The pairs of bytes a placeholder can be found at, one bit each: the `-` and first digit of
    /// a numbered one, `@e` or `%4` of an address, `+1` or `%2` of a phone, `19`, `20`, `24`
    /// and `40` of an IP or a card, `.c` before a JWT's signature. Text is scanned for them with one load
    /// and one bit test a byte.
    private static let pairBits: [UInt64] = {
        var t = [UInt64](repeating: 0, count: 1 << 10)
        func allow(_ a: UInt8, _ b: UInt8) { let pair = Int(a) << 8 | Int(b); t[pair >> 6] |= 1 << UInt64(pair & 63) }
        for d in UInt8(ascii: "0")...UInt8(ascii: "9") { allow(UInt8(ascii: "-"), d) }
        for pair in ["@e", "%4", "%2", "+1", ".c", "19", "20", "24", "40"] { allow(pair.utf8.first!, pair.utf8.last!) }
        return t
    }()

    /// Every placeholder in `p`, in order; a same-length one (a binary body's) with its `*`s.
    static func find(in p: UnsafeBufferPointer<UInt8>) -> [Found] {
        var found: [Found] = []
        let n = p.count
        guard n >= 2, let base = p.baseAddress else { return found }
        var i = 0
        var floor = 0
        pairBits.withUnsafeBufferPointer { bits in
            while i < n - 1 {
                let pair = Int(base[i]) &<< 8 | Int(base[i &+ 1])
                guard bits[pair &>> 6] & (1 &<< UInt64(pair & 63)) != 0, var f = shape(at: i, p, floor: floor) else { i &+= 1; continue }
                while f.range.upperBound < n && p[f.range.upperBound] == 0x2A { f.range = f.range.lowerBound..<(f.range.upperBound + 1) }
                found.append(f)
                i = f.range.upperBound
                floor = i
            }
        }
        return found
    }

    /// The placeholders of `p` when nothing but they and punctuation stand there (what a first
    /// run left of a value it replaced, `+12015550100;`), else nil.
    static func onlyPlaceholders(in p: UnsafeBufferPointer<UInt8>) -> [Found]? {
        // Every placeholder has a digit.
        guard p.contains(where: isDigit) else { return nil }
        let found = find(in: p)
        guard !found.isEmpty else { return nil }
        func isPunctuation(_ gap: Range<Int>) -> Bool { !p[gap].contains { RedactionEngine.isAlnum($0) || $0 >= 0x80 } }
        var k = 0
        for f in found {
            guard isPunctuation(k..<f.range.lowerBound) else { return nil }
            k = f.range.upperBound
        }
        return isPunctuation(k..<p.count) ? found : nil
    }

    /// The bytes of `p` outside its placeholders.
    static func withoutPlaceholders(_ p: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var copied = 0
        for f in find(in: p) {
            out.append(contentsOf: p[copied..<f.range.lowerBound])
            copied = f.range.upperBound
        }
        out.append(contentsOf: p[copied...])
        return out
    }

    private static func shape(at i: Int, _ p: UnsafeBufferPointer<UInt8>, floor: Int) -> Found? {
        switch p[i] {
        case 0x2D: return numbered(at: i, p, floor: floor)
        case 0x40: return email(at: i, atLength: 1, p, floor: floor)
        case 0x25:
            if starts(p, i, "%40") { return email(at: i, atLength: 3, p, floor: floor) }
            if i + 3 < p.count, p[i + 1] == 0x32, p[i + 2] | 0x20 == 0x62, let n = phoneNumber(p, i + 3) {
                return Found(range: i..<(i + 14), kind: .phone, number: n)
            }
            return nil
        case 0x2B: return phoneNumber(p, i + 1).map { Found(range: i..<(i + 12), kind: .phone, number: $0) }
        case 0x2E: return jwt(at: i, p, floor: floor)
        default: return address(at: i, p)
        }
    }

    @inline(__always) private static func starts(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, _ s: StaticString) -> Bool {
        let k = s.utf8CodeUnitCount
        guard i >= 0, i + k <= p.count else { return false }
        for j in 0..<k where p[i + j] != s.utf8Start[j] { return false }
        return true
    }

    @inline(__always) private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The decimal digits from `i`, at least one: (their value, where they end). The value is 0
    /// past 12 digits (such a number reserves nothing).
    private static func digits(_ p: UnsafeBufferPointer<UInt8>, from i: Int) -> (Int, Int)? {
        var j = i, value = 0
        while j < p.count && isDigit(p[j]) { value = j - i < 12 ? value * 10 + Int(p[j] - 0x30) : 0; j += 1 }
        return j > i ? (value, j) : nil
    }

    /// `redacted-N`, `person-N`, `internal-N.example.invalid`, found at the `-`.
    private static func numbered(at i: Int, _ p: UnsafeBufferPointer<UInt8>, floor: Int) -> Found? {
        guard i + 1 < p.count, isDigit(p[i + 1]), let (number, end) = digits(p, from: i + 1) else { return nil }
        if i - 8 >= floor && starts(p, i - 8, "redacted") { return Found(range: (i - 8)..<end, kind: .secret, number: number) }
        if i - 6 >= floor && starts(p, i - 6, "person") { return Found(range: (i - 6)..<end, kind: .person, number: number) }
        if i - 8 >= floor && starts(p, i - 8, "internal") && starts(p, end, ".example.invalid")
            && !continuesHost(p, end + 16) {
            return Found(range: (i - 8)..<(end + 16), kind: .host, number: number)
        }
        return nil
    }

    /// Whether a hostname goes on at `j`: a letter or `-` (a digit after a placeholder's last
    /// label is text a first run left next to it), or a dot and a label byte.
    private static func continuesHost(_ p: UnsafeBufferPointer<UInt8>, _ j: Int) -> Bool {
        guard j < p.count else { return false }
        if RedactionEngine.isHostByte(p[j]) && !isDigit(p[j]) { return true }
        return p[j] == 0x2E && j + 1 < p.count && RedactionEngine.isHostByte(p[j + 1])
    }

    /// `userN@example.com`, also with its `@` written `%40`, found at the `@`.
    private static func email(at i: Int, atLength: Int, _ p: UnsafeBufferPointer<UInt8>, floor: Int) -> Found? {
        let end = i + atLength + 11
        guard starts(p, i + atLength, "example.com"), !continuesHost(p, end) else { return nil }
        var s = i, number = 0, scale = 1
        while s > floor && isDigit(p[s - 1]) && i - s < 12 { s -= 1; number += Int(p[s] - 0x30) * scale; scale *= 10 }
        guard s < i, s - 4 >= floor, starts(p, s - 4, "user") else { return nil }
        return Found(range: (s - 4)..<end, kind: .email, number: number)
    }

    /// The number of the phone placeholder whose `1AAA55501NN` starts at `i` (after its `+`), not
    /// followed by another digit.
    private static func phoneNumber(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int? {
        guard i + 11 <= p.count, p[i] == 0x31, starts(p, i + 4, "55501"), i + 11 == p.count || !isDigit(p[i + 11]) else { return nil }
        for k in [1, 2, 3, 9, 10] where !isDigit(p[i + k]) { return nil }
        let area = Int(p[i + 1] - 0x30) * 100 + Int(p[i + 2] - 0x30) * 10 + Int(p[i + 3] - 0x30)
        let line = Int(p[i + 9] - 0x30) * 10 + Int(p[i + 10] - 0x30)
        guard area >= 201 else { return nil }
        return (area - 201) * 100 + line + 1
    }

    /// A documentation address (192.0.2.x, 198.51.100.x, 203.0.113.x, then the reserved
    /// 240.0.0.0/4, as `PlaceholderFormat.ipv4` numbers them; 2001:db8::x) or a 400000 test
    /// card, at a word's start. An address's number is the one it was made from, so new ones
    /// are numbered after it.
    private static func address(at i: Int, _ p: UnsafeBufferPointer<UInt8>) -> Found? {
        if i > 0 && (RedactionEngine.isAlnum(p[i - 1]) || p[i - 1] == 0x2E) { return nil }
        /// `count` dot-separated octets from `s`, not followed by another octet: (value, end).
        func octets(from s: Int, _ count: Int) -> (Int, Int)? {
            var value = 0, j = s
            for k in 0..<count {
                if k > 0 {
                    guard j < p.count, p[j] == 0x2E else { return nil }
                    j += 1
                }
                guard let (octet, end) = digits(p, from: j), end - j <= 3, octet <= 255 else { return nil }
                value = value << 8 | octet
                j = end
            }
            guard !(j + 1 < p.count && p[j] == 0x2E && isDigit(p[j + 1])) else { return nil }
            return (value, j)
        }
        for (range, prefix) in [StaticString("192.0.2."), "198.51.100.", "203.0.113."].enumerated() where starts(p, i, prefix) {
            guard let (last, end) = octets(from: i + prefix.utf8CodeUnitCount, 1), last >= 1, last <= 254 else { return nil }
            return Found(range: i..<end, kind: .ipv4, number: range * 254 + last)
        }
        if starts(p, i, "240."), let (m, end) = octets(from: i + 4, 3), m >= 1 {
            return Found(range: i..<end, kind: .ipv4, number: m + 762)
        }
        if starts(p, i, "2001:db8::") {
            // One or two groups of up to four hex digits (`PlaceholderFormat.ipv6`).
            var end = i + 10, number = 0
            for group in 0..<2 {
                let start = end
                while end < p.count && RedactionEngine.isHex(p[end]) && end - start < 4 { end += 1 }
                guard end > start else { return nil }
                number = number << 16 | p[start..<end].reduce(0) { $0 << 4 | Int(PercentEncoding.hexValue($1) ?? 0) }
                guard group == 0, end + 1 < p.count, p[end] == 0x3A, RedactionEngine.isHex(p[end + 1]) else { break }
                end += 1
            }
            guard end == p.count || !(RedactionEngine.isHex(p[end]) || p[end] == 0x3A) else { return nil }
            return Found(range: i..<end, kind: .ipv6, number: number)
        }
        if starts(p, i, "400000"), i + 16 <= p.count, i + 16 == p.count || !isDigit(p[i + 16]) {
            var number = 0
            for k in (i + 6)..<(i + 15) {
                guard isDigit(p[k]) else { return nil }
                number = number * 10 + Int(p[k] - 0x30)
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: p[i..<(i + 16)]), as: UTF8.self)
            guard number > 0, PlaceholderFormat.card(number) == text else { return nil }
            return Found(range: i..<(i + 16), kind: .card, number: number)
        }
        return nil
    }

    /// The placeholder JWT (`header.{"sub":"redacted-N"}.cmVkYWN0ZWQ`), found at the dot before
    /// its signature.
    private static func jwt(at i: Int, _ p: UnsafeBufferPointer<UInt8>, floor: Int) -> Found? {
        let signature: StaticString = "cmVkYWN0ZWQ"
        let end = i + 1 + signature.utf8CodeUnitCount
        guard starts(p, i + 1, signature), end == p.count || !Base64URL.isAlphabet(p[end]) else { return nil }
        // Back over the payload, its dot and the header.
        var s = i, dots = 0
        while s > floor, Base64URL.isAlphabet(p[s - 1]) || (p[s - 1] == 0x2E && dots == 0) {
            if p[s - 1] == 0x2E { dots += 1 }
            s -= 1
        }
        guard dots == 1, let number = JWTShape.placeholderNumber(String(decoding: UnsafeBufferPointer(rebasing: p[s..<end]), as: UTF8.self))
        else { return nil }
        return Found(range: s..<end, kind: .secret, number: number)
    }
}
