import CLI
import ProxyCore
import ProxyRuntime

// What `record` and `replay` share: where the proxy listens, its credentials and loops, and
// opening the listeners.

let httpPortOption = OptionSpec("http", .value(placeholder: "<port>"), help: "HTTP proxy port, or with --reverse the server's port (0 picks one). Default 8888 when no port is given.")
let socksPortOption = OptionSpec("socks", .value(placeholder: "<port>"), help: "SOCKS5 proxy port (0 picks one). Default 8889 when no port is given.")
let listenOption = OptionSpec("listen", .value(placeholder: "<addr>"), help: "Address to listen on (default 127.0.0.1).")
let proxyAuthFileOption = OptionSpec("proxy-auth-file", .value(placeholder: "<file>"), help: "Read user:pass from this file's first line (kept out of ps output).")
let reverseOption = OptionSpec("reverse", .value(placeholder: "[/prefix=|port=]<url>"), help: "Be a plain server in front of <url> (http[s]://host[:port]) on the --http port: clients need no proxy settings, entries get <url>'s URLs. /prefix= routes paths by prefix; port= opens a port of its own (repeatable).")
let noRewriteBackOption = OptionSpec("no-rewrite-back", .flag, help: "With --reverse: leave absolute Location and Set-Cookie Domain as the upstream sent them.")
let threadsOption = OptionSpec("threads", .value(placeholder: "<n>"), help: "Event-loop threads (default: one per core, at most 16).")

/// Ports, address, credentials and loop count, checked before anything starts.
struct ListenerSettings {
    var httpPort: UInt16?
    var socksPort: UInt16?
    /// With --reverse: the --http port is a reverse listener in front of these upstreams.
    var reverse: ReverseProxy?
    /// `port=<url>` reverse listeners, each with its own upstream.
    var reversePorts: [(port: UInt16, proxy: ReverseProxy)] = []
    /// `--device`: credentials made for this session, to print for the phone.
    var deviceCredentials: (username: String, password: String)?
    var isDevice = false
    var address = "127.0.0.1"
    var credentials: ProxyCredentials?
    var loopCount = ProxyServer.defaultLoopCount
    /// `HARREC_POLLER`: the platform's default (epoll on Linux) unless it says poll.
    var poller = PollerBackend.platformDefault

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
        try readReverse(parsed)
        if httpPort == nil && socksPort == nil && reversePorts.isEmpty {
            httpPort = 8888
            socksPort = reverse == nil ? 8889 : nil
        }
        isDevice = parsed.flag("device")
        if isDevice {
            guard let lan = parsed.value("listen") ?? lanIPv4Address() else {
                throw UsageError("--device found no network address on this machine; give one with --listen")
            }
            address = lan
            if credentials == nil {
                let made = generatedDeviceCredentials()
                credentials = ProxyCredentials(username: made.username, password: made.password)
                deviceCredentials = made
            }
        } else {
            address = parsed.value("listen") ?? "127.0.0.1"
        }
        // Anyone who reaches a LAN listener could reach every service bound to this machine's
        // loopback through it: an open proxy is refused, not merely warned about. A reverse
        // listener reaches only its upstreams, so it may face the network without credentials.
        if !isLoopbackAddress(address) && credentials == nil && hasForwardListener {
            throw UsageError("--listen \(address) is reachable from the network: anyone there could use this proxy to reach this machine's local services. " +
                             "Require credentials with --proxy-auth-file <file> (or $HARREC_PROXY_AUTH, or --proxy-auth user:pass)")
        }
        guard let backend = PollerBackend.fromEnvironment else {
            throw UsageError(PollerBackend.platformDefault == .epoll ? "HARREC_POLLER must be epoll or poll"
                                                                      : "HARREC_POLLER must be poll on this system (it has no epoll)")
        }
        poller = backend
        if backend != .platformDefault {
            startupNotes.withLock { $0.append("harrec: event loops use \(backend.rawValue)(2) (HARREC_POLLER)") }
        }
        if let text = parsed.value("threads") {
            guard let value = Int(text), (1...ProxyServer.maximumLoopCount).contains(value) else {
                throw UsageError("--threads needs a number from 1 to \(ProxyServer.maximumLoopCount), not '\(text)'")
            }
            loopCount = value
        }
    }

    /// Reads `--reverse [/prefix=|port=]<url>`: plain and prefixed upstreams share the --http
    /// port, `port=` ones get a port each.
    private mutating func readReverse(_ parsed: ParsedArguments) throws {
        var shared: [ReverseProxy.Upstream] = []
        let rewritesBack = !parsed.flag("no-rewrite-back")
        for text in parsed.allValues("reverse") {
            do {
                if let equals = text.firstIndex(of: "="), !text.hasPrefix("/"), let port = UInt16(text[..<equals]) {
                    let upstream = try ReverseProxy.Upstream(parsing: String(text[text.index(after: equals)...]))
                    guard !reversePorts.contains(where: { $0.port == port }) else {
                        throw UsageError("--reverse \(text): port \(port) already has an upstream")
                    }
                    reversePorts.append((port, ReverseProxy(upstreams: [upstream], rewritesBack: rewritesBack)))
                } else {
                    let upstream = try ReverseProxy.Upstream(parsing: text)
                    guard !shared.contains(where: { $0.pathPrefix == upstream.pathPrefix }) else {
                        throw UsageError("--reverse \(text): \(upstream.pathPrefix) already has an upstream")
                    }
                    shared.append(upstream)
                }
            } catch let error as TargetError {
                throw UsageError("--reverse \(text): \(error)")
            }
        }
        if !shared.isEmpty { reverse = ReverseProxy(upstreams: shared, rewritesBack: rewritesBack) }
    }

    /// Whether a forward proxy listens (a reverse listener reaches only its upstreams).
    var hasForwardListener: Bool { socksPort != nil || (httpPort != nil && reverse == nil) }

    /// Whether TLS toward an upstream is needed (interception's client context verifies it).
    var reachesHTTPSUpstream: Bool {
        ((reverse?.upstreams ?? []) + reversePorts.flatMap(\.proxy.upstreams)).contains { $0.scheme == "https" }
    }

    /// Opens the listeners and starts every loop; returns the "listening on" lines, to print once
    /// the caller's other start-up checks are done. Exits 1 when a port cannot be had.
    func start(_ server: ProxyServer) -> [String] {
        var listening: [String] = []
        do {
            // A leaf for clients that send no server name: the listener's address.
            let tlsName = address == "0.0.0.0" || address == "::" ? "localhost" : address
            if let httpPort, var reverse {
                reverse.tlsName = tlsName
                let port = try server.listen(label: "reverse", address: address, port: httpPort, reverse: reverse)
                let upstreams = reverse.upstreams.map(\.description).joined(separator: ", ")
                listening.append("harrec: reverse proxy listening on http://\(displayAddress(address)):\(port) for \(upstreams)")
            } else if let httpPort {
                let port = try server.listen(label: "HTTP", address: address, port: httpPort)
                listening.append("harrec: HTTP proxy listening on \(displayAddress(address)):\(port)")
            }
            for (requested, var proxy) in reversePorts {
                proxy.tlsName = tlsName
                let port = try server.listen(label: "reverse", address: address, port: requested, reverse: proxy)
                listening.append("harrec: reverse proxy listening on http://\(displayAddress(address)):\(port) for \(proxy.upstreams[0])")
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
