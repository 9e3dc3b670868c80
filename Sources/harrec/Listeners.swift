import CLI
import ProxyCore
import ProxyRuntime

// What `record` and `replay` share: where the proxy listens, its credentials and loops, and
// opening the listeners.

let httpPortOption = OptionSpec("http", .value(placeholder: "<port>"), help: "HTTP proxy port (0 picks one). Default 8888 when no port is given.")
let socksPortOption = OptionSpec("socks", .value(placeholder: "<port>"), help: "SOCKS5 proxy port (0 picks one). Default 8889 when no port is given.")
let listenOption = OptionSpec("listen", .value(placeholder: "<addr>"), help: "Address to listen on (default 127.0.0.1).")
let proxyAuthFileOption = OptionSpec("proxy-auth-file", .value(placeholder: "<file>"), help: "Read user:pass from this file's first line (kept out of ps output).")
let threadsOption = OptionSpec("threads", .value(placeholder: "<n>"), help: "Event-loop threads (default: one per core, at most 16).")

/// Ports, address, credentials and loop count, checked before anything starts.
struct ListenerSettings {
    var httpPort: UInt16?
    var socksPort: UInt16?
    var address = "127.0.0.1"
    var credentials: ProxyCredentials?
    var loopCount = ProxyServer.defaultLoopCount

    init(_ parsed: ParsedArguments) throws {
        if let auth = try proxyAuthSetting(parsed) {
            guard let colon = auth.value.firstIndex(of: ":"), colon != auth.value.startIndex else {
                throw UsageError("\(auth.source) needs user:pass")
            }
            credentials = ProxyCredentials(username: String(auth.value[..<colon]),
                                           password: String(auth.value[auth.value.index(after: colon)...]))
        }
        httpPort = try parsed.value("http").map { try parsePort($0, option: "http") }
        socksPort = try parsed.value("socks").map { try parsePort($0, option: "socks") }
        if httpPort == nil && socksPort == nil {
            httpPort = 8888
            socksPort = 8889
        }
        address = parsed.value("listen") ?? "127.0.0.1"
        // Anyone who reaches a LAN listener could reach every service bound to this machine's
        // loopback through it: an open proxy is refused, not merely warned about.
        if !isLoopbackAddress(address) && credentials == nil {
            throw UsageError("--listen \(address) is reachable from the network: anyone there could use this proxy to reach this machine's local services. " +
                             "Require credentials with --proxy-auth-file <file> (or $HARREC_PROXY_AUTH, or --proxy-auth user:pass)")
        }
        if let text = parsed.value("threads") {
            guard let value = Int(text), (1...ProxyServer.maximumLoopCount).contains(value) else {
                throw UsageError("--threads needs a number from 1 to \(ProxyServer.maximumLoopCount), not '\(text)'")
            }
            loopCount = value
        }
    }

    /// Opens the listeners and starts every loop; returns the "listening on" lines, to print once
    /// the caller's other start-up checks are done. Exits 1 when a port cannot be had.
    func start(_ server: ProxyServer) -> [String] {
        var listening: [String] = []
        do {
            if let httpPort {
                let port = try server.listen(label: "HTTP", address: address, port: httpPort)
                listening.append("harrec: HTTP proxy listening on \(displayAddress(address)):\(port)")
            }
            if let socksPort {
                let port = try server.listen(label: "SOCKS5", address: address, port: socksPort)
                listening.append("harrec: SOCKS5 proxy listening on \(displayAddress(address)):\(port)")
            }
        } catch {
            fail("cannot listen: \(error) (is another proxy running on that port? pick one with --http/--socks)", code: 1)
        }
        // Every loop runs before the listening lines: what they announce is ready.
        server.startLoops()
        return listening
    }
}
