import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The recording log of `harrec record`: every finished exchange and every WebSocket message goes
/// to the journal as it completes (see `JournalWriter` for when it is on disk), and memory keeps
/// only the index. RSS therefore does not grow with the bytes recorded.
public final class JournalLog: FlowSink, @unchecked Sendable {
    public let harPath: String
    private let fd: Int32
    private let writer: JournalWriter
    private let index = Mutex(JournalIndex())

    /// The journal's file opened for reading while recording (`storedFlow`), once asked.
    private let reader = Mutex<Int32?>(nil)

    /// Creates the journal of `harPath` and writes its session record. Throws when a journal is
    /// already there or cannot be created. `readsBack`: flows are looked up by id while recording
    /// (`storedFlow`, for the live view), which keeps an id-to-entry table.
    public init(harPath: String, harrecVersion: String, started: Double, readsBack: Bool = false,
                onError: @escaping @Sendable (String) -> Void) throws {
        self.harPath = harPath
        if readsBack { index.withLock { $0.entryByFlow = FlowIDTable() } }
        fd = try JournalFile.create(for: harPath)
        do {
            writer = try JournalWriter(fd: fd, size: 0, onError: onError)
        } catch {
            // Nothing was recorded: leave no journal behind for the next run to refuse.
            close(fd)
            let directory = JournalFile.directory(for: harPath)
            unlink(JournalFile.recordsPath(in: directory))
            rmdir(directory)
            throw error
        }
        let session = JournalSession(harrecVersion: harrecVersion, processID: JournalFile.processID,
                                     started: started, harPath: harPath)
        writer.append(JournalFrame.record(.session, session.encoded()))
    }

    public var streamsWebSocketMessages: Bool { true }

    public func record(_ flow: Flow) {
        if flow.webSocket != nil, index.withLock({ $0.webSocketByFlow[flow.id] != nil }) {
            var end = flow
            end.webSocket?.messages = []
            let record = end.journalRecord(.webSocketEnd)
            let offset = writer.append(record)
            index.withLock { _ = $0.addWebSocketEnd(flowID: flow.id, offset: offset, bytes: record.count) }
            return
        }
        let record = flow.journalRecord(.flow)
        let offset = writer.append(record)
        index.withLock { $0.addFlow(id: flow.id, requestStart: flow.instants.requestStart, offset: offset,
                                    failed: flow.error != nil, bytes: record.count) }
    }

    public func recordPageMark(_ mark: PageMark) {
        writer.append(PageMarkRecord.encode(mark))
        index.withLock { $0.pageMarks.append(mark) }
    }

    public func recordExportDecision(_ decision: ExportDecision) {
        writer.append(ExportDecisionRecord.encode(decision))
        index.withLock { $0.apply(decision) }
    }

    public func recordPageMove(_ move: PageMove) {
        writer.append(PageMoveRecord.encode(move))
        index.withLock { $0.pageOverrides[move.flowID] = move.page }
    }

    public func recordWebSocketStart(_ flow: Flow) {
        let record = flow.journalRecord(.webSocketStart)
        let offset = writer.append(record)
        index.withLock { $0.addWebSocketStart(id: flow.id, requestStart: flow.instants.requestStart, offset: offset,
                                              bytes: record.count) }
    }

