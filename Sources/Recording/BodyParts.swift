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

    public init(flowID: UInt64, side: Side, bytes: [UInt8]) {
        self.flowID = flowID
        self.side = side
        self.bytes = bytes
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
}

extension JournalIndex {
    mutating func addBodyPart(flowID: UInt64, offset: UInt64, bytes: Int) {
        bodyParts[flowID, default: JournalBodyParts()].offsets.append(offset)
        bodyParts[flowID]!.bytes += bytes
    }
}

extension Flow {
    /// Puts the body parts read back from the journal in front of the bytes the flow record kept.
    /// Throws when a part belongs to another flow (a damaged index).
    mutating func prependBodyParts(_ parts: [RecordedBodyPart]) throws(FlowDecodeError) {
        var request: [UInt8] = []
        var response: [UInt8] = []
        for part in parts {
            guard part.flowID == id else {
                throw FlowDecodeError(description: "a body part of flow \(part.flowID) among those of flow \(id)")
            }
            switch part.side {
            case .request: request += part.bytes
            case .response: response += part.bytes
            }
        }
        if !request.isEmpty { self.request.body.bytes = request + self.request.body.bytes }
        if !response.isEmpty, self.response != nil { self.response!.body.bytes = response + self.response!.body.bytes }
    }
}
