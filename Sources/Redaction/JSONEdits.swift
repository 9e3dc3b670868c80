import HAR

// What a JSON body's rewrite produces: its edits, and the string literals it writes.

/// Replacements in order: ranges of the input, and their new bytes one after another in one
/// buffer. An array per replacement (and another per quoted string) was two allocations, and a
/// release each when the list was dropped, for every value a body had redacted.
struct JSONEdits {
    struct Edit {
        let range: Range<Int>
        /// Where this replacement's bytes end in `bytes`; they start where the previous one's end.
        let end: Int
    }
    private(set) var edits: [Edit] = []
    var bytes: [UInt8] = []

    var isEmpty: Bool { edits.isEmpty }
    var count: Int { edits.count }

    /// Records that the bytes appended to `bytes` since the last edit replace `range`.
    mutating func close(_ range: Range<Int>) {
        edits.append(Edit(range: range, end: bytes.count))
    }

    /// Calls `body` with each replaced range and its new bytes, in order.
    func forEach(_ body: (Range<Int>, UnsafeBufferPointer<UInt8>) -> Void) {
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for edit in edits {
                body(edit.range, UnsafeBufferPointer(rebasing: all[start..<edit.end]))
                start = edit.end
            }
        }
    }
}

extension JSONRewriter {
    /// `bytes` as a JSON string literal: quotes, backslashes and control characters escaped,
    /// everything else (UTF-8 included) as is. A wrap of pass 1 (text to be base64- or
    /// percent-encoded in pass 2) is copied as it is: its text is escaped by its encoding, not here.
    static func quoted(_ bytes: [UInt8], syntax: MarkerSyntax) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        bytes.withUnsafeBufferPointer { quote($0, syntax: syntax, into: &out) }
        return out
    }

    /// Appends `p` to `out` as `quoted` writes it. (No `reserveCapacity` here: on a buffer
    /// shared by many strings it would reallocate to the exact size every time.)
    static func quote(_ p: UnsafeBufferPointer<UInt8>, syntax: MarkerSyntax, into out: inout [UInt8]) {
        out.append(0x22)
        let hex: StaticString = "0123456789abcdef"
        let hexBytes = hex.utf8Start
        do {
            var i = 0
            while i < p.count {
                // Bytes that need nothing are copied a run at a time.
                var run = i
                while run < p.count && !needsQuoting(p[run]) { run += 1 }
                if run > i {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[i..<run]))
                    i = run
                    if i == p.count { break }
                }
                let b = p[i]
                if b == 0xEE, let end = syntax.wrapEnd(at: i, in: p) {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[i..<end]))
                    i = end
                    continue
                }
                i += 1
                let escape: UInt8
                switch b {
                case 0x22: escape = 0x22
                case 0x5C: escape = 0x5C
                case 0x0A: escape = 0x6E
                case 0x0D: escape = 0x72
                case 0x09: escape = 0x74
                case 0x08: escape = 0x62
                case 0x0C: escape = 0x66
                case 0..<0x20, 0x7F:
                    out.append(0x5C); out.append(0x75); out.append(0x30); out.append(0x30)
                    out.append(hexBytes[Int(b >> 4)]); out.append(hexBytes[Int(b & 15)])
                    continue
                default:
                    out.append(b)
                    continue
                }
                out.append(0x5C)
                out.append(escape)
            }
        }
        out.append(0x22)
    }

    /// Bytes `quoted` does not copy as they are: quotes, backslashes, control characters, DEL,
    /// and 0xEE (the first byte of a marker, whose wraps are copied whole).
    /// Compared, not looked up: a table is a global, and its lazy initialization check was a
    /// `swift_once` call per quoted string.
    @inline(__always) private static func needsQuoting(_ b: UInt8) -> Bool {
        b < 0x20 || b == 0x22 || b == 0x5C || b == 0x7F || b == 0xEE
    }
}
