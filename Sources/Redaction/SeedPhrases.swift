// Wallet seed phrases (BIP-39): twelve or more words of its list in a row, wherever they stand
// (a bare JSON string is lowercase prose the text scan skips, so it is looked at here too).

extension RedactionEngine {
    /// The fewest words a seed phrase has.
    static let seedPhraseWords = 12

    /// Runs of at least `seedPhraseWords` whole words of the BIP-39 list, one space, tab or line
    /// break apart. One pass: each word of lowercase letters is packed into a number as it is
    /// read, and a word of 3 to 8 letters is looked up in `SeedWords`' table.
    static func seedPhrases(in p: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        let minimum = seedPhraseWords
        guard p.count >= minimum * 4 - 1, let base = p.baseAddress else { return [] }
        var runs: [Range<Int>] = []
        var runStart = 0, runEnd = 0, count = 0
        let n = p.count
        var i = 0
        while i < n {
            let c = base[i]
            guard c &- 0x61 < 26 else { i &+= 1; continue }
            var e = i &+ 1
            var key = UInt64(c)
            while e < n && base[e] &- 0x61 < 26 {
                if e &- i < 8 { key |= UInt64(base[e]) &<< UInt64((e &- i) &* 8) }
                e &+= 1
            }
            let length = e &- i
            let listed = length >= 3 && length <= 8 && (i == 0 || !isSeedWordNeighbour(base[i &- 1]))
                && (e == n || !isSeedWordNeighbour(base[e])) && SeedWords.table.contains(PackedWord(low: key))
            if listed && count > 0 && runEnd == i &- 1 && isSeedSeparator(base[i &- 1]) {
                count &+= 1
            } else {
                if count >= minimum { runs.append(runStart..<runEnd) }
                count = listed ? 1 : 0
                runStart = i
            }
            runEnd = e
            i = e
        }
        if count >= minimum { runs.append(runStart..<runEnd) }
        return runs
    }

    @inline(__always) private static func isSeedWordNeighbour(_ b: UInt8) -> Bool {
        isAlnum(b) || b == 0x2D || b == 0x5F || b >= 0x80
    }

    @inline(__always) private static func isSeedSeparator(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x09 }

    /// How many spaces (and, with `lines`, line breaks) `p` has, eight bytes a step: the test
    /// that keeps the word scan off text that has no room for a seed phrase.
    static func separatorCount(_ p: UnsafeBufferPointer<UInt8>, lines: Bool) -> Int {
        guard let base = p.baseAddress else { return 0 }
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        /// 0x80 in each byte of `w` that is zero.
        @inline(__always) func zeros(_ w: UInt64) -> UInt64 { ~(((w & low) &+ low) | w | low) }
        var count = 0, i = 0
        while i + 8 <= p.count {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            var hits = zeros(w ^ 0x2020_2020_2020_2020)
            if lines { hits |= zeros(w ^ 0x0A0A_0A0A_0A0A_0A0A) }
            count &+= hits.nonzeroBitCount
            i &+= 8
        }
        while i < p.count {
            if base[i] == 0x20 || (lines && base[i] == 0x0A) { count &+= 1 }
            i &+= 1
        }
        return count
    }

    /// A text the scan reads (`scanBytes`): its seed phrases, when it has room for one.
    static func seedPhrasesInText(_ p: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        guard p.count >= seedPhraseWords * 4 - 1, separatorCount(p, lines: true) >= seedPhraseWords - 1 else { return [] }
        return seedPhrases(in: p)
    }

    /// A string of lowercase words and spaces that the scan skips (`LowercaseProse`), replaced
    /// when it is a seed phrase as a whole (12, 15, 18, 21 or 24 words, the lengths BIP-39
    /// has); nil otherwise. The words are looked up until the first one off the list.
    func replacingSeedPhrase(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> [UInt8]? {
        guard flags.has(.keyFormats), p.count >= Self.seedPhraseWords * 4 - 1, p.count <= 24 * 9 else { return nil }
        var start = 0, words = 0
        for k in 0...p.count where k == p.count || p[k] == 0x20 {
            guard (3...8).contains(k - start), let word = PackedWord(p[start..<k]), SeedWords.table.contains(word) else { return nil }
            words += 1
            start = k + 1
        }
        guard words >= Self.seedPhraseWords, words <= 24, words % 3 == 0 else { return nil }
        guard let r = replaceSecret(string(p, 0..<p.count), .keyFormats, reading, path, length: p.count) else { return nil }
        return Array(r.utf8)
    }
}
