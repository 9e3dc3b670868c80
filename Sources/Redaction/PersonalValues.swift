/// What the personal-data names (`PersonalNames`) do to a value, and which values no secret
/// name can hold. A date, a coordinate or an expiry keeps its shape (digits become a fixed date,
/// zeros, 12/99), so apps that parse it still do, and a value already in that shape is left as
/// it is: a second run changes nothing.
extension RedactionEngine {
    /// A value that cannot be a secret whatever its name says: a boolean or null word, or a date
    /// or timestamp (`passwordChangedAt`-like values under names a describer did not catch,
    /// `always-auth=true`, `Persistent-Auth: true`).
    static func cannotBeSecret(_ value: String) -> Bool {
        // Called for every value under a secret name: most are tokens, ruled out by their size
        // or first byte, and nothing is copied (an ASCII word of up to 9 bytes is packed into an
        // integer, lowercased).
        let count = value.utf8.count
        guard count <= 40, let first = value.utf8.first else { return false }
        if isDigit(first) { return count >= 10 && withBytes(value, isDateOrTimestamp) }
        guard count <= 8 else { return count == 9 && value.utf8.elementsEqual("undefined".utf8) { $0 | 0x20 == $1 } }
        var word: UInt64 = 0
        for b in value.utf8 {
            guard b < 0x80 else { return false }
            word = word << 8 | UInt64(isUpper(b) ? b | 0x20 : b)
        }
        return Self.notSecretWords.contains(word)
    }

