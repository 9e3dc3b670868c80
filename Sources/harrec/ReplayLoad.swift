import CLI
import Dispatch
import Files
import HAR
import HARGenerator
import HARReplay
import HARScenarios
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `harrec replay` serves from a HAR, made as the HAR is parsed.
struct LoadedReplay {
    /// The queue of HTTP items.
    var queue: [QueueEntry]
    /// The WebSocket upgrades' items and the conversations they replay.
    var webSockets: (entries: [QueueEntry], conversations: [RecordedConversation])
    /// "host:port" -> `_error` of the tunnels the recording could not open.
    var refusedTunnels: [String: String]
    /// "host:port" -> whether the recording spoke HTTP/2 to it.
    var http2Hosts: [String: Bool]
    /// The reader of the responses left in the file.
    var bodies: ReplayHARFile
}

/// One batch of entries, drafted on a worker.
private struct DraftedBatch: Sendable {
    var drafts = EntryDrafts()
    var webSockets: [(index: Int, entry: HAREntry)] = []
    var tunnels = HARReplayRefusedTunnels()
    var http2Hosts: [String: Bool] = [:]
    var leftOut: [Int] = []
    var locations: [Int: LeftOutText] = [:]
    var failure: HARReadError?
}

extension ReplayHARFile {
    /// Reads `path` (of it, the entries of page `page` when one is named) into what a replay
    /// serves. Each entry is drafted (`HARReplayEntries.draft`) by a worker as soon as it is
    /// parsed, then dropped: the parsed HAR never exists whole, and a HAR of many small entries
    /// loads in memory close to its queue's. Throws a `UsageError` naming the file when it cannot
    /// be read or is not a HAR, or the page is not in it.
    ///
    /// The entries are slimmed (`HARReplayEntries.slimmed`), so `options` must match no request
    /// headers; and no response header is dropped as volatile (a replay serves what was recorded).
    static func load(path: String, page: String?, options: HARReplayOptions,
                     proxyAnswersAsFailures: Bool) throws -> LoadedReplay {
        precondition(options.headers == .none && options.scenario.droppedResponseHeaders.isEmpty,
                     "a replay loaded entry by entry matches no request headers and drops no response header")
        // Mapped through the descriptor the bodies are read from later: the same file, even if
        // the path is replaced meanwhile.
        var fd = open(path, O_RDONLY | O_CLOEXEC)
        var keepDescriptor = false
        defer { if !keepDescriptor && fd >= 0 { close(fd) } }
        let document: HARLazyDocument
        do {
            failOnTruncation(of: path)
            if fd >= 0, let file = try HARLazyDocument(mappingDescriptor: fd) {
                document = file
            } else {
                if fd >= 0 { close(fd) }
                fd = -1
                document = try HARLazyDocument(try readFileOrUsageError(path))
            }
        } catch let error as HARReadError {
            throw Self.readError(path, error)
        }
        var selected: String?
        if let page {
            do throws(HARPages.PageError) {
                selected = try HARPages.select(document.head, page: page).pages?.first?.id
            } catch {
                throw UsageError(error.description)
            }
        }
        let pageID = selected

        let count = document.entryCount
        // When each entry started (NaN: unparsable, or not on the page), for the queue's order.
        var instants = [Double](repeating: .nan, count: count)
        var batches = [DraftedBatch](repeating: DraftedBatch(), count: (count + Self.batch - 1) / Self.batch)
        let kept = Atomic<Int>(0)
        let mapped = fd >= 0
        instants.withUnsafeMutableBufferPointer { instantSlots in
            batches.withUnsafeMutableBufferPointer { batchSlots in
                let at = UnsafeSendable(instantSlots), out = UnsafeSendable(batchSlots)
                DispatchQueue.concurrentPerform(iterations: batchSlots.count) { b in
                    let range = (b * Self.batch)..<min(count, (b + 1) * Self.batch)
                    var batch = DraftedBatch()
                    var pairs: [(url: String, httpVersion: String)] = []
                    for i in range {
                        do throws(HARReadError) {
                            let (entry, text) = try Self.parsed(document, entry: i, mapped: mapped, kept: kept)
                            if let pageID, entry.pageref != pageID { continue }
                            at.value[i] = HARScenarioBuilder.instant(of: entry)
                            if HARReplayEntries.deferredBody(of: entry) != nil {
                                batch.leftOut.append(i)
                                if let text { batch.locations[i] = text }
                            }
                            batch.drafts.append(HARReplayEntries.draft(of: entry, index: i, options: options, dropping: [],
                                                                        proxyAnswersAsFailures: proxyAnswersAsFailures))
                            if entry.custom.contains(where: { $0.key == "_webSocketMessages" }) {
                                batch.webSockets.append((i, entry))
                            }
                            batch.tunnels.add(entry)
                            pairs.append((entry.request.url, entry.request.httpVersion))
                            pairs.append((entry.request.url, entry.response.httpVersion))
                        } catch {
                            if batch.failure == nil { batch.failure = error }
                        }
                    }
                    batch.http2Hosts = ReplayService.http2Hosts(pairs)
                    out.value[b] = batch
                    // Parsed: these pages of the file may leave memory.
                    document.dropResidentBytes(ofEntries: range)
                }
            }
        }
        if let failure = batches.lazy.compactMap(\.failure).first { throw Self.readError(path, failure) }

        // The batches in log order, each let go once taken.
        var drafts = EntryDrafts()
        drafts.queued.reserveCapacity(batches.reduce(0) { $0 + $1.drafts.queued.count })
        drafts.bodies.reserveCapacity(drafts.queued.capacity)
        var webSockets: [(index: Int, entry: HAREntry)] = []
        var tunnels = HARReplayRefusedTunnels()
        var http2Hosts: [String: Bool] = [:]
        var ranges: [Int: Range<Int>] = [:]
        var locations: [Int: LeftOutText] = [:]
        var leftOut = 0
        for b in batches.indices {
            let batch = batches[b]
            batches[b] = DraftedBatch()
            drafts.append(contentsOf: batch.drafts)
            webSockets += batch.webSockets
            tunnels.add(contentsOf: batch.tunnels)
            http2Hosts.merge(batch.http2Hosts) { $0 || $1 }
            for i in batch.leftOut { ranges[i] = document.sourceRange(ofEntry: i) }
            leftOut += batch.leftOut.count
            locations.merge(batch.locations) { _, new in new }
        }
        batches = []

        let resolved = HARScenarioBuilder.resolved(instants)
        var socketLog = document.head
        socketLog.entries = webSockets.map(\.entry)
        let conversations = HARReplayConversations.make(from: socketLog, options: options,
                                                        instants: webSockets.map { resolved[$0.index] })
        let queue = HARReplayEntries.finish(consume drafts, instants: instants, options: options)
        let bodies: ReplayHARFile
        if leftOut == 0 {
            bodies = ReplayHARFile(.none)
        } else if fd >= 0, ranges.count == leftOut {
            keepDescriptor = true
            bodies = ReplayHARFile(.file(fd: fd, ranges: ranges, locations: locations))
        } else {
            bodies = ReplayHARFile(.document(document))
        }
        return LoadedReplay(queue: queue, webSockets: conversations, refusedTunnels: tunnels.refusedTargets,
                            http2Hosts: http2Hosts, bodies: bodies)
    }

