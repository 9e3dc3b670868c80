// Person names in free text (a chat message, a gift message, an LLM's answer), found by the
// words that introduce one: a title (`Dr. Karl Lindqvist`), a greeting or a sign-off (`Hi
// Chiara`, `Love, Wilhelmina`), `my name is`, or a word for a person followed by a first and a
// last name (`the customer Fiona Petrakis`). A name is written as one: capitalized words of
// letters. Without such a word before it, a capitalized pair is left alone (`Rose Gold`).

extension RedactionEngine {
    /// What introduces a name, and how many words it takes.
    enum NameCue {
        /// `Mr.`, `Dr`, `Frau`: one to three words; the title stays.
        case title
        /// `Hi`, `Dear`, `birthday`, `my name is` (found at `name`): one or two words.
        case greeting
        /// `Love,`, `Regards,`, `Thanks,`: one or two words after the comma.
        case signOff
        /// `customer`, `patient`: a first and a last name (two or three words).
        case person
    }

    /// The cue words (ASCII, lowercase, in `NameWords`), each with what it introduces.
    private static let cues = PackedWordTable<NameCue>(
        titleCues.map { ($0, .title) } + greetingCues.map { ($0, .greeting) } + signOffCues.map { ($0, .signOff) }
            + personCues.map { ($0, .person) })

    /// The cue `bytes` are, if any.
    private static func cue(_ bytes: UnsafeBufferPointer<UInt8>) -> NameCue? {
        PackedWord(bytes).flatMap(cues.value(of:))
    }

    /// Which lengths cue words starting with each letter have: bit `length` of `cueLengths[letter]`,
    /// so most words are ruled out before a lookup.
    private static let cueLengths: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 26)
        for word in cues.members { t[Int(word.start.0) - 0x61] |= 1 << UInt32(word.length) }
        return t
    }()

    /// The two-byte starts of every cue word (both cases of its first letter), for the pair table.
    static var nameCuePairs: [(UInt8, UInt8)] {
        cues.members.flatMap { word -> [(UInt8, UInt8)] in
            let (first, second) = word.start
            return [(first, second), (first - 0x20, second)]
        }
    }

    /// A person's name after a cue word that starts at `i`.
    func nameInText(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading,
                    _ path: () -> String) -> TextMatch? {
        guard flags.has(.personName), i == 0 || !(Self.isAlnum(p[i - 1]) || p[i - 1] >= 0x80) else { return nil }
        var e = i
        while e < p.count && Self.isLetter(p[e]) && e - i <= 16 { e += 1 }
        guard e - i >= 2, e - i <= 16, e == p.count || !(Self.isAlnum(p[e]) || p[e] >= 0x80),
              Self.cueLengths[Int(p[i] | 0x20) - 0x61] & (1 << UInt32(e - i)) != 0,
              let cue = Self.cue(UnsafeBufferPointer(rebasing: p[i..<e])) else { return nil }
        var k = e
        // `name` only as `my name is` (`if name is None` is code).
        if e - i == 4, p[i] | 0x20 == 0x6E {
            guard Self.endsWith(p, before: i, "my "), k + 3 < p.count, p[k] == 0x20, p[k + 1] == 0x69, p[k + 2] == 0x73 else { return nil }
            k += 3
        }
        if cue == .title, k < p.count, p[k] == 0x2E { k += 1 }
        if k < p.count, p[k] == 0x2C, cue == .signOff || cue == .greeting {
            k += 1
        } else if cue == .signOff {
            return nil
        }
        var words: [Range<Int>] = []
        let most = cue == .greeting || cue == .signOff ? 2 : 3
        while words.count < most, k + 1 < p.count, p[k] == 0x20 || (cue == .signOff && words.isEmpty && p[k] == 0x0A),
              let w = Self.nameWord(p, from: k + 1) {
            // A title after a greeting (`Dear Mr. Smith`) is read as the cue it is.
            guard !Self.notNames.contains(string(p, w)), Self.cue(UnsafeBufferPointer(rebasing: p[w])) != .title
            else { break }
            words.append(w)
            k = w.upperBound
        }
        guard let first = words.first, let last = words.last, words.count >= (cue == .person ? 2 : 1),
              first.lowerBound >= lowerBound else { return nil }
        // A name ends there: no further capitalized word (`Customer Success Portal Team`); a
        // role written as a label (`Guest Checkout Button`) is followed by punctuation or text.
        if k + 1 < p.count, p[k] == 0x20, Self.isUpper(p[k + 1]) { return nil }
        if cue == .person, Self.isUpper(p[i]), k == p.count || p[k] == 0x22 || p[k] == 0x0A { return nil }
        return valueMatch(p, first.lowerBound..<last.upperBound, .person, rule: .personName, reading, path)
    }

    /// A capitalized word of letters at `start` (`Fiona`, `O'Brien`, `Jean-Luc`, `Ødegaard`):
    /// a capital then at least one lowercase letter, so `API` and `OK` are none, and no `I'm`.
    private static func nameWord(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        guard start < p.count, isUpper(p[start]) || (p[start] >= 0xC3 && p[start] <= 0xC5),
              !(p[start] == 0x49 && start + 1 < p.count && p[start + 1] == 0x27) else { return nil }
        var k = start + 1
        var lower = 0
        while k < p.count {
            let c = p[k]
            if (c >= 0x61 && c <= 0x7A) || c >= 0x80 {
                lower += 1
            } else if !(isUpper(c) || ((c == 0x27 || c == 0x2D) && k + 1 < p.count && isLetter(p[k + 1]))) {
                break
            }
            k += 1
        }
        guard lower >= 1, k - start >= 2, k - start <= 24, k == p.count || !(isDigit(p[k]) || p[k] == 0x5F) else { return nil }
        return start..<k
    }

    private static func endsWith(_ p: UnsafeBufferPointer<UInt8>, before i: Int, _ suffix: StaticString) -> Bool {
        let n = suffix.utf8CodeUnitCount
        guard i >= n else { return false }
        return (0..<n).allSatisfy { p[i - n + $0] | 0x20 == suffix.utf8Start[$0] | 0x20 }
    }
}
