import Dispatch
import HAR
import TextEncodings

/// Every value pass 1 replaced anywhere in the file, with its placeholder, looked for everywhere
/// in pass 2: a token a login response returned is found again bare in a later (or earlier) path
/// segment, a body under an innocent key, a header, a WebSocket message, percent-encoded, as
/// base64 or base64url, or JSON-escaped.
///
/// A match must start where a word starts (after a non-alphanumeric byte) and, when the value
/// ends in a letter or digit, end where a word ends: `abc123xyz789` is found in
/// `/sessions/abc123xyz789/`, not in `xabc123xyz789`.
///
/// Lookups cost one load and one test per candidate position: the first 8 bytes of every form,
/// hashed into a filter of up to 4 Mbit (two bits per form in one word), then an open-addressing
/// table of candidates. Forms live in one byte arena, so a file with 300,000 secrets costs a few
/// tens of MB, not a String each. A form's replacement (its placeholder, encoded as the form is)
/// is made only when the form is found: most are never met again.
final class KnownValueIndex: @unchecked Sendable {
    /// Shorter values are not chased bare: a numeric id or a short word also occurs by chance.
    static let minimumLength = 8
    /// At most 4 Mbit (512 KiB), with two bits per form in one 64-bit word: 3.7% false positives
    /// with 450,000 forms, where one bit in 1 MiB gave 5.4%, and half the size stays in a 1 MiB L2
    /// cache (pass 2 tests the filter at every word start; its misses were most of that scan).
    /// Smaller files get about 16 bits per form (at least 1 Kbit), so redacting a small HAR does
    /// not clear half a megabyte.
    private static let maximumFilterBits = 22
    private let filterBits: Int

    private let filter: UnsafeMutablePointer<UInt64>
    /// One bit per pair of first bytes of some form (8 KiB, in the L1 cache): most word starts of
    /// a file (English words, punctuation) fail here, before the filter's cache miss.
    private let startPairs: UnsafeMutablePointer<UInt64>
    /// For a form that starts with a word of L < 8 letters or digits, bit (L, b) of the byte b
    /// after that word; bit (0, 0) when some form starts with a word of 8 or more (256 bytes, in
    /// the L1 cache). A text's short word is a candidate only if some form starts with a word of
    /// its length followed by the byte after it: most words of text (`the `, `name",`) are
    /// none, and are passed over before the filter's cache miss.
    private let wordShapes: UnsafeMutablePointer<UInt64>
    private var slotKeys: UnsafeMutablePointer<UInt64>
    private var slotHeads: UnsafeMutablePointer<Int32>
    private var slotMask = 0
    /// Probes wrap within `probeMask + 1` slots (`nextSlot`).
    private var probeMask = 0
    private var candidates: [Candidate] = []
    private var patterns: [UInt8] = []
    /// The placeholder of the `k`th value given to `init`.
    private let placeholder: @Sendable (Int) -> String
    private(set) var isEmpty = true

    struct Candidate {
        var patternStart: Int32
        var patternCount: Int32
        /// Which value given to `init` the form encodes, and how.
        var source: Int32
        var form: Form
        var next: Int32
    }

    /// How a form encodes its value; its replacement encodes the placeholder the same way.
    enum Form: UInt8 {
        /// As it is, or JSON with `\/` (the placeholder has no '/').
        case plain
        /// Percent-encoded, with upper- or lowercase escapes.
        case percent
        case base64, base64Unpadded, base64URL, base64URLUnpadded

        func encode(_ placeholder: String) -> [UInt8] {
            let bytes = Array(placeholder.utf8)
            switch self {
            case .plain: return bytes
            case .percent: return URLParts.percentEncodedQueryValue(bytes)
            case .base64, .base64Unpadded, .base64URL, .base64URLUnpadded:
                var out: [UInt8] = []
                bytes.withUnsafeBufferPointer { Base64.append($0, to: &out) }
                if self == .base64Unpadded || self == .base64URLUnpadded {
                    while out.last == 0x3D { out.removeLast() }
                }
                if self == .base64URL || self == .base64URLUnpadded {
                    for k in out.indices { out[k] = out[k] == 0x2B ? 0x2D : (out[k] == 0x2F ? 0x5F : out[k]) }
                }
                return out
            }
        }
    }