    /// Entry `i` as a replay keeps it, slimmed, with its response body left in the file when it
    /// is large (and where that text lies), or its whole response once `kept` passed
    /// `keptResponseBytes`.
    private static func parsed(_ document: HARLazyDocument, entry i: Int, mapped: Bool,
                               kept: borrowing Atomic<Int>) throws(HARReadError) -> (HAREntry, LeftOutText?) {
        let bytes = document.byteCount(ofEntry: i)
        // A large entry's body text stays in the file, never parsed into memory.
        if mapped && bytes > Self.keptBodyBytes,
           let (entry, text) = document.entryLeavingOutResponseText(i), text.textCount > Self.keptBodyBytes {
            // Its text was read through to check it: those pages go now, not with the batch
            // (64 such entries are a GB).
            document.dropResidentBytes(ofEntries: i..<(i + 1))
            return (Self.markedLeftOut(HARReplayEntries.slimmed(entry), index: i), text)
        }
        let entry = Self.leavingLargeBodyOut(HARReplayEntries.slimmed(try document.entry(i)), index: i)
        // Past the budget, a plain answer's head and body wait in the file too.
        if mapped, HARReplayEntries.deferredBody(of: entry) == nil, Self.isPlainAnswer(entry),
           kept.add(bytes, ordering: .relaxed).newValue > Self.keptResponseBytes {
            return (Self.leavingResponseOut(entry, index: i), nil)
        }
        return (entry, nil)
    }
}

/// A buffer written by `concurrentPerform`'s iterations, each to its own slots.
private struct UnsafeSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

private func readFileOrUsageError(_ path: String) throws -> [UInt8] {
    do {
        return try readFile(path)
    } catch {
        throw UsageError("cannot read \(path): \(error)")
    }
}
