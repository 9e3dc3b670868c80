import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension HARLog {
    /// Entries per unit of parallel work at most: large enough to amortise scheduling.
    public static let parallelBatchSize = 32
    /// Entry bytes (as the caller estimates them) a parallel pipeline holds at once at most:
    /// the windows being built, ordered and written (three), so memory is bounded by bytes, not
    /// by entries, whatever the body sizes. An entry larger than a batch's share goes alone.
    public static let parallelBytesInFlight = 64 << 20

    /// The bytes of one window: three are in flight at once (built, ordered, written).
    static var parallelWindowBytes: Int { parallelBytesInFlight / 4 }

    /// The bytes of one batch: a window holds two batches per core, so every core has work.
    public static var parallelBatchBytes: Int { max(1, parallelWindowBytes / max(2, System.coreCount * 2)) }

    /// `0..<count` cut into batches of at most `parallelBatchSize` entries and `maxBytes` bytes
    /// (`bytes(i)`: entry i's estimated size; an entry larger than `maxBytes` is a batch alone).
    public static func parallelBatches(count: Int, maxBytes: Int = parallelBatchBytes,
                                       bytes: ((Int) -> Int)?) -> [Range<Int>] {
        sizedBatches(count: count, maxBytes: maxBytes, bytes: bytes).map(\.range)
    }

    /// `parallelBatches` with each batch's bytes (0 without `bytes`).
    static func sizedBatches(count: Int, maxBytes: Int = parallelBatchBytes,
                             bytes: ((Int) -> Int)?) -> [(range: Range<Int>, bytes: Int)] {
        var batches: [(range: Range<Int>, bytes: Int)] = []
        var start = 0, size = 0
        for i in 0..<count {
            let entryBytes = bytes.map { max(0, $0(i)) } ?? 0
            if i > start && (i - start == parallelBatchSize || size + entryBytes > maxBytes) {
                batches.append((start..<i, size))
                start = i
                size = 0
            }
            size += entryBytes
        }
        if start < count { batches.append((start..<count, size)) }
        return batches
    }

    /// Serializes the file using every core, streaming: entries are built by `entry(i)` for
    /// `i` in `0..<entryCount` (this log's own `entries` are ignored) in parallel batches, and the
    /// bytes reach `sink` in order on one background thread while the next batches are built.
    /// The bytes are exactly those of `serialize(pretty:)` for the same entries.
    ///
    /// `entry` runs concurrently and must be thread-safe; `sink` is called from one thread at a
    /// time. The first error thrown by `sink` stops the work and is rethrown.
    ///
    /// `inOrder`, when given, sees every built entry on the calling thread, strictly in index
    /// order, before it is serialized, and may change it. Redaction uses it: its placeholders are
    /// numbered in file order, which parallel workers could not do deterministically.
    ///
    /// `entryBytes`, when given, estimates entry i's size: batches and windows are then cut by
    /// bytes as well as by count (`parallelBytesInFlight`), so large bodies do not pile up.
    public func serialize(pretty: Bool = true, entryCount: Int, entry: @escaping @Sendable (Int) -> HAREntry,
                          entryBytes: ((Int) -> Int)? = nil,
                          inOrder: ((inout HAREntry, Int) -> Void)? = nil,
                          to sink: @escaping @Sendable ([UInt8]) throws -> Void) throws {
        var head = JSONWriter(pretty: pretty, reservingCapacity: 4096)
        head.beginObject()
        head.key("log")
        writeHead(to: &head)
        try sink(head.takeBytes())

        let batches = Self.sizedBatches(count: entryCount, bytes: entryBytes)
        let ranges = batches.map(\.range)
        let batchCount = ranges.count
        // Batches per window. Each window ends at a barrier (every core waits for its slowest
        // batch), so a few batches per core: two per core left pass 2 of a large redaction 11%
        // slower on 2 cores than eight per core. A window also ends at its share of the bytes.
        let window = max(16, System.coreCount * 2)
        /// The end of the window starting at batch `start`.
        func windowEnd(_ start: Int) -> Int {
            var end = start, bytes = 0
            while end < batchCount && end - start < window
                    && (end == start || bytes + batches[end].bytes <= Self.parallelWindowBytes) {
                bytes += batches[end].bytes
                end += 1
            }
            return end
        }
        let writer = DispatchQueue(label: "harrec.har-writer")
        let failure = Mutex<(any Error)?>(nil)
        // At most two windows wait for the writer: bounded memory, and building overlaps writing.
        let slots = DispatchSemaphore(value: 1)
        let range: @Sendable (Int) -> Range<Int> = { batch in ranges[batch] }
        /// Serializes batches `first..<last` on every core, entry `i` of batch `b` from `entryAt(b, i)`.
        let serializeWindow = { @Sendable (first: Int, last: Int, entryAt: @Sendable (Int, Int) -> HAREntry) -> [SerializedBatch] in
            var outputs = [SerializedBatch](repeating: SerializedBatch(), count: last - first)
            outputs.withUnsafeMutableBufferPointer { buffer in
                let cells = UncheckedSendable(buffer)
                DispatchQueue.concurrentPerform(iterations: last - first) { offset in
                    let batch = first + offset
                    cells.value[offset] = Self.serializeBatch(range(batch), isFirst: batch == 0, pretty: pretty) {
                        entryAt(batch, $0)
                    }
                }
            }
            return outputs
        }
        let writeChunks = { @Sendable (chunks: [SerializedBatch]) in
            for chunk in chunks where failure.withLock({ $0 == nil }) {
                do { try chunk.write(to: sink) } catch { failure.withLock { $0 = error } }
            }
        }
        var start = 0
        var prefetched: WindowBuild?
        while start < batchCount, failure.withLock({ $0 == nil }) {
            let end = windowEnd(start)
            if let inOrder {
                // Three stages run at once: the next window is built on the worker threads, this
                // one goes through `inOrder` here, the previous one is serialized and written by
                // the writer. The sequential pass is the critical path; the rest fits beside it.
                let current = prefetched ?? WindowBuild(start: start, end: end, range: range, entry: entry)
                current.group.wait()
                prefetched = end < batchCount
                    ? WindowBuild(start: end, end: windowEnd(end), range: range, entry: entry) : nil
                for offset in current.batches.indices {
                    let batchFirst = range(start + offset).lowerBound
                    for k in current.batches[offset].indices { inOrder(&current.batches[offset][k], batchFirst + k) }
                }
                let windowStart = start
                slots.wait()
                writer.async {
                    defer { slots.signal() }
                    // Entry i of batch b sits at its offset in that batch.
                    let outputs = serializeWindow(windowStart, end) { b, i in
                        current.batches[b - windowStart][i - ranges[b].lowerBound]
                    }
                    current.batches = []
                    writeChunks(outputs)
                }
            } else {
                let outputs = serializeWindow(start, end) { _, i in entry(i) }
                slots.wait()
                writer.async {
                    defer { slots.signal() }
                    writeChunks(outputs)
                }
            }
            start = end
        }
        prefetched?.group.wait()
        writer.sync {}
        if let error = failure.withLock({ $0 }) { throw error }

        // The closing bracket depends on whether the array is empty; a discarded placeholder
        // element gives the tail writer that state.
        var tail = JSONWriter(pretty: pretty, reservingCapacity: 256)
        Self.enterEntriesArray(&tail, hasPrecedingElement: entryCount > 0)
        _ = tail.takeBytes()
        writeTail(to: &tail)
        tail.endObject()
        var out = tail.takeBytes()
        if pretty { out.append(0x0A) }
        try sink(out)
    }

    /// Puts a writer at the nesting of `{"log": {"entries": [` so entries serialize exactly as they
    /// would inside the whole document.
    private static func enterEntriesArray(_ w: inout JSONWriter, hasPrecedingElement: Bool) {
        w.beginObject()
        w.key("log")
        w.beginObject()
        w.key("entries")
        w.beginArray()
        if hasPrecedingElement { w.null() }
    }

    private static func serializeBatch(_ range: Range<Int>, isFirst: Bool, pretty: Bool,
                                       entry: (Int) -> HAREntry) -> SerializedBatch {
        var w = JSONWriter(pretty: pretty, reservingCapacity: range.count * 2048)
        w.keepsDeferredBodies = true
        enterEntriesArray(&w, hasPrecedingElement: !isFirst)
        _ = w.takeBytes()
        for index in range {
            entry(index).write(to: &w)
        }
        return SerializedBatch(bytes: w.takeBytes(), deferred: w.takeDeferredBodies())
    }
}

