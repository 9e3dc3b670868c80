/// Date helpers for HAR timestamps (ISO 8601) and HTTP dates (cookie `Expires`).
///
/// Pure arithmetic on the proleptic Gregorian calendar, no Foundation, no time-zone database.
public enum HARDate {
    /// Earliest and latest instants `format` can write with a 4-digit year
    /// (0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z).
    static let minimumEpochSeconds: Double = -62_135_596_800
    static let maximumEpochSeconds: Double = 253_402_300_799.999

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC, milliseconds rounded to the nearest.
    /// Out-of-range values are clamped to years 0001...9999; NaN becomes the Unix epoch.
    public static func format(epochSeconds: Double) -> String {
        var t = epochSeconds.isNaN ? 0 : epochSeconds
        t = min(max(t, minimumEpochSeconds), maximumEpochSeconds)
        let totalMillis = Int64((t * 1000).rounded())
        var days = totalMillis / 86_400_000
        var msOfDay = totalMillis % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        let (y, m, d) = civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        var out = [UInt8]()
        out.reserveCapacity(24)
        pad(y, 4, &out); out.append(0x2D)
        pad(m, 2, &out); out.append(0x2D)
        pad(d, 2, &out); out.append(0x54)
        pad(hour, 2, &out); out.append(0x3A)
        pad(minute, 2, &out); out.append(0x3A)
        pad(second, 2, &out); out.append(0x2E)
        pad(ms, 3, &out); out.append(0x5A)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)` to seconds since the Unix epoch.
    /// The fraction may have any number of digits; a time zone is required (a local time is
    /// ambiguous). Returns nil for anything else, including out-of-range fields.
    public static func parse(_ string: String) -> Double? {
        parseISO(string)?.epochSeconds
    }

    /// Like `parse` but also reports whether a fractional second was present, for the validator
    /// (HAR 1.2 writes `YYYY-MM-DDThh:mm:ss.sTZD`).
    static func parseISO(_ string: String) -> (epochSeconds: Double, hasFraction: Bool)? {
        let b = Array(string.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 0x30 && c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard i < b.count, b[i] == 0x54 || b[i] == 0x74 else { return nil }
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2) else { return nil }
        var fraction = 0.0
        var hasFraction = false
        if i < b.count && b[i] == 0x2E {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count && b[i] >= 0x30 && b[i] <= 0x39 {
                fraction += Double(b[i] - 0x30) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
            hasFraction = true
        }
        guard i < b.count else { return nil }
        var offsetSeconds = 0
        switch b[i] {
        case 0x5A, 0x7A:
            i += 1
        case 0x2B, 0x2D:
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = digits(2) else { return nil }
            _ = expect(0x3A)
            guard let om = digits(2), oh <= 23, om <= 59 else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
        default:
            return nil
        }
        guard i == b.count else { return nil }
        guard month >= 1, month <= 12, day >= 1, day <= daysInMonth(year, month),
              hour <= 23, minute <= 59, second <= 59 else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds)
        return (seconds + fraction, hasFraction)
    }

    /// Parses an HTTP date as cookies see it, following the RFC 6265 §5.1.1 cookie-date
    /// algorithm, which accepts IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT"), RFC 850
    /// ("Wednesday, 21-Oct-15 07:28:00 GMT"), asctime ("Wed Oct 21 07:28:00 2015") and the
    /// common "Wed, 21-Oct-2015 07:28:00 GMT". Two-digit years 70-99 mean 19xx, 00-69 mean 20xx.
    /// The time zone token is ignored: HTTP dates are always GMT.
    public static func parseHTTPDate(_ string: String) -> Double? {
        // delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
        func isDelimiter(_ c: UInt8) -> Bool {
            c == 0x09 || (c >= 0x20 && c <= 0x2F) || (c >= 0x3B && c <= 0x40) || (c >= 0x5B && c <= 0x60)
                || (c >= 0x7B && c <= 0x7E)
        }
        let bytes = Array(string.utf8)
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int? = nil
        for (idx, c) in bytes.enumerated() {
            if isDelimiter(c) {
                if let s = start { tokens.append(bytes[s..<idx]); start = nil }
            } else if start == nil {
                start = idx
            }
        }
        if let s = start { tokens.append(bytes[s..<bytes.count]) }

        var time: (Int, Int, Int)? = nil
        var dayOfMonth: Int? = nil
        var month: Int? = nil
        var year: Int? = nil
        for token in tokens {
            if time == nil, let t = parseTimeToken(token) { time = t; continue }
            if dayOfMonth == nil, let d = leadingDigits(token, min: 1, max: 2) { dayOfMonth = d; continue }
            if month == nil, let m = monthToken(token) { month = m; continue }
            if year == nil, let y = leadingDigits(token, min: 2, max: 4) { year = y; continue }
        }
        guard let (hour, minute, second) = time, let day = dayOfMonth, let mon = month, var y = year else { return nil }
        if y >= 70 && y <= 99 { y += 1900 } else if y >= 0 && y <= 69 { y += 2000 }
        guard day >= 1, day <= 31, y >= 1601, hour <= 23, minute <= 59, second <= 59,
              day <= daysInMonth(y, mon) else { return nil }
        let days = Self.days(fromCivil: y, mon, day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }

    // MARK: Calendar arithmetic

    static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return isLeap(y) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (eras of 400 years = 146097 days).
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9  // March = 0
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `days(fromCivil:)`.
    static func civil(fromDays daysSinceEpoch: Int64) -> (Int, Int, Int) {
        let z = Int(daysSinceEpoch) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func pad(_ value: some BinaryInteger, _ width: Int, _ out: inout [UInt8]) {
        var digits = [UInt8](repeating: 0x30, count: width)
        var v = Int(value)
        var k = width - 1
        while k >= 0 {
            digits[k] = 0x30 + UInt8(v % 10)
            v /= 10
            k -= 1
        }
        out.append(contentsOf: digits)
    }

    // MARK: cookie-date tokens

    /// time = hms-time ( non-digit *OCTET ); hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT
    private static func parseTimeToken(_ token: ArraySlice<UInt8>) -> (Int, Int, Int)? {
        var parts: [Int] = []
        var current = 0
        var count = 0
        var i = token.startIndex
        while i < token.endIndex {
            let c = token[i]
            if c >= 0x30 && c <= 0x39 {
                count += 1
                if count > 2 { return nil }
                current = current * 10 + Int(c - 0x30)
            } else if c == 0x3A && parts.count < 2 {
                guard count > 0 else { return nil }
                parts.append(current)
                current = 0
                count = 0
            } else {
                break
            }
            i += 1
        }
        guard parts.count == 2, count > 0 else { return nil }
        return (parts[0], parts[1], current)
    }

    /// min...max digits followed by a non-digit or the end of the token.
    private static func leadingDigits(_ token: ArraySlice<UInt8>, min: Int, max: Int) -> Int? {
        var v = 0
        var n = 0
        for c in token {
            guard c >= 0x30 && c <= 0x39 else { break }
            n += 1
            if n > max { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return n >= min ? v : nil
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func monthToken(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        guard let idx = monthNames.firstIndex(of: prefix) else { return nil }
        return idx + 1
    }
}
