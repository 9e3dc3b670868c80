import Codecs
import Dispatch
import Export
import Files
import TextEncodings
#if canImport(Glibc)
import Glibc
#endif
import HAR
import Synchronization

/// Turns recorded flows into a strict HAR 1.2 log.
///
/// Bodies are kept as wire bytes while recording and decoded here, once, at export: the proxy's
/// hot path never decompresses anything.
public enum HARExport {
    /// The most a decoded body may grow to. Larger is not a useful fixture, and a compression
    /// bomb stops here instead of exhausting memory.
    public static let maxDecodedBodyBytes = 256 << 20

    /// Builds the HAR log: entries sorted by start time (ties by arrival order), with a page
    /// per scenario marker.
    public static func log(from flows: [Flow], creatorVersion: String, pageMarks: [PageMark] = []) -> HARLog {
        let pages = Pages(pageMarks)
        return HARLog(creator: HARCreator(name: "harrec", version: creatorVersion), pages: pages.harPages,
                      entries: inStartOrder(flows).map { pages.entry(from: $0) })
    }

    /// HAR pages from scenario markers: `page_1`, `page_2`, ... in time order, titled with the
    /// marker's name. An entry belongs to the page that was current when its request started;
    /// entries before the first marker belong to no page (HAR 1.2 makes `pageref` optional), so a
    /// recording without markers stays exactly as it was.
    public struct Pages: Sendable {
        let marks: [PageMark]

        public init(_ marks: [PageMark]) {
            self.marks = marks.enumerated().sorted { a, b in
                a.element.time != b.element.time ? a.element.time < b.element.time : a.offset < b.offset
            }.map(\.element)
        }

        /// nil without markers: the log then has no `pages` at all.
        public var harPages: [HARPage]? {
            marks.isEmpty ? nil : marks.enumerated().map { index, mark in
                HARPage(startedDateTime: HARDate.format(epochSeconds: mark.time), id: Self.id(index),
                        title: mark.name, pageTimings: HARPageTimings(onContentLoad: -1, onLoad: -1))
            }
        }

        static func id(_ index: Int) -> String { "page_\(index + 1)" }

        /// The id of the page current at `time`, if a marker came before it.
        public func pageref(at time: Double) -> String? {
            var low = 0, high = marks.count
            while low < high {
                let middle = (low + high) / 2
                if marks[middle].time <= time { low = middle + 1 } else { high = middle }
            }
            return low == 0 ? nil : Self.id(low - 1)
        }

        /// `page`: the page it was moved to (-1: none), if it was.
        func entry(from flow: Flow, page: Int? = nil) -> HAREntry {
            var built = HARExport.entry(from: flow)
            if let page, page < marks.count {
                built.pageref = page < 0 ? nil : Self.id(page)
            } else {
                built.pageref = pageref(at: flow.instants.requestStart)
            }
            return built
        }
    }

    /// Writes the HAR atomically (temp file, then rename), streaming and on every core: entries
    /// are decoded and serialized in parallel batches while earlier batches are written, so
    /// export memory stays at a few windows of entries however large the log is. A two-pass
    /// `transform` runs as `EntryExport` describes.
    public static func write(_ flows: [Flow], to path: String, creatorVersion: String,
                             transform: (any TwoPassTransform)? = nil, keptBytes: Int = EntryExport.keptBetweenPassesBytes) throws {
        try write(FlowArray(flows), to: path, creatorVersion: creatorVersion, transform: transform, keptBytes: keptBytes)
    }

    /// Writes the flows of `source` (already in HAR order) as above. `progress` counts entries
    /// as they are built and can stop the export (the target is then left as it was).
    public static func write(_ source: some FlowSource, to path: String, creatorVersion: String,
                             transform: (any TwoPassTransform)? = nil, keptBytes: Int = EntryExport.keptBetweenPassesBytes,
                             mode: mode_t = 0o644, progress: ExportProgress? = nil) throws {
        let entries = FlowEntries(source: source, pages: Pages(source.pageMarks), overrides: source.pageOverrides)
        let head = HARLog(creator: HARCreator(name: "harrec", version: creatorVersion), pages: entries.pages.harPages, entries: [])
        try EntryExport.write(entries, head: head, to: path, transform: transform, keptBytes: keptBytes, mode: mode, progress: progress)
    }

