import CLI
import Files
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore

// `--upstream-proxy`: send every upstream connection through a company proxy. Shared by `record`
// and `replay --passthrough`.

let upstreamProxyOption = OptionSpec("upstream-proxy", .value(placeholder: "<url>"), help: "Reach upstreams through this proxy: http://host:port (CONNECT) or socks5://host:port. Credentials from $HARREC_UPSTREAM_PROXY_AUTH or --upstream-proxy-auth-file.")
let upstreamProxyAuthFileOption = OptionSpec("upstream-proxy-auth-file", .value(placeholder: "<file>"), help: "Read the upstream proxy's user:pass from this file's first line (kept out of ps output).")
let noUpstreamProxyOption = OptionSpec("no-upstream-proxy", .value(placeholder: "<hosts>"), help: "Reach these hosts directly, NO_PROXY style: example.com,.internal,* (repeatable).")

/// The `--upstream-proxy` settings, or nil without one. Credentials come from the URL, the
/// environment or a file, once; a URL with a password is accepted with a warning, since `ps`
/// shows it.
func upstreamProxySetting(_ parsed: ParsedArguments) throws -> UpstreamProxy? {
    let exclusions = parsed.allValues("no-upstream-proxy").flatMap { $0.split(separator: ",") }
        .map { String($0).filter { $0 != " " } }.filter { !$0.isEmpty }
    guard let text = parsed.value("upstream-proxy") else {
        if !exclusions.isEmpty { throw UsageError("--no-upstream-proxy is for --upstream-proxy; give that too") }
        if parsed.value("upstream-proxy-auth-file") != nil { throw UsageError("--upstream-proxy-auth-file is for --upstream-proxy; give that too") }
        return nil
    }
    var proxy: UpstreamProxy
    do {
        proxy = try UpstreamProxy(parsing: text, exclusions: exclusions)
    } catch {
        throw UsageError("--upstream-proxy: \(error)")
    }
    var sources: [String] = proxy.credentials == nil ? [] : ["the URL"]
    if proxy.credentials != nil {
        startupNotes.withLock { $0.append("harrec: warning: the --upstream-proxy URL holds a password, which ps shows; prefer $HARREC_UPSTREAM_PROXY_AUTH or --upstream-proxy-auth-file") }
    }
    var line: String?
    if let value = getenv("HARREC_UPSTREAM_PROXY_AUTH").map({ String(cString: $0) }), !value.isEmpty {
        line = value
        sources.append("HARREC_UPSTREAM_PROXY_AUTH")
    }
    if let path = parsed.value("upstream-proxy-auth-file") {
        guard let bytes = try? readFile(path) else { throw UsageError("--upstream-proxy-auth-file \(path): cannot read the file") }
        let first = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).first ?? ""
        line = String(first.filter { $0 != "\r" })
        sources.append("--upstream-proxy-auth-file")
    }
    guard sources.count <= 1 else {
        throw UsageError("give the upstream proxy's credentials once: \(sources.joined(separator: " and ")) are all set")
    }
    if let line {
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw UsageError("\(sources[0]) needs user:pass")
        }
        proxy.credentials = ProxyCredentials(username: String(line[..<colon]), password: String(line[line.index(after: colon)...]))
    }
    return proxy
}
