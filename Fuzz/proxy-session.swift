// The whole ProxySession fed random event sequences: client and upstream bytes, connects and
// connect failures, EOFs, breaks, ticks that move time, shutdown. It catches state bugs that the
// parsers' targets cannot: the session must never crash, loop, talk to an upstream it did not open
// or already closed, record a flow twice, record a proxy credential, act after it finished, or
// keep running after an abort, or send a body part after its flow. With the replay flag it is `harrec replay`: it must never connect
// (unless the passthrough flag is set too). With the reverse flag it is a reverse listener's
// session (and may send plain http to an upstream proxy, or take h2c).
import HARReplay
import HARScenarios
import ProxyCore
import Recording

private let password = "fuzz-secret-pw"

/// Reads the input as a program: one op byte, then the op's operands.
private struct Program {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    var atEnd: Bool { at >= bytes.count }
    mutating func byte() -> UInt8 {
        guard at < bytes.count else { return 0 }
        defer { at += 1 }
        return bytes[at]
    }
    /// A length byte, then up to that many bytes.
    mutating func chunk() -> [UInt8] {
        let count = min(Int(byte()), bytes.count - at)
        defer { at += count }
        return Array(bytes[at..<at + count])
    }
}

private struct Invariants {
    var opened: Set<UpstreamID> = []
    var open: Set<UpstreamID> = []
    var recorded: Set<UInt64> = []
    /// Body bytes sent as parts, by flow id: request, response.
    var parts: [UInt64: (request: Int, response: Int)] = [:]
    var finishedBefore = false
    var replaying = false

    mutating func check(_ commands: [ProxyCommand], finished: Bool) {
        if commands.count > 10_000 { fuzzFail("\(commands.count) commands for one event") }
        for command in commands {
            switch command {
            case .openUpstream(let id, _, _):
                if replaying { fuzzFail("harrec replay opened upstream \(id)") }
                if finishedBefore { fuzzFail("opened upstream \(id) after the session finished") }
                if !opened.insert(id).inserted { fuzzFail("upstream id \(id) opened twice") }
                open.insert(id)
            case .sendToUpstream(let id, let bytes):
                if !open.contains(id) { fuzzFail("sent \(bytes.count) bytes to upstream \(id), which is not open") }
            case .shutdownUpstreamWrite(let id):
                if !open.contains(id) { fuzzFail("half-closed upstream \(id), which is not open") }
            case .closeUpstream(let id):
                if !opened.contains(id) { fuzzFail("closed upstream \(id), which was never opened") }
                open.remove(id)
            case .sendToClient(let bytes):
                if finishedBefore && !bytes.isEmpty { fuzzFail("sent \(bytes.count) bytes to the client after finishing") }
            case .record(.bodyPart(let part)):
                if recorded.contains(part.flowID) { fuzzFail("a body part of flow \(part.flowID) after its flow was recorded") }
                if part.bytes.isEmpty { fuzzFail("an empty body part of flow \(part.flowID)") }
                switch part.side {
                case .request: parts[part.flowID, default: (0, 0)].request += part.bytes.count
                case .response: parts[part.flowID, default: (0, 0)].response += part.bytes.count
                }
            case .record(.flow(let flow)):
                if !recorded.insert(flow.id).inserted { fuzzFail("flow \(flow.id) recorded twice") }
                let sent = parts[flow.id] ?? (0, 0)
                if flow.request.body.streamed != sent.request || (flow.response?.body.streamed ?? 0) != sent.response {
                    fuzzFail("flow \(flow.id) counts \(flow.request.body.streamed)/\(flow.response?.body.streamed ?? 0) bytes sent as parts, "
                             + "its parts hold \(sent.request)/\(sent.response)")
                }
                if flow.request.body.streamed + flow.request.body.bytes.count > flow.request.body.wireSize {
                    fuzzFail("flow \(flow.id) recorded more request bytes than crossed the wire")
                }
                if flow.request.fields.contains(where: { $0.name.lowercased() == "proxy-authorization" }) {
                    fuzzFail("a Proxy-Authorization header was recorded")
                }
                if let error = flow.error, error.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                    fuzzFail("control character in a recorded error: \(error.debugDescription)")
                }
            case .log(let event):
                if "\(event)".contains(password) { fuzzFail("the proxy password reached the log") }
            case .closeClient, .shutdownClientWrite, .prepareCertificate, .record, .wake:
                break
            }
        }
        if finished { finishedBefore = true }
    }
}

