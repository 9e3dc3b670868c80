// Street addresses in free text (a chat message, a delivery note, an OCR result), found at the
// word that makes them one: a street type after the name (`939 Mike Street`, `Hollybush Road 88`)
// or before it (`Via Roma 12`, `12 rue de Rivoli`). The house number is what tells an address
// from a name (`Wall Street`, `Abbey Road`): without one nothing is replaced.

extension RedactionEngine {

    /// A street address whose street type starts at `i` (a capital at a word start).
    func streetAddress(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                       _ path: () -> String) -> TextMatch? {
        guard flags.has(.postalAddress), i == 0 || !Self.isAlnum(p[i - 1]) else { return nil }
        var e = i
        while e < p.count && Self.isLetter(p[e]) && e - i <= 10 { e += 1 }
        guard e - i >= 2, e == p.count || !Self.isAlnum(p[e]) else { return nil }
        let word = string(p, i..<e)
        var typeEnd = e
        if e - i <= 4, e < p.count, p[e] == 0x2E { typeEnd = e + 1 }  // `St.`
        let range: Range<Int>
        if Self.streetSuffixes.contains(word) {
            // `939 Mike Street`, `221B Baker St.`, `350 5th Avenue`; or `Hollybush Road 88`.
            let words = Self.nameWordsBefore(p, i, lowerBound: lowerBound)
            if let number = words.lazy.compactMap({ Self.houseNumberBefore(p, $0, lowerBound: lowerBound, digits: 5) }).first {
                range = number..<typeEnd
            } else if let first = words.prefix(2).last, let end = Self.houseNumberAfter(p, typeEnd, digits: 3) {
                range = first..<end
            } else {
                return nil
            }
        } else if Self.streetPrefixes.contains(word) {
            // `Via Roma 12`, `Calle del Prado 5`; or `12 rue de Rivoli`.
            var k = typeEnd, nameEnd = typeEnd, words = 0
            while words < 4, k + 1 < p.count, p[k] == 0x20, Self.isLetter(p[k + 1]) {
                var w = k + 1
                while w < p.count && (Self.isLetter(p[w]) || p[w] >= 0x80 || p[w] == 0x27 || p[w] == 0x2D) { w += 1 }
                let isName = Self.isUpper(p[k + 1]) || p[k + 1] >= 0x80
                guard isName || Self.streetParticles.contains(string(p, (k + 1)..<w)) else { break }
                if isName { nameEnd = w }
                k = w
                words += 1
            }
            guard nameEnd > typeEnd else { return nil }
            if let number = Self.houseNumberBefore(p, i, lowerBound: lowerBound, digits: 4) {
                range = number..<nameEnd
            } else if let end = Self.houseNumberAfter(p, nameEnd, digits: 4) {
                range = i..<end
            } else {
                return nil
            }
        } else {
            return nil
        }
        return secretMatch(p, range, rule: .postalAddress, reading, path)
    }

    /// The starts of one to three capitalized words right before `i` (each followed by one
    /// space), nearest first: a street's name (`Mike`, `Martin Luther King`, `5th`).
    private static func nameWordsBefore(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, lowerBound: Int) -> [Int] {
        var starts: [Int] = []
        var k = i
        while starts.count < 3, k - 2 >= lowerBound, p[k - 1] == 0x20 {
            var s = k - 1
            while s > lowerBound && (isLetter(p[s - 1]) || isDigit(p[s - 1]) || p[s - 1] >= 0x80 || p[s - 1] == 0x27 || p[s - 1] == 0x2D) {
                s -= 1
            }
            let length = k - 1 - s
            guard length >= 2, s == 0 || !isAlnum(p[s - 1]) else { break }
            // A capitalized word, or an ordinal (`5th`).
            let ordinal = isDigit(p[s]) && length >= 3 && isLetter(p[k - 2]) && isLetter(p[k - 3])
            guard isUpper(p[s]) || p[s] >= 0x80 || ordinal else { break }
            if isDigit(p[s]) && !ordinal { break }
            starts.append(s)
            k = s
        }
        return starts
    }

    /// Where a house number (1 to `digits` digits and an optional letter, `221B`) right before
    /// `start` and one space starts.
    private static func houseNumberBefore(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, lowerBound: Int, digits: Int) -> Int? {
        var k = start - 1
        guard k - 1 >= lowerBound, p[k] == 0x20 else { return nil }
        if isLetter(p[k - 1]), k - 2 >= lowerBound, isDigit(p[k - 2]) { k -= 1 }
        var s = k
        while s > lowerBound && isDigit(p[s - 1]) && k - s < digits { s -= 1 }
        guard s < k, s == 0 || !(isAlnum(p[s - 1]) || p[s - 1] == 0x2E || p[s - 1] == 0x2C || p[s - 1] == 0x3A) else { return nil }
        return s
    }

    /// Where a house number after `end` and one space ends (`Road 88`, `Via Roma 12a`); not a
    /// time, a decimal or a longer number (`Road 1969`, `Court 5:30`).
    private static func houseNumberAfter(_ p: UnsafeBufferPointer<UInt8>, _ end: Int, digits: Int) -> Int? {
        var k = end
        guard k + 1 < p.count, p[k] == 0x20, isDigit(p[k + 1]) else { return nil }
        k += 1
        let s = k
        while k < p.count && isDigit(p[k]) { k += 1 }
        guard k - s <= digits else { return nil }
        if k < p.count, p[k] >= 0x61 && p[k] <= 0x7A, k + 1 == p.count || !isAlnum(p[k + 1]) { k += 1 }
        guard k < p.count else { return k }
        // Not a time, a decimal, a percentage, a range or a size (`5:30`, `12.5`, `5%`, `3-Seater`).
        let next = p[k], after: UInt8 = k + 1 < p.count ? p[k + 1] : 0
        if isAlnum(next) || next == 0x3A || next == 0x25 { return nil }
        if (next == 0x2E || next == 0x2C || next == 0x2D || next == 0x2F) && isAlnum(after) { return nil }
        return k
    }
}