    /// Words no secret is, each packed as `cannotBeSecret` packs a value.
    private static let notSecretWords: Set<UInt64> = Set(
        ["true", "false", "yes", "no", "on", "off", "null", "none", "nil", "enabled", "disabled", "required", "optional"]
            .map { $0.utf8.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } })

    /// `body` over `value`'s UTF-8, copied only when the string is not contiguous.
    static func withBytes<R>(_ value: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let r = value.utf8.withContiguousStorageIfAvailable(body) { return r }
        return Array(value.utf8).withUnsafeBufferPointer(body)
    }

    /// ISO 8601 (`2025-03-01`, `2025-03-01T10:00:00.123Z`, `+02:00` offsets).
    static func isDateOrTimestamp(_ b: [UInt8]) -> Bool { b.withUnsafeBufferPointer(isDateOrTimestamp) }

    /// ISO 8601, as `isDateOrTimestamp(_:)` over an array.
    static func isDateOrTimestamp(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= b.count && b[range].allSatisfy(isDigit) }
        guard b.count >= 10, digits(0..<4), b[4] == 0x2D, digits(5..<7), b[7] == 0x2D, digits(8..<10) else { return false }
        if b.count == 10 { return true }
        guard b[10] == 0x54 || b[10] == 0x20, digits(11..<13), b.count >= 16, b[13] == 0x3A, digits(14..<16) else { return false }
        var i = 16
        if i < b.count, b[i] == 0x3A { guard digits(i + 1..<i + 3) else { return false }; i += 3 }
        if i < b.count, b[i] == 0x2E || b[i] == 0x2C { i += 1; while i < b.count && isDigit(b[i]) { i += 1 } }
        if i < b.count, b[i] == 0x5A { i += 1 } else if i < b.count, b[i] == 0x2B || b[i] == 0x2D {
            guard digits(i + 1..<i + 3) else { return false }
            i += 3
            if i < b.count, b[i] == 0x3A { i += 1 }
            guard digits(i..<i + 2) else { return false }
            i += 2
        }
        return i == b.count
    }

    /// A number under a count name (`max_tokens=1024`).
    static func isCountValue(_ value: String) -> Bool {
        var count = 0, digits = 0
        for b in value.utf8.drop(while: { $0 == 0x20 }) {
            count += 1
            guard count <= 20 else { return false }
            if isDigit(b) { digits += 1 } else if b != 0x2E && b != 0x2D && b != 0x20 { return false }
        }
        return digits > 0
    }

    /// A value under a personal-data name, or nil when it stays.
    func replacePersonal(_ value: String, _ nameClass: NameClass, _ reading: Reading, _ path: () -> String,
                         length: Int?) -> String? {
        switch nameClass {
        case .birthDate:
            guard flags.has(.dateOfBirth), let date = Self.shaped(Array(value.utf8), Self.birthDateDigits) else { return nil }
            return literal(date, .dateOfBirth, value, reading, path)
        case .cardExpiry:
            guard flags.has(.cardExpiry), let expiry = Self.expiry(Array(value.utf8)) else { return nil }
            return literal(expiry, .cardExpiry, value, reading, path)
        case .place, .coordinate:
            let isPair = nameClass == .place, bytes = Array(value.utf8)
            guard flags.has(.geolocation), Self.isCoordinates(bytes, pair: isPair) else { return nil }
            return literal(bytes.map { Self.isDigit($0) ? 0x30 : $0 }, .geolocation, value, reading, path)
        case .address:
            // An IP literal under `lanAddress` is an IP; an address has letters or digits (a ZIP
            // code is all digits).
            if let first = value.utf8.first, Self.isHex(first) || first == 0x3A, (7...45).contains(value.utf8.count),
               value.utf8.allSatisfy({ Self.isHex($0) || $0 == 0x2E || $0 == 0x3A }) {
                let bytes = Array(value.utf8)
                if IPLiteral.isIPv4(bytes) || IPLiteral.isIPv6(bytes) {
                    return flags.has(.clientIP) ? replaceIPAddresses(value, reading, path) : nil
                }
            }
            guard flags.has(.postalAddress), value.utf8.count >= 3, value.utf8.contains(where: { $0 >= 0x80 || Self.isAlnum($0) }),
                  !Self.cannotBeSecret(value) else { return nil }
            return replaceSecret(value, .postalAddress, reading, path, length: length)
        case .person:
            guard flags.has(.personName), Self.readsAsName(value) else { return nil }
            return replaceValue(.person, value, .personName, reading, path, length: length)
        case .ipAddress:
            guard flags.has(.clientIP) else { return nil }
            return replaceIPAddresses(value, reading, path)
        default:
            return nil
        }
    }

    /// `replacement` for `value` under `rule`, or nil when they are the same (a placeholder).
    private func literal(_ replacement: [UInt8], _ rule: RedactionRule, _ value: String, _ reading: Reading,
                         _ path: () -> String) -> String? {
        guard !replacement.elementsEqual(value.utf8), !isUntouchable(value) else { return nil }
        note(rule, reading, value, path)
        return String(decoding: replacement, as: UTF8.self)
    }

    /// A date's digit runs: the year (four digits) 1970, every other run ones and zeros of its
    /// width (`1990-05-17` -> `1970-01-01`, `17.5.1990` -> `01.1.1970`). Nil without digits or
    /// with letters other than a month's name (a date has at most a few).
    static let birthDateDigits: @Sendable (Int) -> [UInt8] = { width in
        width == 4 ? Array("1970".utf8) : Array(repeating: 0x30, count: width - 1) + [0x31]
    }

    static func shaped(_ b: [UInt8], _ run: (Int) -> [UInt8]) -> [UInt8]? {
        guard b.count <= 40, b.contains(where: isDigit), b.filter({ $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A }).count <= 9
        else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < b.count {
            guard isDigit(b[i]) else { out.append(b[i]); i += 1; continue }
            var j = i
            while j < b.count && isDigit(b[j]) { j += 1 }
            guard j - i <= 4 else { return nil }  // a timestamp, not a date
            out += run(j - i)
            i = j
        }
        return out
    }

    /// A card expiry: `MM/YY`, `MM/YYYY`, `MM-YY` become `12/99`, `12/2099`; a bare month (1-12)
    /// becomes 12 and a bare year (two or four digits) 99 or 2099. Nil for anything else (a
    /// token's lifetime in seconds under `expiry`).
    static func expiry(_ b: [UInt8]) -> [UInt8]? {
        guard !b.isEmpty, b.count <= 7 else { return nil }
        if let sep = b.firstIndex(where: { $0 == 0x2F || $0 == 0x2D }) {
            let month = b[..<sep], year = b[(sep + 1)...]
            guard (1...2).contains(month.count), month.allSatisfy(isDigit), year.count == 2 || year.count == 4,
                  year.allSatisfy(isDigit) else { return nil }
            return Array("12".utf8) + [b[sep]] + (year.count == 2 ? Array("99".utf8) : Array("2099".utf8))
        }
        guard b.allSatisfy(isDigit), let n = Int(String(decoding: b, as: UTF8.self)) else { return nil }
        if b.count <= 2 && (1...12).contains(n) { return Array((b.count == 1 ? "9" : "12").utf8) }
        if b.count == 2 { return Array("99".utf8) }
        if b.count == 4 && (1990...2199).contains(n) { return Array("2099".utf8) }
        return nil
    }

    /// A latitude or longitude (`51.50722`), or with `pair` a `lat,long` pair, with at least
    /// one non-zero digit.
    static func isCoordinates(_ b: [UInt8], pair: Bool) -> Bool {
        let parts = b.split(separator: 0x2C, omittingEmptySubsequences: false)
        guard parts.count == (pair ? 2 : 1) else { return false }
        for part in parts {
            let t = part.drop { $0 == 0x20 }.reversed().drop { $0 == 0x20 }.reversed()
            let body = t.first == 0x2D ? Array(t.dropFirst()) : Array(t)
            guard let dot = body.firstIndex(of: 0x2E), (1...3).contains(dot), body.count - dot - 1 >= 2,
                  body.allSatisfy({ isDigit($0) || $0 == 0x2E }), body.filter({ $0 == 0x2E }).count == 1,
                  let v = Double(String(decoding: body, as: UTF8.self)), v <= 180 else { return false }
        }
        return b.contains { $0 >= 0x31 && $0 <= 0x39 }
    }

    /// Whether a value reads as a person's name: one to five words of letters (any script,
    /// with `'`, `-` and `.`), no digits, no `@`.
    static func readsAsName(_ value: String) -> Bool {
        guard value.utf8.count <= 80 else { return false }
        let words = value.split(separator: " ")
        guard (1...5).contains(words.count) else { return false }
        return words.allSatisfy { word in
            word.first?.isLetter == true && word.allSatisfy { $0.isLetter || $0 == "'" || $0 == "-" || $0 == "." }
        }
    }

    /// Every IP address in a list (`X-Forwarded-For: 81.2.69.160, 2a02::3`, `for=...;proto=`),
    /// each by its placeholder; the text between them is scanned as any text is (a value that
    /// is an address and a token is not decided by its address). Nil without an address.
    func replaceIPAddresses(_ value: String, _ reading: Reading, _ path: () -> String) -> String? {
        let b = Array(value.utf8)
        var out: [UInt8] = []
        var changed = false
        var gapStart = 0
        var i = 0
        func flushGap(until end: Int) {
            guard gapStart < end else { return }
            let gap = Array(b[gapStart..<end])
            out += gap.withUnsafeBufferPointer { scanBytes($0, reading, path) } ?? gap
        }
        while i < b.count {
            var j = i
            while j < b.count && (Self.isHex(b[j]) || b[j] == 0x2E || b[j] == 0x3A) { j += 1 }
            guard j > i else { i += 1; continue }
            var piece = Array(b[i..<j])
            // `192.0.2.1:8080`: the port stays.
            var port: [UInt8] = []
            if piece.filter({ $0 == 0x3A }).count == 1, let colon = piece.firstIndex(of: 0x3A) {
                port = Array(piece[colon...])
                piece = Array(piece[..<colon])
            }
            let kind: ValueKind? = IPLiteral.isIPv4(piece) ? .ipv4 : (IPLiteral.isIPv6(piece) ? .ipv6 : nil)
            if let kind, let r = replaceValue(kind, String(decoding: piece, as: UTF8.self), .clientIP, reading, path) {
                if !changed { out.reserveCapacity(b.count + 32) }
                flushGap(until: i)
                out += Array(r.utf8) + port
                changed = true
                gapStart = j
            }
            i = j
        }
        guard changed else { return nil }
        flushGap(until: b.count)
        return String(decoding: out, as: UTF8.self)
    }
}

