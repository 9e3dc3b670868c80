import HAR
import HTTP1
import Recording
import TextEncodings

/// The live view's requests and answers, pure: a request head and body in, what to send out.
/// Every request needs the access token the start line printed (`?token=`, a `Bearer`
/// Authorization, or the cookie the page's first load sets), because the view shows raw secrets.
///
/// - `GET /`: the page.
/// - `GET /api/flows?from=SEQ&limit=N`: summaries from `SEQ` on, the pages, and the total.
/// - `GET /api/flows/ID`: one flow whole, read back from the journal.
/// - `GET /api/flows/ID/redaction`: its entry raw and redacted, and what each rule replaced.
/// - `POST /api/generate?page=N` (or `?ids=ID,ID`, or the ids as the body): `harrec generate`
///   for a page or a selection.
/// - `GET /api/events?cursor=C`: server-sent events after change `C` (the `cursor` of a
///   `/api/flows` answer): `flow` (a summary, added or updated) and `page`.
/// - `POST /api/mark?name=NAME`: a scenario mark, as `harrec mark NAME` makes.
/// - `POST /api/flows/ID/exclude` and `/include`: leave a flow out of the HAR, or put it back.
/// - `POST /api/flows/ID/page?to=N`: move a flow to page N (-1: before the first mark).
/// - `POST /api/hosts/exclude?host=HOST` and `/include`: the same for every flow to a host, those
///   to come included.
/// - `POST /api/export`: the HAR of what is recorded so far, written beside the final one;
///   `GET /api/export/file` downloads it.
/// - `GET /api/search?q=TEXT`: the flows whose bodies or messages hold TEXT (ASCII case ignored).
/// - `GET /api/redaction`: what redaction replaces in the whole recording so far, per rule.
/// - `GET /api/status`: how many flows and pages so far (a script can wait on it).
public struct LiveService: Sendable {
    public let token: String
    public let index: LiveIndex
    /// Flow `id` as the journal holds it, or nil (unknown, or not on disk yet).
    public let flowReader: @Sendable (UInt64) -> Flow?
    /// The redaction preview and the generator; nil leaves those endpoints answering 404.
    public let tools: LiveTools?
    /// Where answers that read the journal or generate run.
    public let jobs = LiveJobs()

    public init(token: String, index: LiveIndex, tools: LiveTools? = nil, flowReader: @escaping @Sendable (UInt64) -> Flow?) {
        self.token = token
        self.index = index
        self.tools = tools
        self.flowReader = flowReader
    }

    /// The name of the cookie that carries the token for the page's own requests.
    static let cookieName = "harrec_token"
    /// The most summaries one `/api/flows` answer holds.
    static let maximumPageSize = 5000
    /// The largest export offered as a download (larger ones are opened where they were written).
    public static let maximumDownloadBytes = 256 << 20

    /// What to do with a request.
    public enum Answer: Sendable {
        case respond(LiveResponse)
        /// Work off the event loop (reading the journal, generating); its response when done.
        case deferred(@Sendable () -> LiveResponse)
        /// Record this mark (as `harrec mark` does), then respond.
        case mark(PageMark, LiveResponse)
        /// Tell the journal these flows are left out (or put back), then respond.
        case decide([ExportDecision], LiveResponse)
        /// Tell the journal this flow moved to another page, then respond.
        case move(PageMove, LiveResponse)
        /// Start a server-sent event stream with the changes after `cursor` (from `/api/flows`).
        case events(cursor: Int)
    }

