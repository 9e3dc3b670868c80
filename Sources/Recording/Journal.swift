import Synchronization

/// Where a flow's records are in the journal: enough to sort flows by start and read them back.
/// This is all a recording keeps in memory per exchange; bodies live in the journal.
struct JournalIndexEntry: Sendable {
    var requestStart: Double
    var id: UInt64
    /// The flow record, or for a WebSocket the start record.
    var offset: UInt64
    /// For a WebSocket: index into `JournalIndex.webSockets`; -1 otherwise.
    var webSocket: Int32 = -1
    var failed: Bool
    /// The record's length (a WebSocket's messages and end are counted in its records).
    var bytes = 0
    /// The kind of the record at `offset`: `.flow`, `.webSocketStart`, or `.flowInFlight` for an
    /// exchange the recording stopped in (built from that snapshot and its body parts).
    var record = JournalRecordKind.flow
}

/// The records of one WebSocket conversation.
struct JournalWebSocketRecords: Sendable {
    var messages: [UInt64] = []
    /// The lengths of the message and end records.
    var bytes = 0
    /// The end record, when the conversation ended before the journal did.
    var end: UInt64?
}

/// The in-memory index of a journal, built while recording or by reading a journal back.
struct JournalIndex: Sendable {
    var entries: [JournalIndexEntry] = []
    var webSockets: [JournalWebSocketRecords] = []
    /// Flow id to the index of its WebSocket records, while its conversation may still add some.
    var webSocketByFlow: [UInt64: Int32] = [:]
    var failures = 0
    /// Scenario markers, in the order they came (few: kept whole, not as offsets).
    var pageMarks: [PageMark] = []
    /// Flow id to its entry, kept only when flows are looked up while recording (the live view).
    var entryByFlow: FlowIDTable?
    /// Flows left out of the export (`ExportDecision`).
    var excluded: Set<UInt64> = []
    /// Flows moved to another page (`PageMove`).
    var pageOverrides: [UInt64: Int] = [:]
    /// The body parts journaled before their flows' records, by flow id (only large bodies
    /// have any).
    var bodyParts: [UInt64: JournalBodyParts] = [:]
    /// While a journal is read back: each flow's latest `flowInFlight` snapshot.
    var inFlight: [UInt64: JournalIndexEntry] = [:]

    mutating func apply(_ decision: ExportDecision) {
        if decision.excluded { excluded.insert(decision.flowID) } else { excluded.remove(decision.flowID) }
    }

    mutating func addFlow(id: UInt64, requestStart: Double, offset: UInt64, failed: Bool, bytes: Int) {
        entryByFlow?[id] = entries.count
        entries.append(JournalIndexEntry(requestStart: requestStart, id: id, offset: offset, failed: failed, bytes: bytes))
        if failed { failures += 1 }
    }

    mutating func addWebSocketStart(id: UInt64, requestStart: Double, offset: UInt64, bytes: Int) {
        let slot = Int32(webSockets.count)
        webSockets.append(JournalWebSocketRecords())
        webSocketByFlow[id] = slot
        entryByFlow?[id] = entries.count
        entries.append(JournalIndexEntry(requestStart: requestStart, id: id, offset: offset, webSocket: slot, failed: false,
                                         bytes: bytes))
    }

    /// False when no start record was seen for `flowID` (the message is then dropped).
    @discardableResult
    mutating func addWebSocketMessage(flowID: UInt64, offset: UInt64, bytes: Int) -> Bool {
        guard let slot = webSocketByFlow[flowID] else { return false }
        webSockets[Int(slot)].messages.append(offset)
        webSockets[Int(slot)].bytes += bytes
        return true
    }

    @discardableResult
    mutating func addWebSocketEnd(flowID: UInt64, offset: UInt64, bytes: Int) -> Bool {
        guard let slot = webSocketByFlow.removeValue(forKey: flowID) else { return false }
        webSockets[Int(slot)].end = offset
        webSockets[Int(slot)].bytes += bytes
        return true
    }

    /// Once a journal is read back: every flow with a snapshot in flight and no record of its
    /// own (the recording stopped while its body crossed) becomes an entry, as a failure.
    mutating func addFlowsCutShort() {
        guard !inFlight.isEmpty else { return }
        let ended = Set(entries.map(\.id))
        for (id, snapshot) in inFlight.sorted(by: { $0.value.offset < $1.value.offset }) where !ended.contains(id) {
            entryByFlow?[id] = entries.count
            entries.append(snapshot)
            failures += 1
        }
        inFlight = [:]
    }

