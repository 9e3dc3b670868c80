/// Text of only lowercase letters and spaces (a quarter of a typical body's JSON strings, and
/// half of their bytes, are such prose) needs no scan unless it holds a trigger word: every
/// detector but a few needs a digit, a capital or a symbol (`eyJ`, `@ : = . < + ( % - _`, ipv6's
/// two colons), and the suspect scan a digit or a capital (`ByteShape.mayHoldSuspect`). The
/// triggers are the schemes `bearer` and `basic` (a credential of lowercase letters may follow
/// them) and the key formats whose prefix and alphabet are lowercase letters (`dapi` and 32 of
/// a-f), but those whose key needs a digit or a capital (`cio`). `LowercaseProseTests` holds
/// the pair table and the detectors to this.
struct LowercaseProse {
    /// The trigger words.
    let triggers: [[UInt8]]
    /// The triggers' first bytes, each repeated in all eight bytes of a word (up to two; a third
    /// would make `mayHoldTrigger` answer true for any text).
    private let start0: UInt64, start1: UInt64
    /// The triggers' first four bytes, little-endian (up to four).
    private let head0: UInt32, head1: UInt32, head2: UInt32, head3: UInt32
    /// Set when the triggers do not fit the fields above: every text is then scanned.
    let alwaysScan: Bool

    static func triggers(from formats: [KeyFormat]) -> [[UInt8]] {
        let isLower: (UInt8) -> Bool = { $0 >= 0x61 && $0 <= 0x7A }
        let lowercase = formats.filter { format in
            format.prefix.allSatisfy(isLower) && format.mix == .any && (0x61...0x7A).contains(where: format.alphabet.contains)
                && (format.second.map { isLower($0.separator) } ?? true)
        }
        return [Array("bearer".utf8), Array("basic".utf8)] + lowercase.map(\.prefix)
    }

    init(triggers: [[UInt8]] = Self.triggers(from: KeyFormats.all)) {
        self.triggers = triggers
        let starts = Array(Set(triggers.map { $0[0] })).sorted()
        let heads = triggers.map { word -> UInt32 in
            word.count < 4 ? 0 : UInt32(word[0]) | UInt32(word[1]) << 8 | UInt32(word[2]) << 16 | UInt32(word[3]) << 24
        }
        alwaysScan = starts.count > 2 || heads.count > 4 || triggers.contains { $0.count < 4 }
        let splat = { (b: UInt8) in 0x0101_0101_0101_0101 &* UInt64(b) }
        start0 = splat(starts.first ?? 0)
        start1 = splat(starts.count > 1 ? starts[1] : starts.first ?? 0)
        // Unused heads repeat the first: a duplicate compare, never a false "no".
        let h = heads + Array(repeating: heads.first ?? 0, count: max(0, 4 - heads.count))
        (head0, head1, head2, head3) = (h[0], h[1], h[2], h[3])
    }

    /// Whether `p` may hold a trigger: whether the first four bytes of one occur in it. Eight
    /// bytes a step to the next possible first byte (`b` and `d` are common letters, so each
    /// candidate costs a compare of four bytes).
    @inline(__always) func mayHoldTrigger(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        if alwaysScan { return true }
        guard p.count >= 4, let base = p.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        let n = p.count
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func isHead(at k: Int) -> Bool {
            let h = raw.loadUnaligned(fromByteOffset: k, as: UInt32.self)
            return h == head0 || h == head1 || h == head2 || h == head3
        }
        var i = 0
        while i + 8 <= n {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let x0 = w ^ start0, x1 = w ^ start1
            // Lanes after a true one may be marked by a borrow: each is compared anyway.
            var m = ((x0 &- ones) & ~x0 | (x1 &- ones) & ~x1) & high
            while m != 0 {
                let k = i + m.trailingZeroBitCount >> 3
                if k + 4 <= n && isHead(at: k) { return true }
                m &= m &- 1
            }
            i += 8
        }
        while i + 4 <= n {
            if isHead(at: i) { return true }
            i += 1
        }
        return false
    }
}
