// How recorded HAR entries become scenario queue items.
//
// This file is the single definition shared by `HARReplayProtocol` (replaying a .har directly) and
// `harrec generate` (which emits Swift from the same items), so both behave the same. It depends
// only on the HAR module and on the scenario value types (RequestCondition, MockResponse, ...), so
// the generator can compile it on its own. The URL and JSON helpers at the bottom are also used by
// the runtime's matcher: the recorded side and the live side must split URLs the same way.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HAR

/// How request bodies take part in matching.
public enum BodyMatching: Sendable, Equatable {
    /// Never: conditions carry no body.
    case never
    /// Only where two entries would otherwise have equal conditions but different request bodies
    /// (GraphQL-style POSTs to one path): those conditions carry `.json` for JSON bodies, `.text` otherwise.
    case whenNeeded
    /// Every entry with a request body carries a body condition.
    case always
}

/// Delay added to served responses.
public enum ReplayLatency: Sendable, Equatable {
    /// Answer at once.
    case none
    /// The server's recorded latency, `timings.wait + timings.receive` (the entry's `time` when
    /// those are missing, and for recorded failures), in seconds.
    case recorded
    /// The same delay, in seconds, for every response.
    case fixed(TimeInterval)
}

/// What `HARScenarioBuilder.items(from:options:)` keeps and how strictly items match.
public struct HARScenarioOptions: Sendable {
    /// Hosts to keep (lowercased host without port); nil keeps all.
    public var includeHost: (@Sendable (String) -> Bool)?
    /// Query item names matched by presence only (in addition to values that are redaction
    /// placeholders, see `HARScenarioBuilder.isRedactionPlaceholder`). Compared lowercased.
    /// Default: `HARScenarioBuilder.volatileQueryItems`.
    public var ignoredQueryItems: Set<String>
    /// When request bodies become part of conditions. Default `.whenNeeded`.
    public var bodyMatching: BodyMatching
    /// The delay given to responses. Default `.none`.
    public var latency: ReplayLatency
    /// Response headers left out of items because they change on every recording (compared
    /// lowercased). Default: `HARScenarioBuilder.volatileResponseHeaders`. `ETag` and
    /// `Last-Modified` stay when a recorded request was conditional on them (`If-None-Match`,
    /// `If-Modified-Since`).
    public var droppedResponseHeaders: Set<String> = HARScenarioBuilder.volatileResponseHeaders

    /// Creates options; the defaults keep every host, match volatile query items by presence,
    /// match bodies only where needed and add no delay.
    public init(includeHost: (@Sendable (String) -> Bool)? = nil,
                ignoredQueryItems: Set<String> = HARScenarioBuilder.volatileQueryItems,
                bodyMatching: BodyMatching = .whenNeeded, latency: ReplayLatency = .none) {
        self.includeHost = includeHost; self.ignoredQueryItems = ignoredQueryItems
        self.bodyMatching = bodyMatching; self.latency = latency
    }
}

/// Turns a HAR log into scenario queue items.
public enum HARScenarioBuilder {
    /// Response headers whose values differ on every recording of the same flow, so generated
    /// files would change for nothing: dates, server and proxy names, request and trace ids,
    /// validators.
    public static let volatileResponseHeaders: Set<String> = [
        "date", "server", "age", "via", "x-request-id", "x-correlation-id", "cf-ray", "x-amz-cf-id",
        "x-amzn-trace-id", "traceparent", "etag", "last-modified",
    ]

    /// Cache busters and per-request nonces: `_`, `t`, `ts`, `timestamp`, `cb`, `cachebuster`,
    /// `nonce`, `rand`, `random`, `requestid`, `request_id`, `correlation_id` (compared lowercased).
    public static let volatileQueryItems: Set<String> = [
        "_", "t", "ts", "timestamp", "cb", "cachebuster", "nonce", "rand", "random",
        "requestid", "request_id", "correlation_id",
    ]

