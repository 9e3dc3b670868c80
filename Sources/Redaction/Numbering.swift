import Dispatch
import Foundation

/// The placeholders of a file, numbered in file order on every core.
///
/// A file's few hundred thousand values are one hash probe each, but the probes miss the cache,
/// so one thread takes ~100 ms per 100 MB. Here each core owns the values whose hash falls in its
/// shard and finds which occurrences come first; one ordered pass over those flags then hands out
/// the numbers (the only sequential work: a few bytes per value, read in order); each core then
/// makes its shard's placeholders. The numbers depend only on the order of the values, never on
/// the number of shards.
struct FileNumbering: @unchecked Sendable {
    /// Values in file order; `hashes[k]` is `values[k]`'s `PlaceholderTable.hash` when pass 1
    /// computed it.
    typealias Group = (values: [(kind: ValueKind, value: String)], hashes: [UInt64])

    /// An id is a shard's own id shifted left by this, plus the shard.
    private static let shardBits: Int32 = 3
    private let shards: [PlaceholderTable]
    private let shardCount: Int

    /// Kinds chased bare in pass 2 (emails, hosts and IPs are found by their shape instead).
    static func isChasedBare(_ kind: ValueKind) -> Bool {
        kind == .secret || kind == .person || kind == .phone || kind == .card
    }

    private static func shard(_ hash: UInt64, of count: Int) -> Int {
        // The top bits: each table places values by the low ones.
        count == 1 ? 0 : Int(truncatingIfNeeded: hash >> UInt64(64 - count.trailingZeroBitCount))
    }

    /// Numbers `groups` in order, after the numbers in `reserved` (placeholders already in the
    /// file). Returns the numbering, each value's id (per group), and the ids of the values to
    /// chase bare in the order they were numbered.
    static func number(_ groups: [Group], reserved: [(ValueKind, Int)]) -> (FileNumbering, ids: [[Int32]], chasedBare: [Int32]) {
        var offsets = [Int](repeating: 0, count: groups.count + 1)
        for (i, group) in groups.enumerated() { offsets[i + 1] = offsets[i] + group.values.count }
        let total = offsets[groups.count]
        precondition(total < Int(Int32.max >> shardBits), "too many values to number")
        let cores = max(1, min(1 << Int(shardBits), ProcessInfo.processInfo.activeProcessorCount))
        let shardCount = 1 << (Int.bitWidth - 1 - cores.leadingZeroBitCount)  // a power of two
        // Every shard reads every hash: the few pass 1 left out (chased values) are computed once.
        let hashes = groups.map { group -> [UInt64] in
            guard group.hashes.count < group.values.count else { return group.hashes }
            return group.values.indices.map { k in
                k < group.hashes.count ? group.hashes[k]
                    : PlaceholderTable.hash(group.values[k].kind, key: PlaceholderTable.key(group.values[k].kind, group.values[k].value))
            }
        }
        var tables = [PlaceholderTable](repeating: PlaceholderTable(), count: shardCount)
        var ids = [Int32](repeating: 0, count: total)
        var isNew = [Bool](repeating: false, count: total)
        tables.withUnsafeMutableBufferPointer { t in
            ids.withUnsafeMutableBufferPointer { i in
                isNew.withUnsafeMutableBufferPointer { n in
                    let tables = SendableBuffer(t), ids = SendableBuffer(i), isNew = SendableBuffer(n)
                    DispatchQueue.concurrentPerform(iterations: shardCount) { s in
                        var table = PlaceholderTable()
                        table.reserveCapacity(total / shardCount + total / (4 * shardCount) + 16)
                        for (gi, group) in groups.enumerated() {
                            let base = offsets[gi], h = hashes[gi]
                            for k in group.values.indices where shard(h[k], of: shardCount) == s {
                                let (id, new) = table.insert(group.values[k].kind, group.values[k].value, hash: h[k],
                                                             first: Int32(base + k))
                                ids.buffer[base + k] = id << shardBits | Int32(s)
                                isNew.buffer[base + k] = new
                            }
                        }
                        tables.buffer[s] = table
                    }
                }
            }
        }
        // Numbers in file order: the first occurrence of each value takes the next of its kind.
        var counters = PlaceholderCounters()
        for (kind, number) in reserved { counters.reserve(kind, number) }
        var numbers = [Int](repeating: 0, count: total)
        var chasedBare: [Int32] = []
        for (gi, group) in groups.enumerated() {
            let base = offsets[gi]
            for k in group.values.indices where isNew[base + k] {
                let kind = group.values[k].kind
                numbers[base + k] = counters.next(kind)
                if isChasedBare(kind) { chasedBare.append(ids[base + k]) }
            }
        }
        tables.withUnsafeMutableBufferPointer { t in
            numbers.withUnsafeBufferPointer { numbers in
                let tables = SendableBuffer(t)
                DispatchQueue.concurrentPerform(iterations: shardCount) { s in tables.buffer[s].makePlaceholders(numbers: numbers) }
            }
        }
        let groupIds = groups.indices.map { Array(ids[offsets[$0]..<offsets[$0 + 1]]) }
        return (FileNumbering(shards: tables, shardCount: shardCount), groupIds, chasedBare)
    }

    private init(shards: [PlaceholderTable], shardCount: Int) {
        self.shards = shards
        self.shardCount = shardCount
    }

    /// An empty numbering (before `freeze`).
    init() {
        shards = [PlaceholderTable()]
        shardCount = 1
    }

    func placeholder(_ id: Int32) -> String {
        shards[Int(id & ((1 << Self.shardBits) - 1))].placeholder(id >> Self.shardBits)
    }

    /// The value with id `id`, as first seen.
    func value(_ id: Int32) -> String {
        shards[Int(id & ((1 << Self.shardBits) - 1))].value(id >> Self.shardBits)
    }

    /// The id of a value numbered before.
    func id(_ kind: ValueKind, _ value: String) -> Int32? {
        let hash = PlaceholderTable.hash(kind, key: PlaceholderTable.key(kind, value))
        let s = Self.shard(hash, of: shardCount)
        return shards[s].id(kind, value).map { $0 << Self.shardBits | Int32(s) }
    }

    /// The placeholder of a value numbered before.
    func lookup(_ kind: ValueKind, _ value: String) -> String? {
        id(kind, value).map(placeholder)
    }
}