    /// Whether a value is worth chasing bare: long enough, and not a plain word or number that
    /// occurs by coincidence (a password `password` must not rename every `"password"` key).
    static func isIndexable(_ value: String) -> Bool {
        var copy = value
        let plausible = copy.withUTF8 { bytes -> Bool in
            guard bytes.count >= minimumLength, bytes.count <= 16_384 else { return false }
            var letters = 0, digits = 0, numberish = 0
            for b in bytes {
                if b < 0x20 && b != 0x0A && b != 0x0D && b != 0x09 { return false }
                if b == 0x22 || b == 0x5C || b == 0xEE { return false }  // quotes, backslashes, markers
                if b | 0x20 >= 0x61 && b | 0x20 <= 0x7A { letters += 1 }
                if b >= 0x30 && b <= 0x39 { digits += 1 }
                if b == 0x2E || b == 0x2D || b == 0x2B || b | 0x20 == 0x65 { numberish += 1 }
            }
            if letters == bytes.count && bytes.count < 20 { return false }
            // Numbers: a bare match could sit inside a JSON number, and ids collide. Digit groups
            // joined by hyphens or dots are none (an SSN, a phone, a card, an IPv4 address).
            return digits + numberish != bytes.count || isSeparatedDigitGroups(bytes)
        }
        return plausible && !Placeholder.isPlaceholder(value)
    }

    /// Digit groups joined by at least two hyphens (`078-05-1120`, `415-555-0100`) or three dots
    /// (`203.0.113.7`): no JSON number has those, and a coincidence with another value is rare.
    static func isSeparatedDigitGroups(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, let last = bytes.last, first &- 0x30 < 10, last &- 0x30 < 10 else { return false }
        var hyphens = 0, dots = 0, previousWasDigit = false
        for b in bytes {
            if b &- 0x30 < 10 { previousWasDigit = true; continue }
            guard previousWasDigit else { return false }
            if b == 0x2D { hyphens += 1 } else if b == 0x2E { dots += 1 } else { return false }
            previousWasDigit = false
        }
        return (hyphens >= 2 && dots == 0) || (dots == 3 && hyphens == 0)
    }

    /// Builds the index of `pairs` (value, placeholder), in the order given, with their encoded
    /// forms: percent-encoded (upper- and lowercase escapes), base64 and base64url (padded and
    /// not), and JSON with `\/`.
    convenience init(pairs: [(value: String, placeholder: String)]) {
        self.init(count: pairs.count, value: { pairs[$0].value }, placeholder: { pairs[$0].placeholder })
    }

