// What `harrec replay` and HARReplayProtocol build from any HAR: the queue entries, WebSocket
// conversations and refused tunnels never crash, whatever the file holds; and every item answers
// its own recorded request on a fresh queue (the matcher agrees with the builder); URLs read by
// bytes and by characters agree. A body's text left in the file (`entryLeavingOutResponseText`)
// is one the parser takes, with the lengths it gives, and streams back as it parses, in pieces of
// any size.
import HAR
import HARScenarios
import TextEncodings

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let data = Array(UnsafeBufferPointer(start: pointer, count: size))
    guard let log = try? HARLog.parse(data) else { return 0 }
    let options = HARReplayOptions(droppedQueryItems: size % 3 == 0 ? ["page"] : [])
    let entries = HARReplayEntries.make(from: log, options: options)
    let sockets = HARReplayConversations.make(from: log, options: options)
    if sockets.entries.count != sockets.conversations.count { fuzzFail("a WebSocket item without its conversation") }
    _ = HARReplayRefusedTunnels.make(from: log)
    // An ASCII URL read byte by byte has the parts it has read by characters.
    for entry in log.entries.prefix(64) where MockURLParts(entry.request.url) != MockURLParts(characters: entry.request.url) {
        fuzzFail("MockURLParts reads \(entry.request.url.debugDescription) differently by bytes and by characters")
    }

    checkLeftOutText(data, pieceSize: 1 + size % 13)

    // Each built item's own request, as the recording sent it, is answered by a fresh queue.
    let built = HARScenarioBuilder.builtItems(from: log, options: options.scenario)
    for item in built.prefix(64) {
        let request = log.entries[item.entryIndex].request
        guard item.item.condition.pathPattern == nil, let url = MockURLParts(request.url),
              url.scheme == "http" || url.scheme == "https" else { continue }
        // A body only when the recorded one is text; binary bodies carry no condition.
        let body = request.postData?.text.map { Array($0.utf8) } ?? []
        var queue = ServingQueue(entries: entries, source: "fuzz")
        let input = MatchInput(method: request.method, url: request.url, headers: [:], body: body)
        // Dropped and presence-only query items loosen conditions; they never exclude the recording.
        if case .unmatched = queue.pick(for: input) {
            let reasons = queue.diagnosisReports(for: input).compactMap { $0.report.mismatches.first?.explanation }.prefix(3)
            fuzzFail("the recorded request \(input.requestLine) matches no item: \(reasons)")
        }
    }
    return 0
}

/// Every text `harrec replay` would stream from the file decodes, in pieces, to what the parser
/// gives for the whole entry.
func checkLeftOutText(_ data: [UInt8], pieceSize: Int) {
    guard let document = try? HARLazyDocument(data) else { return }
    for i in 0..<min(document.entryCount, 16) {
        guard let (entry, left) = document.entryLeavingOutResponseText(i) else { continue }
        guard let whole = try? document.entry(i), let text = whole.response.content.text else {
            fuzzFail("entry \(i)'s text was left out, but the parser rejects the entry")
        }
        var expected = whole
        expected.response.content.text = ""
        if entry != expected { fuzzFail("entry \(i) without its text differs from the entry parsed whole") }
        if left.textCount != text.utf8.count { fuzzFail("entry \(i): text length \(left.textCount), parsed \(text.utf8.count)") }
        var stream = JSONStringStream()
        var base64 = Base64LenientStream()
        var decoded: [UInt8] = []
        var body: [UInt8] = []
        var k = left.range.lowerBound
        while k < left.range.upperBound {
            let end = min(left.range.upperBound, k + pieceSize)
            var piece: [UInt8] = []
            let ok = data[k..<end].withUnsafeBufferPointer { stream.decode($0, isLast: end == left.range.upperBound, into: &piece) }
            if !ok { fuzzFail("entry \(i): its checked text does not decode in pieces") }
            decoded += piece
            if left.base64, !piece.withUnsafeBufferPointer({ base64.decode($0, into: &body) }) {
                fuzzFail("entry \(i): its checked base64 does not decode in pieces")
            }
            k = end
        }
        if decoded != Array(text.utf8) { fuzzFail("entry \(i): the text decoded in pieces differs from the parsed text") }
        if left.base64 {
            if !base64.finish(into: &body) || body != Base64.decodeLenient(text) || body.count != left.bodyCount {
                fuzzFail("entry \(i): the base64 body decoded in pieces differs from the whole")
            }
        } else if left.bodyCount != left.textCount {
            fuzzFail("entry \(i): a text body of \(left.bodyCount) bytes for \(left.textCount) of text")
        }
    }
}
