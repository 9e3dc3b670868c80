import ProxyCore
import Recording
import Synchronization

/// One recorded exchange as the live view lists it: what a row shows and a filter reads.
public struct LiveFlowSummary: Sendable, Equatable {
    /// Its place in the list, from 0, in the order flows finished.
    public var seq: Int
    public var id: UInt64
    public var method: String
    public var url: String
    /// Nil when no response came (the error says why).
    public var status: Int?
    /// "h1", "h2" or "ws".
    public var transport: String
    public var requestBytes: Int
    public var responseBytes: Int
    /// From the request's start to the end of the exchange (for a WebSocket, so far).
    public var milliseconds: Double
    /// When the request started (seconds since 1970).
    public var started: Double
    /// The page (scenario) it belongs to: an index into `LiveIndex.pages`, -1 before any mark.
    public var page: Int
    public var error: String?
    public var mimeType: String?
    /// A WebSocket conversation still open.
    public var open: Bool
    /// WebSocket messages so far.
    public var messages: Int
    /// Left out of the HAR (the view's "leave out").
    public var excluded = false
    /// `harrec replay`: the HAR item that answered (nil for a recorded flow).
    public var replayItem: String?
}

/// A scenario mark as the live view shows it: a section of the list.
public struct LivePage: Sendable, Equatable {
    public var title: String
    public var started: Double
    /// The first flow's `seq` in this page (flows finished after the mark).
    public var firstSeq: Int
}

/// What the live view knows of the recording: a summary per flow and the pages, in memory, and a
/// change log that event streams follow. Updated by `LiveSink` from the recording's threads and
/// read by the view's sessions; every call holds the lock only to copy a few values.
public final class LiveIndex: Sendable {
    struct State {
        var flows = ChunkedRows<LiveRow>()
        /// The rows' strings.
        let strings = ByteArena()
        var pages: [LivePage] = []
        var seqByID = FlowIDTable()
        /// Hosts whose flows are left out, those to come included.
        var excludedHosts: Set<String> = []
        /// Every change in order: a flow's seq (added or updated), or `-1 - pageIndex` for a mark.
        var changes: [Int] = []
    }

    private let state = Mutex(State())
    private let anyHostExcluded = Atomic<Bool>(false)

    public init() {}

    /// A finished exchange, or a WebSocket conversation as it starts (open) and as it ends. The
    /// row is made before taking the lock, which then guards a few stores and the copy of its
    /// strings.
    public func record(_ flow: Flow) {
        var row = LiveRow(flow, page: -1)
        state.withLock { state in
            row.store(stringsOf: flow, in: state.strings)
            let seq: Int
            if let known = state.seqByID[flow.id] {
                seq = known
                row.page = state.flows[seq].page
                row.excluded = state.flows[seq].excluded
                state.flows[seq] = row
            } else {
                seq = state.flows.count
                row.page = Int32(state.pages.count - 1)
                state.flows.append(row)
                state.seqByID[flow.id] = seq
            }
            state.changes.append(seq)
        }
    }

    /// One more message of conversation `flowID`.
    public func countMessage(flowID: UInt64, at time: Double) {
        state.withLock { state in
            guard let seq = state.seqByID[flowID] else { return }
            state.flows[seq].messages &+= 1
            state.flows[seq].milliseconds = max(state.flows[seq].milliseconds, (time - state.flows[seq].started) * 1000)
            state.changes.append(seq)
        }
    }

    /// A flow left out of the HAR, or put back, as the journal was told.
    public func apply(_ decision: ExportDecision) {
        state.withLock { state in
            guard let seq = state.seqByID[decision.flowID], state.flows[seq].excluded != decision.excluded else { return }
            state.flows[seq].excluded = decision.excluded
            state.changes.append(seq)
        }
    }

    /// Leaves `host`'s flows out (or puts them back), those to come included: the decisions for
    /// the flows recorded so far, to tell the journal.
    public func setHost(_ host: String, excluded: Bool) -> [ExportDecision] {
        state.withLock { state in
            if excluded { state.excludedHosts.insert(host) } else { state.excludedHosts.remove(host) }
            anyHostExcluded.store(!state.excludedHosts.isEmpty, ordering: .relaxed)
            let strings = state.strings.chunks
            return state.flows.filter { $0.excluded != excluded && Self.host(of: ByteArena.string($0.url, in: strings) ?? "") == host }
                .map { ExportDecision(flowID: $0.id, excluded: excluded) }
        }
    }

