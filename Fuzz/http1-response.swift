// HTTP/1 response decoder (chunked, close-delimited, HEAD and CONNECT answers): never crashes, and
// whole or chunked feeding gives the same events and error kind.
import HTTP1

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let method = ["GET", "HEAD", "POST", "CONNECT"][Int(pointer[0] >> 6)]
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = decodeAll(ResponseDecoding(method: method), [data[...]])
    let split = decodeAll(ResponseDecoding(method: method), fuzzChunks(data, seed: pointer[0] & 0x3F))
    if whole.events != split.events || whole.error != split.error {
        fuzzFail("\(method): whole \(whole.events.count) events, error \(String(describing: whole.error)); split \(split.events.count), \(String(describing: split.error))")
    }
    return 0
}
