import CSystemShims
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ProxyCore
import Recording
import Synchronization

// Accepting connections: listeners, back-off on EMFILE, hand-over between loops.
extension EventLoop {
    // MARK: - Accept

    func acceptAll(_ listenerFD: Int32, kind: ListenerKind) {
        while true {
            var address = SocketAddress()
            address.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &address.storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    harrec_accept_nonblocking(listenerFD, $0, &address.length)
                }
            }
            if fd < 0 {
                let code = harrec_errno()
                if code == EMFILE || code == ENFILE {
                    pauseAccepting(reason: String(cString: strerror(code)))
                }
                return
            }
            acceptBackoff.accepted()
            let loop = shared.loopForNextConnection()
            if loop === self {
                adopt(fd: fd, address: address, kind: kind)
            } else {
                loop.handOver(fd: fd, address: address, kind: kind)
            }
        }
    }

    /// Takes the listeners out of the poll set until the back-off delay has passed.
    func pauseAccepting(reason: String) {
        if acceptBackoff.pausedUntil == nil {
            for listener in listeners.values { poller.remove(listener.fd) }
        }
        if let line = acceptBackoff.failed(at: wallClock(), reason: reason) { log.line(line) }
    }

    func resumeAccepting() {
        acceptBackoff.resumed()
        for (token, listener) in listeners {
            poller.add(listener.fd, token: token, interest: .read)
        }
    }

    func adoptHandedOver() {
        for item in handedOver.takeAll() { adopt(fd: item.fd, address: item.address, kind: item.kind) }
    }

    /// Starts serving an accepted client socket on this loop, with a session of its listener's
    /// kind: a proxy session (a reverse listener's has its upstreams), or a service's.
    func adopt(fd: Int32, address: SocketAddress, kind: ListenerKind) {
        setNoDelay(fd)
        let id = shared.sessionIDs.make()
        let session: any LoopSession
        switch kind {
        case .proxy(let reverse):
            session = ProxySession(id: id, clientAddress: address.description, configuration: configuration,
                                   reverse: reverse, flowIDs: flowIDs, now: wallClock())
        case .service(let make):
            session = make(id, address.description, wallClock())
        }
        let box = SessionBox(session: session)
        let connection = Connection(token: makeToken(), role: .client, state: .open)
        connection.fd = fd
        connection.box = box
        box.client = connection
        connections[connection.token] = connection
        sessions[session.id] = box
        updateInterest(connection, .read)
        if shutdownDeadline != nil {
            session.beginShutdown(at: wallClock())
            process(box)
        }
    }
}
