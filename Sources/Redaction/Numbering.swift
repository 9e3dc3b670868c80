import Dispatch
import Synchronization

/// The values of a file, interned as pass 1 finds them on any thread, then numbered in file order.
///
/// Each value is stored once, in one of 16 shards chosen by its hash (each behind its own lock),
/// with the position of its earliest occurrence. So memory grows with the distinct values of a
/// file, not with their occurrences or the number of entries: a recording of 100,000 exchanges
/// that all carry the same session token holds that token once. `freeze` sorts the values by
/// first occurrence and hands out the numbers; they depend only on the positions, never on the
/// order the threads interned them in.
final class ValueInterner: @unchecked Sendable {
    /// An id is a shard's own id shifted left by this, plus the shard.
    static let shardBits: Int32 = 4
    static let shardCount = 1 << Int(shardBits)

    private final class Shard: @unchecked Sendable {
        let table = Mutex(PlaceholderTable())
    }
    private let shards = (0..<ValueInterner.shardCount).map { _ in Shard() }
    private let frozen = Atomic<Bool>(false)

    /// Values found before every entry's, after them, and chased values after all of those.
    enum Phase: UInt64 { case marked = 0, chased = 1 }

    /// The position of the `k`th value of unit `unit` (0: the log's own fields; entry i: i + 1) in
    /// `phase`, as one sortable number. A unit's values beyond 2^26 share the last position (their
    /// order among themselves then follows their kind and key: still deterministic).
    static func position(_ phase: Phase, unit: Int, _ k: Int) -> UInt64 {
        phase.rawValue << 62 | UInt64(min(unit, (1 << 36) - 1)) << 26 | UInt64(min(k, (1 << 26) - 1))
    }

    private static func shard(_ hash: UInt64) -> Int {
        // The top bits: each table places values by the low ones.
        Int(truncatingIfNeeded: hash >> UInt64(64 - Int(shardBits)))
    }

    /// How many distinct values there are.
    var count: Int { shards.reduce(0) { n, shard in n + shard.table.withLock { $0.count } } }

    /// The id of `value`, adding it (or moving its first occurrence earlier) until `freeze`;
    /// after it, only values already there have an id (-1 otherwise).
    /// `key` and `hash`, when given, are `value`'s `PlaceholderTable.key` and `hash`.
    func intern(_ kind: ValueKind, _ value: String, key given: String? = nil, hash givenHash: UInt64?, position: UInt64) -> Int32 {
        let key = given ?? PlaceholderTable.key(kind, value)
        let hash = givenHash ?? PlaceholderTable.hash(kind, key: key)
        let s = Self.shard(hash)
        if frozen.load(ordering: .acquiring) {
            return shards[s].table.withLock { $0.id(kind, value) }.map { $0 << Self.shardBits | Int32(s) } ?? -1
        }
        let id = shards[s].table.withLock { $0.insert(kind, value, key: key, hash: hash, first: position).id }
        return id << Self.shardBits | Int32(s)
    }

    /// The ids of a unit's values (`values[k]` with key `keys[k]` and hash `hashes[k]`, at
    /// position k of unit `unit`), as `intern` gives them one by one. The values are grouped by
    /// shard, and each shard is locked once: inside, every value's slot is read before any is
    /// inserted, so the cache misses of the large tables overlap rather than come one by one
    /// (they were most of interning's time).
    func intern(unit: Int, values: [(kind: ValueKind, value: String)], keys: [String], hashes: [UInt64]) -> [Int32] {
        let n = values.count
        guard n >= 8, !frozen.load(ordering: .acquiring) else {
            return (0..<n).map { k in
                intern(values[k].kind, values[k].value, key: keys[k], hash: hashes[k],
                       position: Self.position(.marked, unit: unit, k))
            }
        }
        // A counting sort of the values by shard.
        var starts = [Int](repeating: 0, count: Self.shardCount + 1)
        for hash in hashes { starts[Self.shard(hash) + 1] += 1 }
        for s in 0..<Self.shardCount { starts[s + 1] += starts[s] }
        var order = [Int32](repeating: 0, count: n)
        var next = starts
        for (k, hash) in hashes.enumerated() {
            let s = Self.shard(hash)
            order[next[s]] = Int32(k)
            next[s] += 1
        }
        var ids = [Int32](repeating: -1, count: n)
        for s in 0..<Self.shardCount where starts[s] < starts[s + 1] {
            shards[s].table.withLock { table in
                var touched: UInt64 = 0
                for j in starts[s]..<starts[s + 1] { touched &+= table.touch(hashes[Int(order[j])]) }
                for j in starts[s]..<starts[s + 1] {
                    let k = Int(order[j])
                    let id = table.insert(values[k].kind, values[k].value, key: keys[k], hash: hashes[k],
                                          first: Self.position(.marked, unit: unit, k)).id
                    ids[k] = id << Self.shardBits | Int32(s)
                }
                // Keeps the reads (their sum is otherwise unused).
                if touched == 1 { touchSink.store(touched, ordering: .relaxed) }
            }
        }
        return ids
    }

