import CSystemShims
import Dispatch
#if canImport(Glibc)
import Glibc
private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
import Darwin
private let systemConnect = Darwin.connect
#endif
import ProxyCore
import Recording
import Synchronization

// Upstream connections: DNS off the loop, non-blocking connect through each address, certificates.
extension EventLoop {
    // MARK: - Upstream connections

    /// Registers the upstream connection now; the connect itself starts after the command batch,
    /// because a synchronous result calls back into the session.
    func openUpstream(_ id: UpstreamID, host: String, port: UInt16, box: SessionBox) {
        let connection = Connection(token: makeToken(), role: .upstream(id), state: .resolving)
        connection.box = box
        box.upstreams[id] = connection
        connections[connection.token] = connection
        // A connection to the proxy itself (plain HTTP sent to it in absolute form) is direct.
        if let proxy = configuration.upstreamProxy, proxy.applies(to: host), ProxyTarget(host: host, port: port) != proxy.target {
            // Connect to the proxy; the tunnel to host:port opens before the session hears.
            connection.proxyHandshake = UpstreamProxyHandshake(proxy: proxy, host: host, port: port)
            deferredOpens.append((connection, proxy.target.host, proxy.target.port))
        } else {
            deferredOpens.append((connection, host, port))
        }
    }

    func startUpstream(_ connection: Connection, host: String, port: UInt16) {
        guard case .resolving = connection.state, connections[connection.token] != nil else { return }
        if let literal = SocketAddress(ip: host, port: port) {
            startConnect(connection, addresses: [literal], index: 0)
            return
        }
        connection.dnsStart = wallClock()
        let token = connection.token
        resolverQueue.async { [weak self] in
            let start = wallClock()
            let result = resolve(host: host, port: port)
            let end = wallClock()
            guard let self else { return }
            self.resolved.withLock { $0.append((token, result, start, end)) }
            self.wake()
        }
    }

    func prepareCertificate(_ host: String, for sessionID: UInt64) {
        guard let authority = configuration.interception?.authority else { return }
        certificateQueue.async { [weak self] in
            _ = try? authority.issueLeaf(for: host)
            guard let self else { return }
            self.preparedCertificates.withLock { $0.append(sessionID) }
            self.wake()
        }
    }

    func drainPreparedCertificates() {
        for sessionID in preparedCertificates.takeAll() {
            guard let box = sessions[sessionID] else { continue }
            box.session.certificatePrepared(at: wallClock())
            process(box)
        }
    }

    func drainResolved() {
        for item in resolved.takeAll() {
            guard let connection = connections[item.token], case .resolving = connection.state,
                  let box = connection.box, case .upstream(let id) = connection.role else { continue }
            connection.dnsStart = item.start
            connection.dnsEnd = item.end
            switch item.result {
            case .success(let addresses):
                startConnect(connection, addresses: addresses, index: 0)
            case .failure(let failure):
                connections[connection.token] = nil
                connection.state = .closed
                box.upstreams[id] = nil
                box.session.upstreamConnectFailed(id, failure, at: wallClock())
            }
            process(box)
        }
    }

    func startConnect(_ connection: Connection, addresses: [SocketAddress], index: Int) {
        guard let box = connection.box, case .upstream(let id) = connection.role else { return }
        var lastError: Int32 = ECONNREFUSED
        var position = index
        while position < addresses.count {
            let address = addresses[position]
            if isOwnListener(address) {
                // A request for harrec itself would come back in as a new request and loop.
                connections[connection.token] = nil
                connection.state = .closed
                box.upstreams[id] = nil
                let target = address.ipAndPort
                box.session.upstreamConnectFailed(id, UpstreamFailure(
                    .other, "\(target.ip):\(target.port) is this proxy's own listener (the request would loop)"), at: wallClock())
                return
            }
            let fd = harrec_stream_socket(address.family)
            if fd < 0 {
                lastError = harrec_errno()
                position += 1
                continue
            }
            setNoDelay(fd)
            connection.fd = fd
            connection.remoteIP = address.ipAndPort.ip
            connection.connectStart = wallClock()
            let result = address.withSockaddr { systemConnect(fd, $0, $1) }
            if result == 0 {
                connection.state = .open
                connected(connection)
                return
            }
            let code = harrec_errno()
            if code == EINPROGRESS {
                connection.state = .connecting(addresses: addresses, index: position)
                updateInterest(connection, .write)
                return
            }
            lastError = code
            close(fd)
            connection.fd = -1
            position += 1
        }
        connections[connection.token] = nil
        connection.state = .closed
        box.upstreams[id] = nil
        box.session.upstreamConnectFailed(id, failure(forErrno: lastError), at: wallClock())
    }

    /// Whether `address` is one of this server's listeners: same port, and the listener's own
    /// address, or a loopback address when the listener is on every address.
    func isOwnListener(_ address: SocketAddress) -> Bool {
        let target = address.ipAndPort
        var ip = target.ip.hasPrefix("::ffff:") ? String(target.ip.dropFirst(7)) : target.ip
        // A connect to the unspecified address (`0.0.0.0`, `0`, `::`) goes to the loopback one.
        if ip == "0.0.0.0" { ip = "127.0.0.1" } else if ip == "::" { ip = "::1" }
        return shared.boundListeners.contains { listener in
            guard listener.port == target.port else { return false }
            if listener.address == ip { return true }
            let loopbackTarget = ip.hasPrefix("127.") || ip == "::1"
            let wildcard = listener.address == "0.0.0.0" || listener.address == "::"
            // A listener on every address is also reached through each interface's address (asked
            // for only when the port matches, which is rare).
            return wildcard && (loopbackTarget || localInterfaceAddresses().contains(ip))
        }
    }