    /// A flow moved to another page, as the journal was told.
    public func apply(_ move: PageMove) {
        state.withLock { state in
            guard let seq = state.seqByID[move.flowID], state.flows[seq].page != Int32(clamping: move.page) else { return }
            state.flows[seq].page = Int32(clamping: move.page)
            state.changes.append(seq)
        }
    }

    /// Whether flows to `host` are left out as they come.
    public func isExcluded(host: String) -> Bool { state.withLock { $0.excludedHosts.contains(host) } }

    /// Whether any host is left out (read without the lock: most recordings leave none out, and
    /// a flow then costs no host parsing).
    public var leavesHostsOut: Bool { anyHostExcluded.load(ordering: .relaxed) }

    public var excludedHosts: Set<String> { state.withLock { $0.excludedHosts } }

    /// `host[:port]` of an absolute URL, lowercased.
    public static func host(of url: String) -> String {
        let bytes = Array(url.utf8)
        var start = 0
        while start + 2 < bytes.count && !(bytes[start] == 0x3A && bytes[start + 1] == 0x2F && bytes[start + 2] == 0x2F) { start += 1 }
        guard start + 2 < bytes.count else { return "" }
        start += 3
        var end = start
        while end < bytes.count && bytes[end] != 0x2F && bytes[end] != 0x3F && bytes[end] != 0x23 { end += 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self).lowercased()
    }

    /// Ids of the replay's answers: far above any flow id, so a forwarded flow never meets one.
    static let firstReplayID: UInt64 = 1 << 62

    /// What `harrec replay` did, from its live-log events: an answer from the HAR (with its item),
    /// a 599 for a request that matched nothing (its diagnosis as the error), an exchange it
    /// forwarded (`--passthrough`), or a reset of its queues (as a section of the list).
    public func recordReplay(_ event: LiveEvent, at time: Double) {
        switch event.kind {
        case .replayed(let method, let url, let status, let label):
            addReplayed(method: method, url: url, status: status, item: label, error: status == nil ? "the recorded failure, replayed" : nil, at: time)
        case .replayUnmatched(let method, let url, let diagnosis):
            addReplayed(method: method, url: url, status: 599, item: nil, error: diagnosis, at: time)
        case .exchange(let flow), .exchangeFailed(let flow, _, _, _):
            record(flow)
        case .replayReset(let trigger):
            mark(PageMark(name: "queues reset (\(trigger))", time: time))
        default:
            break
        }
    }

    private func addReplayed(method: String, url: String, status: Int?, item: String?, error: String?, at time: Double) {
        state.withLock { state in
            let seq = state.flows.count
            let id = Self.firstReplayID + UInt64(seq)
            var row = LiveRow(replayed: id, status: status, at: time, page: state.pages.count - 1)
            row.method = state.strings.append(method)
            row.url = state.strings.append(url)
            row.error = state.strings.append(error)
            row.replayItem = state.strings.append(item ?? "no item matched")
            state.flows.append(row)
            state.seqByID[id] = seq
            state.changes.append(seq)
        }
    }

    public func mark(_ mark: PageMark) {
        state.withLock { state in
            state.pages.append(LivePage(title: mark.name, started: mark.time, firstSeq: state.flows.count))
            state.changes.append(-state.pages.count)
        }
    }

    /// Flows from `seq` on, at most `limit`, the pages, how many flows there are, and the change
    /// cursor of this moment (an event stream asked from it misses nothing that came after).
    public func flows(from seq: Int, limit: Int) -> (flows: [LiveFlowSummary], pages: [LivePage], total: Int, cursor: Int) {
        state.withLock { state in
            let start = min(max(0, seq), state.flows.count)
            let end = min(state.flows.count, start + max(0, limit))
            let strings = state.strings.chunks
            let flows = (start..<end).map { state.flows[$0].summary(seq: $0, strings: strings) }
            return (flows, state.pages, state.flows.count, state.changes.count)
        }
    }

    public var flowCount: Int { state.withLock { $0.flows.count } }

    /// The summary of flow `id`, if it was recorded.
    public func summary(id: UInt64) -> LiveFlowSummary? {
        state.withLock { state in state.seqByID[id].map { state.flows[$0].summary(seq: $0, strings: state.strings.chunks) } }
    }

