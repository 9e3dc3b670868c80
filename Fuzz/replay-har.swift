// What `harrec replay` and HARReplayProtocol build from any HAR: the queue entries, WebSocket
// conversations and refused tunnels never crash, whatever the file holds; and every item answers
// its own recorded request on a fresh queue (the matcher agrees with the builder); URLs read by
// bytes and by characters agree.
import HAR
import HARScenarios

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

    // Each built item's own request, as the recording sent it, is answered by a fresh queue.
    let built = HARScenarioBuilder.builtItems(from: log, options: options.scenario)
    for item in built.prefix(64) {
        let request = item.entry.request
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
