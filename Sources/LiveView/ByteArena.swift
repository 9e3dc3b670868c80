/// Where a string of a `LiveRow` lives in its `ByteArena`: no pointer, so a row is plain data.
struct ArenaRef: Equatable {
    var chunk: UInt32
    var offset: UInt32
    var count: UInt32

    /// No string (a null member).
    static let none = ArenaRef(chunk: .max, offset: 0, count: 0)

    var isNone: Bool { chunk == .max }
}

/// Append-only bytes in chunks that never move. The live view keeps a row's strings here, so a
/// recorded flow leaves no object behind: no retain or release per row, nothing for malloc to
/// keep, and memory grows by the bytes of the strings.
///
/// The owner appends under its lock. A reader that took `chunks` under that lock may read every
/// ref it took with them afterwards without the lock: bytes once written are never written again,
/// and a chunk is freed only when the last holder lets go of it.
final class ByteArena: @unchecked Sendable {
    final class Chunk: @unchecked Sendable {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        init(capacity: Int) {
            base = .allocate(capacity: capacity)
            self.capacity = capacity
        }
        deinit { base.deallocate() }
    }

    static let chunkSize = 1 << 20

    private(set) var chunks: [Chunk] = []
    private var used = 0

    /// Stores `string`'s UTF-8; nil stores nothing.
    func append(_ string: String?) -> ArenaRef {
        guard var string else { return .none }
        // A native string is contiguous; a bridged or lazy one is made so once.
        if let ref = string.utf8.withContiguousStorageIfAvailable({ append($0) }) { return ref }
        string.makeContiguousUTF8()
        return string.utf8.withContiguousStorageIfAvailable { append($0) } ?? .none
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) -> ArenaRef {
        if chunks.isEmpty || used + bytes.count > chunks[chunks.count - 1].capacity {
            // A string longer than a chunk gets one of its own size.
            chunks.append(Chunk(capacity: max(Self.chunkSize, bytes.count)))
            used = 0
        }
        let chunk = chunks[chunks.count - 1]
        if let source = bytes.baseAddress { (chunk.base + used).update(from: source, count: bytes.count) }
        defer { used += bytes.count }
        return ArenaRef(chunk: UInt32(chunks.count - 1), offset: UInt32(used), count: UInt32(bytes.count))
    }

    /// The bytes of `ref` in `chunks` (this arena's, taken with `ref`).
    static func bytes(_ ref: ArenaRef, in chunks: [Chunk]) -> UnsafeBufferPointer<UInt8> {
        guard !ref.isNone, ref.count > 0 else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: chunks[Int(ref.chunk)].base + Int(ref.offset), count: Int(ref.count))
    }

    static func string(_ ref: ArenaRef, in chunks: [Chunk]) -> String? {
        ref.isNone ? nil : String(decoding: bytes(ref, in: chunks), as: UTF8.self)
    }
}
