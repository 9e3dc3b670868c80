// The client side of an upstream proxy's CONNECT and SOCKS5 handshakes, fed what a hostile or
// broken proxy might send: never crashes, ends in one outcome, the same whole or in chunks, and a
// failure names the proxy without its password or raw control characters. The command-line
// parsers of --upstream-proxy and --reverse get the same bytes as text.
import ProxyCore
import Recording

private let password = "fuzz-proxy-pw"

private func run(_ chunks: [ArraySlice<UInt8>], proxy: UpstreamProxy) -> (sent: [UInt8], outcome: UpstreamProxyHandshake.Step) {
    var handshake = UpstreamProxyHandshake(proxy: proxy, host: "api.example.com", port: 443)
    var sent = handshake.start()
    var outcome = UpstreamProxyHandshake.Step.needMoreData
    for chunk in chunks {
        if case .established(let leftover) = outcome {
            outcome = .established(leftover: leftover + chunk)
            continue
        }
        if case .failed = outcome { break }
        var step = handshake.receive(chunk)
        while case .send(let bytes) = step {
            sent += bytes
            guard handshake.hasPendingInput else { break }
            step = handshake.receive([UInt8]())
        }
        if case .send = step { continue }
        outcome = step
    }
    return (sent, outcome)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let flags = pointer[0]
    let data = Array(UnsafeBufferPointer(start: pointer + 1, count: size - 1))
    let kind: UpstreamProxy.Kind = flags & 1 == 0 ? .http : .socks5
    let credentials = flags & 2 == 0 ? nil : ProxyCredentials(username: "user", password: password)
    let proxy = UpstreamProxy(kind: kind, target: ProxyTarget(host: "proxy.test", port: 3128), credentials: credentials)
    let whole = run([data[...]], proxy: proxy)
    let split = run(fuzzChunks(data, seed: flags >> 2), proxy: proxy)
    if whole.outcome != split.outcome || whole.sent != split.sent {
        fuzzFail("whole \(whole.outcome) vs split \(split.outcome)")
    }
    if case .failed(let failure) = whole.outcome {
        if failure.message.contains(password) { fuzzFail("the password in a failure") }
        if failure.message.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            fuzzFail("a control character in \(failure.message.debugDescription)")
        }
        if !failure.message.hasPrefix("upstream proxy \(proxy) ") { fuzzFail("a failure that names no proxy: \(failure.message)") }
    }

    let text = String(decoding: data.prefix(96), as: UTF8.self)
    do {
        let parsed = try UpstreamProxy(parsing: text)
        if "\(parsed)".contains("@") { fuzzFail("credentials in \(parsed)") }
    } catch {
        if let at = text.lastIndex(of: "@"), text[..<at].count > 3, "\(error)".contains(String(text[...at])) {
            fuzzFail("userinfo in the error: \(error)")
        }
    }
    _ = try? ReverseProxy.Upstream(parsing: text)
    _ = RecordingFilter(skipContentTypes: [text]).keeps(url: text)
    return 0
}