    public func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64) {
        let record = WebSocketMessageRecord.encode(message, flowID: flowID)
        let offset = writer.append(record)
        index.withLock { _ = $0.addWebSocketMessage(flowID: flowID, offset: offset, bytes: record.count) }
    }

    public var streamsBodies: Bool { true }

    public func recordBodyPart(_ part: RecordedBodyPart) {
        // Only `recover` reads the snapshot: a running recording's index has no use for it.
        if let flow = part.flowSoFar { _ = writer.append(flow.journalRecord(.flowInFlight)) }
        let record = BodyPartRecord.encode(part)
        let offset = writer.append(record)
        index.withLock { $0.addBodyPart(part, offset: offset, bytes: record.count) }
    }

    /// Exchanges recorded so far.
    public var count: Int { index.withLock { $0.entries.count } }

    /// Bytes appended to the journal so far.
    public var journalBytes: UInt64 { writer.appendedBytes }

    /// Flow `id` as the journal holds it, read back from the file (a WebSocket conversation still
    /// open has its messages so far). Nil for an id it does not know, or records not yet on disk
    /// (the writer flushes within `JournalWriter.flushInterval`). Needs `readsBack`. The index's lock
    /// is held only to copy the flow's offsets; the reads happen outside it.
    public func storedFlow(id: UInt64) -> Flow? {
        let found = index.withLock { index -> (JournalIndexEntry, JournalWebSocketRecords?, JournalBodyParts?)? in
            guard let k = index.entryByFlow?[id] else { return nil }
            let entry = index.entries[k]
            return (entry, entry.webSocket >= 0 ? index.webSockets[Int(entry.webSocket)] : nil, index.bodyParts[id])
        }
        guard let (entry, records, parts) = found else { return nil }
        let fd: Int32? = reader.withLock { fd in
            if fd == nil {
                fd = try? JournalFile.openForReading(JournalFile.recordsPath(in: JournalFile.directory(for: harPath)), lock: false)
            }
            return fd
        }
        guard let fd else { return nil }
        return try? JournalContents.flow(entry, records, parts, fd: fd)
    }

    /// What the journal holds now, for an export while recording (the live view's "export now"):
    /// every record appended so far, once the writer has put it in the file (within
    /// `JournalWriter.flushInterval`; this waits for it, so call it off the event loops), read
    /// from a file descriptor of its own. A WebSocket conversation still going is exported as
    /// open, with the messages so far. Throws when the writer does not catch up in 5 s.
    public func snapshot() throws -> JournalContents {
        let boundary = writer.appendedBytes
        // Taken after the boundary: every record it indexes below the boundary is whole once the
        // file reaches it; records appended since are left for the next snapshot.
        var copy = index.withLock { $0 }
        for _ in 0..<250 where writer.writtenBytes < boundary { sleepThread(seconds: 0.02) }
        guard writer.writtenBytes >= boundary else {
            throw FileWriteError(description: "the journal is behind (is the disk full?); try again")
        }
        copy.entryByFlow = nil
        copy.entries.removeAll { $0.offset >= boundary }
        for k in copy.webSockets.indices {
            copy.webSockets[k].messages.removeAll { $0 >= boundary }
            if let end = copy.webSockets[k].end, end >= boundary { copy.webSockets[k].end = nil }
        }
        // A flow below the boundary has every part below it (its parts came first).
        let kept = Set(copy.entries.map(\.id))
        copy.bodyParts = copy.bodyParts.filter { kept.contains($0.key) }
        let fd = try JournalFile.openForReading(JournalFile.recordsPath(in: JournalFile.directory(for: harPath)), lock: false)
        return JournalContents(fd: fd, index: copy)
    }

    /// Writes and syncs what is queued, stops appending, and opens the journal for the export.
    /// Call it after the proxy has stopped recording.
    public func finish() throws -> JournalContents {
        if let fd = reader.withLock({ fd in defer { fd = nil }; return fd }) { JournalFile.closeFile(fd) }
        try writer.close()
        JournalFile.closeFile(fd)
        let path = JournalFile.recordsPath(in: JournalFile.directory(for: harPath))
        let readFD = try JournalFile.openForReading(path, lock: false)
        return JournalContents(fd: readFD, index: index.withLock { $0 })
    }
}

/// A journal opened for reading: its flows in HAR order, read on demand from any thread.
public final class JournalContents: FlowSource, @unchecked Sendable {
    let fd: Int32
    let ordered: [JournalIndexEntry]
    private let webSockets: [JournalWebSocketRecords]
    let bodyParts: [UInt64: JournalBodyParts]
    /// Exchanges that ended in an error.
    public let failures: Int
    public let pageMarks: [PageMark]

    /// The flows left out of the export are not among `ordered`.
    init(fd: Int32, index: JournalIndex) {
        self.fd = fd
        ordered = index.inStartOrder().filter { !index.excluded.contains($0.id) }
        webSockets = index.webSockets
        bodyParts = index.bodyParts
        failures = index.excluded.isEmpty ? index.failures : ordered.filter(\.failed).count
        pageMarks = index.pageMarks
        leftOut = index.excluded.count
        pageOverrides = index.pageOverrides
    }

