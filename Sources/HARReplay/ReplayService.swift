import HAR
import HARScenarios
import HTTP1
import ProxyCore
import Synchronization
import TextEncodings
import WebSocket

/// A request that restarts the queues once served (`--reset-on "GET /v1/logout"`).
package struct ReplayResetTrigger: Sendable, Equatable {
    /// Uppercased; nil: any method.
    package var method: String?
    package var path: String

    /// "GET /v1/logout" or "/v1/logout"; nil when it is neither.
    package init?(_ text: String) {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        switch words.count {
        case 1 where words[0].hasPrefix("/"): method = nil; path = String(words[0])
        case 2 where words[1].hasPrefix("/"): method = words[0].uppercased(); path = String(words[1])
        default: return nil
        }
    }

    func matches(_ request: MatchInput) -> Bool {
        (method == nil || method == request.method) && request.parts?.path == path
    }
}

/// What was served, for `harrec replay`'s summary at exit and `--strict`.
package struct ReplaySummary: Sendable {
    /// Labels of items never served since the replay started (resets keep what was served).
    package var neverServed: [String]
    /// "GET url" lines of unmatched requests, the first `ReplayService.keptUnmatched`.
    package var unmatched: [String]
    package var unmatchedCount: Int
    /// "GET url" lines of unmatched requests forwarded by `--passthrough`, the first `keptUnmatched`.
    package var forwarded: [String]
    package var forwardedCount: Int
    /// Where replayed WebSocket clients did not follow the recording, the first `keptUnmatched`.
    package var divergences: [String]
    package var divergenceCount: Int
    /// Tunnels refused because the recording's were.
    package var refusedCount: Int
    package var servedCount: Int
}

