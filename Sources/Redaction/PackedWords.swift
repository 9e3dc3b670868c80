/// A word of 1 to 16 ASCII letters, lowercased, packed eight bytes to a number: a table key
/// built from the bytes in place, without a String.
struct PackedWord: Equatable {
    var low: UInt64 = 0, high: UInt64 = 0

    /// Nil for an empty word or one longer than 16 bytes.
    @inline(__always) init?(_ bytes: some Collection<UInt8>) {
        let n = bytes.count
        guard n > 0, n <= 16 else { return nil }
        var k: UInt64 = 0
        for c in bytes {
            let v = UInt64(c | 0x20) &<< ((k & 7) &* 8)
            if k < 8 { low |= v } else { high |= v }
            k &+= 1
        }
    }

    /// A word of up to eight lowercase letters already packed, as a scan packs it while it reads.
    init(low: UInt64) { self.low = low }

    var length: Int {
        (8 - low.leadingZeroBitCount / 8) + (high == 0 ? 0 : 8 - high.leadingZeroBitCount / 8)
    }

    /// The word's first two bytes (lowercase).
    var start: (UInt8, UInt8) { (UInt8(low & 0xFF), UInt8(low >> 8 & 0xFF)) }
}

/// A fixed set of words, each with a value, in an open-addressing table (a multiplicative hash's
/// top bits, linear probing, at most half full): a lookup is a multiply and a compare or two,
/// where a `Set`'s or a `Dictionary`'s `Hasher` cost more than the scans that look words up
/// (a name cue at every candidate word, each word of a possible seed phrase).
struct PackedWordTable<Value> {
    private var words: [PackedWord]  // `low == 0`: an empty slot (no word packs to 0)
    private var values: [Value?]
    private let shift: UInt64
    /// The words in the table, each once.
    private(set) var members: [PackedWord] = []

    init(_ entries: [(word: String, value: Value)]) {
        var capacity = 16
        while capacity < 2 * entries.count { capacity *= 2 }
        words = [PackedWord](repeating: PackedWord(low: 0), count: capacity)
        values = [Value?](repeating: nil, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for (word, value) in entries {
            guard let key = PackedWord(word.utf8) else { preconditionFailure("\(word) is no word of 1 to 16 letters") }
            var slot = self.slot(of: key)
            while words[slot].low != 0 && words[slot] != key { slot = (slot + 1) & (capacity - 1) }
            if words[slot].low == 0 { members.append(key) }
            words[slot] = key
            values[slot] = value
        }
    }

    @inline(__always) private func slot(of word: PackedWord) -> Int {
        Int(truncatingIfNeeded: ((word.low ^ word.high &* 0xC2B2_AE3D_27D4_EB4F) &* 0x9E37_79B9_7F4A_7C15) &>> shift)
    }

    /// The value of `word`, or nil when it is not in the table.
    @inline(__always) func value(of word: PackedWord) -> Value? {
        words.withUnsafeBufferPointer { w in
            let mask = w.count - 1
            var slot = self.slot(of: word)
            while w[slot].low != 0 {
                if w[slot] == word { return values[slot] }
                slot = (slot &+ 1) & mask
            }
            return nil
        }
    }
}

extension PackedWordTable where Value == Void {
    init(_ words: some Sequence<String>) { self.init(words.map { ($0, ()) }) }

    @inline(__always) func contains(_ word: PackedWord) -> Bool { value(of: word) != nil }
}
extension PackedWordTable: Sendable where Value: Sendable {}
