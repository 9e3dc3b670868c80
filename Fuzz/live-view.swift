// The live view's session fed what any local process might send it: requests whole and in
// chunks, with and without the token, marks, event streams, and time moving. It must never
// crash or loop, answer a request without the token with anything but 403, act after it
// finished, or answer differently when the same bytes come in other chunks.
import LiveView
import ProxyCore
import Recording

private let token = "00112233445566778899aabbccddeeff"

private func flow(_ id: UInt64) -> Flow {
    var flow = Flow(id: id, clientAddress: "127.0.0.1:1",
                    request: RecordedRequest(method: "GET", url: "https://a.test/\(id)", httpVersion: "HTTP/1.1", fields: [], headSize: 0),
                    instants: FlowInstants(requestStart: 1_800_000_000))
    flow.instants.end = 1_800_000_000.5
    return flow
}

private let index: LiveIndex = {
    let index = LiveIndex()
    for id: UInt64 in 1...3 { index.record(flow(id)) }
    index.mark(PageMark(name: "p", time: 1_800_000_001))
    return index
}()

private let service = LiveService(token: token, index: index, flowReader: { id in id == 2 ? flow(2) : nil })

/// The bytes the session sends and whether it finished, for `data` in `chunks`.
private func run(_ chunks: [ArraySlice<UInt8>]) -> (sent: [UInt8], finished: Bool) {
    let session = LiveViewSession(id: 1, clientAddress: "127.0.0.1:2", service: service, now: 1_800_000_000)
    var sent: [UInt8] = []
    var finished = false
    var time = 1_800_000_000.0
    for chunk in chunks {
        Array(chunk).withUnsafeBytes { session.clientReceived($0, at: time) }
        time += 0.05
        session.tick(at: time)
        for command in session.takeCommands() {
            if finished { fuzzFail("a command after the session finished: \(command)") }
            switch command {
            case .sendToClient(let bytes): sent += bytes
            case .closeClient: finished = true
            case .record(.pageMark), .record(.exportDecision), .record(.pageMove), .log, .wake: break
            default: fuzzFail("a live view session asked for \(command)")
            }
        }
        if session.isFinished { finished = true }
    }
    return (sent, finished)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: pointer, count: size))
    // The first byte picks the chunking; the rest is the connection's bytes, with "TOKEN" in it
    // standing for the real token (so the fuzzer reaches the API without guessing 32 digits).
    let text = replacing(Array(bytes.dropFirst()), Array("TOKEN".utf8), with: Array(token.utf8))
    let whole = run([text[...]])
    let split = run(fuzzChunks(text, seed: bytes[0]))
    // Streams depend on time (keep-alives), and a request cut by chunking before a bad byte may
    // be answered before it: compare only the first answer's status line.
    func statusLine(_ sent: [UInt8]) -> String { String(decoding: sent.prefix { $0 != 0x0D }, as: UTF8.self) }
    if statusLine(whole.sent) != statusLine(split.sent) {
        fuzzFail("whole: \(statusLine(whole.sent)) split: \(statusLine(split.sent))")
    }
    let answers = String(decoding: whole.sent, as: UTF8.self)
    if !text.containsToken(token) && answers.contains("HTTP/1.1 200 ") {
        fuzzFail("a 200 without the token")
    }
    return 0
}

private extension Array where Element == UInt8 {
    func containsToken(_ token: String) -> Bool { String(decoding: self, as: UTF8.self).contains(token) }
}

/// `bytes` with every `target` replaced by `replacement`.
private func replacing(_ bytes: [UInt8], _ target: [UInt8], with replacement: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    var i = 0
    while i < bytes.count {
        if i + target.count <= bytes.count && bytes[i..<i + target.count].elementsEqual(target) {
            out += replacement
            i += target.count
        } else {
            out.append(bytes[i])
            i += 1
        }
    }
    return out
}
