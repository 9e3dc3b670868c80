/// Which word lengths, and bytes after them, the forms of a `KnownValueIndex` start with
/// (`KnownValueIndex.mayStart`).
struct WordShapes {
    /// 8 x 256 bits: row L, bit b: a form starts with L word bytes, then b; row 0, bit 0: a form
    /// starts with 8 or more word bytes.
    private var bits = [UInt64](repeating: 0, count: WordShapes.words)

    mutating func insert(_ form: UnsafeBufferPointer<UInt8>) {
        var length = 0
        while length < 8 && length < form.count && RedactionEngine.isAlnum(form[length]) { length += 1 }
        // A form that starts with a symbol is found at that symbol, not at a word start.
        guard length > 0 else { return }
        guard length < 8 else { bits[0] |= 1; return }
        // Forms are at least 8 bytes long, so a byte follows the word.
        let b = Int(form[length])
        bits[length * 4 + b >> 6] |= 1 << UInt64(b & 63)
    }

    mutating func formUnion(_ other: WordShapes) {
        for k in bits.indices { bits[k] |= other.bits[k] }
    }

    static let words = 32

    func copy(to words: UnsafeMutablePointer<UInt64>) {
        for k in bits.indices { words[k] = bits[k] }
    }

    @inline(__always)
    static func contains(_ bits: UnsafeMutablePointer<UInt64>, _ length: Int, _ next: UInt8?) -> Bool {
        if length >= 8 { return bits[0] & 1 != 0 }
        guard let next else { return false }
        let b = Int(next)
        return bits[length &* 4 &+ b >> 6] & (1 << UInt64(b & 63)) != 0
    }
}

@inline(__always)
func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
    var k = 0
    while k + 8 <= n {
        if UnsafeRawPointer(a + k).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(b + k).loadUnaligned(as: UInt64.self) {
            return false
        }
        k += 8
    }
    while k < n {
        if a[k] != b[k] { return false }
        k += 1
    }
    return true
}
