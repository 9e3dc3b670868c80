// Identifiers found by their structure wherever they stand in text: MAC addresses, US social
// security numbers, UK national insurance numbers, and one-time codes in message text (FCM
// tokens are in the key-format catalogue, at their `:APA91b` marker). Each is anchored on a
// pair of bytes in the pair table (`Detectors`), checks its whole shape and its boundaries, and
// validates what has a rule (an SSN's area, an NI number's prefix), so a number of another kind
// of the same length is left alone.

extension RedactionEngine {
    /// A MAC address, SSN or NI number at `i` (or, for the first two, one or two bytes before).
    func structuredID(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                      _ path: () -> String) -> TextMatch? {
        let c = p[i], next = i + 1 < p.count ? p[i + 1] : 0
        if next == 0x3A || next == 0x2D, i >= 1, i - 1 >= lowerBound {
            if flags.has(.deviceID), let range = Self.macAddress(p, at: i - 1) {
                return secretMatch(p, range, rule: .deviceID, reading, path)
            }
            if next == 0x2D, i >= 2, i - 2 >= lowerBound, flags.has(.nationalID), let range = Self.socialSecurityNumber(p, at: i - 2) {
                return secretMatch(p, range, rule: .nationalID, reading, path)
            }
        }
        if Self.isUpper(c), Self.isUpper(next), flags.has(.nationalID), let range = Self.nationalInsuranceNumber(p, at: i) {
            return secretMatch(p, range, rule: .nationalID, reading, path)
        }
        return nil
    }

