#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTP1
@testable import ProxyCore
import Recording
import TLS
import XCTest

/// The flows a playbook's session asked to record (its `.record` commands), for assertions.
final class CollectingSink: FlowSink, @unchecked Sendable {
    var flows: [Flow] = []
    func record(_ flow: Flow) { flows.append(flow) }
}

/// A mitmproxy-style playbook: each step is "this event in, exactly these commands out", so a
/// test reads as a transcript of one connection. Time is the playbook's: each event carries `now`.
final class Playbook {
    let sink = CollectingSink()
    let session: ProxySession
    /// The instant the next event carries.
    private(set) var now: Double = 1_800_000_000

    init(configuration: ProxyConfiguration = ProxyConfiguration(), reverse: ReverseProxy? = nil) {
        session = ProxySession(id: 7, clientAddress: "127.0.0.1:50000", configuration: configuration, reverse: reverse,
                               flowIDs: IDSource(), now: now)
    }

    func advance(_ seconds: Double) { now += seconds }

    /// The session's commands since the last step; recorded flows also go to `sink`.
    func take() -> [ProxyCommand] {
        let commands = session.takeCommands()
        for case .record(.flow(let flow)) in commands { sink.record(flow) }
        return commands
    }

    /// Delivers one event at `now` and returns the commands it produced.
    private func step(_ event: (ProxySession, Double) -> Void) -> [ProxyCommand] {
        event(session, now)
        return take()
    }

    @discardableResult func tick() -> [ProxyCommand] { step { $0.tick(at: $1) } }
    @discardableResult func beginShutdown() -> [ProxyCommand] { step { $0.beginShutdown(at: $1) } }
    @discardableResult func abort(_ reason: String) -> [ProxyCommand] { step { $0.abort(reason, at: $1) } }
    @discardableResult func certificatePrepared() -> [ProxyCommand] { step { $0.certificatePrepared(at: $1) } }
    @discardableResult func clientEOF() -> [ProxyCommand] { step { $0.clientClosed(at: $1) } }
    /// The client took what was queued for it (a streamed body's next piece may follow).
    @discardableResult func clientDrained() -> [ProxyCommand] { step { $0.clientDrained(at: $1) } }
    @discardableResult func upstreamEOF(_ id: UpstreamID) -> [ProxyCommand] { step { $0.upstreamClosed(id, at: $1) } }
    @discardableResult func clientFailed(_ failure: ClientFailure) -> [ProxyCommand] { step { $0.clientFailed(failure, at: $1) } }
    @discardableResult func upstreamFailed(_ id: UpstreamID, _ reason: String) -> [ProxyCommand] {
        step { $0.upstreamFailed(id, reason, at: $1) }
    }

    @discardableResult
    func connectFailed(_ id: UpstreamID, _ failure: UpstreamFailure) -> [ProxyCommand] {
        step { $0.upstreamConnectFailed(id, failure, at: $1) }
    }

    @discardableResult
    func connected(_ id: UpstreamID, ip: String = "127.0.0.1") -> [ProxyCommand] {
        step { $0.upstreamConnected(id, UpstreamConnection(remoteIP: ip, dnsStart: nil, dnsEnd: nil, connectStart: $1, connectEnd: $1), at: $1) }
    }

    @discardableResult func client(_ text: String) -> [ProxyCommand] { client(Array(text.utf8)) }

    @discardableResult
    func client(_ bytes: [UInt8]) -> [ProxyCommand] {
        step { session, now in bytes.withUnsafeBytes { session.clientReceived($0, at: now) } }
    }

    /// Feeds the bytes one at a time and returns every command produced.
    @discardableResult
    func clientBytewise(_ text: String) -> [ProxyCommand] {
        Array(text.utf8).flatMap { client([$0]) }
    }

    @discardableResult func upstream(_ id: UpstreamID, _ text: String) -> [ProxyCommand] { upstream(id, Array(text.utf8)) }

    @discardableResult
    func upstream(_ id: UpstreamID, _ bytes: [UInt8]) -> [ProxyCommand] {
        step { session, now in bytes.withUnsafeBytes { session.upstreamReceived(id, $0, at: now) } }
    }
}

/// Renders commands as readable lines so a mismatch prints a diff of transcripts.
func transcript(_ commands: [ProxyCommand]) -> [String] {
    commands.map { command in
        switch command {
        case .sendToClient(let bytes): return "client <- \(visible(bytes))"
        case .closeClient: return "close client"
        case .shutdownClientWrite: return "shutdown client write"
        case .openUpstream(let id, let host, let port): return "open \(id) \(host):\(port)"
        case .sendToUpstream(let id, let bytes): return "upstream \(id) <- \(visible(bytes))"
        case .shutdownUpstreamWrite(let id): return "shutdown upstream \(id) write"
        case .closeUpstream(let id): return "close upstream \(id)"
        case .log: return "log"
        case .prepareCertificate(let host): return "prepare certificate \(host)"
        case .wake(let at): return "wake at \(at)"
        case .record(.flow(let flow)):
            let outcome = flow.error.map { "error: \($0)" } ?? flow.response.map { "\($0.status)" } ?? "no response"
            return "record \(flow.request.method) \(flow.request.url) \(outcome)"
        case .record(.webSocketStart(let flow)): return "record websocket start \(flow.request.url)"
        case .record(.webSocketMessage(let message, _)): return "record websocket \(message.direction) \(visible(message.data))"
        case .record(.pageMark(let mark)): return "record page mark \(mark.name)"
        case .record(.exportDecision(let decision)): return "record \(decision.excluded ? "exclusion" : "inclusion") of flow \(decision.flowID)"
        case .record(.pageMove(let move)): return "record flow \(move.flowID) to page \(move.page)"
        case .record(.bodyPart(let part)): return "record \(part.side) part of flow \(part.flowID): \(part.bytes.count) bytes"
        }
    }
}

func visible(_ bytes: [UInt8]) -> String {
    var out = ""
    for byte in bytes {
        switch byte {
        case 13: out += "\\r"
        case 10: out += "\\n"
        case 32...126: out += String(UnicodeScalar(byte))
        default:
            let hex = String(byte, radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return out
}

func assertTranscript(_ commands: [ProxyCommand], _ expected: [String], file: StaticString = #filePath, line: UInt = #line) {
    let actual = transcript(commands)
    if actual != expected {
        XCTFail("transcript differs:\n--- expected\n\(expected.joined(separator: "\n"))\n--- actual\n\(actual.joined(separator: "\n"))", file: file, line: line)
    }
}

/// What the commands asked the live log to report.
func liveEvents(_ commands: [ProxyCommand]) -> [LiveEvent.Kind] {
    commands.compactMap { if case .log(let event) = $0 { return event.kind } else { return nil } }
}

/// Concatenates every byte sent to the client.
func clientBytes(_ commands: [ProxyCommand]) -> [UInt8] {
    commands.flatMap { if case .sendToClient(let bytes) = $0 { return bytes } else { return [] } }
}

func upstreamBytes(_ commands: [ProxyCommand], _ id: UpstreamID) -> [UInt8] {
    commands.flatMap { if case .sendToUpstream(id, let bytes) = $0 { return bytes } else { return [] } }
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// A harrec CA in a fresh directory under /tmp, for tests that intercept TLS.
struct TemporaryAuthority {
    let directory: String
    let ca: CertificateAuthority

    init(_ tag: String) throws {
        directory = "/tmp/harrec-\(tag)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        ca = try CertificateAuthority.loadOrCreate(directory: directory)
    }

    func remove() {
        for name in [CertificateAuthority.certificateFileName, CertificateAuthority.keyFileName] {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }
}
