import HTTP1
@testable import ProxyCore
import Recording
import XCTest

/// Collects recorded flows for assertions.
final class CollectingSink: FlowSink, @unchecked Sendable {
    var flows: [Flow] = []
    func record(_ flow: Flow) { flows.append(flow) }
}

/// A mitmproxy-style playbook: each step is "this event in, exactly these commands out", so a
/// test reads as a transcript of one connection.
final class Playbook {
    let sink = CollectingSink()
    let session: ProxySession

    init(configuration: ProxyConfiguration = ProxyConfiguration()) {
        let box = ClockBox()
        box.now = 1_800_000_000
        clockBox = box
        session = ProxySession(id: 7, clientAddress: "127.0.0.1:50000", configuration: configuration,
                               sink: sink, flowIDs: IDSource(), clock: { box.now })
    }

    private let clockBox: ClockBox
    final class ClockBox { var now: Double = 0 }

    func advance(_ seconds: Double) { clockBox.now += seconds }

    @discardableResult
    func client(_ text: String) -> [ProxyCommand] { client(Array(text.utf8)) }

    @discardableResult
    func client(_ bytes: [UInt8]) -> [ProxyCommand] {
        bytes.withUnsafeBytes { session.clientReceived($0) }
        return session.takeCommands()
    }

    /// Feeds the bytes one at a time and returns every command produced.
    @discardableResult
    func clientBytewise(_ text: String) -> [ProxyCommand] {
        var all: [ProxyCommand] = []
        for byte in Array(text.utf8) {
            [byte].withUnsafeBytes { session.clientReceived($0) }
            all += session.takeCommands()
        }
        return all
    }

    @discardableResult
    func upstream(_ id: UpstreamID, _ text: String) -> [ProxyCommand] { upstream(id, Array(text.utf8)) }

    @discardableResult
    func upstream(_ id: UpstreamID, _ bytes: [UInt8]) -> [ProxyCommand] {
        bytes.withUnsafeBytes { session.upstreamReceived(id, $0) }
        return session.takeCommands()
    }

    @discardableResult
    func connected(_ id: UpstreamID, ip: String = "127.0.0.1") -> [ProxyCommand] {
        let t = clockBox.now
        session.upstreamConnected(id, UpstreamConnection(remoteIP: ip, dnsStart: nil, dnsEnd: nil, connectStart: t, connectEnd: t))
        return session.takeCommands()
    }

    @discardableResult
    func connectFailed(_ id: UpstreamID, _ failure: UpstreamFailure) -> [ProxyCommand] {
        session.upstreamConnectFailed(id, failure)
        return session.takeCommands()
    }

    @discardableResult
    func upstreamEOF(_ id: UpstreamID) -> [ProxyCommand] {
        session.upstreamClosed(id)
        return session.takeCommands()
    }

    @discardableResult
    func clientEOF() -> [ProxyCommand] {
        session.clientClosed()
        return session.takeCommands()
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

/// Concatenates every byte sent to the client.
func clientBytes(_ commands: [ProxyCommand]) -> [UInt8] {
    commands.flatMap { if case .sendToClient(let bytes) = $0 { return bytes } else { return [] } }
}

func upstreamBytes(_ commands: [ProxyCommand], _ id: UpstreamID) -> [UInt8] {
    commands.flatMap { if case .sendToUpstream(id, let bytes) = $0 { return bytes } else { return [] } }
}

func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
