import HAR
import HTTP1
import ProxyCore
import Recording

/// One connection to the live view's listener: HTTP/1.1 requests answered by `LiveService`, and
/// server-sent event streams that follow `LiveIndex`'s change log. Sans-IO like the proxy's
/// session: events in, commands out; a stream polls the index on wake-ups it asks for, so the
/// recording never waits for the view.
public final class LiveViewSession: ServiceSession {
    /// Where the connection stands.
    enum State: Equatable {
        /// Reading requests (keep-alive).
        case requests
        /// Waiting for job `job` (off the loop) to answer the request; then as `keepAlive` says.
        case waiting(job: UInt64, keepAlive: Bool, headOnly: Bool)
        /// Sending an event stream from change `cursor` on; `lastWrite` for keep-alive comments;
        /// `job`: the events being written off the loop, if any.
        case streaming(cursor: Int, lastWrite: Double, job: UInt64?)
        /// Closed, or closing once its last answer is out.
        case finished

        /// The job this state waits for, if any.
        var job: UInt64? {
            switch self {
            case .waiting(let job, _, _): return job
            case .streaming(_, _, let job): return job
            default: return nil
            }
        }
    }

    public let id: UInt64
    let clientAddress: String
    let service: LiveService
    var state = State.requests
    var decoder = HTTP1RequestDecoder()
    /// The request being read: its head and the body so far.
    var request: (head: HTTPRequestHead, body: [UInt8])?
    var commands: [ProxyCommand] = []
    var lastActivity: Double
    var shuttingDown = false

    /// The largest request body taken (a mark's name).
    static let maximumBody = 64 << 10
    /// How often a stream looks for changes.
    static let streamInterval = 0.1
    /// The most changes one look takes (a recording at full speed makes thousands a look).
    static let changesPerLook = 10_000
    /// Bytes queued for a stream's reader past which nothing more is sent until it reads.
    static let maximumStreamBacklog = 1 << 20
    /// A stream with nothing to say sends a comment this often (proxies and browsers keep it open).
    static let keepAliveInterval = 15.0
    /// An idle connection between requests is closed after this long.
    static let idleTimeout = 120.0
    /// How often a waiting request looks for its job's answer.
    static let jobPollInterval = 0.02

    public init(id: UInt64, clientAddress: String, service: LiveService, now: Double) {
        self.id = id
        self.clientAddress = clientAddress
        self.service = service
        lastActivity = now
    }

    // MARK: - LoopSession

    public var hasCommands: Bool { !commands.isEmpty }

    public func drainCommands(_ body: (ProxyCommand) -> Void) {
        let taken = commands
        commands.removeAll()
        taken.forEach(body)
    }

    /// The commands so far (tests).
    public func takeCommands() -> [ProxyCommand] {
        defer { commands.removeAll() }
        return commands
    }

    public var isFinished: Bool { state == .finished }
    public var wantsClientData: Bool { state == .requests }

    public func clientReceived(_ bytes: UnsafeRawBufferPointer, at time: Double) {
        lastActivity = time
        guard state == .requests else { return }
        decoder.feed(bytes)
        readRequests(at: time)
    }

    public func clientClosed(at time: Double) {
        finish()
    }

    public func clientFailed(_ failure: ClientFailure, at time: Double) {
        finish()
    }

    /// A tick with nothing queued for the client (tests, and the fuzz target).
    public func tick(at time: Double) { tick(at: time, clientBacklog: 0) }

    public func tick(at time: Double, clientBacklog: Int) {
        switch state {
        case .streaming where clientBacklog > Self.maximumStreamBacklog:
            // A reader that does not keep up: the changes wait in the index, not in memory here.
            commands.append(.wake(at: time + Self.streamInterval))
        case .streaming:
            push(at: time)
        case .waiting(let job, let keepAlive, let headOnly):
            if let response = service.jobs.take(job) {
                state = .requests
                respond(response, keepAlive: keepAlive, headOnly: headOnly)
                if state == .requests { readRequests(at: time) }
            } else {
                commands.append(.wake(at: time + Self.jobPollInterval))
            }
        case .requests where request == nil && time - lastActivity > Self.idleTimeout:
            close()
        default:
            break
        }
    }

    public func beginShutdown(at time: Double) {
        shuttingDown = true
        if case .streaming = state { close() } else if request == nil && state == .requests { close() }
    }

    public func abort(_ reason: String, at time: Double) {
        if state != .finished { commands.append(.closeClient) }
        finish()
    }

    // MARK: - Requests

    func readRequests(at time: Double) {
        while state == .requests {
            let event: HTTP1RequestEvent?
            do {
                event = try decoder.next()
            } catch {
                respond(.text(400, "harrec live view: bad request (\(error))\n"), keepAlive: false)
                return
            }
            guard let event else { return }
            switch event {
            case .head(let head, _):
                request = (head, [])
            case .body(let bytes):
                guard var current = request else { continue }
                guard current.body.count + bytes.count <= Self.maximumBody else {
                    request = nil
                    respond(.text(413, "harrec live view: request body over \(Self.maximumBody >> 10) KiB\n"), keepAlive: false)
                    return
                }
                request = nil
                current.body += bytes
                request = current
            case .end:
                guard let (head, body) = request else { continue }
                request = nil
                answer(head, body: body, at: time)
            }
        }
    }

