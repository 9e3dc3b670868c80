/// Shapes of values that say what a value is not: a URL's authority, an identifier of words,
/// a documentation stand-in. Each is read in place, before anything is copied where it can be.
extension RedactionEngine {
    /// In `scheme://host/rest`, where the host ends (the byte before `rest`), when `rest` is
    /// more than nothing.
    static func urlAuthorityEnd(_ value: String) -> Int? {
        // `scheme:` of at most 12 bytes, before anything is copied: most values fail at their
        // first bytes.
        guard value.utf8.count > 8, let first = value.utf8.first, first | 0x20 >= 0x61 && first | 0x20 <= 0x7A else { return nil }
        var colon = 0
        for b in value.utf8 {
            if b == 0x3A { break }
            guard colon < 12, isAlnum(b) || b == 0x2B || b == 0x2E || b == 0x2D else { return nil }
            colon += 1
        }
        let b = Array(value.utf8)
        guard colon >= 2, colon + 3 < b.count, b[colon] == 0x3A, b[colon + 1] == 0x2F, b[colon + 2] == 0x2F else { return nil }
        guard let end = b[(colon + 3)...].firstIndex(where: { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 }), end > colon + 3,
              end + 1 < b.count else { return nil }
        // `https://key@o1.ingest.sentry.io/2`: userinfo is a secret too; the value is one.
        guard !b[(colon + 3)..<end].contains(0x40) else { return nil }
        return end
    }

    /// An identifier made of words (`feature.checkout_v2`, `ios-app-store_2x`): every piece
    /// between `.`, `_`, `-`, `/` and `:` is letters with at most two digits after them, or a
    /// short number.
    static func isWordyIdentifier(_ value: String) -> Bool {
        var pieces = 0
        for piece in value.utf8.split(whereSeparator: { $0 == 0x2E || $0 == 0x5F || $0 == 0x2D || $0 == 0x2F || $0 == 0x3A }) {
            pieces += 1
            let letters = piece.prefix { $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A }
            let rest = piece.dropFirst(letters.count)
            guard rest.allSatisfy(isDigit), rest.count <= (letters.isEmpty ? 4 : 2) else { return false }
            // A run of letters that switches case inside (`aBcDeF`) is random, not a word.
            var switches = 0
            var previousUpper: Bool?
            for b in letters {
                let upper = isUpper(b)
                if let p = previousUpper, p != upper, upper { switches += 1 }
                previousUpper = upper
            }
            guard switches <= 2 else { return false }
        }
        return pieces >= 2
    }

    /// Documentation's stand-ins for a secret, never a secret: `YOUR_API_KEY`, `<token>`,
    /// `{{token}}`, `${API_KEY}`, `%API_KEY%`.
    static func isTemplateText(_ value: String) -> Bool {
        // Screened by the first byte before any copy: this runs for every value replaced.
        let u = value.utf8
        guard u.count >= 4, u.count <= 64, let first = u.first, first == 0x3C || first == 0x7B || first == 0x24 || first == 0x25 || isUpper(first)
        else { return false }
        let b = Array(u)
        let last = b[b.count - 1]
        if (first == 0x3C && last == 0x3E) || (first == 0x7B && b[1] == 0x7B && last == 0x7D)
            || (first == 0x24 && b[1] == 0x7B && last == 0x7D) || (first == 0x25 && last == 0x25) {
            return b.dropFirst().dropLast().allSatisfy { isAlnum($0) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E || $0 == 0x7B || $0 == 0x7D || $0 == 0x20 }
        }
        // SHOUTING_SNAKE_CASE words of letters: an environment variable's name.
        guard isUpper(first), b.contains(0x5F), b.allSatisfy({ isUpper($0) || $0 == 0x5F }) else { return false }
        return b.split(separator: 0x5F, omittingEmptySubsequences: false).allSatisfy { (2...12).contains($0.count) }
    }

}
