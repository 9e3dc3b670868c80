// Incremental UTF-8 validation (RFC 3629 §4), for text messages that arrive in pieces.

/// Validates UTF-8 fed in arbitrary pieces: rejects overlong forms, surrogates (U+D800...DFFF)
/// and code points above U+10FFFF, as Unicode's "well-formed UTF-8" table requires.
struct UTF8Validator {
    /// Continuation bytes still expected for the current sequence.
    private var needed = 0
    /// Allowed range of the next continuation byte (narrower right after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    /// False once an invalid byte was seen.
    private(set) var isValidSoFar = true

    /// Valid and not inside a multi-byte sequence.
    var isComplete: Bool { isValidSoFar && needed == 0 }

    mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard isValidSoFar else { return }
        let n = bytes.count
        var i = 0
        while i < n {
            if needed == 0 {
                // ASCII fast path, 8 bytes at a time.
                while i + 8 <= n && bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                }
                guard i < n else { return }
                let b = bytes[i]
                i += 1
                switch b {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: needed = 1; lower = 0x80; upper = 0xBF
                case 0xE0: needed = 2; lower = 0xA0; upper = 0xBF
                case 0xE1...0xEC, 0xEE...0xEF: needed = 2; lower = 0x80; upper = 0xBF
                case 0xED: needed = 2; lower = 0x80; upper = 0x9F
                case 0xF0: needed = 3; lower = 0x90; upper = 0xBF
                case 0xF1...0xF3: needed = 3; lower = 0x80; upper = 0xBF
                case 0xF4: needed = 3; lower = 0x80; upper = 0x8F
                default: isValidSoFar = false; return
                }
            } else {
                let b = bytes[i]
                i += 1
                guard b >= lower && b <= upper else { isValidSoFar = false; return }
                needed -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
    }
}