/// Strict IP literal checks for whole values.
enum IPLiteral {
    static func isIPv4(_ b: [UInt8]) -> Bool {
        let parts = b.split(separator: 0x2E, omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy(RedactionEngine.isDigit)
                && (part.count == 1 || part.first != 0x30) && Int(String(decoding: part, as: UTF8.self))! <= 255
        }
    }

    static func isIPv6(_ b: [UInt8]) -> Bool {
        guard b.count >= 3, b.count <= 45, b.contains(0x3A) else { return false }
        // Split at the one `::` there may be.
        var halves: [ArraySlice<UInt8>] = []
        var start = 0, k = 0
        while k + 1 < b.count {
            if b[k] == 0x3A && b[k + 1] == 0x3A { halves.append(b[start..<k]); start = k + 2; k += 2; continue }
            k += 1
        }
        halves.append(b[start...])
        guard halves.count <= 2 else { return false }
        var groups = 0
        for (index, half) in halves.enumerated() where !half.isEmpty {
            let parts = half.split(separator: 0x3A, omittingEmptySubsequences: false)
            for (n, part) in parts.enumerated() {
                if n == parts.count - 1 && index == halves.count - 1 && part.contains(0x2E) {
                    guard isIPv4(Array(part)) else { return false }
                    groups += 2
                    continue
                }
                guard (1...4).contains(part.count), part.allSatisfy(RedactionEngine.isHex) else { return false }
                groups += 1
            }
        }
        return halves.count == 2 ? groups <= 7 : groups == 8
    }
}
