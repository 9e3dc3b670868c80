import HAR

/// The kinds of replaced values; each has its own placeholder shape and its own numbering.
enum ValueKind: UInt8, CaseIterable, Sendable {
    case secret, email, host, ipv4, ipv6, phone, card, person
}

/// The replacements of one file. The same value gets the same placeholder everywhere in the file
/// (a token returned by /login and sent later in Authorization still correlates), numbered in
/// order of first appearance, so the output is deterministic and carries nothing derived from
/// the value itself (a counter, not a hash: low-entropy values cannot be guessed back).
///
/// An open-addressing table over hashes computed while the entries were collected (on every
/// core); a file's values go into the shards of a `ValueInterner` as they are found.
struct PlaceholderTable: Sendable {
    private struct Entry {
        var hash: UInt64
        var kind: ValueKind
        var key: String
        /// As first seen (a card's key is its digits; the value keeps its spaces).
        var value: String
        /// Where the value first occurs, in file order (`ValueInterner.position`).
        var first: UInt64
        var number: Int
        /// A secret that may be a JWT (its placeholder keeps the header): the only kind whose
        /// placeholder reads the value, so numbering reads no other value's storage.
        var mayBeJWT: Bool
    }
    /// Open addressing by the hash's low bits. A slot holds the hash's top 32 bits and the entry
    /// id + 1 (0: empty), so a probe reads an entry only when those bits match: the table is
    /// large and probed at random, and reading each probed entry missed the cache.
    private var slots = [UInt64](repeating: 0, count: 64)
    private var entries: [Entry] = []
    private var counters = PlaceholderCounters()
    /// Every placeholder's bytes, one after another, and where each one's are by id:
    /// `offset << 32 | count` (0: none yet). Pass 2 copies a placeholder per marker; a string
    /// per entry made each a cache miss into a table of tens of megabytes and another into the
    /// string's storage (a third of pass 2's samples), and numbering retained each.
    private var placeholderBytes: [UInt8] = []
    private var placeholderSpans: [UInt64] = []

    /// How many values have placeholders.
    var count: Int { entries.count }

    /// The key a value is looked up by: emails, hosts and IPv6 addresses compare case-insensitively.
    static func key(_ kind: ValueKind, _ value: String) -> String {
        switch kind {
        case .email, .host, .ipv6: return lowercasedIfNeeded(value)
        case .card: return value.filter(\.isNumber)
        default: return value
        }
    }

    /// Most values are lowercase already; lowercasing allocates, so only when needed.
    static func lowercasedIfNeeded(_ value: String) -> String {
        var copy = value
        let needed = copy.withUTF8 { p in p.contains { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 } }
        return needed ? value.lowercased() : value
    }