    func finishConnect(_ connection: Connection) {
        guard case .connecting(let addresses, let index) = connection.state else { return }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &code, &length)
        if code == 0 {
            connection.state = .open
            connected(connection)
            if let box = connection.box { process(box) }
            return
        }
        if connection.registered { poller.remove(connection.fd) }
        connection.registered = false
        close(connection.fd)
        connection.fd = -1
        if index + 1 < addresses.count {
            startConnect(connection, addresses: addresses, index: index + 1)
        } else if let box = connection.box, case .upstream(let id) = connection.role {
            connections[connection.token] = nil
            connection.state = .closed
            box.upstreams[id] = nil
            box.session.upstreamConnectFailed(id, failure(forErrno: code), at: wallClock())
        }
        if let box = connection.box { process(box) }
    }

    func connected(_ connection: Connection) {
        guard let box = connection.box, case .upstream(let id) = connection.role else { return }
        updateInterest(connection, .read)
        if let handshake = connection.proxyHandshake {
            queue(handshake.start(), on: connection)
            return
        }
        reportConnected(connection, id, box)
    }

    private func reportConnected(_ connection: Connection, _ id: UpstreamID, _ box: SessionBox) {
        let info = UpstreamConnection(remoteIP: connection.remoteIP, dnsStart: connection.dnsStart,
                                      dnsEnd: connection.dnsEnd, connectStart: connection.connectStart,
                                      connectEnd: wallClock())
        box.session.upstreamConnected(id, info, at: wallClock())
    }

    /// Bytes, EOF (nil) or a read error from an upstream proxy during its handshake.
    func proxyHandshakeReceived(_ connection: Connection, _ bytes: UnsafeRawBufferPointer?, error: String? = nil) {
        guard var handshake = connection.proxyHandshake, let box = connection.box, case .upstream(let id) = connection.role else { return }
        var step: UpstreamProxyHandshake.Step
        if let bytes {
            step = handshake.receive(bytes)
            // A proxy that answered ahead: go on with what it sent once our next bytes are out.
            while case .send(let reply) = step, handshake.hasPendingInput {
                queue(reply, on: connection)
                step = handshake.receive([UInt8]())
            }
        } else {
            var failure = handshake.closedEarly()
            if let error { failure.message += ": \(error)" }
            step = .failed(failure)
        }
        connection.proxyHandshake = handshake
        switch step {
        case .send(let reply):
            queue(reply, on: connection)
        case .needMoreData:
            break
        case .established(let leftover):
            connection.proxyHandshake = nil
            reportConnected(connection, id, box)
            if !leftover.isEmpty {
                leftover.withUnsafeBytes { box.session.upstreamReceived(id, $0, at: wallClock()) }
            }
        case .failed(let failure):
            connection.proxyHandshake = nil
            closeNow(connection)
            box.upstreams[id] = nil
            box.session.upstreamConnectFailed(id, failure, at: wallClock())
        }
    }
}

func failure(forErrno code: Int32) -> UpstreamFailure {
    let text = String(cString: strerror(code))
    switch code {
    case ECONNREFUSED: return UpstreamFailure(.refused, "connection refused")
    case EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL: return UpstreamFailure(.unreachable, text.lowercased())
    case ENETUNREACH, ENETDOWN: return UpstreamFailure(.networkUnreachable, text.lowercased())
    case ETIMEDOUT: return UpstreamFailure(.timeout, "connect timed out")
    case ECONNRESET: return UpstreamFailure(.reset, "connection reset")
    case EACCES, EPERM: return UpstreamFailure(.notAllowed, text.lowercased())
    case EAFNOSUPPORT: return UpstreamFailure(.addressFamily, text.lowercased())
    default: return UpstreamFailure(.other, text.lowercased())
    }
}

/// Blocking getaddrinfo, run off the loop thread.
func resolve(host: String, port: UInt16) -> Result<[SocketAddress], UpstreamFailure> {
    var hints = addrinfo()
    hints.ai_socktype = harrec_sock_stream()
    hints.ai_family = AF_UNSPEC
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &list)
    guard status == 0, let first = list else {
        let message = String(cString: gai_strerror(status))
        return .failure(UpstreamFailure(.dns, "DNS lookup for \(host) failed: \(message)"))
    }
    defer { freeaddrinfo(list) }
    var addresses: [SocketAddress] = []
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let entry = cursor {
        if let raw = entry.pointee.ai_addr, entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6 {
            addresses.append(SocketAddress(raw: raw, length: entry.pointee.ai_addrlen))
        }
        cursor = entry.pointee.ai_next
    }
    if addresses.isEmpty {
        return .failure(UpstreamFailure(.dns, "DNS lookup for \(host) returned no addresses"))
    }
    return .success(addresses)
}