    private let touchSink = Atomic<UInt64>(0)

    /// Numbers every value in order of first occurrence, after the numbers in `reserved`
    /// (placeholders already in the file). Returns the numbering and the ids of the values to
    /// chase bare, in the order they were numbered. Call once, after the last `intern` of pass 1.
    func freeze(reserved: [(ValueKind, Int)]) -> (FileNumbering, chasedBare: [Int32]) {
        frozen.store(true, ordering: .releasing)
        // Moved out of the locks, so making the placeholders below mutates the only reference:
        // a copy left behind made every table copied whole (every entry, its strings retained).
        var tables = shards.map { shard in shard.table.withLock { table in
            defer { table = PlaceholderTable() }
            return table
        } }
        // Each shard's values sorted by first occurrence on every core, then merged: one sort of
        // them all was most of the sequential part of freeze.
        var runs = [[Ordered]](repeating: [], count: Self.shardCount)
        tables.withUnsafeBufferPointer { t in
            let tables = UncheckedTables(tables: t)
            runs.withUnsafeMutableBufferPointer { r in
                let out = SendableBuffer(r)
                DispatchQueue.concurrentPerform(iterations: Self.shardCount) { s in
                    var run = tables.tables[s].occurrences.enumerated().map {
                        Ordered(first: $0.element.first, id: Int32($0.offset) << Self.shardBits | Int32(s), kind: $0.element.kind)
                    }
                    run.sort { Self.precedes($0, $1, tables.tables) }
                    out.buffer[s] = run
                }
            }
            while runs.count > 1 {
                var merged = [[Ordered]](repeating: [], count: (runs.count + 1) / 2)
                let pairs = runs
                merged.withUnsafeMutableBufferPointer { m in
                    let out = SendableBuffer(m)
                    DispatchQueue.concurrentPerform(iterations: out.buffer.count) { k in
                        out.buffer[k] = 2 * k + 1 < pairs.count ? Self.merge(pairs[2 * k], pairs[2 * k + 1], tables.tables) : pairs[2 * k]
                    }
                }
                runs = merged
            }
        }
        var counters = PlaceholderCounters()
        for (kind, number) in reserved { counters.reserve(kind, number) }
        var numbers = tables.map { [Int](repeating: 0, count: $0.count) }
        var chasedBare: [Int32] = []
        for value in runs.first ?? [] {
            let s = Int(value.id & ((1 << Self.shardBits) - 1)), e = Int(value.id >> Self.shardBits)
            numbers[s][e] = counters.next(value.kind)
            if FileNumbering.isChasedBare(value.kind) { chasedBare.append(value.id) }
        }
        tables.withUnsafeMutableBufferPointer { [numbers] t in
            let cells = SendableBuffer(t)
            DispatchQueue.concurrentPerform(iterations: Self.shardCount) { s in cells.buffer[s].makePlaceholders(numbers: numbers[s]) }
        }
        // Back for `intern`'s lookups after the freeze (shared: nothing changes them now).
        for s in shards.indices { shards[s].table.withLock { $0 = tables[s] } }
        return (FileNumbering(shards: tables), chasedBare)
    }

    /// A value to number: its first occurrence, id and kind.
    struct Ordered {
        let first: UInt64
        let id: Int32
        let kind: ValueKind
    }

    private struct UncheckedTables: @unchecked Sendable {
        let tables: UnsafeBufferPointer<PlaceholderTable>
    }

    /// File order. Positions are unique but for a unit's values past 2^26: those go by kind and key.
    private static func precedes(_ a: Ordered, _ b: Ordered, _ tables: UnsafeBufferPointer<PlaceholderTable>) -> Bool {
        if a.first != b.first { return a.first < b.first }
        if a.kind != b.kind { return a.kind.rawValue < b.kind.rawValue }
        let mask = Int32((1 << shardBits) - 1)
        return tables[Int(a.id & mask)].key(a.id >> shardBits) < tables[Int(b.id & mask)].key(b.id >> shardBits)
    }

