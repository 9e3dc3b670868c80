import HAR

// Personal data in free text, where the shape alone is unambiguous: E.164 and `(415) 555-2671`
// phone numbers, Luhn-valid card numbers in a card network's ranges, and IBANs with a valid
// mod-97 check. Under names (`phone`, `cardNumber`, `cvc`, `firstName`) the name decides instead;
// see `replaceNamedValue`.

extension RedactionEngine {
    /// `+` and 8 to 15 digits with single spaces, dashes, dots or parentheses between them
    /// (`+1 415 555 2671`, `+44 (20) 7946-0958`), or `(415) 555-2671`.
    func phoneInText(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if i > 0, Self.isAlnum(p[i - 1]) || p[i - 1] == 0x2B || p[i - 1] == 0x2E { return nil }
        if p[i] == UInt8(ascii: "(") { return parenthesizedPhone(at: i, p, reading, path) }
        guard i + 1 < p.count, p[i + 1] != 0x30 else { return nil }  // country codes never start with 0
        var j = i + 1
        var digits = 0
        var last = i + 1
        var separatorRun = 0
        var dashGroups: [Int] = [0]
        while j < p.count && j - i < 32 {
            let c = p[j]
            if Self.isDigit(c) {
                digits += 1
                dashGroups[dashGroups.count - 1] += 1
                separatorRun = 0
                last = j + 1
            } else if c == 0x20 || c == 0x2D || c == 0x2E || c == 0x28 || c == 0x29 {
                separatorRun += 1
                if separatorRun > 2 { break }
                if c == 0x2D { dashGroups.append(0) }
            } else {
                break
            }
            j += 1
        }
        guard (8...15).contains(digits) else { return nil }
        if last < p.count {
            let c = p[last]
            if Self.isAlnum(c) || c == 0x3A { return nil }  // +0100 offsets, +12:00
        }
        // `+2024-01-15` is a date, not a number.
        if dashGroups == [4, 2, 2] { return nil }
        return valueMatch(p, i..<last, .phone, rule: .phoneNumber, reading, path)
    }

    private func parenthesizedPhone(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading,
                                    _ path: () -> String) -> TextMatch? {
        // (NNN) NNN-NNNN, (NNN)NNN-NNNN, (NNN) NNN.NNNN
        var j = i + 1
        func digits(_ n: Int) -> Bool {
            guard j + n <= p.count else { return false }
            for k in j..<j + n where !Self.isDigit(p[k]) { return false }
            j += n
            return true
        }
        guard digits(3), j < p.count, p[j] == 0x29 else { return nil }
        j += 1
        if j < p.count && p[j] == 0x20 { j += 1 }
        guard digits(3), j < p.count, p[j] == 0x2D || p[j] == 0x2E || p[j] == 0x20 else { return nil }
        j += 1
        guard digits(4) else { return nil }
        if j < p.count, Self.isAlnum(p[j]) { return nil }
        return valueMatch(p, i..<j, .phone, rule: .phoneNumber, reading, path)
    }

    /// 13 to 19 digits (single spaces or dashes between groups allowed) in a card network's
    /// ranges, passing the Luhn check.
    func cardInText(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if i > 0 {
            let c = p[i - 1]
            if Self.isAlnum(c) || c == 0x2E || c == 0x2D || c == 0x2B || c == 0x5F { return nil }
        }
        // Counted first, collected only for a card's length: this runs at most numbers in text.
        var count = 0
        var j = i
        var separator: UInt8 = 0
        var end = i
        while j < p.count && count < 20 {
            let c = p[j]
            if Self.isDigit(c) {
                count += 1
                end = j + 1
            } else if (c == 0x20 || c == 0x2D) && j + 1 < p.count && Self.isDigit(p[j + 1]) && (separator == 0 || separator == c)
                        && j > i && Self.isDigit(p[j - 1]) {
                separator = c
            } else {
                break
            }
            j += 1
        }
        guard (13...19).contains(count) else { return nil }
        let digits = p[i..<end].filter(Self.isDigit).map { $0 - 0x30 }
        if end < p.count {
            let c = p[end]
            if Self.isAlnum(c) || c == 0x5F { return nil }
            if c == 0x2E && end + 1 < p.count && Self.isDigit(p[end + 1]) { return nil }
        }
        guard Self.isCardNetworkNumber(digits), Self.luhnValid(digits) else { return nil }
        return valueMatch(p, i..<end, .card, rule: .cardNumber, reading, path)
    }

    /// Issuer ranges and lengths of the major networks (Visa, Mastercard, Amex, Discover, JCB,
    /// Diners, UnionPay): a Luhn-valid number elsewhere (an order id, a timestamp) is left alone.
    static func isCardNetworkNumber(_ d: [UInt8]) -> Bool {
        func prefix(_ n: Int) -> Int { d.prefix(n).reduce(0) { $0 * 10 + Int($1) } }
        if d.dropFirst().allSatisfy({ $0 == d[0] }) { return false }
        let count = d.count
        switch d[0] {
        case 4: return count == 13 || count == 16 || count == 19
        case 5: return (51...55).contains(prefix(2)) && count == 16
        case 2: return (2221...2720).contains(prefix(4)) && count == 16
        case 3:
            if prefix(2) == 34 || prefix(2) == 37 { return count == 15 }
            if prefix(2) == 35 { return (16...19).contains(count) }
            if prefix(2) == 36 || prefix(2) == 38 || prefix(2) == 30 { return (14...16).contains(count) }
            return false
        case 6:
            if prefix(4) == 6011 || prefix(2) == 65 || (644...649).contains(prefix(3)) || prefix(2) == 62 {
                return (16...19).contains(count)
            }
            return false
        default: return false
        }
    }

    static func luhnValid(_ digits: [UInt8]) -> Bool {
        var sum = 0
        for (i, digit) in digits.reversed().enumerated() {
            var d = Int(digit)
            if i % 2 == 1 { d *= 2; if d > 9 { d -= 9 } }
            sum += d
        }
        return sum % 10 == 0
    }

    /// An IBAN: a country code, two check digits and the country's length of letters and digits
    /// (printed in groups of four or not), valid mod 97 (ISO 13616).
    func ibanInText(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard i + 15 <= p.count, Self.isDigit(p[i + 2]), Self.isDigit(p[i + 3]) else { return nil }
        if i > 0, Self.isAlnum(p[i - 1]) { return nil }
        guard let length = Self.ibanLengths[String(decoding: [p[i], p[i + 1]], as: UTF8.self)] else { return nil }
        var chars: [UInt8] = []
        var j = i
        var end = i
        while j < p.count && chars.count < length {
            let c = p[j]
            if Self.isDigit(c) || Self.isUpper(c) {
                chars.append(c)
                end = j + 1
            } else if c == 0x20 && chars.count % 4 == 0 && j + 1 < p.count && Self.isAlnum(p[j + 1]) {
                // groups of four
            } else {
                break
            }
            j += 1
        }
        guard chars.count == length else { return nil }
        if end < p.count, Self.isAlnum(p[end]) { return nil }
        // Move the first four characters to the end, letters become 10...35, and the number mod 97 is 1.
        var remainder = 0
        for c in chars[4...] + chars[..<4] {
            let value = Self.isDigit(c) ? Int(c - 0x30) : Int(c - 0x41) + 10
            remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97
        }
        guard remainder == 1 else { return nil }
        return secretMatch(p, i..<end, rule: .iban, reading, path)
    }

    /// IBAN lengths by country (ISO 13616 registry).
    static let ibanLengths: [String: Int] = [
        "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
        "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
        "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
        "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
        "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
        "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19,
        "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
    ]
}
