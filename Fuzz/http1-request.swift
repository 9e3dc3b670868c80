// HTTP/1 request decoder: never crashes, and feeding an input whole or in chunks gives the same
// events (bodies joined) and the same error kind.
import HTTP1

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = decodeAll(HTTP1RequestDecoder(), [data[...]])
    let split = decodeAll(HTTP1RequestDecoder(), fuzzChunks(data, seed: pointer[0]))
    if whole.events != split.events || whole.error != split.error {
        fuzzFail("whole \(whole.events.count) events, error \(String(describing: whole.error)); split \(split.events.count), \(String(describing: split.error))")
    }
    return 0
}