    /// A flow source's flows as HAR entries, with their pages.
    struct FlowEntries<Source: FlowSource>: EntrySource {
        let source: Source
        let pages: Pages
        var count: Int { source.count }
        let overrides: [UInt64: Int]
        func entry(at i: Int) throws -> HAREntry {
            let export = try source.exportFlow(at: i)
            let flow = export.flow
            var entry = pages.entry(from: flow, page: overrides[flow.id])
            if let deferred = export.request { entry.request.postData = HARExport.deferredPostData(deferred, flow.request) }
            if let deferred = export.response, let response = flow.response {
                entry.response.content = HARExport.deferredContent(deferred, response)
            }
            return entry
        }
        func byteCount(at i: Int) -> Int { source.byteCount(at: i) }
    }

    static func inStartOrder(_ flows: [Flow]) -> [Flow] {
        flows.sorted { a, b in
            a.instants.requestStart != b.instants.requestStart
                ? a.instants.requestStart < b.instants.requestStart : a.id < b.id
        }
    }

    public static func entry(from flow: Flow) -> HAREntry {
        let timings = harTimings(flow)
        var custom: JSONFields = []
        if let error = flow.error {
            custom.append((key: "_error", value: .string(error)))
        }
        if flow.refused {
            custom.append((key: "_refused", value: .bool(true)))
        }
        if let webSocket = flow.webSocket {
            custom += webSocketFields(webSocket)
        }
        return HAREntry(startedDateTime: HARDate.format(epochSeconds: flow.instants.requestStart),
                        time: timings.total,
                        request: harRequest(flow.request),
                        response: flow.response.map(harResponse) ?? failedResponse(),
                        timings: timings,
                        serverIPAddress: flow.serverIPAddress,
                        connection: flow.connectionID,
                        custom: custom)
    }

    // MARK: - WebSocket

    /// Chrome's shape: `_resourceType: "websocket"` and `_webSocketMessages`, one object per
    /// message with type, time (epoch seconds), opcode and data (base64 for binary).
    static func webSocketFields(_ webSocket: RecordedWebSocket) -> JSONFields {
        var messages: [JSONValue] = []
        messages.reserveCapacity(webSocket.messages.count)
        for message in webSocket.messages {
            var fields: JSONFields = [
                (key: "type", value: .string(message.direction.rawValue)),
                (key: "time", value: .double(message.time)),
                (key: "opcode", value: .integer(Int(message.opcode))),
            ]
            let isText = message.opcode != 2
            if isText, message.textValid, let text = String(validating: message.data, as: UTF8.self) {
                fields.append((key: "data", value: .string(text)))
            } else {
                fields.append((key: "data", value: .string(Base64.encode(message.data))))
                if isText {
                    fields.append((key: "_encoding", value: .string("base64")))
                    fields.append((key: "_invalidUTF8", value: .bool(true)))
                }
            }
            if message.truncated { fields.append((key: "_truncated", value: .bool(true))) }
            if let note = message.note { fields.append((key: "_note", value: .string(note))) }
            messages.append(.object(fields))
        }
        var fields: JSONFields = [
            (key: "_resourceType", value: .string("websocket")),
            (key: "_webSocketMessages", value: .array(messages)),
        ]
        if webSocket.isOpen { fields.append((key: "_webSocketOpen", value: .bool(true))) }
        if !webSocket.problems.isEmpty {
            fields.append((key: "_webSocketErrors", value: .array(webSocket.problems.map { .string($0) })))
        }
        return fields
    }

    // MARK: - Timings

    /// Milliseconds rounded to the microsecond, so the written values add up to `time` exactly.
    private static func milliseconds(_ seconds: Double) -> Double {
        (max(0, seconds) * 1_000_000).rounded() / 1000
    }

    private static func span(_ start: Double?, _ end: Double?) -> Double? {
        guard let start, let end else { return nil }
        return milliseconds(end - start)
    }

    /// Consecutive phases: blocked, dns, connect, send, wait, receive. Phases that did not happen
    /// are -1 (blocked, dns, connect, ssl) or 0 (send, wait, receive), as HAR 1.2 requires.
    static func harTimings(_ flow: Flow) -> HARTimings {
        let instants = flow.instants
        let firstNetworkStep = instants.dnsStart ?? instants.connectStart ?? instants.sendStart
        var blocked = span(instants.requestStart, firstNetworkStep) ?? -1
        if firstNetworkStep == nil, flow.error != nil {
            // Never got a connection: the whole life of the exchange was spent waiting for one.
            blocked = span(instants.requestStart, instants.end) ?? -1
        }
        let dns = span(instants.dnsStart, instants.dnsEnd) ?? -1
        // HAR 1.2: ssl is included in connect, so connect runs until the TLS handshake ends.
        let connect = span(instants.connectStart, instants.tlsEnd ?? instants.connectEnd) ?? -1
        let ssl = span(instants.tlsStart, instants.tlsEnd) ?? -1
        let send = span(instants.sendStart, instants.sendEnd) ?? 0
        // No response: the client waited until the exchange failed (or until it gave up).
        let wait = span(instants.sendEnd, instants.responseStart ?? (flow.error != nil ? instants.end : nil)) ?? 0
        let receive = span(instants.responseStart, instants.responseEnd) ?? 0
        return HARTimings(blocked: blocked, dns: dns, connect: connect, send: send, wait: wait,
                          receive: receive, ssl: ssl)
    }