    /// Flows moved to another page than their start puts them in.
    public let pageOverrides: [UInt64: Int]

    /// Flows the recording chose to leave out of the HAR (`ExportDecision`).
    public let leftOut: Int

    deinit { JournalFile.closeFile(fd) }

    public var count: Int { ordered.count }

    public func byteCount(at i: Int) -> Int {
        let entry = ordered[i]
        return entry.bytes + (entry.webSocket >= 0 ? webSockets[Int(entry.webSocket)].bytes : 0)
            + (bodyParts.isEmpty ? 0 : bodyParts[entry.id]?.bytes ?? 0)
    }

    public func flow(at i: Int) throws -> Flow {
        let entry = ordered[i]
        return try Self.flow(entry, entry.webSocket >= 0 ? webSockets[Int(entry.webSocket)] : nil,
                             bodyParts.isEmpty ? nil : bodyParts[entry.id], fd: fd)
    }

    /// The flow of `entry` (with its WebSocket `records` and its body `parts`), read from `fd`.
    static func flow(_ entry: JournalIndexEntry, _ records: JournalWebSocketRecords?, _ parts: JournalBodyParts?,
                     fd: Int32) throws -> Flow {
        guard let records else {
            var flow = try read(fd, at: entry.offset, expecting: entry.record) { try Flow(decoding: $0) }
            if entry.record == .flowInFlight {
                try flow.completeCutShort(snapshotOffset: entry.offset, parts: parts?.offsets ?? []) { offset in
                    try read(fd, at: offset, expecting: .bodyPart) { try BodyPartRecord.decode($0) }
                }
            } else if let parts {
                // A flow's parts come before its record (they are sent while it is in flight).
                let offsets = parts.offsets.filter { $0 < entry.offset }
                try flow.prependBodyParts(count: offsets.count) { k in
                    try read(fd, at: offsets[k], expecting: .bodyPart) { try BodyPartRecord.decode($0) }
                }
            }
            return flow
        }
        var flow: Flow
        if let end = records.end {
            flow = try read(fd, at: end, expecting: .webSocketEnd) { try Flow(decoding: $0) }
        } else {
            // The journal ended inside the conversation (a crash), or it is still going: open.
            flow = try read(fd, at: entry.offset, expecting: .webSocketStart) { try Flow(decoding: $0) }
            flow.webSocket?.isOpen = true
        }
        var messages: [RecordedWebSocketMessage] = []
        messages.reserveCapacity(records.messages.count)
        for offset in records.messages {
            messages.append(try read(fd, at: offset, expecting: .webSocketMessage) { try WebSocketMessageRecord.decode($0).message })
        }
        if records.end == nil { flow.instants.end = messages.last?.time ?? flow.instants.end }
        flow.webSocket?.messages = messages
        return flow
    }

    /// Reads the record at `offset`, checks its frame and checksum, and decodes its payload.
    static func read<T>(_ fd: Int32, at offset: UInt64, expecting kind: JournalRecordKind,
                                _ decode: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let headerBytes = try JournalFile.read(fd, at: offset, count: JournalFrame.headerSize)
        guard let header = headerBytes.withUnsafeBytes({ JournalFrame.header($0) }), header.kind == kind.rawValue else {
            throw FileWriteError(description: "the journal has no \(kind) record at offset \(offset)")
        }
        let payload = try JournalFile.read(fd, at: offset + UInt64(JournalFrame.headerSize), count: Int(header.length))
        let intact = headerBytes.withUnsafeBytes { h in
            payload.withUnsafeBytes { JournalFrame.isIntact(header, headerBytes: h, payload: $0) }
        }
        guard intact else { throw FileWriteError(description: "the journal record at offset \(offset) is damaged") }
        return try payload.withUnsafeBytes { try decode($0) }
    }
}

/// What reading a journal back found.
public struct JournalRecovery: Sendable {
    public var contents: JournalContents
    public var session: JournalSession?
    /// Whole records read.
    public var records = 0
    /// Stretches that were not whole records: a torn tail, or damage in the middle.
    public var tornRecords = 0
    public var tornBytes: UInt64 = 0
    /// Whole records that could not be used (undecodable, or a message of an unknown conversation).
    public var unusableRecords = 0
}

