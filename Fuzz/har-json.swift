// The HAR module's JSON parser and HAR reader: never crash; a parsed document serialized and
// parsed again gives the same value; the lazy, entry-by-entry reader agrees with the whole-file
// one; the streamed scan finds the in-place scan's layout however the input is cut; a document
// read by ranges (a file that cannot be mapped) reads what the same bytes read in memory, and
// its entry-by-entry validation finds the whole validation's problems.
@testable import HAR

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let data = Array(UnsafeBufferPointer(start: pointer, count: size))
    if let value = try? JSONParser.parse(data) {
        let written = JSONWriter.serialize(value, pretty: size % 2 == 0)
        guard let again = try? JSONParser.parse(written) else { fuzzFail("serialized JSON does not parse") }
        if again != value { fuzzFail("JSON round trip changed the value") }
    }
    let whole = try? HARLog.parse(data)
    let lazy: HARLog? = {
        guard let document = try? HARLazyDocument(data) else { return nil }
        var log = document.head
        for i in 0..<document.entryCount {
            guard let entry = try? document.entry(i) else { return nil }
            log.entries.append(entry)
        }
        return log
    }()
    if (whole == nil) != (lazy == nil) { fuzzFail("HARLog.parse \(whole == nil ? "failed" : "succeeded"), the lazy reader did not") }
    if let whole, let lazy, whole != lazy { fuzzFail("the lazy reader's log differs") }

    let inPlace = data.withUnsafeBufferPointer { EntriesScanner.scan($0, parallel: false) }
    var stream = EntriesStream()
    for chunk in fuzzChunks(data, seed: data.first ?? 0) { chunk.withUnsafeBufferPointer { _ = stream.feed($0) } }
    let streamed = stream.finish()
    let describe = { (l: EntriesScanner.Layout?) in l.map { "\($0.arrayStart) \($0.arrayEnd) \($0.entries)" } ?? "nil" }
    if describe(inPlace) != describe(streamed) { fuzzFail("streamed scan \(describe(streamed)), in place \(describe(inPlace))") }

    let reader = PositionalReader(count: data.count, read: { offset, buffer in
        let n = max(0, min(buffer.count, data.count - offset))
        data.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + offset, byteCount: n) }
        return n
    }, close: {})
    let inMemory = Result { () throws(HARReadError) in try HARLazyDocument(data) }
    let byRanges = Result { () throws(HARReadError) in try HARLazyDocument(reading: reader) }
    switch (inMemory, byRanges) {
    case (.success(let a), .success(let b)):
        if a.head != b.head || a.entryCount != b.entryCount { fuzzFail("a document read by ranges has another head") }
        for i in 0..<a.entryCount where "\(Result { try a.entry(i) })" != "\(Result { try b.entry(i) })" {
            fuzzFail("entry \(i) read by ranges differs")
        }
    case (.failure(let a), .failure(let b)):
        if a != b { fuzzFail("read by ranges: \(b), in memory: \(a)") }
    default:
        fuzzFail("in memory \(inMemory), by ranges \(byRanges)")
    }
    let validated = HARValidator.validate(bytes: data)
    if case .some(.some(let streamedValidation)) = try? HARValidator.validateCountingEntries(reading: { () throws(HARReadError) in try HARLazyDocument(reading: reader) }),
       streamedValidation.problems != validated {
        fuzzFail("entry-by-entry validation \(streamedValidation.problems), whole \(validated)")
    }
    return 0
}
