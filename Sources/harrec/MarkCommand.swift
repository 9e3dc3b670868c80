import CSystemShims
import CLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import Recording
import TextEncodings

let markSpec = CommandSpec(
    name: "mark",
    abstract: "Start a new scenario (a HAR page) in a running recorder.",
    usage: "harrec mark <name> [--proxy <host:port>]",
    options: [
        OptionSpec("proxy", .value(placeholder: "<host:port>"),
                   help: "The recorder's HTTP proxy address (default 127.0.0.1:8888); credentials from $HARREC_PROXY_AUTH."),
    ],
    positionals: ["name"],
    discussion: """
        Requests that start after the mark belong to a page titled <name> in the HAR. Any client can do
        the same through the proxy: curl -x 127.0.0.1:8888 http://harrec/mark?name=login
        """)

/// How long `mark` waits for the recorder's answer.
let markTimeoutSeconds = 5

func runMark(_ arguments: [String]) -> Int32 {
    let parsed = parseOrExit(markSpec, arguments)
    guard let name = parsed.positionals.first, !name.isEmpty else { fail("give the scenario a name: harrec mark login") }
    return askReservedHost("/mark?name=\(percentEncoded(name))", proxy: parsed.value("proxy") ?? "127.0.0.1:8888",
                           peer: "recorder", hint: "is 'harrec record' running? --proxy chooses the address")
}

/// Sends `GET http://harrec<path>` through the proxy at `proxy` (host:port) and prints the answer;
/// 0 when harrec answered 200. `peer` names the harrec expected there, for messages.
func askReservedHost(_ path: String, proxy address: String, peer: String, hint: String) -> Int32 {
    guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
        fail("--proxy needs host:port, not '\(address)'")
    }
    var host = String(address[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }

    var request = "GET http://harrec\(path) HTTP/1.1\r\nHost: harrec\r\nConnection: close\r\n"
    if let credentials = getenv("HARREC_PROXY_AUTH").map({ String(cString: $0) }), !credentials.isEmpty {
        request += "Proxy-Authorization: Basic \(Base64.encode(Array(credentials.utf8)))\r\n"
    }
    request += "\r\n"

    let fd: Int32
    switch connectTCP(host: host, port: port) {
    case .success(let connected): fd = connected
    case .failure(let message):
        printErr("harrec: error: no \(peer) at \(address): \(message) (\(hint))")
        return 1
    }
    defer { close(fd) }
    var timeout = timeval(tv_sec: markTimeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let bytes = Array(request.utf8)
    guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, harrec_send_flags()) }) == bytes.count else {
        printErr("harrec: error: cannot send to \(address)")
        return 1
    }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while response.count < 65_536 {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    let separator: [UInt8] = [13, 10, 13, 10]
    let headEnd = (0..<max(0, response.count - 3)).first { response[$0..<$0 + 4].elementsEqual(separator) }
    let head = String(decoding: response[..<(headEnd ?? response.count)], as: UTF8.self)
    let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
    var body = headEnd.map { String(decoding: response[($0 + 4)...], as: UTF8.self) } ?? ""
    while body.hasSuffix("\n") { body.removeLast() }
    body = sanitizedForLog(body)
    if statusLine.hasPrefix("HTTP/1.1 200") {
        print(body)
        return 0
    }
    printErr("harrec: error: the \(peer) at \(address) answered \(statusLine.isEmpty ? "nothing" : statusLine)"
             + (body.isEmpty ? "" : ": \(body)"))
    return 1
}

/// Everything but unreserved characters (RFC 3986 §2.3) percent-encoded, as UTF-8.
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }
    }
    return out
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

enum ConnectResult {
    case success(Int32)
    case failure(String)
}

/// A blocking TCP connection to `host` (a name or an IP literal) and `port`.
func connectTCP(host: String, port: UInt16) -> ConnectResult {
    var hints = addrinfo()
    hints.ai_socktype = harrec_sock_stream()
    hints.ai_family = AF_UNSPEC
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else { return .failure(String(cString: gai_strerror(status))) }
    defer { freeaddrinfo(list) }
    var lastError = "no address"
    var current: UnsafeMutablePointer<addrinfo>? = first
    while let info = current {
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        if fd >= 0 {
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return .success(fd) }
            lastError = String(cString: strerror(errno))
            close(fd)
        }
        current = info.pointee.ai_next
    }
    return .failure(lastError)
}
