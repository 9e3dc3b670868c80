import Codecs
import HAR

/// A flow as an export builds its entry from it: bodies too large to hold may be left where
/// they are, and the flow then holds none of their bytes.
public struct ExportFlow: Sendable {
    public var flow: Flow
    public var request: HARDeferredBody?
    public var response: HARDeferredBody?

    public init(flow: Flow, request: HARDeferredBody? = nil, response: HARDeferredBody? = nil) {
        self.flow = flow
        self.request = request
        self.response = response
    }
}

extension FlowSource {
    /// Flow `i` for an export. Sources that can leave a large body where it is (a journal)
    /// return it without that body, and the body to read as the HAR is written.
    public func exportFlow(at i: Int) throws -> ExportFlow {
        ExportFlow(flow: try flow(at: i))
    }
}

extension JournalContents {
    /// Flow `i`, with each body that went to the journal in parts totalling at least
    /// `HARDeferredBody.threshold` bytes, and that the HAR keeps as base64 as recorded (a binary
    /// type, no content coding), left in the journal: the flow then holds none of it, and the
    /// deferred body reads the parts and the record's rest, a part at a time, from the journal
    /// this object keeps open.
    public func exportFlow(at i: Int) throws -> ExportFlow {
        let entry = ordered[i]
        guard entry.webSocket < 0, entry.record == .flow, let parts = bodyParts[entry.id] else { return ExportFlow(flow: try flow(at: i)) }
        // A flow's parts come before its record (see `flow(_:_:_:fd:)`).
        let mine = parts.offsets.indices.filter { parts.offsets[$0] < entry.offset }
        func bytes(_ side: RecordedBodyPart.Side) -> Int {
            mine.reduce(0) { $0 + (parts.sides[$1] == side ? parts.counts[$1] : 0) }
        }
        let large = (request: bytes(.request) >= HARDeferredBody.threshold, response: bytes(.response) >= HARDeferredBody.threshold)
        guard large.request || large.response else { return ExportFlow(flow: try flow(at: i)) }
        var flow = try Self.read(fd, at: entry.offset, expecting: .flow) { try Flow(decoding: $0) }
        let deferRequest = large.request && Self.keepsAsRecorded(flow.request.fields)
        let deferResponse = large.response && flow.response.map { Self.keepsAsRecorded($0.fields) } == true
        let id = entry.id, fd = fd
        let readPart = { @Sendable (k: Int) throws -> RecordedBodyPart in
            let part = try Self.read(fd, at: parts.offsets[k], expecting: .bodyPart) { try BodyPartRecord.decode($0) }
            guard part.flowID == id else {
                throw FlowDecodeError(description: "a body part of flow \(part.flowID) among those of flow \(id)")
            }
            return part
        }
        let inline = mine.filter { parts.sides[$0] == .request ? !deferRequest : !deferResponse }
        try flow.prependBodyParts(count: inline.count) { try readPart(inline[$0]) }
        /// The body of `side` left in the journal: its parts, then the record's rest (read again
        /// when the body is: an export keeps entries between its passes, and hundreds of rests
        /// would add up). The closure keeps this object, and with it the descriptor, open.
        func deferred(_ side: RecordedBodyPart.Side, rest: Int) throws -> HARDeferredBody {
            let sideParts = mine.filter { parts.sides[$0] == side }
            let first = try readPart(sideParts[0]).bytes
            let recordOffset = entry.offset
            return HARDeferredBody(count: bytes(side) + rest, prefix: Array(first.prefix(64))) { [self] piece in
                for k in sideParts { try piece(try readPart(k).bytes) }
                let flow = try Self.read(fd, at: recordOffset, expecting: .flow) { try Flow(decoding: $0) }
                let rest = side == .request ? flow.request.body.bytes : flow.response?.body.bytes ?? []
                if !rest.isEmpty { try piece(rest) }
            }
        }
        var export = ExportFlow(flow: flow)
        if deferRequest {
            export.request = try deferred(.request, rest: flow.request.body.bytes.count)
            export.flow.request.body.bytes = []
        }
        if deferResponse {
            export.response = try deferred(.response, rest: flow.response?.body.bytes.count ?? 0)
            export.flow.response?.body.bytes = []
        }
        return export
    }

    /// Whether the HAR keeps a body as the bytes recorded, base64-encoded, whatever they hold: a
    /// binary type with no content coding (else it is decoded, or may be text).
    static func keepsAsRecorded(_ fields: [RecordedField]) -> Bool {
        let mimeType = HARExport.firstValue(fields, "Content-Type") ?? "x-unknown"
        guard HARExport.isBinaryMimeType(mimeType) else { return false }
        guard let coding = HARExport.firstValue(fields, "Content-Encoding") else { return true }
        return parseContentEncoding(coding)?.allSatisfy { $0 == .identity } == true
    }
}

extension HARExport {
    /// The `postData` of a request whose body is `deferred` (all of what was recorded of it).
    static func deferredPostData(_ deferred: HARDeferredBody, _ request: RecordedRequest) -> HARPostData {
        var post = HARPostData(mimeType: firstValue(request.fields, "Content-Type") ?? "", encoding: "base64")
        post.deferred = deferred
        if deferred.count < request.body.wireSize { post.custom.append((key: "_truncated", value: .bool(true))) }
        return post
    }

    /// The content of a response whose body is `deferred` (all of what was recorded of it).
    static func deferredContent(_ deferred: HARDeferredBody, _ response: RecordedResponse) -> HARContent {
        var content = HARContent(size: deferred.count, mimeType: firstValue(response.fields, "Content-Type") ?? "x-unknown",
                                 encoding: "base64")
        content.deferred = deferred
        // The recording cap (`--max-body`) kept less than crossed.
        if deferred.count < response.body.wireSize { content.custom.append((key: "_truncated", value: .bool(true))) }
        return content
    }
}