    /// A 64-bit hash of the key's bytes, eight at a time, with the kind and the length mixed in
    /// (every bit of the result depends on every byte: shards take the top bits, tables the low
    /// ones). Not for hostile input: a collision only costs a comparison of keys.
    static func hash(_ kind: ValueKind, key: String) -> UInt64 {
        var copy = key
        return copy.withUTF8 { p in
            let n = p.count
            var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ (UInt64(kind.rawValue) &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(n)
            guard let base = p.baseAddress else { return Self.finish(h) }
            var i = 0
            while i &+ 8 <= n {
                let w = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                h = (h ^ w) &* 0xBF58_476D_1CE4_E5B9
                h ^= h &>> 31
                i &+= 8
            }
            if i < n {
                var w: UInt64 = 0
                for k in i..<n { w |= UInt64(base[k]) &<< UInt64((k &- i) &* 8) }
                h = (h ^ w) &* 0x94D0_49BB_1331_11EB
                h ^= h &>> 29
            }
            return Self.finish(h)
        }
    }

    @inline(__always) private static func finish(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h &>> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        h ^= h &>> 32
        return h
    }

    private func find(_ kind: ValueKind, _ key: String, _ hash: UInt64) -> (slot: Int, entry: Int?) {
        let mask = slots.count - 1
        var s = Int(truncatingIfNeeded: hash) & mask
        let tag = hash >> 32
        while true {
            let slot = slots[s]
            if slot == 0 { return (s, nil) }
            if slot >> 32 == tag {
                let e = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if entries[e].hash == hash && entries[e].kind == kind && entries[e].key == key { return (s, e) }
            }
            s = (s + 1) & mask
        }
    }

    /// Reads the slot a value of `hash` is looked for in, and the entry it holds, to bring both
    /// into the cache (`ValueInterner.intern(unit:...)`); the result means nothing.
    @inline(__always) func touch(_ hash: UInt64) -> UInt64 {
        let slot = slots[Int(truncatingIfNeeded: hash) & (slots.count - 1)]
        guard slot != 0 else { return 0 }
        return entries[Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1].hash
    }

    func lookup(_ kind: ValueKind, _ value: String) -> String? {
        let key = Self.key(kind, value)
        return find(kind, key, Self.hash(kind, key: key)).entry.map { placeholder(Int32($0)) }
    }

    /// Room for `n` values without growing.
    mutating func reserveCapacity(_ n: Int) {
        entries.reserveCapacity(n)
        var capacity = slots.count
        while capacity < n * 2 { capacity <<= 1 }
        if capacity > slots.count { rehash(capacity) }
    }

    private mutating func rehash(_ capacity: Int) {
        slots = [UInt64](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (e, entry) in entries.enumerated() {
            var s = Int(truncatingIfNeeded: entry.hash) & mask
            while slots[s] != 0 { s = (s + 1) & mask }
            slots[s] = Self.slot(entry.hash, e)
        }
    }

    @inline(__always) private static func slot(_ hash: UInt64, _ id: Int) -> UInt64 {
        (hash >> 32) << 32 | UInt64(id + 1)
    }

    /// The placeholder of `value`, numbering it when it is new (the next number of its kind).
    @discardableResult
    mutating func assign(_ kind: ValueKind, _ value: String) -> String {
        let (id, new) = insert(kind, value, hash: nil, first: 0)
        if new {
            entries[Int(id)].number = counters.next(kind)
            var placeholder = Self.make(entries[Int(id)])
            if placeholderSpans.count <= Int(id) { placeholderSpans += repeatElement(0, count: Int(id) + 1 - placeholderSpans.count) }
            placeholderSpans[Int(id)] = placeholder.withUTF8 { Self.append($0, to: &placeholderBytes) }
        }
        return placeholder(id)
    }

    /// Appends `p` to `bytes`; its span there.
    private static func append(_ p: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) -> UInt64 {
        let span = UInt64(bytes.count) << 32 | UInt64(p.count)
        bytes.append(contentsOf: p)
        return span
    }

    /// Adds `value` when it is new, without a number yet (`ValueInterner` numbers the values of a
    /// file in order, then `makePlaceholders`): its id, and whether it was new. `hash`: the key's
    /// hash when the caller has it (`ValueCollector` computes it in pass 1); `first`: where this
    /// occurrence stands in file order. Values may be added in any order: each keeps its earliest
    /// occurrence, and its text as it stands there.
    mutating func insert(_ kind: ValueKind, _ value: String, key givenKey: String? = nil, hash given: UInt64?,
                         first: UInt64) -> (id: Int32, new: Bool) {
        let key = givenKey ?? Self.key(kind, value)
        let hash = given ?? Self.hash(kind, key: key)
        let (slot, found) = find(kind, key, hash)
        if let found {
            if first < entries[found].first {
                entries[found].first = first
                entries[found].value = value
            }
            return (Int32(found), false)
        }
        let id = Int32(entries.count)
        slots[slot] = Self.slot(hash, Int(id))
        entries.append(Entry(hash: hash, kind: kind, key: key, value: value, first: first, number: 0,
                             mayBeJWT: kind == .secret && JWTShape.mayBeJWT(key)))
        if entries.count * 2 > slots.count { rehash(slots.count * 2) }
        return (id, true)
    }

    /// Only secrets use the value (a JWT keeps its header), and a secret's key is its value.
    private static func make(_ entry: Entry) -> String {
        PlaceholderFormat.make(entry.kind, number: entry.number, value: entry.mayBeJWT ? entry.key : "")
    }

    /// Makes the placeholder of every value added by `insert`: value `id` gets `numbers[id]`.
    /// In place, field by field: copying each entry out (three strings retained and released)
    /// was a few percent of a redaction's sequential numbering.
    mutating func makePlaceholders(numbers: [Int]) {
        var bytes: [UInt8] = [], spans = [UInt64](repeating: 0, count: entries.count)
        bytes.reserveCapacity(entries.count * 16)
        entries.withUnsafeMutableBufferPointer { buffer in
            for e in buffer.indices {
                buffer[e].number = numbers[e]
                // Field by field: `make(buffer[e])` copied the entry, retaining its strings.
                var placeholder = PlaceholderFormat.make(buffer[e].kind, number: numbers[e],
                                                         value: buffer[e].mayBeJWT ? buffer[e].key : "")
                spans[e] = placeholder.withUTF8 { Self.append($0, to: &bytes) }
            }
        }
        placeholderBytes = bytes
        placeholderSpans = spans
    }

    /// Calls `body` with the bytes of the placeholder of the value numbered `id` (empty before it
    /// has one).
    @inline(__always)
    func withPlaceholderBytes<R>(_ id: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let span = Int(id) < placeholderSpans.count ? placeholderSpans[Int(id)] : 0
        return placeholderBytes.withUnsafeBufferPointer { b in
            let start = Int(span >> 32)
            return body(UnsafeBufferPointer(rebasing: b[start..<(start + Int(span & 0xFFFF_FFFF))]))
        }
    }

    /// Each value's first occurrence and kind, by id (for numbering in file order), without its
    /// strings: retaining a key per value showed in the sequential part of numbering.
    var occurrences: [(first: UInt64, kind: ValueKind)] {
        entries.withUnsafeBufferPointer { b in b.map { ($0.first, $0.kind) } }
    }

    /// The lookup key of the value with id `id` (to order values of the same position).
    func key(_ id: Int32) -> String { entries[Int(id)].key }

    /// The value with id `id`, as first seen.
    func value(_ id: Int32) -> String { entries[Int(id)].value }

    /// The placeholder of the value numbered `id` (after `makePlaceholders`).
    func placeholder(_ id: Int32) -> String { withPlaceholderBytes(id) { String(decoding: $0, as: UTF8.self) } }

    /// The id of a value numbered before.
    func id(_ kind: ValueKind, _ value: String) -> Int32? {
        let key = Self.key(kind, value)
        return find(kind, key, Self.hash(kind, key: key)).entry.map(Int32.init)
    }

    /// Numbers after `number` are free for `kind` (an input placeholder used it).
    mutating func reserve(_ kind: ValueKind, _ number: Int) { counters.reserve(kind, number) }
}

/// The last number used per kind; placeholders already in the input raise it, so a new value
/// never reuses a number an earlier redaction gave to another one.
struct PlaceholderCounters: Sendable {
    private var last = [Int](repeating: 0, count: ValueKind.allCases.count)

    /// Numbers after `number` are free for `kind` (an input placeholder used it).
    mutating func reserve(_ kind: ValueKind, _ number: Int) {
        let k = Int(kind.rawValue)
        last[k] = max(last[k], min(number, 1 << 40))
    }

    /// The next number of `kind`.
    mutating func next(_ kind: ValueKind) -> Int {
        last[Int(kind.rawValue)] += 1
        return last[Int(kind.rawValue)]
    }
}

/// A buffer written from several threads at distinct indexes.
struct SendableBuffer<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}