    /// A device named after its owner, as Apple names them (`Quentin's iPhone`, as a host name
    /// `Quentins-iPhone`), at its `iP`: the owner's name, the possessive and the device.
    static func ownersDevice(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> Range<Int>? {
        var end = i
        for device in ["iPhone", "iPad", "iPod"] where i + device.utf8.count <= p.count
            && UnsafeBufferPointer(rebasing: p[i..<(i + device.utf8.count)]).elementsEqual(device.utf8) {
            end = i + device.utf8.count
        }
        guard end > i, end == p.count || !(p[end] | 0x20 >= 0x61 && p[end] | 0x20 <= 0x7A), i >= 4,
              p[i - 1] == 0x20 || p[i - 1] == 0x2D, p[i - 2] == 0x73 else { return nil }
        var k = i - 2
        if k >= 1, p[k - 1] == 0x27 { k -= 1 } else if k >= 3, p[k - 3] == 0xE2, p[k - 2] == 0x80, p[k - 1] == 0x99 { k -= 3 }
        var start = k
        while start > 0 && (p[start - 1] | 0x20 >= 0x61 && p[start - 1] | 0x20 <= 0x7A || p[start - 1] >= 0x80) { start -= 1 }
        guard i - 2 - start >= 2, isUpper(p[start]) || p[start] >= 0x80 else { return nil }
        return start..<end
    }

    /// Six octets of two hex digits with one separator (`a4:2b:b0:3c:9d:11`, `00-1B-63-84-45-E6`);
    /// with dashes at least one must be a letter (`12-34-56-78-90-12` is more likely a number).
    static func macAddress(_ p: UnsafeBufferPointer<UInt8>, at start: Int) -> Range<Int>? {
        let end = start + 17
        guard end <= p.count else { return nil }
        let separator = p[start + 2]
        if start > 0 {
            let b = p[start - 1]
            guard !isAlnum(b), b != separator, b != 0x2E else { return nil }
        }
        var letters = false
        for k in 0..<6 {
            let a = p[start + 3 * k], b = p[start + 3 * k + 1]
            guard isHex(a), isHex(b) else { return nil }
            if !isDigit(a) || !isDigit(b) { letters = true }
            if k < 5 { guard p[start + 3 * k + 2] == separator else { return nil } }
        }
        if end < p.count { guard !isAlnum(p[end]), p[end] != separator else { return nil } }
        return separator == 0x3A || letters ? start..<end : nil
    }

    /// `AAA-GG-SSSS` with a valid area (not 000, 666 or 9xx), group (not 00) and serial (not 0000).
    static func socialSecurityNumber(_ p: UnsafeBufferPointer<UInt8>, at start: Int) -> Range<Int>? {
        let end = start + 11
        guard end <= p.count else { return nil }
        if start > 0 {
            let b = p[start - 1]
            guard !isAlnum(b), b != 0x2D, b != 0x2E, b != 0x2B, b != 0x2F else { return nil }
        }
        let d = { (k: Int) -> Bool in isDigit(p[start + k]) }
        guard d(0), d(1), d(2), p[start + 3] == 0x2D, d(4), d(5), p[start + 6] == 0x2D, d(7), d(8), d(9), d(10) else { return nil }
        if end < p.count { guard !isAlnum(p[end]), p[end] != 0x2D, !(p[end] == 0x2E && end + 1 < p.count && isDigit(p[end + 1])) else { return nil } }
        let v = { (k: Int) -> Int in Int(p[start + k] - 0x30) }
        let area = v(0) * 100 + v(1) * 10 + v(2)
        guard area != 0, area != 666, area < 900, v(4) * 10 + v(5) != 0, v(7) + v(8) + v(9) + v(10) != 0 else { return nil }
        return start..<end
    }

    /// A UK national insurance number: two prefix letters (not D, F, I, Q, U, V; the second not
    /// O; not BG, GB, KN, NK, NT, TN, ZZ), six digits (also in pairs with spaces), a suffix A-D.
    static func nationalInsuranceNumber(_ p: UnsafeBufferPointer<UInt8>, at start: Int) -> Range<Int>? {
        if start > 0 { guard !isAlnum(p[start - 1]) else { return nil } }
        guard start + 9 <= p.count else { return nil }
        let a = p[start], b = p[start + 1]
        let badFirst: [UInt8] = Array("DFIQUV".utf8), badSecond: [UInt8] = Array("DFIOQUV".utf8)
        guard !badFirst.contains(a), !badSecond.contains(b) else { return nil }
        let prefix = String(decoding: [a, b], as: UTF8.self)
        guard !["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"].contains(prefix) else { return nil }
        var k = start + 2
        var digits = 0
        let spaced = k < p.count && p[k] == 0x20
        while digits < 6 {
            if spaced { guard k < p.count, p[k] == 0x20 else { return nil }; k += 1 }
            guard k + 1 < p.count, isDigit(p[k]), isDigit(p[k + 1]) else { return nil }
            k += 2
            digits += 2
        }
        if spaced, k < p.count, p[k] == 0x20 { k += 1 }
        guard k < p.count, p[k] >= 0x41, p[k] <= 0x44 else { return nil }
        k += 1
        if k < p.count { guard !isAlnum(p[k]) else { return nil } }
        return start..<k
    }

    /// A one-time code in message text: 4 to 8 digits (or 3 and 3) after `OTP`, `passcode` or a
    /// qualified `code` (`Your verification code is 482913`, `login code: 123-456`), replaced by
    /// zeros of its width.
    func oneTimeCode(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                     _ path: () -> String) -> TextMatch? {
        guard flags.has(.oneTimeCode), i == 0 || !Self.isAlnum(p[i - 1]) else { return nil }
        var k = i
        while k < p.count && Self.isAlnum(p[k]) && k - i <= 8 { k += 1 }
        // The pair table starts this at every `co`, `ot`, `pa` and `to`: the word is compared in
        // place, lowercased byte by byte, and most words are rejected by their length.
        let length = k - i
        guard length == 3 || length == 4 || length == 8 else { return nil }
        func word(_ w: StaticString) -> Bool {
            w.utf8CodeUnitCount == length && (0..<length).allSatisfy { p[i + $0] | 0x20 == w.utf8Start[$0] }
        }
        if word("born") {
            return birthDateAfter(k, p, reading, path)
        }
        if word("otp") || word("totp") || word("passcode") {
            // no qualifier needed
        } else if word("code") {
            var e = i
            while e > 0 && (p[e - 1] == 0x20) { e -= 1 }
            var s = e
            while s > 0 && (Self.isAlnum(p[s - 1]) || p[s - 1] == 0x2D) && e - s < 20 { s -= 1 }
            let before = String(decoding: UnsafeBufferPointer(rebasing: p[s..<e]), as: UTF8.self).lowercased()
            guard Self.codeQualifiers.contains(before) else { return nil }
            // `482913 is your verification code`, `G-5695 is your sign-in code`: the code came first.
            if let range = Self.codeBefore(p, qualifierStart: s), range.lowerBound >= lowerBound {
                return zeroed(p, range, reading, path)
            }
        } else {
            return nil
        }
        // `: `, ` is `, ` is: `, ` = `.
        while k < p.count && (p[k] == 0x20 || p[k] == 0x3A || p[k] == 0x3D) { k += 1 }
        if k + 2 < p.count, p[k] | 0x20 == 0x69, p[k + 1] | 0x20 == 0x73, !Self.isAlnum(p[k + 2]) {
            k += 2
            while k < p.count && (p[k] == 0x20 || p[k] == 0x3A) { k += 1 }
        }
        let start = k
        while k < p.count && Self.isDigit(p[k]) { k += 1 }
        var digits = k - start
        if digits == 3, k + 3 < p.count + 0, k < p.count, p[k] == 0x20 || p[k] == 0x2D,
           k + 3 <= p.count, (k + 1..<k + 4).allSatisfy({ Self.isDigit(p[$0]) }) {
            k += 4
            digits = 6
        }
        guard (4...8).contains(digits), k == p.count || !Self.isAlnum(p[k]) else { return nil }
        return zeroed(p, start..<k, reading, path)
    }

    /// A date after `born` or `born on` in text (`Customer Ada, born 1964-06-06`),
    /// shaped as a date of birth under its name is.
    private func birthDateAfter(_ k: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading,
                                _ path: () -> String) -> TextMatch? {
        guard flags.has(.dateOfBirth) else { return nil }
        var j = k
        while j < p.count && (p[j] == 0x20 || p[j] == 0x3A) { j += 1 }
        if j + 3 < p.count, p[j] | 0x20 == 0x6F, p[j + 1] | 0x20 == 0x6E, p[j + 2] == 0x20 { j += 3 }  // `on `
        let start = j
        // Digits with `-`, `/` or `.` between them: 1964-06-06, 06/06/1964, 6.6.1964.
        while j < p.count && (Self.isDigit(p[j]) || ((p[j] == 0x2D || p[j] == 0x2F || p[j] == 0x2E) && j + 1 < p.count && Self.isDigit(p[j + 1]))) {
            j += 1
        }
        let digits = UnsafeBufferPointer(rebasing: p[start..<j]).filter(Self.isDigit).count
        guard (6...8).contains(digits), j == p.count || !Self.isAlnum(p[j]),
              let date = Self.shaped(Array(p[start..<j]), Self.birthDateDigits) else { return nil }
        guard !date.elementsEqual(p[start..<j]) else { return TextMatch(start: start, end: j, replacement: "", keep: true) }
        note(.dateOfBirth, reading, string(p, start..<j), path)
        return TextMatch(start: start, end: j, replacement: String(decoding: date, as: UTF8.self))
    }

    /// The code's digits as zeros (kept as they are when they are zeros already).
    private func zeroed(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ reading: Reading,
                        _ path: () -> String) -> TextMatch {
        let code = UnsafeBufferPointer(rebasing: p[range])
        guard code.contains(where: { $0 != 0x30 && Self.isDigit($0) }) else {
            return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: "", keep: true)
        }
        note(.oneTimeCode, reading, string(p, range), path)
        return TextMatch(start: range.lowerBound, end: range.upperBound,
                         replacement: String(decoding: code.map { Self.isDigit($0) ? 0x30 : $0 }, as: UTF8.self))
    }

    /// The digits of `<code> is your <qualifier> code`, where `qualifierStart` is the start of
    /// the word before `code`: up to two words back to `is`, and 4 to 8 digits before it (a
    /// `G-` prefix as Google writes them stays).
    private static func codeBefore(_ p: UnsafeBufferPointer<UInt8>, qualifierStart: Int) -> Range<Int>? {
        let low = max(0, qualifierStart - 24)
        func isAt(_ k: Int, _ word: [UInt8]) -> Bool {
            k >= low && k + word.count <= qualifierStart && (0..<word.count).allSatisfy { p[k + $0] | 0x20 == word[$0] | 0x20 }
        }
        let forms = [Array(" is your ".utf8), Array(" is the ".utf8)]
        guard let end = stride(from: qualifierStart - 8, through: low, by: -1).first(where: { k in forms.contains { isAt(k, $0) } })
        else { return nil }
        var start = end
        while start > 0 && isDigit(p[start - 1]) && end - start <= 8 { start -= 1 }
        guard (4...8).contains(end - start), start == 0 || !isAlnum(p[start - 1]) || (start >= 2 && p[start - 1] == 0x2D && p[start - 2] == 0x47)
        else { return nil }
        return start..<end
    }
}