/// A batch of entries serialized, with the deferred bodies to stream in at their offsets.
private struct SerializedBatch: @unchecked Sendable {
    var bytes: [UInt8] = []
    var deferred: [(offset: Int, body: HARDeferredBody)] = []

    /// Hands the batch to `sink` in order, each deferred body's base64 read and written a window
    /// at a time where it stands.
    func write(to sink: ([UInt8]) throws -> Void) throws {
        guard !deferred.isEmpty else { return try sink(bytes) }
        var written = 0
        for (offset, body) in deferred {
            try sink(Array(bytes[written..<offset]))
            try body.writeBase64(to: sink)
            written = offset
        }
        try sink(Array(bytes[written...]))
    }
}

/// One window of entries being built on the worker threads (batches in order).
private final class WindowBuild: @unchecked Sendable {
    var batches: [[HAREntry]]
    let group = DispatchGroup()

    init(start: Int, end: Int, range: @escaping @Sendable (Int) -> Range<Int>, entry: @escaping @Sendable (Int) -> HAREntry) {
        batches = [[HAREntry]](repeating: [], count: end - start)
        group.enter()
        DispatchQueue.global().async { [self] in
            batches.withUnsafeMutableBufferPointer { buffer in
                let cells = UncheckedSendable(buffer)
                DispatchQueue.concurrentPerform(iterations: end - start) { offset in
                    cells.value[offset] = range(start + offset).map(entry)
                }
            }
            group.leave()
        }
    }
}

/// Hands a value that the caller guarantees is used safely (disjoint indices, or immutable once
/// made) to concurrent code. One for the package: the HAR writer and the generator's host filter.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package var value: Value
    package init(_ value: Value) { self.value = value }
}

enum System {
    /// Online processors, at least 1.
    static var coreCount: Int {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return 2
        #endif
    }
}
