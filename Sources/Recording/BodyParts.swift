/// A part of a request or response body that went to the journal while its exchange was still
/// in flight: a large download or upload is recorded as it crosses, never held whole. The
/// flow's own record, written when the exchange ends, holds the rest (`RecordedBody.bytes`);
/// reading the flow back puts the parts in front of it, in the order they came.
public struct RecordedBodyPart: Sendable, Equatable {
    public enum Side: UInt8, Sendable {
        case request = 0
        case response = 1
    }

    public var flowID: UInt64
    public var side: Side
    public var bytes: [UInt8]
    /// On a side's first part: the flow as it stands (journaled before the part, as
    /// `flowInFlight`), so an exchange cut by kill -9 can still be recovered.
    public var flowSoFar: Flow?

    public init(flowID: UInt64, side: Side, bytes: [UInt8], flowSoFar: Flow? = nil) {
        self.flowID = flowID
        self.side = side
        self.bytes = bytes
        self.flowSoFar = flowSoFar
    }
}

/// Record payloads for body parts: the flow id, the side, then the bytes.
enum BodyPartRecord {
    static func encode(_ part: RecordedBodyPart) -> [UInt8] {
        var e = FlowEncoder()
        e.bytes = JournalFrame.open(capacity: 16 + part.bytes.count)
        e.uint(part.flowID)
        e.u8(part.side.rawValue)
        e.raw(part.bytes)
        JournalFrame.seal(&e.bytes, kind: .bodyPart)
        return e.bytes
    }

    static func decode(_ payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> RecordedBodyPart {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        guard let side = RecordedBodyPart.Side(rawValue: try d.u8()) else { throw d.failure("a body part of no known side") }
        let bytes = try d.raw()
        guard d.isAtEnd else { throw d.failure("unexpected bytes after the body part") }
        return RecordedBodyPart(flowID: id, side: side, bytes: bytes)
    }
}

/// Where the body parts of one flow are in the journal, in the order they came.
struct JournalBodyParts: Sendable {
    var offsets: [UInt64] = []
    /// The parts' record lengths (the export sizes its windows by them).
    var bytes = 0
    /// Each part's side and body bytes, in the order of `offsets` (an export leaves a large
    /// response body in the journal by them: `HARDeferredBody`).
    var sides: [RecordedBodyPart.Side] = []
    var counts: [Int] = []
}

extension JournalIndex {
    mutating func addBodyPart(_ part: RecordedBodyPart, offset: UInt64, bytes: Int) {
        bodyParts[part.flowID, default: JournalBodyParts()].offsets.append(offset)
        bodyParts[part.flowID]!.bytes += bytes
        bodyParts[part.flowID]!.sides.append(part.side)
        bodyParts[part.flowID]!.counts.append(part.bytes.count)
    }
}

extension Flow {
    /// Puts the flow's `count` body parts (`read(k)` reads the k-th, in order) in front of the
    /// bytes its record kept. Each part is read and appended to the body's final buffer, sized
    /// once from the bytes that crossed, so a large body is in memory once, not once per step.
    /// Throws when a part belongs to another flow (a damaged index). `keepsRest(side)` says,
    /// once every part is read, whether the record's own bytes of that side follow the parts
    /// (false for a snapshot whose bytes a later part holds again).
    mutating func prependBodyParts(count: Int, keepsRest: (RecordedBodyPart.Side) -> Bool = { _ in true },
                                   _ read: (Int) throws -> RecordedBodyPart) throws {
        var request: [UInt8] = []
        var response: [UInt8] = []
        for k in 0..<count {
            let part = try read(k)
            guard part.flowID == id else {
                throw FlowDecodeError(description: "a body part of flow \(part.flowID) among those of flow \(id)")
            }
            switch part.side {
            case .request:
                if request.isEmpty { request.reserveCapacity(self.request.body.wireSize) }
                request += part.bytes
            case .response:
                if response.isEmpty { response.reserveCapacity(self.response?.body.wireSize ?? 0) }
                response += part.bytes
            }
        }
        if !request.isEmpty {
            if keepsRest(.request) { request += self.request.body.bytes }
            self.request.body.bytes = request
        }
        if !response.isEmpty, self.response != nil {
            if keepsRest(.response) { response += self.response!.body.bytes }
            self.response!.body.bytes = response
        }
    }
}

extension Flow {
    /// The `_error` of an exchange rebuilt from its snapshot in flight.
    public static let cutShortError = "the recording stopped while this exchange was in flight (harrec was killed or crashed); "
        + "its bodies hold the bytes journaled until then"

    /// Completes a flow read from its `flowInFlight` snapshot at `snapshotOffset` (the
    /// recording stopped before the flow's own record): every body part journaled for it
    /// (`offsets`, in order; `read` reads one) goes in front of the bytes the snapshot kept of
    /// its side, unless a part of that side came after the snapshot (that part holds those bytes
    /// again). The flow then says it was cut short, and ends at the last instant it knew.
    mutating func completeCutShort(snapshotOffset: UInt64, parts offsets: [UInt64],
                                   _ read: (UInt64) throws -> RecordedBodyPart) throws {
        var late: Set<RecordedBodyPart.Side> = []
        try prependBodyParts(count: offsets.count, keepsRest: { !late.contains($0) }) { k in
            let part = try read(offsets[k])
            if offsets[k] > snapshotOffset { late.insert(part.side) }
            return part
        }
        // The snapshot counted the bytes that had crossed then; the parts after it hold more.
        request.body.wireSize = max(request.body.wireSize, request.body.bytes.count)
        if let count = response?.body.bytes.count { response!.body.wireSize = max(response!.body.wireSize, count) }
        error = Self.cutShortError
        instants.end = instants.end ?? instants.responseStart ?? instants.sendEnd ?? instants.sendStart ?? instants.requestStart
    }
}
