import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension HARLog {
    /// Entries per unit of parallel work: large enough to amortise scheduling, small enough that a
    /// window of batches stays a few tens of MiB.
    public static let parallelBatchSize = 32

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
    public func serialize(pretty: Bool = true, entryCount: Int, entry: @escaping @Sendable (Int) -> HAREntry,
                          inOrder: ((inout HAREntry, Int) -> Void)? = nil,
                          to sink: @escaping @Sendable ([UInt8]) throws -> Void) throws {
        var head = JSONWriter(pretty: pretty, reservingCapacity: 4096)
        head.beginObject()
        head.key("log")
        writeHead(to: &head)
        try sink(head.takeBytes())

        let batchSize = Self.parallelBatchSize
        let batchCount = (entryCount + batchSize - 1) / batchSize
        // Batches per window. Each window ends at a barrier (every core waits for its slowest
        // batch), so a few batches per core: two per core left pass 2 of a large redaction 11%
        // slower on 2 cores than eight per core.
        let window = max(16, System.coreCount * 2)
        let writer = DispatchQueue(label: "harrec.har-writer")
        let failure = Mutex<(any Error)?>(nil)
        // At most two windows wait for the writer: bounded memory, and building overlaps writing.
        let slots = DispatchSemaphore(value: 1)
        let range: @Sendable (Int) -> Range<Int> = { batch in batch * batchSize..<min((batch + 1) * batchSize, entryCount) }
        /// Serializes batches `first..<last` on every core, entry `i` from `entryAt(i)`.
        let serializeWindow = { @Sendable (first: Int, last: Int, entryAt: (Int) -> HAREntry) -> [[UInt8]] in
            var outputs = [[UInt8]](repeating: [], count: last - first)
            outputs.withUnsafeMutableBufferPointer { buffer in
                let cells = UncheckedSendable(buffer)
                DispatchQueue.concurrentPerform(iterations: last - first) { offset in
                    let batch = first + offset
                    cells.value[offset] = Self.serializeBatch(range(batch), isFirst: batch == 0, pretty: pretty,
                                                              entry: entryAt)
                }
            }
            return outputs
        }
        let writeChunks = { @Sendable (chunks: [[UInt8]]) in
            for chunk in chunks where failure.withLock({ $0 == nil }) {
                do { try sink(chunk) } catch { failure.withLock { $0 = error } }
            }
        }
        var start = 0
        var prefetched: WindowBuild?
        while start < batchCount, failure.withLock({ $0 == nil }) {
            let end = min(start + window, batchCount)
            if let inOrder {
                // Three stages run at once: the next window is built on the worker threads, this
                // one goes through `inOrder` here, the previous one is serialized and written by
                // the writer. The sequential pass is the critical path; the rest fits beside it.
                let current = prefetched ?? WindowBuild(start: start, end: end, range: range, entry: entry)
                current.group.wait()
                prefetched = end < batchCount
                    ? WindowBuild(start: end, end: min(end + window, batchCount), range: range, entry: entry) : nil
                let first = range(start).lowerBound
                for offset in current.batches.indices {
                    let batchFirst = range(start + offset).lowerBound
                    for k in current.batches[offset].indices { inOrder(&current.batches[offset][k], batchFirst + k) }
                }
                let windowStart = start
                slots.wait()
                writer.async {
                    defer { slots.signal() }
                    // Batches are `batchSize` entries each, so entry i sits at (i - first) / batchSize.
                    let outputs = serializeWindow(windowStart, end) { i in
                        current.batches[(i - first) / batchSize][(i - first) % batchSize]
                    }
                    current.batches = []
                    writeChunks(outputs)
                }
            } else {
                let outputs = serializeWindow(start, end, entry)
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
                                       entry: (Int) -> HAREntry) -> [UInt8] {
        var w = JSONWriter(pretty: pretty, reservingCapacity: range.count * 2048)
        enterEntriesArray(&w, hasPrecedingElement: !isFirst)
        _ = w.takeBytes()
        for index in range {
            entry(index).write(to: &w)
        }
        return w.takeBytes()
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
