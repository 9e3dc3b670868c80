// SOCKS5 server handshake (with and without RFC 1929 credentials): never crashes, a failure
// reason has no control characters and never the password, and whole or chunked feeding gives
// the same events and early data.
import SOCKS5

private let password = "fuzz-secret-pw"

private func run(_ chunks: [ArraySlice<UInt8>], auth: Bool) -> (events: [SOCKS5Event], early: [UInt8]) {
    var handshake = SOCKS5ServerHandshake(credentials: auth ? SOCKS5Credentials(username: "user", password: password) : nil)
    var events: [SOCKS5Event] = []
    var connected = false
    func drain() {
        while let event = handshake.next() {
            events.append(event)
            if case .connect = event {
                connected = true
                _ = handshake.replyToConnect(.succeeded)
            }
            if events.count > 1_000 { fuzzFail("more than 1,000 events") }
        }
    }
    for chunk in chunks {
        handshake.feed(Array(chunk))
        drain()
    }
    handshake.finish()
    drain()
    return (events, connected ? handshake.takeBufferedBytes() : [])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let auth = pointer[0] & 0x80 != 0
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let whole = run([data[...]], auth: auth)
    let split = run(fuzzChunks(data, seed: pointer[0] & 0x7F), auth: auth)
    if whole.events != split.events || whole.early != split.early {
        fuzzFail("whole \(whole.events) vs split \(split.events)")
    }
    for event in whole.events {
        guard case .fail(_, let reason) = event else { continue }
        if reason.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { fuzzFail("control character in reason") }
        if reason.contains(password) { fuzzFail("the password is in a failure reason") }
    }
    return 0
}