/// A small recording to replay: repeats, a JSON body condition, a recorded latency, a failure and
/// responses cut short.
private func makeReplayService(passthrough: Bool) -> ReplayService {
    func entry(_ method: String, _ path: String, _ response: MockResponse, _ r: Repeatability = .always,
               body: BodyMatch? = nil) -> QueueEntry {
        QueueEntry(item: ResponseQueueItem(condition: RequestCondition(method: method, scheme: "http", host: "a.test",
                                                                       path: path, body: body),
                                           response: response, repeatability: r))
    }
    return ReplayService(entries: [
        entry("GET", "/", MockResponse(status: 200, body: .text("one")), .once),
        entry("GET", "/", MockResponse(status: 200, body: .text("two"))),
        entry("POST", "/j", MockResponse(status: 201, body: .base64("AAEC")), body: .json(#"{"a":1}"#)),
        entry("GET", "/slow", MockResponse(status: 204, delay: 0.05)),
        entry("GET", "/down", .failure(code: .networkConnectionLost)),
        entry("GET", "/cut", MockResponse(status: 200, body: .text("par"), interruption: .networkConnectionLost)),
        entry("GET", "/gave-up", MockResponse(status: 200, body: .text("par"), interruption: .timedOut)),
    ], source: "fuzz", resetOn: [ReplayResetTrigger("/reset-on")!], passthrough: passthrough)
}

/// A reverse listener in front of two upstreams (by path prefix).
private let reverseProxy = ReverseProxy(upstreams: [
    try! ReverseProxy.Upstream(parsing: "http://a.test"), try! ReverseProxy.Upstream(parsing: "/auth=http://auth.test:8080"),
])

/// A reverse listener in front of one upstream: HTTP/2 streams go to it.
private let soleReverseProxy = ReverseProxy(upstreams: [try! ReverseProxy.Upstream(parsing: "http://a.test")])

private let replayService = makeReplayService(passthrough: false)
/// `--passthrough`: unmatched requests and h2 streams connect upstream (HTTP/1 or HTTP/2).
private let passthroughService = makeReplayService(passthrough: true)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var program = Program(bytes: UnsafeBufferPointer(start: pointer, count: size))
    let flags = program.byte()
    var configuration = ProxyConfiguration()
    if flags & 1 != 0 { configuration.credentials = ProxyCredentials(username: "user", password: password) }
    configuration.streamWebSocketMessages = flags & 2 != 0
    // With a journal's sink, bodies go out in parts of a few bytes (so fuzz inputs reach them).
    configuration.streamBodies = flags & 2 != 0
    configuration.bodyPartBytes = 7
    configuration.liveLog = flags & 4 == 0
    configuration.recordWebSocketControlFrames = flags & 8 != 0
    configuration.maxRecordedBodyBytes = flags & 16 != 0 ? 16 : 64 << 20
    if flags & 32 != 0 { configuration.replay = flags & 64 != 0 ? passthroughService : replayService }
    // The high bit: a reverse listener's session (with bit 8, in front of one upstream, which
    // takes h2c); with the credentials bit, plain http also goes to an HTTP upstream proxy in
    // absolute form.
    let reverse = flags & 128 != 0 ? (flags & 8 != 0 ? soleReverseProxy : reverseProxy) : nil
    if reverse != nil && flags & 1 != 0 {
        configuration.upstreamProxy = UpstreamProxy(kind: .http, target: ProxyTarget(host: "proxy.test", port: 3128),
                                                    credentials: ProxyCredentials(username: "user", password: password))
    }
    var now = 1_800_000_000.0
    let session = ProxySession(id: 1, clientAddress: "127.0.0.1:40000", configuration: configuration, reverse: reverse,
                               flowIDs: IDSource(), now: now)
    var invariants = Invariants()
    invariants.replaying = configuration.replay != nil && configuration.replay?.passthrough == false
    var steps = 0
    while !program.atEnd && steps < 400 {
        steps += 1
        let op = program.byte()
        // Upstream ids start at 1; a few beyond the opened ones test stale and unknown ids.
        let id = UpstreamID(op >> 4) % 6 + 1
        switch op & 0x0F {
        case 0, 1, 2:
            program.chunk().withUnsafeBytes { session.clientReceived($0, at: now) }
        case 3, 4, 5:
            program.chunk().withUnsafeBytes { session.upstreamReceived(id, $0, at: now) }
        case 6:
            session.upstreamConnected(id, UpstreamConnection(remoteIP: "127.0.0.1", dnsStart: nil, dnsEnd: nil,
                                                             connectStart: now, connectEnd: now), at: now)
        case 7:
            let kinds: [UpstreamFailure.Kind] = [.dns, .refused, .unreachable, .networkUnreachable, .timeout, .reset, .notAllowed, .addressFamily, .other]
            session.upstreamConnectFailed(id, UpstreamFailure(kinds[Int(program.byte()) % kinds.count], "fuzz\u{1b}[31m"), at: now)
        case 8:
            session.clientClosed(at: now)
        case 9:
            session.upstreamClosed(id, at: now)
        case 10:
            now += Double(program.byte())
            session.tick(at: now)
        case 11:
            now += Double(program.byte()) / 1000
        case 12:
            session.clientFailed(op >> 4 & 1 == 0 ? .other("reset\u{7}") : .reset, at: now)
        case 13:
            session.upstreamFailed(id, "reset\u{7}", at: now)
        case 14:
            session.beginShutdown(at: now)
        default:
            session.certificatePrepared(at: now)
        }
        invariants.check(session.takeCommands(), finished: session.isFinished)
    }
    session.abort("aborted: fuzz input ended", at: now)
    invariants.check(session.takeCommands(), finished: session.isFinished)
    if !session.isFinished { fuzzFail("abort left the session running") }
    return 0
}