/// The HAR being replayed, shared by every event loop: one queue under one lock, so a `.once`
/// item is served once whatever connection asks. Matching and ordering are HARMocking's
/// (`ServingQueue`, `RequestMatcher`); only the wire side is the proxy's.
package final class ReplayService: Responder {
    /// Unmatched request lines kept for the summary; the count goes on.
    static let keptUnmatched = 1_000
    /// The owner named in diagnoses.
    static let owner = "harrec replay"

    private struct State {
        var queue: ServingQueue
        var unmatched: [String] = []
        var unmatchedCount = 0
        var forwarded: [String] = []
        var forwardedCount = 0
        var servedCount = 0
        var sockets: ServingQueue
        var refusedCount = 0
        var divergences: [String] = []
        var divergenceCount = 0
        /// Diagnoses of unmatched requests, by request, made at `diagnosesGeneration` of the
        /// queue: a flood of the same unmatched requests is diagnosed once each.
        var diagnoses: [DiagnosisKey: String] = [:]
        var diagnosesGeneration = 0
    }

    /// Diagnoses kept at most (then the cache starts over), and the largest body a kept one's
    /// request may have.
    static let keptDiagnoses = 1_024
    static let diagnosedBodyLimit = 4_096

    /// The wire form of each item; for an item whose response stays in the HAR file until served
    /// (`sources`), its status, delay, outcome and label, the rest read when served.
    private let responses: [ReplayResponse]
    /// Queue index -> the HAR entry its response is read from when served (`QueueEntry.bodySource`).
    private let sources: [Int: Int]
    /// Reads a deferred response: the headers and content of HAR entry N (nil when they cannot be
    /// read).
    private let bodies: (@Sendable (Int) -> StoredResponse?)?
    /// A deferred body as a source read while it is sent (nil: read it whole with `bodies`).
    private let streams: (@Sendable (Int) -> (any ReplayBodySource)?)?
    /// "host:port" -> the recorded error, for tunnels the recording could not open.
    private let refusedTunnels: [String: String]
    /// "host:port" -> whether the recording spoke HTTP/2 with it (absent: not recorded).
    private let http2Hosts: [String: Bool]
    private let conversations: [RecordedConversation]
    private let remaps: [HostRemap]
    private let resetTriggers: [ReplayResetTrigger]
    private let activation: String
    private let state: Mutex<State>
    /// `--passthrough`: unmatched requests and HTTP/2 streams go to their real upstream (and are recorded).
    package let passthrough: Bool
    /// `--latency recorded`: WebSocket server messages keep their recorded gaps.
    package let recordedLatency: Bool

    /// `activation`: how the user chose what is served, for the diagnosis' advice.
    package init(entries: [QueueEntry], source: String, remaps: [HostRemap] = [], resetOn: [ReplayResetTrigger] = [],
                 activation: String = "harrec replay", passthrough: Bool = false, recordedLatency: Bool = false,
                 webSockets: (entries: [QueueEntry], conversations: [RecordedConversation]) = ([], []),
                 refusedTunnels: [String: String] = [:], http2Hosts: [String: Bool] = [:],
                 bodies: (@Sendable (Int) -> StoredResponse?)? = nil,
                 streams: (@Sendable (Int) -> (any ReplayBodySource)?)? = nil) {
        self.bodies = bodies
        self.streams = streams
        self.refusedTunnels = refusedTunnels
        self.http2Hosts = http2Hosts
        self.passthrough = passthrough
        self.recordedLatency = recordedLatency
        conversations = webSockets.conversations
        responses = entries.enumerated().map { i, entry in
            ReplayService.response(entry.item, label: entry.item.label ?? "#\(i + 1)",
                                   resetCode: entry.recordedError.flatMap(HTTP2ErrorCode.passedOnReset),
                                   clientGaveUp: entry.recordedError.map(HARScenarioBuilder.isClientGiveUp) ?? false,
                                   wire: entry.bodySource == nil)
        }
        var sources: [Int: Int] = [:]
        for (i, entry) in entries.enumerated() {
            if let source = entry.bodySource { sources[i] = source }
        }
        self.sources = sources
        self.remaps = remaps
        resetTriggers = resetOn
        self.activation = activation
        // The queue matches and diagnoses; the bodies and heads live in `responses` only. Changed
        // in place: the caller's array is this init's to consume, not to copy.
        var withoutBodies = consume entries
        for i in withoutBodies.indices {
            withoutBodies[i].item.response.body = .empty
            withoutBodies[i].item.response.headers = []
        }
        state = Mutex(State(queue: ServingQueue(entries: withoutBodies, source: source),
                            sockets: ServingQueue(entries: webSockets.entries, source: source)))
    }

    /// The number of items served from (WebSocket conversations included).
    package var itemCount: Int { responses.count + conversations.count }

    /// Picks the response for one complete request (the queue advances). `canForward`: the
    /// caller can send an unmatched request upstream (`--passthrough`, HTTP/1 clients).
    package func decide(method: String, url: String, headers: [HTTPField], body: [UInt8],
                        canForward: Bool = false) -> ReplayDecision {
        let input = matchInput(method: method, url: url, headers: headers, body: body)
        let triggered = resetTriggers.contains { $0.matches(input) }
        var servedIndex: Int?
        let decision = state.withLock { s -> ReplayDecision in
            switch s.queue.pick(for: input) {
            case .served(let index):
                s.servedCount += 1
                if triggered { s.queue.reset() }
                servedIndex = index
                return .serve(responses[index], resetAfter: triggered)
            case .unmatched where canForward && passthrough:
                s.forwardedCount += 1
                if s.forwarded.count < ReplayService.keptUnmatched { s.forwarded.append("\(method) \(url)") }
                if triggered { s.queue.reset() }
                return .forward
            case .unmatched:
                s.unmatchedCount += 1
                if s.unmatched.count < ReplayService.keptUnmatched { s.unmatched.append("\(method) \(url)") }
                if s.diagnosesGeneration != s.queue.generation || s.diagnoses.count >= ReplayService.keptDiagnoses {
                    s.diagnoses = [:]
                    s.diagnosesGeneration = s.queue.generation
                }
                let key = ReplayService.diagnosisKey(input)
                let text = key.flatMap { s.diagnoses[$0] } ?? s.queue.diagnosis(
                    for: input, reports: s.queue.diagnosisReports(for: input), owner: ReplayService.owner, activation: activation,
                    queryAdvice: ReplayService.queryAdvice)
                if let key { s.diagnoses[key] = text }
                if triggered { s.queue.reset() }
                return .unmatched(diagnosis: text)
            }
        }
        // A response left in the file is read now, outside the lock.
        guard let index = servedIndex, let source = sources[index] else { return decision }
        let shell = responses[index]
        // A whole answer streams from the file (its head was kept); one cut short is sent as
        // recorded, whole.
        if case .answered = shell.outcome, let stream = streams?(source) {
            return .serve(ReplayResponse(status: shell.status, fields: shell.fields, streaming: stream, delay: shell.delay,
                                         label: shell.label), resetAfter: triggered)
        }
        guard let stored = bodies?(source) else {
            // The file changed or went away since it was loaded.
            var fields = HTTPFields()
            fields.append(name: "Content-Type", value: "text/plain; charset=utf-8")
            let text = "harrec replay: the recorded body of \(shell.label) could not be read again from the HAR (entry \(source + 1))\n"
            return .serve(ReplayResponse(status: 502, fields: fields, body: Array(text.utf8), delay: nil, outcome: .answered,
                                         label: shell.label), resetAfter: triggered)
        }
        let mock = MockResponse(status: shell.status, headers: stored.headers, body: stored.body, delay: shell.delay)
        return .serve(ReplayService.response(mock, label: shell.label, outcome: shell.outcome), resetAfter: triggered)
    }

    /// A request as matching sees it: header names lowercased, repeated headers joined (as
    /// URLRequest joins them for HARReplayProtocol), and a `--host-map` applied.
    private func matchInput(method: String, url: String, headers: [HTTPField], body: [UInt8]) -> MatchInput {
        var lowered: [String: String] = [:]
        for field in headers {
            let name = field.name.lowercased()
            lowered[name] = lowered[name].map { $0 + "," + field.value } ?? field.value
        }
        var input = MatchInput(method: method, url: url, headers: [:], body: body)
        input.headers = lowered
        if let remap = remaps.first(where: { $0.applies(to: input) }) { remap.apply(to: &input) }
        return input
    }

    /// A request as a diagnosis depends on it: method, URL (and the host a host map put in it),
    /// headers and body.
    private struct DiagnosisKey: Hashable {
        var request: String
        var headers: [String: String]
        var body: [UInt8]
    }

    /// The key of `input`, or nil for a body too large to keep.
    private static func diagnosisKey(_ input: MatchInput) -> DiagnosisKey? {
        guard input.body.count <= diagnosedBodyLimit else { return nil }
        return DiagnosisKey(request: input.requestLine + " " + (input.remappedHost ?? ""), headers: input.headers, body: input.body)
    }

    /// What a diagnosis tells a replay's user to do about query items: its flags.
    private static let queryAdvice = QueryAdvice(
        presence: { "replay with --ignore-query \($0)" },
        unlisted: { "replay with --ignore-query \($0), or with --match-query subset to allow any item the recording lacks" },
        general: "replay with --ignore-query NAME for query items that change from run to run")

    /// The conversation for a WebSocket upgrade request (WebSocket items form their own queue:
    /// an upgrade never takes an HTTP item, nor a plain request a conversation).
    package func decideWebSocket(url: String, headers: [HTTPField],
                                 deflate: PerMessageDeflate?) -> WebSocketReplayDecision {
        let passthrough = self.passthrough, latency = recordedLatency
        let input = matchInput(method: "GET", url: url, headers: headers, body: [])
        return state.withLock { s -> WebSocketReplayDecision in
            switch s.sockets.pick(for: input) {
            case .served(let index):
                s.servedCount += 1
                let conversation = conversations[index], label = s.sockets.label(index)
                return .conversation(WebSocketReplay(conversation: conversation, label: label, latency: latency, deflate: deflate),
                                     subprotocol: conversation.subprotocol, label: label)
            case .unmatched where passthrough:
                s.forwardedCount += 1
                if s.forwarded.count < ReplayService.keptUnmatched { s.forwarded.append("GET \(url) (websocket)") }
                return .forward
            case .unmatched:
                s.unmatchedCount += 1
                if s.unmatched.count < ReplayService.keptUnmatched { s.unmatched.append("GET \(url) (websocket)") }
                return .unmatched(diagnosis: s.sockets.diagnosis(for: input, reports: s.sockets.diagnosisReports(for: input),
                                                                 owner: ReplayService.owner,
                                                                 activation: activation,
                                                                 queryAdvice: ReplayService.queryAdvice))
            }
        }
    }

    /// How a tunnel to `target` failed in the recording, or nil when it is served. The failure's
    /// kind comes from the recorded error's words (refused, DNS, timeout, ...).
    package func refusedTunnel(_ target: ProxyTarget) -> UpstreamFailure? {
        guard let error = refusedTunnels["\(target.host.lowercased()):\(target.port)"] else { return nil }
        let kind: UpstreamFailure.Kind
        switch HARScenarioBuilder.failureCode(forRecordedError: error) {
        case .cannotFindHost: kind = .dns
        case .timedOut: kind = .timeout
        case .cannotConnectToHost: kind = error.lowercased().contains("unreachable") ? .unreachable : .refused
        case .networkConnectionLost: kind = .reset
        default: kind = .other
        }
        state.withLock { $0.refusedCount += 1 }
        return UpstreamFailure(kind, "as recorded: \(error)")
    }

    /// As recorded with `target` (or with the host a `--host-map` serves there); a host the
    /// recording never reached speaks HTTP/2 with a client that offers it.
    package func speaksHTTP2(to target: ProxyTarget) -> Bool {
        let key = "\(target.host.lowercased()):\(target.port)"
        if let recorded = http2Hosts[key] { return recorded }
        for remap in remaps where remap.scheme == "https" && remap.host.lowercased() == target.host.lowercased()
            && (remap.port ?? 443) == target.port {
            if let recorded = http2Hosts["\(remap.recordedHost.lowercased()):443"] { return recorded }
        }
        return true
    }

    /// "host:port" of each recorded https exchange -> whether it was HTTP/2 (`httpVersion`
    /// "HTTP/2", "h2", "http/2.0", ...): `speaksHTTP2(to:)`.
    package static func http2Hosts(_ entries: [(url: String, httpVersion: String)]) -> [String: Bool] {
        var hosts: [String: Bool] = [:]
        for entry in entries {
            guard let parts = MockURLParts(entry.url), parts.scheme == "https" else { continue }
            let version = entry.httpVersion.lowercased()
            let key = "\(parts.host.lowercased()):\(parts.port ?? 443)"
            hosts[key] = (hosts[key] ?? false) || version == "h2" || version.hasPrefix("http/2")
        }
        return hosts
    }

    /// A replayed WebSocket client did not follow the recording (`line` says where and how).
    package func noteDivergence(_ line: String) {
        state.withLock { s in
            s.divergenceCount += 1
            if s.divergences.count < ReplayService.keptUnmatched { s.divergences.append(line) }
        }
    }

    /// Every queue back to its first item (`harrec replay --reset`, `http://harrec/reset`).
    package func reset() {
        state.withLock { $0.queue.reset(); $0.sockets.reset() }
    }

    package func summary() -> ReplaySummary {
        state.withLock { s in
            let never = s.queue.entries.indices.filter { !s.queue.everServed[$0] }.map { s.queue.label($0) }
                + s.sockets.entries.indices.filter { !s.sockets.everServed[$0] }.map { s.sockets.label($0) }
            return ReplaySummary(neverServed: never, unmatched: s.unmatched, unmatchedCount: s.unmatchedCount,
                                 forwarded: s.forwarded, forwardedCount: s.forwardedCount,
                                 divergences: s.divergences, divergenceCount: s.divergenceCount,
                                 refusedCount: s.refusedCount, servedCount: s.servedCount)
        }
    }

    /// The wire form of one queue item. Headers that cannot go on the wire (a foreign HAR with a
    /// control character in a value) are left out rather than failing the whole response.
    /// `clientGaveUp`: the recorded `_error` is the client's give-up (a cut response stays silent).
    /// `wire` false: see `ReplayResponse.init(status:fields:body:delay:outcome:label:wire:)`.
    static func response(_ item: ResponseQueueItem, label: String, resetCode: UInt32? = nil,
                         clientGaveUp: Bool = false, wire: Bool = true) -> ReplayResponse {
        let mock = item.response
        let outcome: ReplayOutcome
        if let code = mock.failureCode {
            // The client gave up, or timed out, before any answer; else the connection broke.
            outcome = .failed(code == .timedOut ? .silence : .broken(resetCode: resetCode))
        } else if mock.interruptionCode != nil {
            // Cut short: the client's own give-up is silence; anything else (an upstream timeout
            // too: harrec closed the connection then) broke the connection.
            outcome = .cut(clientGaveUp ? .silence : .broken(resetCode: resetCode))
        } else {
            outcome = .answered
        }
        return response(mock, label: label, outcome: outcome, wire: wire)
    }

    /// The wire form of `mock`'s status, headers and body, ending as `outcome` says.
    static func response(_ mock: MockResponse, label: String, outcome: ReplayOutcome, wire: Bool = true) -> ReplayResponse {
        var fields = HTTPFields()
        for header in mock.headers {
            var one = HTTPFields()
            one.append(name: header.name, value: header.value)
            if (try? HTTP1Serializer.responseHead(version: .http11, status: 200, reason: "OK", fields: one)) != nil {
                fields.append(name: header.name, value: header.value)
            }
        }
        var status = mock.status
        var body: [UInt8]
        switch mock.body {
        case .empty: body = []
        case .text(let text): body = Array(text.utf8)
        case .base64(let encoded):
            if let bytes = Base64.decodeLenient(encoded) {
                body = bytes
            } else {
                status = 502
                fields = HTTPFields()
                fields.append(name: "Content-Type", value: "text/plain; charset=utf-8")
                body = Array("harrec replay: the recorded body of \(label) is not valid base64\n".utf8)
            }
        case .fixture(let name):
            body = Array("harrec replay: fixture \(name) is not available to the proxy\n".utf8)
            status = 502
        }
        if case .failed = outcome {} else if !(100...599).contains(status) { status = 502 }
        return ReplayResponse(status: status, fields: fields, body: body, delay: mock.delay, outcome: outcome, label: label,
                              wire: wire)
    }
}