    /// The same for `count` values, the `k`th given by `value(k)` (called on several threads at
    /// once, during `init`) and its placeholder by `placeholder(k)` (kept, and called when a form
    /// of the value is found).
    init(count: Int, value: (Int) -> String, placeholder: @escaping @Sendable (Int) -> String) {
        self.placeholder = placeholder
        // About five forms per value (bare, percent, base64, base64url, `\/`).
        let expectedForms = max(1, count * 5)
        filterBits = min(Self.maximumFilterBits, max(10, Int.bitWidth - (expectedForms * 16).leadingZeroBitCount))
        filter = .allocate(capacity: (1 << filterBits) / 64)
        filter.initialize(repeating: 0, count: (1 << filterBits) / 64)
        startPairs = .allocate(capacity: 1024)
        startPairs.initialize(repeating: 0, count: 1024)
        // The forms, computed in parallel chunks, then joined in order (so the index is the same on
        // every run).
        let chunkCount = max(1, min(64, count / 1024))
        var chunks = [Forms](repeating: Forms(), count: chunkCount)
        withoutActuallyEscaping(value) { value in
            let source = UncheckedValues(value: value)
            chunks.withUnsafeMutableBufferPointer { buffer in
                let out = UncheckedBuffer(buffer)
                DispatchQueue.concurrentPerform(iterations: chunkCount) { c in
                    let range = (count * c / chunkCount)..<(count * (c + 1) / chunkCount)
                    var forms = Forms()
                    for k in range { forms.add(value: source.value(k), source: Int32(k)) }
                    out.buffer[c] = forms
                }
            }
        }
        var shapes = WordShapes()
        for chunk in chunks { shapes.formUnion(chunk.wordShapes) }
        wordShapes = .allocate(capacity: WordShapes.words)
        shapes.copy(to: wordShapes)
        // The chunks joined in order, each copied into place by its own thread (joined on one,
        // this was most of the index's sequential time).
        var formStarts = [0], patternStarts = [0]
        for chunk in chunks {
            formStarts.append(formStarts.last! + chunk.forms.count)
            patternStarts.append(patternStarts.last! + chunk.patterns.count)
        }
        let formCount = formStarts.last!, patternCount = patternStarts.last!
        let joinedChunks = chunks
        var joinedForms: [Candidate] = []
        let patterns = [UInt8](unsafeUninitializedCapacity: patternCount) { patternBuffer, patternsDone in
            joinedForms = [Candidate](unsafeUninitializedCapacity: formCount) { formBuffer, formsDone in
                let out = UncheckedJoin(forms: formBuffer, patterns: patternBuffer)
                DispatchQueue.concurrentPerform(iterations: joinedChunks.count) { [formStarts, patternStarts] c in
                    let chunk = joinedChunks[c], p = Int32(patternStarts[c])
                    chunk.forms.withUnsafeBufferPointer { source in
                        for (k, form) in source.enumerated() {
                            var moved = form
                            moved.patternStart += p
                            (out.forms.baseAddress! + formStarts[c] + k).initialize(to: moved)
                        }
                    }
                    chunk.patterns.withUnsafeBufferPointer { source in
                        guard let from = source.baseAddress else { return }
                        (out.patterns.baseAddress! + patternStarts[c]).initialize(from: from, count: source.count)
                    }
                }
                formsDone = formCount
            }
            patternsDone = patternCount
        }
        chunks = []
        var capacity = 16
        while capacity < formCount * 2 { capacity <<= 1 }
        // Filled by the threads that insert, each its own half (`insert`'s halves below).
        slotKeys = .allocate(capacity: capacity)
        slotHeads = .allocate(capacity: capacity)
        slotMask = capacity - 1
        // Large tables are built by two threads, each owning half the slots (and half the filter
        // words): a probe wraps inside its half, so the halves never meet.
        let halves = formCount >= Self.parallelInsertForms ? 2 : 1
        probeMask = capacity / halves - 1
        self.patterns = patterns
        guard formCount > 0 else {
            slotKeys.initialize(repeating: 0, count: capacity)
            slotHeads.initialize(repeating: -1, count: capacity)
            return
        }
        isEmpty = false
        candidates = joinedForms
        joinedForms = []
        let filterWordBits = filterBits - 6
        patterns.withUnsafeBytes { raw in
            let arena = UncheckedBytes(bytes: raw)
            candidates.withUnsafeMutableBufferPointer { candidateBuffer in
                let table = UncheckedTable(candidates: candidateBuffer, slotKeys: slotKeys, slotHeads: slotHeads, filter: filter,
                                           startPairs: startPairs)
                DispatchQueue.concurrentPerform(iterations: halves) { [capacity] half in
                    let candidates = table.candidates, slotKeys = table.slotKeys, slotHeads = table.slotHeads
                    let arena = arena.bytes
                    let slice = half * (capacity / halves)..<(half + 1) * (capacity / halves)
                    (slotKeys + slice.lowerBound).initialize(repeating: 0, count: slice.count)
                    (slotHeads + slice.lowerBound).initialize(repeating: -1, count: slice.count)
                    for index in 0..<candidates.count {
                        let pCount = candidates[index].patternCount
                        let key = arena.loadUnaligned(fromByteOffset: Int(candidates[index].patternStart), as: UInt64.self)
                        let (word, bits) = filterProbe(key)
                        if halves == 1 || word >> (filterWordBits - 1) == half { table.filter[word] |= bits }
                        if half == 0 {
                            let pair = Int(key & 0xFFFF)
                            table.startPairs[pair >> 6] |= 1 << UInt64(pair & 63)
                        }
                        var slot = Int(truncatingIfNeeded: Self.slotHash(key)) & slotMask
                        if halves == 2 && (slot > probeMask) != (half == 1) { continue }
                        while slotHeads[slot] >= 0 && slotKeys[slot] != key { slot = nextSlot(slot) }
                        let index = Int32(index)
                        if slotHeads[slot] < 0 {
                            slotKeys[slot] = key
                            slotHeads[slot] = index
                            continue
                        }
                        // Longest first, so the first candidate that matches at a position is the longest;
                        // equal lengths keep the order given.
                        if candidates[Int(slotHeads[slot])].patternCount < pCount {
                            candidates[Int(index)].next = slotHeads[slot]
                            slotHeads[slot] = index
                            continue
                        }
                        var c = Int(slotHeads[slot])
                        while candidates[c].next >= 0 && candidates[Int(candidates[c].next)].patternCount >= pCount {
                            c = Int(candidates[c].next)
                        }
                        candidates[Int(index)].next = candidates[c].next
                        candidates[c].next = index
                    }
                }
            }
        }
    }