    /// The entries in HAR order: by request start, ties by arrival.
    func inStartOrder() -> [JournalIndexEntry] {
        entries.sorted { a, b in a.requestStart != b.requestStart ? a.requestStart < b.requestStart : a.id < b.id }
    }
}

/// What the session record says: who wrote the journal, for which file.
public struct JournalSession: Sendable, Equatable {
    public var layoutVersion: UInt8
    public var harrecVersion: String
    public var processID: Int
    public var started: Double
    public var harPath: String

    public init(layoutVersion: UInt8 = JournalFrame.layoutVersion, harrecVersion: String, processID: Int,
                started: Double, harPath: String) {
        self.layoutVersion = layoutVersion
        self.harrecVersion = harrecVersion
        self.processID = processID
        self.started = started
        self.harPath = harPath
    }

    func encoded() -> [UInt8] {
        var e = FlowEncoder()
        e.u8(layoutVersion)
        e.string(harrecVersion)
        e.uint(UInt64(processID))
        e.double(started)
        e.string(harPath)
        return e.bytes
    }

    init(decoding payload: UnsafeRawBufferPointer) throws(FlowDecodeError) {
        var d = FlowDecoder(payload)
        layoutVersion = try d.u8()
        harrecVersion = try d.string()
        processID = Int(clamping: try d.uint())
        started = try d.double()
        harPath = try d.string()
    }
}

/// Record payloads for WebSocket messages: the flow id, then the message.
enum WebSocketMessageRecord {
    static func encode(_ message: RecordedWebSocketMessage, flowID: UInt64) -> [UInt8] {
        var e = FlowEncoder()
        e.bytes = JournalFrame.open(capacity: 32 + message.data.count)
        e.uint(flowID)
        message.encode(into: &e)
        JournalFrame.seal(&e.bytes, kind: .webSocketMessage)
        return e.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> (flowID: UInt64, message: RecordedWebSocketMessage) {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        let message = try RecordedWebSocketMessage(decoding: &d)
        guard d.isAtEnd else { throw d.failure("unexpected bytes after the message") }
        return (id, message)
    }
}

enum ExportDecisionRecord {
    static func encode(_ decision: ExportDecision) -> [UInt8] {
        var e = FlowEncoder()
        e.bytes = JournalFrame.open(capacity: 16)
        e.uint(decision.flowID)
        e.bool(decision.excluded)
        JournalFrame.seal(&e.bytes, kind: .exportDecision)
        return e.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> ExportDecision {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        let excluded = try d.bool()
        guard d.isAtEnd else { throw d.failure("unexpected bytes after the export decision") }
        return ExportDecision(flowID: id, excluded: excluded)
    }
}

enum PageMoveRecord {
    static func encode(_ move: PageMove) -> [UInt8] {
        var e = FlowEncoder()
        e.bytes = JournalFrame.open(capacity: 16)
        e.uint(move.flowID)
        e.uint(UInt64(bitPattern: Int64(move.page)))
        JournalFrame.seal(&e.bytes, kind: .pageMove)
        return e.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> PageMove {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        let page = Int64(bitPattern: try d.uint())
        guard d.isAtEnd, page >= -1, page < Int64(Int32.max) else { throw d.failure("a bad page move") }
        return PageMove(flowID: id, page: Int(page))
    }
}

enum PageMarkRecord {
    static func encode(_ mark: PageMark) -> [UInt8] {
        var e = FlowEncoder()
        e.bytes = JournalFrame.open(capacity: 16 + mark.name.utf8.count)
        e.double(mark.time)
        e.string(mark.name)
        JournalFrame.seal(&e.bytes, kind: .pageMark)
        return e.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> PageMark {
        var d = FlowDecoder(payload)
        let time = try d.double()
        let name = try d.string()
        guard d.isAtEnd else { throw d.failure("unexpected bytes after the page mark") }
        return PageMark(name: name, time: time)
    }
}

extension Flow {
    /// A whole journal record of `kind` holding this flow.
    func journalRecord(_ kind: JournalRecordKind) -> [UInt8] {
        var record = encoded(after: JournalFrame.open())
        JournalFrame.seal(&record, kind: kind)
        return record
    }
}