    /// Values harrec's redaction writes: `redacted-N`, `REDACTED`, `user<N>@example.com`,
    /// `internal-N.example.invalid` (N: one or more ASCII digits; case-sensitive, as written), and
    /// the placeholder JWTs it writes for tokens (three dot-separated parts, the signature being
    /// base64url("redacted") = `cmVkYWN0ZWQ`).
    public static func isRedactionPlaceholder(_ value: String) -> Bool {
        if value == "REDACTED" { return true }
        if value.hasSuffix(".cmVkYWN0ZWQ") {
            let parts = value.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty { return true }
        }
        func digits(_ s: Substring) -> Bool { !s.isEmpty && s.allSatisfy { $0.isASCII && $0.isNumber } }
        func between(_ prefix: String, _ suffix: String) -> Bool {
            guard value.count > prefix.count + suffix.count, value.hasPrefix(prefix), value.hasSuffix(suffix)
            else { return false }
            return digits(value.dropFirst(prefix.count).dropLast(suffix.count))
        }
        return between("redacted-", "") || between("user", "@example.com")
            || between("internal-", ".example.invalid")
    }

    /// One item per HTTP entry, in the log's order (entries sorted by startedDateTime, stable).
    /// Recorded failures (status 0 with an `_error`, or harrec's own 502 or 504 answering one)
    /// become `.failure` items
    /// (`failureCode(forRecordedError:)`). Any other response with an `_error` reached its client
    /// cut short (a connection broken mid-body, a client that gave up while it arrived): it keeps
    /// its status, headers and partial body, with that code as its `interruptionCode`. Skipped: other entries without a response, CONNECT,
    /// WebSocket upgrades (status 101 or `_webSocketMessages`), requests harrec answered itself
    /// (`_refused`: its 400s, 407s and failed tunnels are no server's answers), hosts the filter drops.
    /// Condition: method, scheme, host, port (nil when default), path ("/" when empty), every URL
    /// query item as `.equals` except ignored names and placeholder values (`.present`).
    /// Response: status; headers in order minus hop-by-hop ones (Connection, Keep-Alive,
    /// Proxy-Connection, Transfer-Encoding, TE, Trailer, Upgrade), Content-Encoding and
    /// Content-Length (the body is decoded); body `.empty` when there is no text, `.base64` for
    /// content.encoding "base64", else `.text`.
    /// Repeatability: items with equal conditions are served in recorded order: all but the last
    /// are `.once`, the last is `.always`. Label: "#<1-based index> <METHOD> <path>".
    ///
    /// Details beyond the summary above:
    /// - Entries whose URL is not absolute `http`/`https` (ws, wss, data:, unparsable) are skipped
    ///   too: NetworkMock only serves http and https.
    /// - An entry whose `startedDateTime` cannot be parsed keeps its place after the entry before it.
    /// - HTTP/2 pseudo-headers (`:status`, ...) are dropped from responses as well.
    /// - Query names and values are percent-decoded; a value of `nil` means the item had no `=`.
    /// - Body conditions use `postData.text`. A JSON body (mimeType containing "json" and text that
    ///   parses) becomes `.json`, anything else `.text`. Binary bodies (postData `encoding` base64)
    ///   cannot be expressed as a `BodyMatch` and get no body condition. With `.whenNeeded`, an entry
    ///   without a body in a group that needs bodies gets `.text("")`, so it only answers empty bodies.
    /// - Conditions count as equal regardless of query item order, and JSON bodies by value.
    public static func items(from log: HARLog, options: HARScenarioOptions = HARScenarioOptions()) -> [ResponseQueueItem] {
        builtItems(from: log, options: options).map(\.item)
    }

    // MARK: - Internals shared with HARReplayProtocol

