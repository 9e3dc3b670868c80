import CSystemShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore

/// Wall-clock seconds since the Unix epoch with sub-millisecond precision. HAR needs wall-clock
/// start times; durations come from the same clock so that the timing sum rule holds.
public func wallClock() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1_000_000_000
}

/// A socket error with the failing call and errno text.
public struct SocketError: Error, CustomStringConvertible {
    public var call: String
    public var code: Int32
    public var description: String { "\(call): \(String(cString: strerror(code)))" }

    init(_ call: String, code: Int32 = harrec_errno()) {
        self.call = call
        self.code = code
    }
}

extension ClientFailure {
    /// The failure an errno from a client socket's read or write means.
    init(errno code: Int32) {
        self = code == ECONNRESET ? .reset : .other(String(cString: strerror(code)))
    }
}

/// A socket address (IPv4 or IPv6) in storage form.
struct SocketAddress {
    var storage = sockaddr_storage()
    var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// Parses an IPv4 or IPv6 literal (no brackets).
    init?(ip: String, port: UInt16) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, ip, &v4) == 1 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            withUnsafeBytes(of: &address) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, ip, &v6) == 1 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            withUnsafeBytes(of: &address) { raw in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: raw) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            return nil
        }
    }

    init(raw: UnsafePointer<sockaddr>, length: socklen_t) {
        self.length = length
        withUnsafeMutableBytes(of: &storage) { destination in
            destination.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: Int(length)))
        }
    }

    init() {}

    /// The IP text and port.
    var ipAndPort: (ip: String, port: UInt16) {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer -> (String, UInt16) in
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var address = v6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
                    return (string(nulTerminated: buffer), UInt16(bigEndian: v6.pointee.sin6_port))
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var address = v4.pointee.sin_addr
                inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
                return (string(nulTerminated: buffer), UInt16(bigEndian: v4.pointee.sin_port))
            }
        }
    }

    /// `ip:port`, with brackets for IPv6.
    var description: String {
        let (ip, port) = ipAndPort
        return family == AF_INET6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}

func setNoDelay(_ fd: Int32) {
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
}

/// Creates a listening socket on `address:port` (port 0 picks one) and returns it with the port.
func makeListener(address: String, port: UInt16) throws -> (fd: Int32, port: UInt16) {
    guard let socketAddress = SocketAddress(ip: address, port: port) else {
        throw SocketError("listen address '\(address)' is not an IP literal", code: EINVAL)
    }
    let fd = harrec_stream_socket(socketAddress.family)
    guard fd >= 0 else { throw SocketError("socket") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    let bound = socketAddress.withSockaddr { bind(fd, $0, $1) }
    guard bound == 0 else {
        let error = SocketError("bind \(socketAddress.description)")
        close(fd)
        throw error
    }
    // The backlog absorbs connection bursts (a browser opens many at once); the kernel caps it.
    guard listen(fd, 1024) == 0 else {
        let error = SocketError("listen")
        close(fd)
        throw error
    }
    var actual = SocketAddress()
    actual.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &actual.storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &actual.length) }
    }
    return (fd, actual.ipAndPort.port)
}

/// The addresses of this host's interfaces (IPv4 and IPv6, as inet_ntop writes them).
func localInterfaceAddresses() -> Set<String> {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return [] }
    defer { freeifaddrs(list) }
    var found = Set<String>()
    var cursor = list
    while let entry = cursor {
        defer { cursor = entry.pointee.ifa_next }
        guard let address = entry.pointee.ifa_addr else { continue }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                var raw = v4.pointee.sin_addr
                if inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil { found.insert(string(nulTerminated: buffer)) }
            }
        case AF_INET6:
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                var raw = v6.pointee.sin6_addr
                if inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil { found.insert(string(nulTerminated: buffer)) }
            }
        default:
            break
        }
    }
    return found
}

/// This machine's address on the local network, for a phone to reach: the first IPv4 address of an
/// interface that is up and not loopback, private ranges (10/8, 172.16/12, 192.168/16) first.
public func lanIPv4Address() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var found: [String] = []
    var cursor = list
    while let entry = cursor {
        defer { cursor = entry.pointee.ifa_next }
        let flags = Int32(entry.pointee.ifa_flags)
        guard flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0,
              let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET else { continue }
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN) + 1)
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
            var raw = v4.pointee.sin_addr
            if inet_ntop(AF_INET, &raw, &buffer, socklen_t(buffer.count)) != nil { found.append(string(nulTerminated: buffer)) }
        }
    }
    func isPrivate(_ ip: String) -> Bool {
        let parts = ip.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 4 else { return false }
        return parts[0] == 10 || (parts[0] == 172 && (16...31).contains(parts[1])) || (parts[0] == 192 && parts[1] == 168)
    }
    return found.first(where: isPrivate) ?? found.first
}

/// The text of a NUL-terminated C buffer (an address `inet_ntop` wrote).
private func string(nulTerminated buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