    func answer(_ head: HTTPRequestHead, body: [UInt8], at time: Double) {
        let keepAlive = head.keepAlive && !shuttingDown
        switch service.answer(method: head.method, target: head.target, fields: head.fields, body: body, now: time) {
        case .respond(let response):
            respond(response, keepAlive: keepAlive, headOnly: head.method == "HEAD")
        case .deferred(let work):
            state = .waiting(job: service.jobs.start(work), keepAlive: keepAlive, headOnly: head.method == "HEAD")
            commands.append(.wake(at: time + Self.jobPollInterval))
        case .move(let move, let response):
            commands.append(.record(.pageMove(move)))
            respond(response, keepAlive: keepAlive)
        case .decide(let decisions, let response):
            for decision in decisions { commands.append(.record(.exportDecision(decision))) }
            respond(response, keepAlive: keepAlive)
        case .mark(let mark, let response):
            commands.append(.record(.pageMark(mark)))
            commands.append(.log(LiveEvent(client: clientAddress, .pageMark(name: mark.name))))
            respond(response, keepAlive: keepAlive)
        case .events(let cursor):
            var fields = HTTPFields()
            fields.append(name: "Content-Type", value: "text/event-stream")
            fields.append(name: "Cache-Control", value: "no-store")
            fields.append(name: "X-Content-Type-Options", value: "nosniff")
            // No length: the stream's body ends when the connection does.
            fields.append(name: "Connection", value: "close")
            var bytes = (try? HTTP1Serializer.responseHead(version: .http11, status: 200, reason: "OK", fields: fields)) ?? []
            bytes += Array("retry: 1000\n\n".utf8)
            commands.append(.sendToClient(bytes))
            state = .streaming(cursor: cursor, lastWrite: time, job: nil)
            push(at: time)
        }
    }

    /// Sends what changed since the stream's cursor, and asks to be woken for the next look. The
    /// changes are copied here (under the index's lock, briefly) and written as events off the
    /// loop (`LiveJobs`), so a burst of flows never holds up the proxy's connections.
    func push(at time: Double) {
        guard case .streaming(let cursor, var lastWrite, let job) = state else { return }
        if let job {
            // The events of the last look are written, or still being written.
            guard let written = service.jobs.take(job) else {
                commands.append(.wake(at: time + Self.jobPollInterval))
                return
            }
            commands.append(.sendToClient(written.body))
            lastWrite = time
        }
        let changes = service.index.changes(after: cursor, limit: Self.changesPerLook)
        let next = changes.cursor
        if changes.isEmpty {
            if time - lastWrite >= Self.keepAliveInterval {
                commands.append(.sendToClient(Array(": keep-alive\n\n".utf8)))
                lastWrite = time
            }
            state = .streaming(cursor: next, lastWrite: lastWrite, job: nil)
        } else {
            let writing = service.jobs.start { LiveResponse(status: 200, contentType: "text/event-stream", body: Self.events(changes)) }
            state = .streaming(cursor: next, lastWrite: lastWrite, job: writing)
        }
        commands.append(.wake(at: time + (state.job == nil ? Self.streamInterval : Self.jobPollInterval)))
    }

    /// Server-sent events: a `page` per new page, then one `flows` event holding the look's flow
    /// summaries as an array (a browser parses one message a look, not one per flow).
    static func events(_ changes: LiveChanges) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(changes.rows.count * 256 + changes.pages.count * 100 + 64)
        for (index, page) in changes.pages {
            out += pageEvent
            out += LiveJSON.bytes(page.json(index: index))
            out += eventEnd
        }
        guard !changes.rows.isEmpty else { return out }
        out += flowsEvent
        changes.writeFlows(to: &out)
        out += eventEnd
        return out
    }

    func respond(_ response: LiveResponse, keepAlive: Bool, headOnly: Bool = false) {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: response.contentType)
        fields.append(name: "Content-Length", value: String(response.body.count))
        fields.append(name: "Cache-Control", value: "no-store")
        fields.append(name: "X-Content-Type-Options", value: "nosniff")
        // The page loads nothing from elsewhere, and no other site may frame it.
        fields.append(name: "Content-Security-Policy", value: "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
        for (name, value) in response.fields { fields.append(name: name, value: value) }
        if !keepAlive { fields.append(name: "Connection", value: "close") }
        let reason = Self.reasons[response.status] ?? "Status"
        var bytes = (try? HTTP1Serializer.responseHead(version: .http11, status: response.status, reason: reason, fields: fields)) ?? []
        if !headOnly { bytes += response.body }
        commands.append(.sendToClient(bytes))
        if !keepAlive { close() }
    }

    static let flowsEvent = Array("event: flows\ndata: ".utf8)
    static let pageEvent = Array("event: page\ndata: ".utf8)
    static let eventEnd = Array("\n\n".utf8)

    /// The reason phrases of the statuses the view answers with.
    static let reasons = [200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
                          413: "Content Too Large", 422: "Unprocessable Content", 503: "Service Unavailable"]

    /// Flushes what is queued, then closes the connection.
    func close() {
        guard state != .finished else { return }
        commands.append(.closeClient)
        finish()
    }

    func finish() {
        if let job = state.job { service.jobs.abandon(job) }
        state = .finished
    }
}