extension JournalContents {
    /// Bytes read from the journal at a time while recovering.
    static let recoveryReadSize = 4 << 20

    /// Reads the journal a crashed run left beside `harPath`: every whole record, in file order.
    /// Takes the journal's lock, so it fails while a recorder is still writing it.
    public static func recover(harPath: String) throws -> JournalRecovery {
        let path = JournalFile.recordsPath(in: JournalFile.directory(for: harPath))
        let fd = try JournalFile.openForReading(path, lock: true)
        var index = JournalIndex()
        var decoder = JournalDecoder(size: JournalFile.size(fd))
        var session: JournalSession?
        var records = 0, torn = 0, unusable = 0
        var tornBytes: UInt64 = 0
        var layoutError: String?
        func handle(_ event: JournalDecoder.Event) {
            switch event {
            case .damaged(_, let length), .torn(_, let length):
                torn += 1
                tornBytes += length
            case .record(let kind, let offset, let payload):
                records += 1
                let usable: Bool = payload.withUnsafeBytes { raw in
                    do {
                        switch JournalRecordKind(rawValue: kind) {
                        case .session:
                            let s = try JournalSession(decoding: raw)
                            if s.layoutVersion > JournalFrame.layoutVersion {
                                layoutError = "the journal was written by a newer harrec (\(s.harrecVersion)); recover it with that version"
                            }
                            if session == nil { session = s }
                        case .flow:
                            let flow = try Flow(decoding: raw)
                            index.addFlow(id: flow.id, requestStart: flow.instants.requestStart, offset: offset,
                                          failed: flow.error != nil, bytes: raw.count)
                        case .webSocketStart:
                            let flow = try Flow(decoding: raw)
                            index.addWebSocketStart(id: flow.id, requestStart: flow.instants.requestStart, offset: offset,
                                                    bytes: raw.count)
                        case .webSocketMessage:
                            return index.addWebSocketMessage(flowID: try WebSocketMessageRecord.decode(raw).flowID, offset: offset,
                                                             bytes: raw.count)
                        case .webSocketEnd:
                            return index.addWebSocketEnd(flowID: try Flow(decoding: raw).id, offset: offset, bytes: raw.count)
                        case .pageMark:
                            index.pageMarks.append(try PageMarkRecord.decode(raw))
                        case .exportDecision:
                            index.apply(try ExportDecisionRecord.decode(raw))
                        case .pageMove:
                            let move = try PageMoveRecord.decode(raw)
                            index.pageOverrides[move.flowID] = move.page
                        case .bodyPart:
                            index.addBodyPart(try BodyPartRecord.decode(raw), offset: offset, bytes: raw.count)
                        case .flowInFlight:
                            let flow = try Flow(decoding: raw)
                            index.inFlight[flow.id] = JournalIndexEntry(requestStart: flow.instants.requestStart, id: flow.id,
                                                                        offset: offset, failed: true, bytes: raw.count,
                                                                        record: .flowInFlight)
                        case nil:
                            return false
                        }
                        return true
                    } catch {
                        return false
                    }
                }
                if !usable { unusable += 1 }
            }
        }
        var offset: UInt64 = 0
        do {
            while true {
                let chunk = try JournalFile.readSome(fd, at: offset, count: recoveryReadSize)
                if chunk.isEmpty { break }
                offset += UInt64(chunk.count)
                decoder.feed(chunk)
                while let event = decoder.next() { handle(event) }
                if let layoutError { throw FileWriteError(description: layoutError) }
            }
        } catch {
            JournalFile.closeFile(fd)
            throw error
        }
        decoder.finish()
        while let event = decoder.next() { handle(event) }
        index.addFlowsCutShort()
        var recovery = JournalRecovery(contents: JournalContents(fd: fd, index: index), session: session)
        recovery.records = records
        recovery.tornRecords = torn
        recovery.tornBytes = tornBytes
        recovery.unusableRecords = unusable
        return recovery
    }
}