    public func answer(method: String, target: String, fields: HTTPFields, body: [UInt8], now: Double) -> Answer {
        let (path, query) = Self.split(target)
        let given = query["token"]
        guard authorized(given: given, fields: fields) else {
            return .respond(.text(403, "harrec live view: open the URL harrec printed at start (it carries the access token)\n"))
        }
        switch (method, path) {
        case ("GET", "/"), ("HEAD", "/"):
            var page = LiveResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(LivePageHTML.page.utf8))
            // The page's own requests carry the token as a cookie from now on.
            if given != nil { page.fields.append(("Set-Cookie", "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict")) }
            return .respond(page)
        case ("GET", "/api/flows"):
            let from = query["from"].flatMap(Int.init) ?? 0
            let limit = min(query["limit"].flatMap(Int.init) ?? 1000, Self.maximumPageSize)
            let (flows, pages, total, cursor) = index.flows(from: from, limit: limit)
            return .respond(.json(.object([("flows", .array(flows.map(\.json))), ("pages", LiveJSON.pages(pages)),
                                           ("total", .integer(total)), ("cursor", .integer(cursor))])))
        case ("GET", "/api/status"):
            let (_, pages, total, _) = index.flows(from: 0, limit: 0)
            return .respond(.json(.object([("flows", .integer(total)), ("pages", .integer(pages.count)),
                                           ("excludedHosts", .array(index.excludedHosts.sorted().map { .string($0) }))])))
        case ("GET", "/api/events"):
            return .events(cursor: max(0, query["cursor"].flatMap(Int.init) ?? 0))
        case ("POST", "/api/mark"):
            let name = LiveService.trimmed(query["name"] ?? String(decoding: body, as: UTF8.self))
            guard !name.isEmpty, name.count <= 200, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return .respond(.text(400, "harrec live view: a mark needs a name of 1 to 200 characters, without control characters\n"))
            }
            return .mark(PageMark(name: name, time: now), .json(.object([("title", .string(name))])))
        case ("POST", "/api/hosts/exclude"), ("POST", "/api/hosts/include"):
            guard let host = query["host"]?.lowercased(), !host.isEmpty else {
                return .respond(.text(400, "harrec live view: give the host: ?host=api.example.com:443\n"))
            }
            let excluded = path.hasSuffix("/exclude")
            let decisions = index.setHost(host, excluded: excluded)
            return .decide(decisions, .json(.object([("host", .string(host)), ("excluded", .bool(excluded)),
                                                     ("flows", .integer(decisions.count))])))
        case ("GET", "/api/search"):
            return search(query["q"] ?? "")
        case ("GET", "/api/redaction"):
            guard let tools else { return .respond(.text(404, "harrec live view: no redaction here\n")) }
            return .deferred {
                switch tools.redactionCounts() {
                case .success(let counts):
                    return .json(.object([("rules", .array(counts.map { .object([("rule", .string($0.rule)), ("count", .integer($0.count))]) })),
                                          ("total", .integer(counts.reduce(0) { $0 + $1.count }))]))
                case .failure(let error):
                    return .text(503, "harrec live view: \(error.message)\n")
                }
            }
        case ("POST", "/api/export"):
            guard let tools else { return .respond(.text(404, "harrec live view: no export here\n")) }
            let jobs = self.jobs
            return .deferred {
                switch tools.exportNow() {
                case .success(let export):
                    jobs.lastExport.withLock { $0 = export }
                    return .json(.object([("path", .string(export.path)), ("entries", .integer(export.entries)),
                                          ("bytes", .integer(export.bytes)), ("redacted", .bool(export.redacted)),
                                          ("download", .bool(export.bytes <= Self.maximumDownloadBytes))]))
                case .failure(let error):
                    return .text(503, "harrec live view: \(error.message)\n")
                }
            }
        case ("GET", "/api/export/file"):
            guard let tools, let export = jobs.lastExport.withLock({ $0 }) else {
                return .respond(.text(404, "harrec live view: no export yet (POST /api/export)\n"))
            }
            guard export.bytes <= Self.maximumDownloadBytes else {
                return .respond(.text(413, "harrec live view: the export is \(export.bytes) bytes; open \(export.path)\n"))
            }
            return .deferred {
                guard let bytes = tools.exportBytes(export.path) else {
                    return .text(404, "harrec live view: \(export.path) is gone\n")
                }
                var file = LiveResponse(status: 200, contentType: "application/json", body: bytes)
                let name = export.path.split(separator: "/").last.map(String.init) ?? "session.har"
                file.fields.append(("Content-Disposition", "attachment; filename=\"\(name)\""))
                return file
            }
        case ("POST", "/api/generate"):
            var query = query
            if query["page"] == nil && query["ids"] == nil && !body.isEmpty { query["ids"] = String(decoding: body, as: UTF8.self) }
            return generate(query)
        case (_, "/"), (_, "/api/flows"), (_, "/api/status"), (_, "/api/events"), (_, "/api/mark"), (_, "/api/generate"),
             (_, "/api/export"), (_, "/api/export/file"), (_, "/api/search"), (_, "/api/redaction"):
            return .respond(.text(405, "harrec live view: \(method) is not allowed on \(path)\n"))
        default:
            if method == "POST", path.hasPrefix("/api/flows/"), path.hasSuffix("/page") {
                let pages = index.flows(from: 0, limit: 0).pages.count
                guard let id = UInt64(path.dropFirst("/api/flows/".count).dropLast("/page".count)), index.summary(id: id) != nil else {
                    return .respond(.text(404, "harrec live view: no such flow\n"))
                }
                guard let to = query["to"].flatMap(Int.init), to >= -1, to < pages else {
                    return .respond(.text(400, "harrec live view: ?to= is a page from -1 (none) to \(pages - 1)\n"))
                }
                return .move(PageMove(flowID: id, page: to), .json(.object([("id", .string(String(id))), ("page", .integer(to))])))
            }
            if method == "POST", path.hasPrefix("/api/flows/"), path.hasSuffix("/exclude") || path.hasSuffix("/include") {
                let excluded = path.hasSuffix("/exclude")
                guard let id = UInt64(path.dropFirst("/api/flows/".count).dropLast("/exclude".count)), index.summary(id: id) != nil else {
                    return .respond(.text(404, "harrec live view: no such flow\n"))
                }
                return .decide([ExportDecision(flowID: id, excluded: excluded)],
                               .json(.object([("id", .string(String(id))), ("excluded", .bool(excluded))])))
            }
            if method == "GET", path.hasPrefix("/api/flows/") {
                let rest = path.dropFirst("/api/flows/".count)
                let preview = rest.hasSuffix("/redaction")
                if let id = UInt64(preview ? rest.dropLast("/redaction".count) : rest) {
                    return flowAnswer(id, preview: preview)
                }
            }
            return .respond(.text(404, "harrec live view: no \(path) here\n"))
        }
    }

    /// A flow whole, or its redaction preview, read from the journal off the loop.
    func flowAnswer(_ id: UInt64, preview: Bool) -> Answer {
        guard let summary = index.summary(id: id) else {
            return .respond(.text(404, "harrec live view: no flow \(id)\n"))
        }
        let tools = self.tools, reader = flowReader
        if preview && tools == nil { return .respond(.text(404, "harrec live view: no redaction preview here\n")) }
        if let item = summary.replayItem {
            return .respond(.text(404, "harrec live view: answered from the HAR (\(item)); a replay keeps no copy of what it served\n"))
        }
        return .deferred {
            guard let flow = reader(id) else {
                // Recorded, but not on disk yet (the journal writes every 0.2 s).
                var later = LiveResponse.text(503, "harrec live view: flow \(id) is still on its way to the journal\n")
                later.fields.append(("Retry-After", "1"))
                return later
            }
            guard preview, let tools else { return .json(LiveJSON.detail(flow, summary: summary)) }
            return .json(LiveJSON.preview(tools.redactionPreview(flow)))
        }
    }

    /// The flows whose bodies (request or response, as recorded) or messages hold `text`,
    /// ignoring ASCII case: read back from the journal off the loop, at most `maximumSearchHits`.
    func search(_ text: String) -> Answer {
        let needle = Array(text.lowercased().utf8)
        guard !needle.isEmpty else { return .respond(.text(400, "harrec live view: search needs ?q=TEXT\n")) }
        let ids = index.flows(from: 0, limit: .max).flows.map(\.id)
        let reader = flowReader
        return .deferred {
            var hits: [JSONValue] = []
            var searched = 0
            for id in ids where hits.count < Self.maximumSearchHits {
                guard let flow = reader(id) else { continue }
                searched += 1
                let bodies = [flow.request.body.bytes, flow.response?.body.bytes ?? []] + (flow.webSocket?.messages.map(\.data) ?? [])
                if bodies.contains(where: { Self.contains($0, lowercased: needle) }) { hits.append(.string(String(id))) }
            }
            return .json(.object([("ids", .array(hits)), ("searched", .integer(searched))]))
        }
    }

    /// The most flows a search returns.
    static let maximumSearchHits = 10_000

    /// Whether `haystack` holds `needle` (already lowercase), ignoring ASCII case.
    static func contains(_ haystack: [UInt8], lowercased needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if lower(haystack[i]) == first {
                var k = 1
                while k < needle.count && lower(haystack[i + k]) == needle[k] { k += 1 }
                if k == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

    /// `harrec generate` for the flows of page `page` (-1: before the first mark) or of `ids`.
    func generate(_ query: [String: String]) -> Answer {
        guard let tools else { return .respond(.text(404, "harrec live view: no generator here\n")) }
        let (all, pages, _, _) = index.flows(from: 0, limit: .max)
        let chosen: [LiveFlowSummary]
        let name: String
        if let page = query["page"].flatMap(Int.init), page >= -1, page < pages.count {
            chosen = all.filter { $0.page == page }
            name = page >= 0 ? pages[page].title : "recording"
        } else if let ids = query["ids"] {
            let wanted = Set(ids.split(separator: ",").compactMap { UInt64($0) })
            chosen = all.filter { wanted.contains($0.id) }
            name = query["name"] ?? "selection"
        } else {
            return .respond(.text(400, "harrec live view: generate needs ?page=N or ?ids=ID,ID\n"))
        }
        guard !chosen.isEmpty else { return .respond(.text(422, "harrec live view: no flows to generate from\n")) }
        let reader = flowReader
        let ids = chosen.map(\.id)
        return .deferred {
            var flows: [Flow] = []
            for id in ids {
                guard let flow = reader(id) else {
                    return .text(503, "harrec live view: flow \(id) is still on its way to the journal; try again\n")
                }
                flows.append(flow)
            }
            switch tools.generate(flows, name) {
            case .success(let files):
                return .json(.object([("name", .string(name)), ("files", .array(files.map {
                    .object([("path", .string($0.path)), ("role", .string($0.role)), ("text", .string($0.text))])
                }))]))
            case .failure(let error):
                return .text(422, "harrec live view: \(error.message)\n")
            }
        }
    }

    /// The token from the query, an Authorization Bearer, or the cookie, compared in constant time.
    func authorized(given: String?, fields: HTTPFields) -> Bool {
        var candidates: [String] = []
        if let given { candidates.append(given) }
        for value in fields.values("Authorization") where value.hasPrefix("Bearer ") { candidates.append(String(value.dropFirst(7))) }
        for header in fields.values("Cookie") {
            for item in header.split(separator: ";") {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " ") }
                if pair.count == 2 && pair[0] == Self.cookieName { candidates.append(pair[1]) }
            }
        }
        return candidates.contains { Self.constantTimeEqual($0, token) }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for k in x.indices { difference |= x[k] ^ y[k] }
        return difference == 0
    }

    static func split(_ target: String) -> (path: String, query: [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for item in target[target.index(after: mark)...].split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentEncoding.decoded(String(parts[0]), plusAsSpace: true)
            if query[name] == nil { query[name] = parts.count > 1 ? PercentEncoding.decoded(String(parts[1]), plusAsSpace: true) : "" }
        }
        return (String(target[..<mark]), query)
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\n" }.reversed())
    }
}

/// An answer of the live view: status, type, body and any extra header fields.
public struct LiveResponse: Equatable, Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    public var fields: [(String, String)] = []

    public static func == (a: LiveResponse, b: LiveResponse) -> Bool {
        a.status == b.status && a.contentType == b.contentType && a.body == b.body
            && a.fields.map { $0.0 + ":" + $0.1 } == b.fields.map { $0.0 + ":" + $0.1 }
    }

    static func text(_ status: Int, _ text: String) -> LiveResponse {
        LiveResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8))
    }

    static func json(_ value: JSONValue) -> LiveResponse {
        LiveResponse(status: 200, contentType: "application/json", body: LiveJSON.bytes(value))
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