    /// The items, each with the index in `log.entries` of the entry it came from (replay adds
    /// header conditions from the entries, in place).
    /// `proxyAnswersAsFailures`: the 502s and 504s harrec answered while recording become the
    /// transport failures behind them (what an app without the proxy sees), as status 0 entries
    /// do; false (a replaying proxy) serves them as the recording's client got them.
    package static func builtItems(from log: HARLog, options: HARScenarioOptions,
                                   proxyAnswersAsFailures: Bool = true) -> [QueueEntry] {
        let dropped = droppedHeaders(options.droppedResponseHeaders, log: log)
        var drafts = EntryDrafts()
        for (index, entry) in log.entries.enumerated() {
            drafts.append(draft(of: entry, index: index, options: options, dropping: dropped,
                                proxyAnswersAsFailures: proxyAnswersAsFailures))
        }
        return assemble(consume drafts, instants: log.entries.map(instant(of:)), options: options)
    }

    /// The indices of `entries` in a stable sort by startedDateTime. Unparsable dates inherit the
    /// previous entry's instant so they stay where they were relative to their neighbour.
    static func sortedIndices(_ entries: [HAREntry]) -> [Int] {
        sortedIndices(instants: entries.map(instant(of:)))
    }

    /// The indices of `instants` (`instant(of:)` of each entry) in a stable sort by instant.
    static func sortedIndices(instants: [Double]) -> [Int] {
        let at = resolved(instants)
        return at.indices.sorted { at[$0] != at[$1] ? at[$0] < at[$1] : $0 < $1 }
    }

    /// The body-less condition for an entry, or nil when the entry is skipped.
    static func makeCondition(_ entry: HAREntry, options: HARScenarioOptions) -> RequestCondition? {
        let status = entry.response.status
        guard status > 0 || (status == 0 && recordedError(entry) != nil), status != 101 else { return nil }
        let method = entry.request.method.uppercased()
        guard !method.isEmpty, method != "CONNECT" else { return nil }
        if entry.custom.contains(where: { $0.key == "_webSocketMessages" || ($0.key == "_refused" && $0.value == .bool(true)) }) {
            return nil
        }
        guard let url = MockURLParts(entry.request.url), url.scheme == "http" || url.scheme == "https" else {
            return nil
        }
        if let includeHost = options.includeHost, !includeHost(url.host) { return nil }
        let ignored = Set(options.ignoredQueryItems.map { $0.lowercased() })
        let query: [QueryItemMatch] = url.queryItems.map { item in
            if ignored.contains(item.name.lowercased()) { return .present(item.name) }
            if let value = item.value, isRedactionPlaceholder(value) { return .present(item.name) }
            return .equals(item.name, item.value)
        }
        return RequestCondition(method: method, scheme: url.scheme, host: url.host,
                                port: url.port == MockURLParts.defaultPort(url.scheme) ? nil : url.port,
                                path: url.path, query: query, body: nil)
    }

