// Redaction of one entry whose body, URL query and a header come from the input, under each
// body type (`FuzzInput` in Tests/RedactionTests builds the log): never crashes, a JSON body
// that parsed still parses, and redacting the output again changes nothing (a fixed point).
import HAR
@testable import Redaction

/// One engine for every input: compiling the rules is the expensive part, and `redact` keeps no
/// state between calls.
private let engine = RedactionEngine()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: pointer, count: size))
    var first = FuzzInput.log(input)
    let body = first.entries[0].request.postData?.text ?? ""
    engine.redact(&first)
    if FuzzInput.mimeTypes[Int(input[0] & 7)] == "application/json", (try? JSONParser.parse(Array(body.utf8))) != nil,
       let out = first.entries[0].request.postData?.text, (try? JSONParser.parse(Array(out.utf8))) == nil {
        fuzzFail("a JSON body no longer parses after redaction")
    }
    var second = first
    engine.redact(&second)
    if second != first { fuzzFail("redacting the output again changed it") }
    return 0
}