    // MARK: - Request

    static func harRequest(_ request: RecordedRequest) -> HARRequest {
        let headers = request.fields.map { HARHeader(name: $0.name, value: $0.value) }
        var cookies: [HARCookie] = []
        for field in request.fields where field.name.lowercased() == "cookie" {
            cookies += HARBuild.cookies(fromCookieHeader: field.value)
        }
        var postData: HARPostData?
        if request.body.wireSize > 0 {
            let mimeType = firstValue(request.fields, "Content-Type") ?? ""
            let bytes = request.body.bytes
            var custom: JSONFields = []
            let text: String
            var encoding: String?
            if let utf8 = validUTF8(bytes, allowTrimmingTail: request.body.isTruncated) {
                text = utf8
            } else {
                text = Base64.encode(bytes)
                encoding = "base64"
            }
            if request.body.isTruncated {
                custom.append((key: "_truncated", value: .bool(true)))
            }
            var params: [HARPostParam]?
            if mimeType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
                params = HARBuild.formParams(fromURLEncoded: bytes)
            }
            postData = HARPostData(mimeType: mimeType, params: params, text: text, encoding: encoding, custom: custom)
        }
        return HARRequest(method: request.method, url: request.url, httpVersion: request.httpVersion,
                          cookies: cookies, headers: headers,
                          queryString: HARBuild.queryString(fromURL: request.url),
                          postData: postData, headersSize: request.headSize,
                          bodySize: request.body.wireSize, custom: trailerFields(request.trailers))
    }

    /// `_trailers`: the trailer fields of a chunked (or HTTP/2) message, in the shape of
    /// `headers`, when there are any. HAR 1.2 has no place for them.
    static func trailerFields(_ trailers: [RecordedField]) -> JSONFields {
        guard !trailers.isEmpty else { return [] }
        let list: [JSONValue] = trailers.map { .object([(key: "name", value: .string($0.name)), (key: "value", value: .string($0.value))]) }
        return [(key: "_trailers", value: .array(list))]
    }

    // MARK: - Response

    static func harResponse(_ response: RecordedResponse) -> HARResponse {
        let headers = response.fields.map { HARHeader(name: $0.name, value: $0.value) }
        var cookies: [HARCookie] = []
        for field in response.fields where field.name.lowercased() == "set-cookie" {
            if let cookie = HARBuild.cookie(fromSetCookie: field.value) { cookies.append(cookie) }
        }
        let mimeType = firstValue(response.fields, "Content-Type") ?? "x-unknown"
        return HARResponse(status: response.status, statusText: response.reason,
                           httpVersion: response.httpVersion, cookies: cookies, headers: headers,
                           content: content(response.body, fields: response.fields, mimeType: mimeType),
                           redirectURL: firstValue(response.fields, "Location") ?? "",
                           headersSize: response.headSize, bodySize: response.body.wireSize,
                           custom: trailerFields(response.trailers))
    }

    /// The entry's response when no response arrived: schema-valid, status 0.
    static func failedResponse() -> HARResponse {
        HARResponse(status: 0, statusText: "", httpVersion: "", content: HARContent(size: 0, mimeType: "x-unknown"),
                    redirectURL: "", headersSize: -1, bodySize: -1)
    }

    /// Decodes Content-Encoding and picks text or base64.
    static func content(_ body: RecordedBody, fields: [RecordedField], mimeType: String) -> HARContent {
        var custom: JSONFields = []
        var decoded = body.bytes
        var compression: Int?
        if body.isTruncated {
            custom.append((key: "_truncated", value: .bool(true)))
        }
        if let encodingHeader = firstValue(fields, "Content-Encoding"), !body.bytes.isEmpty {
            if let codings = parseContentEncoding(encodingHeader) {
                let effective = codings.filter { $0 != .identity }
                if !effective.isEmpty {
                    do {
                        decoded = try ContentDecoder.decode(body.bytes, codings: effective, limit: maxDecodedBodyBytes)
                        if !body.isTruncated { compression = decoded.count - body.wireSize }
                    } catch {
                        decoded = body.bytes
                        custom.append((key: "_decodingError", value: .string("\(error)")))
                    }
                }
            } else {
                custom.append((key: "_decodingError", value: .string("unknown Content-Encoding '\(encodingHeader)'")))
            }
        }
        guard !decoded.isEmpty else {
            return HARContent(size: 0, compression: compression, mimeType: mimeType, custom: custom)
        }
        if !isBinaryMimeType(mimeType), let text = validUTF8(decoded, allowTrimmingTail: body.isTruncated) {
            let size = text.utf8.count
            return HARContent(size: size, compression: compression, mimeType: mimeType, text: text, custom: custom)
        }
        return HARContent(size: decoded.count, compression: compression, mimeType: mimeType,
                          text: Base64.encode(decoded), encoding: "base64", custom: custom)
    }

    // MARK: - Helpers

    static func firstValue(_ fields: [RecordedField], _ name: String) -> String? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }?.value
    }

    /// Types whose bytes are not text even when they happen to be valid UTF-8.
    static func isBinaryMimeType(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        let binaryPrefixes = ["image/", "audio/", "video/", "font/", "application/octet-stream",
                              "application/zip", "application/gzip", "application/pdf",
                              "application/x-protobuf", "application/protobuf", "application/grpc",
                              "application/vnd.google.protobuf", "application/msgpack", "application/cbor"]
        if type.hasPrefix("image/svg") { return false }
        return binaryPrefixes.contains { type.hasPrefix($0) }
    }

    /// The bytes as a String when they are valid UTF-8 without NUL. A truncated body may end
    /// inside a character; then up to three trailing bytes are dropped.
    static func validUTF8(_ bytes: [UInt8], allowTrimmingTail: Bool) -> String? {
        if let text = strictUTF8(bytes[...]) { return text }
        guard allowTrimmingTail else { return nil }
        for drop in 1...3 where bytes.count > drop {
            if let text = strictUTF8(bytes[..<(bytes.count - drop)]) { return text }
        }
        return nil
    }

    private static func strictUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        // memchr scans many bytes per instruction; a generic `contains` walks them one by one.
        let hasNUL = bytes.withUnsafeBytes { raw in
            raw.baseAddress.map { memchr($0, 0, raw.count) != nil } ?? false
        }
        if hasNUL { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// Flows in HAR order, read by index from any thread (an array, or a journal on disk).
public protocol FlowSource: Sendable {
    var count: Int { get }
    /// Flow `i` in HAR order (by start, ties by arrival). Called from many threads at once.
    func flow(at i: Int) throws -> Flow
    /// Scenario markers: each starts a HAR page.
    var pageMarks: [PageMark] { get }
    /// About how many bytes flow `i` holds (its bodies, its messages): the export bounds the
    /// bytes in flight with it (`HARLog.parallelBytesInFlight`).
    func byteCount(at i: Int) -> Int
    /// Flows moved to another page than their start puts them in, by id (`PageMove`).
    var pageOverrides: [UInt64: Int] { get }
    /// Flow `i` for an export, with its large bodies left where they are when the source can
    /// (`JournalContents`); by default the flow whole.
    func exportFlow(at i: Int) throws -> ExportFlow
}

extension FlowSource {
    public var pageMarks: [PageMark] { [] }
    public var pageOverrides: [UInt64: Int] { [:] }
}

/// Flows held in memory, sorted into HAR order.
public struct FlowArray: FlowSource {
    public let flows: [Flow]
    public let pageMarks: [PageMark]
    public let pageOverrides: [UInt64: Int]
    public init(_ flows: [Flow], pageMarks: [PageMark] = [], pageOverrides: [UInt64: Int] = [:]) {
        self.flows = HARExport.inStartOrder(flows)
        self.pageMarks = pageMarks
        self.pageOverrides = pageOverrides
    }
    public var count: Int { flows.count }
    public func flow(at i: Int) -> Flow { flows[i] }
    public func byteCount(at i: Int) -> Int {
        let flow = flows[i]
        return flow.request.body.bytes.count + (flow.response?.body.bytes.count ?? 0)
            + (flow.webSocket?.messages.reduce(0) { $0 + $1.data.count } ?? 0)
    }
}