    static let droppedResponseHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "content-encoding", "content-length",
    ]

    /// `volatile` (lowercased) minus the validators a recorded request was conditional on.
    static func droppedHeaders(_ volatile: Set<String>, log: HARLog) -> Set<String> {
        var names = Set(volatile.map { $0.lowercased() })
        for entry in log.entries {
            for header in entry.request.headers {
                switch header.name.lowercased() {
                case "if-none-match", "if-match": names.remove("etag")
                case "if-modified-since", "if-unmodified-since": names.remove("last-modified")
                default: break
                }
            }
        }
        return names
    }

    static func makeResponse(_ entry: HAREntry, latency: ReplayLatency, dropping volatile: Set<String> = [],
                             proxyAnswersAsFailures: Bool = true) -> MockResponse {
        // No response reached the client (status 0): a failure. harrec's own 502/504 is the
        // failure behind it for an app, and the answer itself for a proxy client. Any other
        // response with an `_error` reached the client cut short: what arrived, then the error.
        let error = recordedError(entry)
        let noResponse = entry.response.status == 0
        let ownAnswer = !noResponse && transportFailure(entry) != nil
        let failure = noResponse || (ownAnswer && proxyAnswersAsFailures) ? error : nil
        let interruption = noResponse || ownAnswer ? nil : error
        let headers = responseHeaders(entry.response, dropping: volatile)
        let body = responseBody(entry.response.content)
        var delay: TimeInterval?
        switch latency {
        case .none: delay = nil
        case .recorded:
            // The server's part: waiting for the first byte and receiving the rest.
            let server = max(0, entry.timings.wait) + max(0, entry.timings.receive)
            let failed = failure != nil
            let milliseconds = !failed && server.isFinite && server > 0 ? server : entry.time
            delay = milliseconds.isFinite && milliseconds > 0 ? milliseconds / 1000 : nil
        case .fixed(let seconds): delay = seconds > 0 ? seconds : nil
        }
        if let error = failure {
            return .failure(code: failureCode(forRecordedError: error), delay: delay)
        }
        return MockResponse(status: entry.response.status, headers: headers, body: body, delay: delay,
                            interruption: interruption.map(failureCode(forRecordedError:)))
    }

    /// A response's recorded headers as a mock's: without hop-by-hop and framing headers,
    /// pseudo-headers, and `volatile` (lowercased) ones.
    package static func responseHeaders(_ response: HARResponse, dropping volatile: Set<String>) -> [HTTPHeader] {
        response.headers
            .filter { !droppedResponseHeaders.contains($0.name.lowercased()) && !$0.name.hasPrefix(":")
                && !volatile.contains($0.name.lowercased()) }
            .map { HTTPHeader($0.name, $0.value) }
    }

    /// A response's recorded content as a mock's body: its text, base64 when the HAR says so.
    package static func responseBody(_ content: HARContent) -> ResponseBody {
        guard let text = content.text, !text.isEmpty else { return .empty }
        return content.encoding?.lowercased() == "base64" ? .base64(text) : .text(text)
    }

    /// The transport failure an entry records: its `_error` when no response arrived (status 0)
    /// or when the response is harrec's own answer to the failure (a 502 or 504 whose body is
    /// `harrec: <the _error>`).
    static func transportFailure(_ entry: HAREntry) -> String? {
        guard let error = recordedError(entry) else { return nil }
        if entry.response.status == 0 { return error }
        guard entry.response.status == 502 || entry.response.status == 504,
              entry.response.content.text == "harrec: \(error)\n" else { return nil }
        return error
    }

    /// Whether the entry records a client that gave up before the exchange ended (harrec's
    /// `client closed the connection after 2.0 s`, `client reset the stream (CANCEL) after ...`):
    /// a mock fails it with `.timedOut` (after what arrived, and after the recorded time with
    /// `--latency recorded`), and `harrec replay` sends nothing more, as the client got nothing more.
    public static func clientGaveUp(_ entry: HAREntry) -> Bool {
        guard let error = recordedError(entry) else { return false }
        return isClientGiveUp(error)
    }

    package static func isClientGiveUp(_ error: String) -> Bool {
        error.hasPrefix("client ") && error.hasSuffix(" s") && error.contains(" after ")
    }

    /// The entry's `_error`, when it is a non-empty string: the entry's own (harrec's), else its
    /// response's (where mitmproxy and Chrome write a failed request's error).
    package static func recordedError(_ entry: HAREntry) -> String? {
        errorMember(of: entry.custom) ?? errorMember(of: entry.response.custom)
    }

    /// The `_error` member of `fields`, when it is a non-empty string.
    package static func errorMember(of fields: JSONFields) -> String? {
        guard let field = fields.first(where: { $0.key == "_error" }), case .string(let text) = field.value,
              !text.isEmpty else { return nil }
        return text
    }

    /// The `URLError` code an app sees for a recorded transport failure, from the `_error` text of
    /// harrec, mitmproxy or Chrome: a refused connection is `.cannotConnectToHost`, a DNS failure
    /// `.cannotFindHost`, a timeout or a client that gave up `.timedOut`, a reset or cut connection
    /// `.networkConnectionLost`, a certificate the client rejected `.serverCertificateUntrusted`,
    /// another TLS failure `.secureConnectionFailed`, anything else `.unknown`.
    public static func failureCode(forRecordedError error: String) -> MockFailureCode {
        // The app stopped waiting: as far as it knows, the server never answered in time.
        if isClientGiveUp(error) { return .timedOut }
        let text = error.lowercased()
        func has(_ words: String...) -> Bool { words.contains { text.contains($0) } }
        if has("internet_disconnected", "not connected to the internet", "network is down") { return .notConnectedToInternet }
        if has("certificate", "err_cert", "cert_", "unknown ca", "self signed", "self-signed") { return .serverCertificateUntrusted }
        if has("dns", "name_not_resolved", "name not resolved", "resolve", "name or service not known",
               "nodename nor servname", "getaddrinfo", "no address associated") { return .cannotFindHost }
        if has("timed out", "timeout", "timed_out", "sent nothing for") { return .timedOut }
        if has("refused", "errno 111", "connect call failed", "connect failed", "connection failed", "cannot connect",
               "unreachable") { return .cannotConnectToHost }
        if has("tls", "ssl", "handshake") { return .secureConnectionFailed }
        if has("reset", "closed", "cut", "eof", "empty_response", "broken pipe", "aborted", "lost") {
            return .networkConnectionLost
        }
        return .unknown
    }

    /// One item with what it came from, for the generator's comments.
    public struct SourcedItem: Sendable {
        /// The item, exactly as `items(from:options:)` makes it.
        public var item: ResponseQueueItem
        /// The recorded `_error` of a failure item (status 0, or harrec's own 502 or 504) or of a
        /// response cut short (`interruptionCode`), else nil.
        public var recordedError: String?
        /// The index of the item before this one with an equal condition (the same request
        /// recorded earlier), else nil.
        public var previousRepeat: Int?
    }

    /// `items(from:options:)` with the recorded error of each failure item and the links
    /// between repeats of one request.
    public static func sourcedItems(from log: HARLog, options: HARScenarioOptions = HARScenarioOptions()) -> [SourcedItem] {
        var last: [String: Int] = [:]
        return builtItems(from: log, options: options).enumerated().map { i, built in
            let key = conditionKey(built.item.condition)
            defer { last[key] = i }
            return SourcedItem(item: built.item,
                               recordedError: built.item.response.endsInFailure ? recordedError(log.entries[built.entryIndex]) : nil,
                               previousRepeat: last[key])
        }
    }

    /// A key equal for conditions that match the same requests: query items sorted, JSON bodies
    /// canonical.
    package static func conditionKey(_ c: RequestCondition) -> String {
        var parts = [c.method.uppercased(), c.scheme.lowercased(), c.host.lowercased(),
                     c.port.map(String.init) ?? "", c.path]
        let query = c.query.map { q -> String in
            switch q {
            case .equals(let n, let v): return "=\(n.debugDescription)\(v.map { $0.debugDescription } ?? "nil")"
            case .present(let n): return "?\(n.debugDescription)"
            }
        }.sorted()
        parts.append(query.joined(separator: ","))
        switch c.body {
        case nil: parts.append("-")
        case .text(let t): parts.append("t" + t.debugDescription)
        case .json(let j): parts.append("j" + (MockJSON.canonical(j) ?? j.debugDescription))
        case .jsonSubset(let j): parts.append("s" + (MockJSON.canonical(j) ?? j.debugDescription))
        }
        return parts.joined(separator: "\u{1}")
    }
}

/// What a recorded request body is, for body conditions.
package struct RequestBodyInfo: Sendable {
    var hasBody: Bool
    /// The condition when the body takes part in matching (nil for binary bodies).
    var match: BodyMatch?
    /// Equal for bodies that match the same requests.
    var key: String

    init(_ postData: HARPostData?) {
        guard let postData, let text = postData.text, !text.isEmpty else {
            hasBody = false; match = nil; key = "none"; return
        }
        hasBody = true
        let encoding = postData.encoding ?? postData.custom.last(where: { $0.key == "_encoding" })?.value.stringValue
        if encoding?.lowercased() == "base64" {
            match = nil
            key = "b" + text
        } else if postData.mimeType.lowercased().contains("json"), let canonical = MockJSON.canonical(text) {
            match = .json(text)
            key = "j" + canonical
        } else {
            match = .text(text)
            key = "t" + text
        }
    }
}
