import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Files
import Synchronization

/// Appends records to the journal file from any thread, in groups: records are encoded by the
/// caller and queued with their file offset fixed at once, and one background thread writes the
/// queue with a few writev calls at least every `flushInterval` (sooner when `groupBytes` are
/// waiting), and fdatasyncs the file at least every `syncInterval`. A record queued more than
/// `flushInterval` before a kill -9 is in the file, and one queued `flushInterval + syncInterval`
/// plus a sync's duration before a power loss is on disk: docs/guide/journal-and-recovery.md promises a second.
///
/// Encoding stays on the callers (the event loops) on purpose: on a busy machine one writer
/// thread that also encoded fell behind the loops, and the bounded queue then stalled them.
///
/// The queue is bounded: past `maximumPendingBytes`, appending waits for the disk (backpressure on
/// the proxy) rather than growing memory.
public final class JournalWriter: @unchecked Sendable {
    /// The longest a record waits in memory before it is written to the file.
    public static let flushInterval = 0.2
    /// The longest written records wait for an fdatasync.
    static let syncInterval = 0.5
    /// A group this large is written without waiting for the interval (keeps each write large and
    /// the queue short under a burst of big bodies).
    static let groupBytes = 4 << 20
    /// The most bytes queued before appenders wait for the disk.
    static let maximumPendingBytes = 64 << 20
    /// How long to wait before retrying after a failed write (disk full, I/O error).
    static let retryInterval = 1.0

    private struct Queue {
        var chunks: [[UInt8]] = []
        var bytes = 0
        /// The file offset the next appended record gets.
        var nextOffset: UInt64
        /// Bytes known to be in the file (written; synced within `syncInterval`).
        var written: UInt64
        var closing = false
        var waiters = 0
        var lastError: String?
    }

    private let fd: Int32
    private let queue: Mutex<Queue>
    private let wake = DispatchSemaphore(value: 0)
    private let drained = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    private let onError: @Sendable (String) -> Void

    /// Writes to `fd` (opened for appending), whose current size is `size`. `onError` hears a
    /// failed write or sync (the writer retries; nothing queued is dropped). Throws when its
    /// thread cannot start (out of threads or memory): harrec then refuses to record rather than
    /// record into a journal nobody writes.
    init(fd: Int32, size: UInt64, onError: @escaping @Sendable (String) -> Void) throws {
        self.fd = fd
        queue = Mutex(Queue(nextOffset: size, written: size))
        self.onError = onError
        guard startDetachedThread(named: "harrec-journal", { [self] in run() }) else {
            throw JournalFile.message("cannot start the journal writer thread")
        }
    }

    /// Queues a whole record (from `JournalFrame`) and returns its file offset.
    @discardableResult
    func append(_ record: [UInt8]) -> UInt64 {
        var mustWait = false
        let offset: UInt64 = queue.withLock { q in
            let offset = q.nextOffset
            q.nextOffset += UInt64(record.count)
            q.bytes += record.count
            q.chunks.append(record)
            if q.bytes >= Self.maximumPendingBytes && !q.closing {
                q.waiters += 1
                mustWait = true
            }
            return offset
        }
        if mustWait || record.count >= Self.groupBytes { wake.signal() }
        if mustWait { drained.wait() }
        return offset
    }

    /// Bytes appended so far (on disk or queued).
    var appendedBytes: UInt64 { queue.withLock { $0.nextOffset } }

    /// Bytes known to be in the file.
    var writtenBytes: UInt64 { queue.withLock { $0.written } }

    /// Writes and syncs everything queued, then stops the writer thread. Throws when the queue
    /// could not be written.
    func close() throws {
        queue.withLock { $0.closing = true }
        wake.signal()
        stopped.wait()
        if let error = queue.withLock({ q in q.bytes > 0 ? q.lastError ?? "not written" : nil }) {
            throw FileWriteError(description: "cannot write the journal: \(error)")
        }
    }

    private func run() {
        var lastReported: String?
        var lastSync = Date.timeIntervalSinceReferenceDate
        var unsynced = false
        while true {
            _ = wake.wait(timeout: .now() + Self.flushInterval)
            let (chunks, closing) = queue.withLock { q in (q.chunks, q.closing) }
            if !chunks.isEmpty {
                let count = chunks.reduce(0) { $0 + $1.count }
                var failure = JournalFile.append(fd, chunks)
                unsynced = true
                let now = Date.timeIntervalSinceReferenceDate
                if failure == nil && (closing || now - lastSync >= Self.syncInterval) {
                    failure = JournalFile.sync(fd)
                    lastSync = now
                    unsynced = false
                }
                if let failure {
                    // What was written stays written (the file is append-only and `write` resumes
                    // after it); the rest is retried from where the file ends now.
                    let onDisk = JournalFile.size(fd)
                    queue.withLock { q in
                        q.lastError = failure
                        q.chunks = Self.dropWritten(q.chunks, from: q.written, upTo: onDisk)
                        q.bytes = q.chunks.reduce(0) { $0 + $1.count }
                        q.written = onDisk
                    }
                    if failure != lastReported {
                        onError("cannot write the journal: \(failure); retrying every \(Int(Self.retryInterval)) s")
                        lastReported = failure
                    }
                    if closing { break }
                    sleepThread(seconds: Self.retryInterval)
                    continue
                }
                lastReported = nil
                let waiters: Int = queue.withLock { q in
                    q.chunks.removeFirst(chunks.count)
                    q.bytes -= count
                    q.written += UInt64(count)
                    q.lastError = nil
                    guard q.bytes < Self.maximumPendingBytes else { return 0 }
                    defer { q.waiters = 0 }
                    return q.waiters
                }
                for _ in 0..<waiters { drained.signal() }
            }
            if closing && queue.withLock({ $0.chunks.isEmpty }) {
                if unsynced { _ = JournalFile.sync(fd) }
                break
            }
            if unsynced && Date.timeIntervalSinceReferenceDate - lastSync >= Self.syncInterval {
                _ = JournalFile.sync(fd)
                lastSync = Date.timeIntervalSinceReferenceDate
                unsynced = false
            }
        }
        // Nobody may stay blocked on a writer that is gone.
        let waiters = queue.withLock { q in defer { q.waiters = 0 }; return q.waiters }
        for _ in 0..<waiters { drained.signal() }
        stopped.signal()
    }

    /// The queued chunks minus the bytes between `written` and `onDisk` that did reach the file.
    static func dropWritten(_ chunks: [[UInt8]], from written: UInt64, upTo onDisk: UInt64) -> [[UInt8]] {
        var skip = onDisk > written ? Int(onDisk - written) : 0
        var rest: [[UInt8]] = []
        for chunk in chunks {
            if skip >= chunk.count {
                skip -= chunk.count
                continue
            }
            rest.append(skip > 0 ? Array(chunk[skip...]) : chunk)
            skip = 0
        }
        return rest
    }
}
