// The HAR module's JSON parser and HAR reader: never crash; a parsed document serialized and
// parsed again gives the same value; the lazy, entry-by-entry reader agrees with the whole-file one.
import HAR

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
    return 0
}