    /// Forms from which two threads build the table.
    static let parallelInsertForms = 65_536

    /// The next slot of a probe: linear, wrapping inside the half (or whole) table it started in.
    @inline(__always) private func nextSlot(_ slot: Int) -> Int {
        (slot & ~probeMask) | ((slot &+ 1) & probeMask)
    }

    private struct UncheckedValues: @unchecked Sendable {
        let value: (Int) -> String
    }

    private struct UncheckedJoin: @unchecked Sendable {
        let forms: UnsafeMutableBufferPointer<Candidate>
        let patterns: UnsafeMutableBufferPointer<UInt8>
    }

    private struct UncheckedBytes: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
    }

    private struct UncheckedTable: @unchecked Sendable {
        let candidates: UnsafeMutableBufferPointer<Candidate>
        let slotKeys: UnsafeMutablePointer<UInt64>
        let slotHeads: UnsafeMutablePointer<Int32>
        let filter: UnsafeMutablePointer<UInt64>
        let startPairs: UnsafeMutablePointer<UInt64>
    }

    /// The forms of some values: percent-encoded (upper- and lowercase escapes), base64 and
    /// base64url (padded and not), and JSON with `\/`, in one arena.
    private struct Forms {
        var forms: [Candidate] = []
        var patterns: [UInt8] = []
        var wordShapes = WordShapes()
        /// The value whose forms are being added.
        var source: Int32 = 0

        /// Records a form whose bytes are already in the arena (forms may share bytes: an
        /// unpadded base64 form is a prefix of the padded one).
        mutating func record(_ p: Int, _ pc: Int, _ form: Form) {
            guard pc >= KnownValueIndex.minimumLength else { return }
            forms.append(Candidate(patternStart: Int32(p), patternCount: Int32(pc), source: source, form: form, next: -1))
            patterns.withUnsafeBufferPointer { wordShapes.insert(UnsafeBufferPointer(rebasing: $0[p..<p + pc])) }
        }

        mutating func add(_ pattern: UnsafeBufferPointer<UInt8>, _ form: Form) {
            guard pattern.count >= KnownValueIndex.minimumLength else { return }
            let p = patterns.count
            patterns.append(contentsOf: pattern)
            record(p, pattern.count, form)
        }

        mutating func add(_ pattern: [UInt8], _ form: Form) {
            pattern.withUnsafeBufferPointer { add($0, form) }
        }

        mutating func add(value: String, source: Int32) {
            // Spaces around a value (a broken string's ` 141550>`) are not chased: a match starts
            // at a word start, so only the forms that encode the space (`%20141550%3E`) would be
            // found, and only in some runs.
            var value = KnownValueIndex.trimmingSpaces(value)
            guard KnownValueIndex.isIndexable(value) else { return }
            self.source = source
            value.withUTF8 { add(forms: $0) }
        }

        /// Written straight into the arena: this runs for every value chased in the file.
        private mutating func add(forms v: UnsafeBufferPointer<UInt8>) {
            add(v, .plain)
            if v.contains(where: { !RedactionEngine.isAlnum($0) && !URLParts.queryKept[Int($0)] }) {
                let query = URLParts.percentEncodedQueryValue(Array(v))
                add(query, .percent)
                let lower = KnownValueIndex.lowercasedEscapes(query)
                if lower != query { add(lower, .percent) }
            }
            // Base64: the padded form, and the unpadded one as its prefix (a value with no padding
            // is replaced by the placeholder's base64 without).
            let p0 = patterns.count
            Base64.append(v, to: &patterns)
            let pc = patterns.count - p0
            let padding = (3 - v.count % 3) % 3
            if padding > 0 { record(p0, pc, .base64) }
            record(p0, pc - padding, .base64Unpadded)
            // Base64url, when it differs: a copy with '-' and '_' for '+' and '/'.
            let differs = patterns.withUnsafeBufferPointer { b in
                UnsafeBufferPointer(rebasing: b[p0..<p0 + pc]).contains { $0 == 0x2B || $0 == 0x2F }
            }
            if differs {
                let p1 = patterns.count
                patterns.append(contentsOf: repeatElement(0, count: pc))
                patterns.withUnsafeMutableBufferPointer { b in
                    for k in 0..<pc {
                        let c = b[p0 + k]
                        b[p1 + k] = c == 0x2B ? 0x2D : (c == 0x2F ? 0x5F : c)
                    }
                }
                if padding > 0 { record(p1, pc, .base64URL) }
                record(p1, pc - padding, .base64URLUnpadded)
            }
            if v.contains(0x2F) {
                // JSON writers that escape '/' (PHP, some Java) write `\/`.
                var escaped: [UInt8] = []
                escaped.reserveCapacity(v.count + 8)
                for b in v { if b == 0x2F { escaped += [0x5C, 0x2F] } else { escaped.append(b) } }
                add(escaped, .plain)
            }
        }
    }

    private struct UncheckedBuffer: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<Forms>
        init(_ buffer: UnsafeMutableBufferPointer<Forms>) { self.buffer = buffer }
    }

    deinit {
        filter.deallocate()
        startPairs.deallocate()
        wordShapes.deallocate()
        slotKeys.deallocate()
        slotHeads.deallocate()
    }

    /// `value` without the spaces around it; itself when it has none (this runs for each chased
    /// value of a file).
    static func trimmingSpaces(_ value: String) -> String {
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
        guard let first = value.utf8.first, let last = value.utf8.last, isSpace(first) || isSpace(last) else { return value }
        return value.trimming(" \t\n\r")
    }

    fileprivate static func lowercasedEscapes(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var i = 0
        while i + 2 < out.count {
            if out[i] == 0x25 {
                for k in 1...2 where out[i + k] >= 0x41 && out[i + k] <= 0x46 { out[i + k] |= 0x20 }
                i += 3
            } else {
                i += 1
            }
        }
        return out
    }

    /// The filter word of `key` and its two bits there (the word from the hash's top bits, the
    /// bits from its low ones).
    @inline(__always) private func filterProbe(_ key: UInt64) -> (word: Int, bits: UInt64) {
        let x = key &* 0x9E37_79B9_7F4A_7C15
        let word = Int(truncatingIfNeeded: x >> UInt64(64 - (filterBits - 6)))
        return (word, 1 << (x & 63) | 1 << ((x >> 6) & 63))
    }
    @inline(__always) private static func slotHash(_ key: UInt64) -> UInt64 {
        let x = (key ^ (key >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return x ^ (x >> 32)
    }

    /// Whether a form may start at a word of `length` letters and digits followed by the byte at
    /// `next` (nil: the text ends there). False is certain; true needs `match`.
    @inline(__always)
    func mayStart(wordOf length: Int, before next: UInt8?) -> Bool {
        WordShapes.contains(wordShapes, length, next)
    }

    /// The longest known form that starts at `i` (a word start) and ends at a word end: where it
    /// ends and what replaces it.
    @inline(__always)
    func match(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> (end: Int, form: Int32)? {
        guard i + 8 <= p.count else { return nil }
        let key = UnsafeRawPointer(p.baseAddress! + i).loadUnaligned(as: UInt64.self)
        // The first two bytes (little-endian: the key's low 16 bits).
        let pair = Int(key & 0xFFFF)
        guard startPairs[pair >> 6] & (1 << UInt64(pair & 63)) != 0 else { return nil }
        let (word, bits) = filterProbe(key)
        guard filter[word] & bits == bits else { return nil }
        return slowMatch(p, at: i, key: key)
    }

    private func slowMatch(_ p: UnsafeBufferPointer<UInt8>, at i: Int, key: UInt64) -> (end: Int, form: Int32)? {
        var slot = Int(truncatingIfNeeded: Self.slotHash(key)) & slotMask
        while slotHeads[slot] >= 0 {
            if slotKeys[slot] == key {
                return patterns.withUnsafeBufferPointer { arena -> (end: Int, form: Int32)? in
                    var c = Int(slotHeads[slot])
                    while c >= 0 {
                        let candidate = candidates[c]
                        let n = Int(candidate.patternCount)
                        let start = Int(candidate.patternStart)
                        if i + n <= p.count && memcmpEqual(arena.baseAddress! + start, p.baseAddress! + i, n) {
                            let end = i + n
                            if !(RedactionEngine.isAlnum(arena[start + n - 1]) && end < p.count && RedactionEngine.isAlnum(p[end])) {
                                return (end, Int32(c))
                            }
                        }
                        c = Int(candidate.next)
                    }
                    return nil
                }
            }
            slot = nextSlot(slot)
        }
        return nil
    }

    /// What replaces the form `match` found: the placeholder of its value, encoded as it is.
    func replacement(of form: Int32) -> [UInt8] {
        let candidate = candidates[Int(form)]
        return candidate.form.encode(placeholder(Int(candidate.source)))
    }
}
