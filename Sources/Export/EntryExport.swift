import Dispatch
import Files
import HAR
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where an export's entries come from: a recording's journal, or a HAR file read entry by entry.
public protocol EntrySource: Sendable {
    var count: Int { get }
    /// Entry `i`, built now. Called from many threads at once, and again for an entry a two-pass
    /// export could neither keep nor spill.
    func entry(at i: Int) throws -> HAREntry
    /// About how many bytes entry `i` holds (its bodies, its messages): batches and windows are
    /// cut by these (`HARLog.parallelBytesInFlight`).
    func byteCount(at i: Int) -> Int
    /// Pass 1 has built entries `indices`: memory the source holds only to build them (a mapped
    /// file's pages) may go; an entry built again reads it back. `0..<count` when pass 1 ends.
    func built(_ indices: Range<Int>)
}

extension EntrySource {
    public func built(_ indices: Range<Int>) {}
}

/// A transform in two passes over every entry (redaction: values are found and numbered, then
/// replaced everywhere). Every method may be called from any thread, for distinct entries.
public protocol TwoPassTransform: Sendable {
    /// Pass 1 of the log's own fields (page titles), before the entries' pass 1.
    func firstPass(head: inout HARLog)
    /// Pass 1 of entry `index`, in any order.
    func firstPass(_ entry: inout HAREntry, index: Int)
    /// Once, between the passes.
    func betweenPasses()
    /// Pass 2 of the log's own fields.
    func secondPass(head: inout HARLog)
    /// Pass 2 of an entry pass 1 left (kept in memory or spilled).
    func secondPass(_ entry: inout HAREntry, index: Int)
    /// Both passes of an entry built again (neither kept nor spilled).
    func bothPasses(_ entry: inout HAREntry, index: Int)
    /// Entry `index` was not kept after pass 1; it will come to `bothPasses`.
    func released(_ index: Int)
    /// Bytes pass 1 holds for entry `index` outside the entry (a body it rewrote into bytes):
    /// they count against the budget of kept entries.
    func heldBytes(_ index: Int) -> Int
    /// Takes those bytes away (the entry is spilled to disk with them)...
    func takeHeld(_ index: Int) -> [UInt8]?
    /// ...and gives them back before the entry's pass 2.
    func restoreHeld(_ index: Int, _ bytes: [UInt8]?)
}

/// Stands in for an entry the source could not build; the export then fails and writes nothing.
private let unreadable = HAREntry(startedDateTime: "", time: 0, request: HARRequest(method: "", url: "", httpVersion: ""),
                                  response: HARResponse(status: 0, statusText: "", httpVersion: "",
                                                        content: HARContent(size: 0, mimeType: "")),
                                  timings: HARTimings(send: 0, wait: 0, receive: 0))

/// The one export pipeline: entries from a source, optionally through a two-pass transform, out
/// as a HAR, on every core, with memory bounded by bytes: pass 1 keeps entries up to a byte
/// budget, spills the next ones to a private file, and builds the rest again for pass 2; pass 2
/// runs as entries are serialized in byte-sized windows.
public enum EntryExport {
    /// Entries kept in memory between the passes, by the bytes of their bodies and messages: a
    /// typical session is kept whole, a larger one stays bounded. 256 MiB, or an eighth of the
    /// address space the process may use (`ulimit -v`) when that is less: entries take more
    /// than their bodies' bytes, and the rest of the work needs room too.
    public static let keptBetweenPassesBytes = min(256 << 20, addressSpaceLimit() / 8)

    /// Writes `head` with the source's entries to `path` atomically (`mode` for a new file).
    /// `progress` counts entries as they are built and can stop the export (the target is then
    /// left as it was).
    public static func write(_ source: some EntrySource, head: HARLog, to path: String,
                             transform: (any TwoPassTransform)? = nil, keptBytes: Int = keptBetweenPassesBytes,
                             mode: mode_t = 0o644, progress: ExportProgress? = nil) throws {
        let file = try AtomicFileWriter(path: path, mode: mode)
        do {
            try run(source, head: head, transform: transform, keptBytes: keptBytes, spillDirectory: parentDirectory(of: path),
                    progress: progress) { try file.write($0) }
            try file.commit()
        } catch {
            file.abort()
            throw error
        }
    }

