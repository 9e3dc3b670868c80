/// Whether bytes hold ASCII digits and capitals, learned by a caller's word-at-a-time pass, so
/// that a scan which needs them can be skipped: most long JSON strings are lowercase words.
struct ByteShape {
    var hasDigit: Bool
    var hasUpper: Bool
    /// Whether any byte is other than a lowercase ASCII letter or a space.
    var hasOther: Bool

    /// Nothing known: every scan runs.
    static let unknown = ByteShape(hasDigit: true, hasUpper: true)

    init(hasDigit: Bool, hasUpper: Bool, hasOther: Bool = true) {
        self.hasDigit = hasDigit
        self.hasUpper = hasUpper
        self.hasOther = hasOther
    }

    /// From `bits` ORed together over words: capitals at 0x80 of a byte, digits at 0x40, any
    /// byte but a lowercase letter or a space at 0x20.
    init(bits: UInt64) {
        hasDigit = bits & 0x4040_4040_4040_4040 != 0
        hasUpper = bits & 0x8080_8080_8080_8080 != 0
        hasOther = bits & 0x2020_2020_2020_2020 != 0
    }

    /// `SuspectScanner.scan` finds nothing without them: an entropy value needs two digits, a
    /// credential prefix's tail a digit or a capital, a JWT `eyJ`, a key block `BEGIN`.
    var mayHoldSuspect: Bool { hasDigit || hasUpper }

    /// 0x80 in each byte of the little-endian word `w` that is not an ASCII letter or digit (so
    /// the lowest one ends a word): a word's end found eight bytes a step, where a loop per byte
    /// mispredicted its exit at nearly every word of text.
    @inline(__always) static func nonAlnumMask(_ w: UInt64) -> UInt64 {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = w & ~high
        // Lowercase folded onto capitals (0x20 cleared) for the letter range.
        let folded = low & ~(ones &* 0x20)
        let digit = (low &+ ones &* (0x80 - 0x30)) & ~(low &+ ones &* (0x80 - 0x3A))
        let letter = (folded &+ ones &* (0x80 - 0x41)) & ~(folded &+ ones &* (0x80 - 0x5B))
        // Bytes of 0x80 and above are neither.
        return ~((digit | letter) & ~w) & high
    }

    /// Per byte of the little-endian word `w`: 0x80 for a capital A-Z, 0x40 for a digit, 0x20
    /// for any byte that is no lowercase a-z and no space.
    @inline(__always) static func bits(_ w: UInt64) -> UInt64 {
        let high: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Seven bits a byte, so that no sum below carries into the next byte.
        let low = w & ~high
        let digit = (low &+ ones &* (0x80 - 0x30)) & ~(low &+ ones &* (0x80 - 0x3A))
        let upper = (low &+ ones &* (0x80 - 0x41)) & ~(low &+ ones &* (0x80 - 0x5B))
        let lower = (low &+ ones &* (0x80 - 0x61)) & ~(low &+ ones &* (0x80 - 0x7B))
        let spaceBytes = low ^ (ones &* 0x20)
        let space = ~(spaceBytes &+ ones &* 0x7F) & high  // exactly 0x20 in the low seven bits
        // Bytes of 0x80 and above are neither, and are other.
        let ascii = ~w & high
        let other = ~((lower | space) & ascii) & high
        return (upper & ascii) | ((digit & ascii) >> 1) | (other >> 2)
    }
}

