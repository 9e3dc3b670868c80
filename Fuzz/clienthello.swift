// TLS ClientHello parser (SNI and ALPN from the first records): never crashes, and feeding byte
// runs of any size gives the result of parsing the bytes at once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = ClientHelloParser.parse(data)
    var parser = ClientHelloParser()
    var result: ClientHelloParseResult?
    for chunk in fuzzChunks(data, seed: pointer[0]) {
        let r = parser.feed(chunk)
        if case .needMoreData = r { continue }
        result = r
        break
    }
    if let result, result != whole { fuzzFail("chunked \(result) vs whole \(whole)") }
    return 0
}