    /// What changed after the first `cursor` changes, as a stream sends it: flows (added or
    /// updated, each once, in change order) and new pages; and the cursor to ask from next time.
    /// At most `limit` changes are taken at a time. The rows are copied as plain data under the
    /// lock, and their strings are read from the arena after it.
    public func changes(after cursor: Int, limit: Int = 2000) -> LiveChanges {
        state.withLock { state in
            let start = min(max(0, cursor), state.changes.count)
            let end = min(state.changes.count, start + limit)
            // Each flow once: one whose seq is above every one taken so far is new to this look
            // (`rising` stays sorted), so the common case hashes nothing while the loops wait
            // on the lock; only an update of an earlier flow is looked up.
            var rising: [Int] = []
            var updated = Set<Int>()
            var rows: [(seq: Int, row: LiveRow)] = []
            rows.reserveCapacity(end - start)
            var pages: [(Int, LivePage)] = []
            for change in state.changes[start..<end] {
                if change < 0 {
                    pages.append((-1 - change, state.pages[-1 - change]))
                } else if change > (rising.last ?? -1) {
                    rising.append(change)
                    rows.append((change, state.flows[change]))
                } else if !Self.sortedContains(rising, change) && updated.insert(change).inserted {
                    rows.append((change, state.flows[change]))
                }
            }
            return LiveChanges(rows: rows, strings: state.strings.chunks, pages: pages, cursor: end)
        }
    }
}

/// A look at the index's changes: the rows that changed, with the arena chunks their strings
/// are in, the new pages, and the cursor to ask from next time.
public struct LiveChanges: @unchecked Sendable {
    let rows: [(seq: Int, row: LiveRow)]
    let strings: [ByteArena.Chunk]
    public let pages: [(index: Int, page: LivePage)]
    public let cursor: Int

    public var isEmpty: Bool { rows.isEmpty && pages.isEmpty }

    /// The changed flows' summaries.
    public var flows: [LiveFlowSummary] { rows.map { $0.row.summary(seq: $0.seq, strings: strings) } }

    /// The flows as a JSON array, each as `LiveFlowSummary.json` has it.
    func writeFlows(to out: inout [UInt8]) {
        out.append(0x5B)
        for (k, (seq, row)) in rows.enumerated() {
            if k > 0 { out.append(0x2C) }
            row.write(seq: seq, strings: strings, to: &out)
        }
        out.append(0x5D)
    }
}

extension LiveIndex {
    static func sortedContains(_ sorted: [Int], _ value: Int) -> Bool {
        var (low, high) = (0, sorted.count)
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low < sorted.count && sorted[low] == value
    }
}

/// The recording's sink with the live view beside it: every flow, message and mark goes to
/// `inner` (the journal) first, then to the index.
public final class LiveSink: FlowSink, Sendable {
    let inner: any FlowSink
    public let index: LiveIndex

    public init(_ inner: any FlowSink, index: LiveIndex) {
        self.inner = inner
        self.index = index
    }

    public func record(_ flow: Flow) {
        inner.record(flow)
        index.record(flow)
        leaveOutIfItsHostIs(flow)
    }

    /// A flow to a host the view leaves out is left out as it comes.
    func leaveOutIfItsHostIs(_ flow: Flow) {
        guard index.leavesHostsOut, index.isExcluded(host: LiveIndex.host(of: flow.request.url)) else { return }
        recordExportDecision(ExportDecision(flowID: flow.id, excluded: true))
    }

    public func recordPageMark(_ mark: PageMark) {
        inner.recordPageMark(mark)
        index.mark(mark)
    }

    public func recordExportDecision(_ decision: ExportDecision) {
        inner.recordExportDecision(decision)
        index.apply(decision)
    }

    public func recordPageMove(_ move: PageMove) {
        inner.recordPageMove(move)
        index.apply(move)
    }

    public var streamsWebSocketMessages: Bool { inner.streamsWebSocketMessages }

    public func recordWebSocketStart(_ flow: Flow) {
        inner.recordWebSocketStart(flow)
        var open = flow
        open.webSocket?.isOpen = true
        index.record(open)
        leaveOutIfItsHostIs(flow)
    }

    public func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64) {
        inner.recordWebSocketMessage(message, flowID: flowID)
        index.countMessage(flowID: flowID, at: message.time)
    }

    public var streamsBodies: Bool { inner.streamsBodies }

    public func recordBodyPart(_ part: RecordedBodyPart) { inner.recordBodyPart(part) }
}
