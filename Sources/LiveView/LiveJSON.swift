import HAR
import Recording
import TextEncodings

// The live view's JSON: a flow's summary for the list, and its whole detail. Documented in
// docs/reference/live-view.md.
extension LiveFlowSummary {
    /// The summary as a JSON value, member for member as `LiveRow.write` writes it (the
    /// members at their default left out).
    var json: JSONValue {
        var members: JSONFields = [
            ("seq", .integer(seq)), ("id", .string(String(id))), ("method", .string(method)), ("url", .string(url)),
            ("status", status.map { .integer($0) } ?? .null), ("transport", .string(transport)),
            ("ms", .double((milliseconds * 10).rounded() / 10)), ("started", .double(started)), ("page", .integer(page)),
        ]
        if requestBytes != 0 { members.append(("requestBytes", .integer(requestBytes))) }
        if responseBytes != 0 { members.append(("responseBytes", .integer(responseBytes))) }
        if let error { members.append(("error", .string(error))) }
        if let mimeType { members.append(("mimeType", .string(mimeType))) }
        if open { members.append(("open", .bool(true))) }
        if messages != 0 { members.append(("messages", .integer(messages))) }
        if excluded { members.append(("excluded", .bool(true))) }
        if let replayItem { members.append(("replayItem", .string(replayItem))) }
        return .object(members)
    }
}

extension LivePage {
    func json(index: Int) -> JSONValue {
        .object([("index", .integer(index)), ("title", .string(title)), ("started", .double(started)),
                 ("firstSeq", .integer(firstSeq))])
    }
}

enum LiveJSON {
    /// The bytes of `value`, compact.
    static func bytes(_ value: JSONValue) -> [UInt8] { JSONWriter.serialize(value, pretty: false) }

    static func pages(_ pages: [LivePage]) -> JSONValue {
        .array(pages.enumerated().map { $0.element.json(index: $0.offset) })
    }

    /// A flow whole: both heads, both bodies (text when they are UTF-8, else base64), trailers,
    /// the timings from the request's start, the error, and a WebSocket's messages.
    static func detail(_ flow: Flow, summary: LiveFlowSummary?) -> JSONValue {
        var members: JSONFields = [
            ("id", .string(String(flow.id))),
            ("summary", summary?.json ?? .null),
            ("client", .string(flow.clientAddress)),
            ("serverIP", flow.serverIPAddress.map { .string($0) } ?? .null),
            ("connection", flow.connectionID.map { .string($0) } ?? .null),
            ("error", flow.error.map { .string($0) } ?? .null),
            ("request", .object([
                ("method", .string(flow.request.method)), ("url", .string(flow.request.url)),
                ("httpVersion", .string(flow.request.httpVersion)), ("headers", fields(flow.request.fields)),
                ("body", body(flow.request.body, mimeType: value("content-type", in: flow.request.fields))),
                ("trailers", fields(flow.request.trailers)),
            ])),
            ("response", flow.response.map { response in
                .object([
                    ("status", .integer(response.status)), ("reason", .string(response.reason)),
                    ("httpVersion", .string(response.httpVersion)), ("headers", fields(response.fields)),
                    ("body", body(response.body, mimeType: value("content-type", in: response.fields))),
                    ("trailers", fields(response.trailers)),
                ])
            } ?? .null),
            ("timings", timings(flow.instants)),
        ]
        if let webSocket = flow.webSocket {
            members.append(("webSocket", .object([
                ("open", .bool(webSocket.isOpen)),
                ("problems", .array(webSocket.problems.map { .string($0) })),
                ("messages", .array(webSocket.messages.map(message))),
            ])))
        }
        return .object(members)
    }

    static func preview(_ preview: LivePreview) -> JSONValue {
        .object([("raw", .string(preview.raw)), ("redacted", .string(preview.redacted)),
                 ("findings", .array(preview.findings.map { .object([("path", .string($0.path)), ("rule", .string($0.rule))]) }))])
    }

    static func fields(_ fields: [RecordedField]) -> JSONValue {
        .array(fields.map { .array([.string($0.name), .string($0.value)]) })
    }

    static func value(_ name: String, in fields: [RecordedField]) -> String? {
        fields.last { $0.name.lowercased() == name }?.value
    }

    /// The most body bytes a detail shows: a 60 MB download is looked at, not read whole, and the
    /// answer stays small whatever the recording holds.
    static let shownBodyBytes = 1 << 20

    /// A body as recorded (possibly still content-encoded): its text when it is UTF-8, else
    /// base64, with its size on the wire, whether the recording kept all of it, and how many
    /// bytes are shown (at most `shownBodyBytes`; a cut in a UTF-8 sequence is backed off).
    static func body(_ body: RecordedBody, mimeType: String?) -> JSONValue {
        var end = min(body.bytes.count, shownBodyBytes)
        while end < body.bytes.count && end > 0 && body.bytes[end] & 0xC0 == 0x80 { end -= 1 }
        let shown = Array(body.bytes[..<end])
        var members: JSONFields = [("size", .integer(body.wireSize)), ("truncated", .bool(body.isTruncated)),
                                   ("mimeType", mimeType.map { .string($0) } ?? .null), ("shown", .integer(shown.count))]
        if let text = String(validating: shown, as: UTF8.self) {
            members.append(("text", .string(text)))
        } else {
            members.append(("base64", .string(Base64.encode(shown))))
        }
        return .object(members)
    }

    /// Each phase's start and end in milliseconds from the request's start (null when it did not
    /// happen: a reused connection has no connect).
    static func timings(_ i: FlowInstants) -> JSONValue {
        func ms(_ t: Double?) -> JSONValue { t.map { .double(((($0 - i.requestStart) * 1000) * 10).rounded() / 10) } ?? .null }
        return .object([
            ("dns", .array([ms(i.dnsStart), ms(i.dnsEnd)])), ("connect", .array([ms(i.connectStart), ms(i.connectEnd)])),
            ("tls", .array([ms(i.tlsStart), ms(i.tlsEnd)])), ("send", .array([ms(i.sendStart), ms(i.sendEnd)])),
            ("wait", .array([ms(i.sendEnd ?? i.sendStart), ms(i.responseStart)])),
            ("receive", .array([ms(i.responseStart), ms(i.responseEnd)])), ("end", ms(i.end)),
        ])
    }

    static func message(_ m: RecordedWebSocketMessage) -> JSONValue {
        var members: JSONFields = [("direction", .string(m.direction.rawValue)), ("time", .double(m.time)),
                                   ("opcode", .integer(Int(m.opcode))), ("size", .integer(m.data.count)),
                                   ("truncated", .bool(m.truncated))]
        if m.opcode == 1, let text = String(validating: m.data, as: UTF8.self) {
            members.append(("text", .string(text)))
        } else {
            members.append(("base64", .string(Base64.encode(m.data))))
        }
        if let note = m.note { members.append(("note", .string(note))) }
        return .object(members)
    }
}