    private static func merge(_ a: [Ordered], _ b: [Ordered], _ tables: UnsafeBufferPointer<PlaceholderTable>) -> [Ordered] {
        var out: [Ordered] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if precedes(b[j], a[i], tables) { out.append(b[j]); j += 1 } else { out.append(a[i]); i += 1 }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }
}

/// The placeholders of a file once numbered (`ValueInterner.freeze`): read-only, any thread.
struct FileNumbering: @unchecked Sendable {
    /// Values in file order; `hashes[k]` is `values[k]`'s `PlaceholderTable.hash` when known.
    typealias Group = (values: [(kind: ValueKind, value: String)], hashes: [UInt64])

    private let shards: [PlaceholderTable]

    /// Kinds chased bare in pass 2 (emails, hosts and IPs are found by their shape instead).
    static func isChasedBare(_ kind: ValueKind) -> Bool {
        kind == .secret || kind == .person || kind == .phone || kind == .card
    }

    fileprivate init(shards: [PlaceholderTable]) {
        self.shards = shards
    }

    /// An empty numbering (before `freeze`).
    init() {
        shards = [PlaceholderTable](repeating: PlaceholderTable(), count: ValueInterner.shardCount)
    }

    /// Numbers `groups` as if each were a unit of a file in that order (group g is unit g),
    /// interning them on every core in no particular order. Returns the numbering, each value's
    /// id per group, and the ids to chase bare in numbering order.
    static func number(_ groups: [Group], reserved: [(ValueKind, Int)]) -> (FileNumbering, ids: [[Int32]], chasedBare: [Int32]) {
        let interner = ValueInterner()
        var ids = groups.map { [Int32](repeating: 0, count: $0.values.count) }
        ids.withUnsafeMutableBufferPointer { buffer in
            let cells = SendableBuffer(buffer)
            DispatchQueue.concurrentPerform(iterations: groups.count) { g in
                let values = groups[g].values
                if groups[g].hashes.count == values.count && !values.isEmpty {
                    // As pass 1 interns an entry's values: all at once.
                    let keys = values.map { PlaceholderTable.key($0.kind, $0.value) }
                    cells.buffer[g] = interner.intern(unit: g, values: values, keys: keys, hashes: groups[g].hashes)
                    return
                }
                // Backwards, so later occurrences are often interned before earlier ones.
                for k in groups[g].values.indices.reversed() {
                    let (kind, value) = groups[g].values[k]
                    cells.buffer[g][k] = interner.intern(kind, value, hash: k < groups[g].hashes.count ? groups[g].hashes[k] : nil,
                                                         position: ValueInterner.position(.marked, unit: g, k))
                }
            }
        }
        let (numbering, chasedBare) = interner.freeze(reserved: reserved)
        return (numbering, ids, chasedBare)
    }

    private func shard(of id: Int32) -> Int { Int(id & ((1 << ValueInterner.shardBits) - 1)) }

    func placeholder(_ id: Int32) -> String {
        shards[shard(of: id)].placeholder(id >> ValueInterner.shardBits)
    }

    /// Calls `body` with the bytes of `placeholder(id)`, without a string.
    @inline(__always)
    func withPlaceholderBytes<R>(_ id: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        shards.withUnsafeBufferPointer { $0[shard(of: id)].withPlaceholderBytes(id >> ValueInterner.shardBits, body) }
    }

    /// The value with id `id`, as it stands at its first occurrence.
    func value(_ id: Int32) -> String {
        shards[shard(of: id)].value(id >> ValueInterner.shardBits)
    }

    /// The id of a value numbered before.
    func id(_ kind: ValueKind, _ value: String) -> Int32? {
        let hash = PlaceholderTable.hash(kind, key: PlaceholderTable.key(kind, value))
        let s = Int(truncatingIfNeeded: hash >> UInt64(64 - Int(ValueInterner.shardBits)))
        return shards[s].id(kind, value).map { $0 << ValueInterner.shardBits | Int32(s) }
    }

    /// The placeholder of a value numbered before.
    func lookup(_ kind: ValueKind, _ value: String) -> String? {
        id(kind, value).map(placeholder)
    }
}