    /// Runs the pipeline. With a `sink`, the HAR's bytes go to it in order; without one, pass 2
    /// runs on every core and nothing is serialized (a check that only needs the transform's
    /// report). Entries past the kept budget spill to a private file in `spillDirectory`.
    /// `phaseEnded` hears "pass 1", "between" and "pass 2" as they end (for timing traces).
    public static func run(_ source: some EntrySource, head: HARLog, transform: (any TwoPassTransform)?,
                           keptBytes: Int = keptBetweenPassesBytes, spillDirectory: String = ".",
                           progress: ExportProgress? = nil, phaseEnded: ((String) -> Void)? = nil,
                           to sink: (@Sendable ([UInt8]) throws -> Void)?) throws {
        var header = head
        let count = source.count
        let readFailure = Mutex<(any Error)?>(nil)
        let build = { @Sendable (i: Int) -> HAREntry in
            do {
                return try source.entry(at: i)
            } catch {
                readFailure.withLock { if $0 == nil { $0 = error } }
                return unreadable
            }
        }
        @Sendable func failIfUnreadable() throws {
            if let error = readFailure.withLock({ $0 }) { throw error }
        }
        let kept = transform == nil ? nil : KeptEntries(count: count, budget: keptBytes)
        // Without a spill file (an unwritable directory) entries past the budget are built again.
        let spill = transform == nil ? nil : SpilledEntries(directory: spillDirectory)
        progress?.begin(total: count, passes: transform == nil ? 1 : 2)
        let batches = HARLog.parallelBatches(count: count, bytes: source.byteCount(at:))
        if let transform, let kept {
            transform.firstPass(head: &header)
            // Batches cut by bytes too: each core holds one batch's entries at a time.
            DispatchQueue.concurrentPerform(iterations: batches.count) { b in
                guard progress?.isStopped != true else { return }
                defer { source.built(batches[b]) }
                for i in batches[b] {
                    var built = build(i)
                    transform.firstPass(&built, index: i)
                    if !kept.keep(built, at: i, heldBytes: transform.heldBytes(i)) {
                        if spill?.put(built, held: transform.takeHeld(i), at: i) != true { transform.released(i) }
                    }
                    progress?.advance()
                }
            }
            try progress?.check()
            try failIfUnreadable()
            source.built(0..<count)
            phaseEnded?("pass 1")
            transform.betweenPasses()
            transform.secondPass(head: &header)
            phaseEnded?("between")
        }
        /// Entry `i` as it is written: pass 2 of what pass 1 left, or built (and transformed) now.
        let final = { @Sendable (i: Int) -> HAREntry in
            defer { progress?.advance() }
            guard let transform else { return build(i) }
            if var built = kept?.take(i) {
                transform.secondPass(&built, index: i)
                return built
            }
            if let spilled = spill?.take(i) {
                var built = spilled.entry
                transform.restoreHeld(i, spilled.held)
                transform.secondPass(&built, index: i)
                return built
            }
            var built = build(i)
            transform.bothPasses(&built, index: i)
            return built
        }
        guard let sink else {
            DispatchQueue.concurrentPerform(iterations: batches.count) { b in
                for i in batches[b] where progress?.isStopped != true { _ = final(i) }
            }
            try progress?.check()
            try failIfUnreadable()
            phaseEnded?("pass 2")
            return
        }
        try header.serialize(pretty: true, entryCount: count, entry: final, entryBytes: source.byteCount(at:)) { chunk in
            try progress?.check()
            try failIfUnreadable()
            try sink(chunk)
        }
        try failIfUnreadable()
        phaseEnded?("pass 2")
    }
}
