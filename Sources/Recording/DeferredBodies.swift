import Codecs
import HAR

extension FlowSource {
    /// Flow `i` for an export. Sources that can leave a large response body where it is (a
    /// journal) return it without that body, and the body to read as the HAR is written.
    public func exportFlow(at i: Int) throws -> (flow: Flow, deferred: HARDeferredBody?) {
        (try flow(at: i), nil)
    }
}

extension JournalContents {
    /// Flow `i`, and when its response body went to the journal in parts totalling at least
    /// `HARDeferredBody.threshold` bytes and the HAR keeps it as base64 as recorded (a binary
    /// type, no content coding), that body left in the journal: the flow then holds none of it,
    /// and the deferred body reads the parts and the record's rest, a part at a time, from the
    /// journal this object keeps open.
    public func exportFlow(at i: Int) throws -> (flow: Flow, deferred: HARDeferredBody?) {
        let entry = ordered[i]
        guard entry.webSocket < 0, entry.record == .flow, let parts = bodyParts[entry.id] else { return (try flow(at: i), nil) }
        // A flow's parts come before its record (see `flow(_:_:_:fd:)`).
        let mine = parts.offsets.indices.filter { parts.offsets[$0] < entry.offset }
        let responseParts = mine.filter { parts.sides[$0] == .response }
        let partBytes = responseParts.reduce(0) { $0 + parts.counts[$1] }
        guard partBytes >= HARDeferredBody.threshold else { return (try flow(at: i), nil) }
        var flow = try Self.read(fd, at: entry.offset, expecting: .flow) { try Flow(decoding: $0) }
        guard let response = flow.response, Self.keepsAsRecorded(response) else { return (try self.flow(at: i), nil) }
        let requestParts = mine.filter { parts.sides[$0] == .request }
        let id = entry.id, fd = fd
        let readPart = { @Sendable (k: Int) throws -> RecordedBodyPart in
            let part = try Self.read(fd, at: parts.offsets[k], expecting: .bodyPart) { try BodyPartRecord.decode($0) }
            guard part.flowID == id else {
                throw FlowDecodeError(description: "a body part of flow \(part.flowID) among those of flow \(id)")
            }
            return part
        }
        try flow.prependBodyParts(count: requestParts.count) { try readPart(requestParts[$0]) }
        let first = try readPart(responseParts[0]).bytes
        // The record's rest (up to a part) is read again when the body is: an export keeps
        // entries between its passes, and hundreds of rests would add up. The closure keeps
        // this object, and with it the journal's descriptor, open.
        let recordOffset = entry.offset
        let body = HARDeferredBody(count: partBytes + response.body.bytes.count, prefix: Array(first.prefix(64))) { [self] piece in
            for k in responseParts { try piece(try readPart(k).bytes) }
            let rest = try Self.read(fd, at: recordOffset, expecting: .flow) { try Flow(decoding: $0) }.response?.body.bytes ?? []
            if !rest.isEmpty { try piece(rest) }
        }
        flow.response?.body.bytes = []
        return (flow, body)
    }

    /// Whether the HAR keeps a response body as the bytes recorded, base64-encoded, whatever
    /// they hold: a binary type with no content coding (else it is decoded, or may be text).
    static func keepsAsRecorded(_ response: RecordedResponse) -> Bool {
        let mimeType = HARExport.firstValue(response.fields, "Content-Type") ?? "x-unknown"
        guard HARExport.isBinaryMimeType(mimeType) else { return false }
        guard let coding = HARExport.firstValue(response.fields, "Content-Encoding") else { return true }
        return parseContentEncoding(coding)?.allSatisfy { $0 == .identity } == true
    }
}

extension HARExport {
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
