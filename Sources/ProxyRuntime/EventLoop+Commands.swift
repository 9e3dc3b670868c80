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

// Reading sockets, running the sessions' commands, writing and closing, epoll interest.
extension EventLoop {
    // MARK: - Reading

    func readOnce(_ connection: Connection) {
        guard let box = connection.box else { return }
        let received = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
        let now = wallClock()
        if connection.proxyHandshake != nil {
            if received > 0 {
                proxyHandshakeReceived(connection, UnsafeRawBufferPointer(rebasing: readBuffer[0..<received]))
            } else if received == 0 {
                connection.readEOF = true
                proxyHandshakeReceived(connection, nil)
            } else if ![EAGAIN, EWOULDBLOCK, EINTR].contains(harrec_errno()) {
                let reason = String(cString: strerror(harrec_errno()))
                proxyHandshakeReceived(connection, nil, error: reason)
            }
            return
        }
        if received > 0 {
            let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<received])
            switch connection.role {
            case .client: box.session.clientReceived(bytes, at: now)
            case .upstream(let id): box.session.upstreamReceived(id, bytes, at: now)
            }
        } else if received == 0 {
            connection.readEOF = true
            switch connection.role {
            case .client: box.session.clientClosed(at: now)
            case .upstream(let id): box.session.upstreamClosed(id, at: now)
            }
        } else {
            let code = harrec_errno()
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
            connection.readEOF = true
            switch connection.role {
            case .client: box.session.clientFailed(ClientFailure(errno: code), at: now)
            case .upstream(let id): box.session.upstreamFailed(id, String(cString: strerror(code)), at: now)
            }
        }
    }

    func drainLingering(_ connection: Connection) {
        while true {
            let received = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if received > 0 { continue }
            if received < 0 && (harrec_errno() == EAGAIN || harrec_errno() == EINTR) { return }
            closeNow(connection)
            return
        }
    }

    // MARK: - Commands

    /// Executes the session's commands, flushes output, and updates read interest, repeating
    /// while write failures produce new events.
    func process(_ box: SessionBox) {
        runCommands(box)
        // A session that writes a body of its own (a replay streaming from the HAR file) writes
        // its next piece while the client keeps up. A few pieces per event, so one fast client
        // does not hold the loop; when the client took all of them, a wake-up brings it back
        // (no write readiness will).
        var pieces = 0
        while !box.session.isFinished && box.session.wantsClientDrained, let client = box.client, case .open = client.state,
              client.pendingOutput < Self.drainLowWater {
            guard pieces < Self.piecesPerEvent else {
                scheduleWake(at: wallClock(), session: box.session.id)
                break
            }
            pieces += 1
            box.session.clientDrained(at: wallClock())
            runCommands(box)
        }
        if box.session.isFinished {
            for upstream in box.upstreams.values { closeNow(upstream) }
            box.upstreams.removeAll()
            if let client = box.client, case .open = client.state {
                if client.pendingOutput > 0 {
                    // Still flushing its last bytes; the box stays until the output drains.
                    updateInterest(client, .write)
                    return
                }
                startClosing(client)
            }
            sessions[box.session.id] = nil
            return
        }
        refreshInterest(box)
    }

    /// Executes the session's commands and flushes, repeating while write failures produce new
    /// events.
    private func runCommands(_ box: SessionBox) {
        var rounds = 0
        // Each round may produce new commands (a write failure, a synchronous connect result);
        // the bound only guards against a session that keeps talking to itself.
        while box.session.hasCommands && rounds < 16 {
            rounds += 1
            box.session.drainCommands { command in execute(command, box) }
            let toFlush = dirty
            dirty.removeAll(keepingCapacity: true)
            for connection in toFlush { flush(connection) }
            let opens = deferredOpens
            deferredOpens.removeAll()
            for open in opens { startUpstream(open.connection, host: open.host, port: open.port) }
        }
    }

    func execute(_ command: ProxyCommand, _ box: SessionBox) {
        switch command {
        case .sendToClient(let bytes):
            if let client = box.client { queue(bytes, on: client) }
        case .closeClient:
            box.client?.closeAfterFlush = true
            if let client = box.client { dirtyMark(client) }
        case .shutdownClientWrite:
            box.client?.shutdownAfterFlush = true
            if let client = box.client { dirtyMark(client) }
        case .openUpstream(let id, let host, let port):
            openUpstream(id, host: host, port: port, box: box)
        case .sendToUpstream(let id, let bytes):
            if let upstream = box.upstreams[id] { queue(bytes, on: upstream) }
        case .shutdownUpstreamWrite(let id):
            if let upstream = box.upstreams[id] {
                upstream.shutdownAfterFlush = true
                dirtyMark(upstream)
            }
        case .closeUpstream(let id):
            if let upstream = box.upstreams.removeValue(forKey: id) { closeNow(upstream) }
        case .log(let event):
            shared.liveEventObserver?(event)
            guard !log.quiet else { break }
            if let flow = event.kind.flow, !configuration.recordingFilter.isEmpty, !configuration.recordingFilter.keeps(flow) {
                if !configuration.quietSkipped { log.line(LiveLog.line(event) + "  (not recorded)", style: .dim) }
            } else {
                log.line(LiveLog.line(event))
            }
        case .wake(let at):
            scheduleWake(at: at, session: box.session.id)
        case .prepareCertificate(let host):
            prepareCertificate(host, for: box.session.id)
        case .record(let record):
            switch record {
            case .flow(let flow): sink.record(flow)
            case .webSocketStart(let flow): sink.recordWebSocketStart(flow)
            case .webSocketMessage(let message, let flowID): sink.recordWebSocketMessage(message, flowID: flowID)
            case .pageMark(let mark): sink.recordPageMark(mark)
            case .exportDecision(let decision): sink.recordExportDecision(decision)
            case .pageMove(let move): sink.recordPageMove(move)
            case .bodyPart(let part): sink.recordBodyPart(part)
            }
        }
    }

    func queue(_ bytes: [UInt8], on connection: Connection) {
        guard !bytes.isEmpty else { return }
        switch connection.state {
        case .closed, .lingering: return
        default: break
        }
        connection.output.append(bytes)
        dirtyMark(connection)
    }

    func dirtyMark(_ connection: Connection) {
        if !dirty.contains(where: { $0 === connection }) { dirty.append(connection) }
    }

    /// Writes as much queued output as the socket takes, then applies pending half-close/close.
    func flush(_ connection: Connection) {
        guard case .open = connection.state else { return }
        while connection.pendingOutput > 0 {
            let written = connection.output.withUnwrittenRegions { regions in
                gatherSend(connection.fd, regions)
            }
            if written > 0 {
                connection.output.consume(written)
                continue
            }
            let code = harrec_errno()
            if written < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == EINTR) { break }
            // The peer is gone: report it and drop what was queued.
            connection.output.removeAll()
            if let box = connection.box {
                switch connection.role {
                case .client:
                    box.session.clientFailed(ClientFailure(errno: code), at: wallClock())
                    closeNow(connection)
                    box.client = nil
                case .upstream(let id):
                    box.session.upstreamFailed(id, String(cString: strerror(code)), at: wallClock())
                }
            } else {
                closeNow(connection)
            }
            return
        }
        if connection.pendingOutput == 0 {
            if connection.closeAfterFlush {
                startClosing(connection)
            } else if connection.shutdownAfterFlush && !connection.writeShutDown {
                connection.writeShutDown = true
                shutdown(connection.fd, Int32(SHUT_WR))
            }
        }
    }

    /// Half-closes and drains input for a short while before closing, so that a final response
    /// (a 400, say) reaches a client that is still sending.
    func startClosing(_ connection: Connection) {
        guard case .open = connection.state else { return }
        if connection.readEOF {
            closeNow(connection)
            return
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.state = .lingering(until: wallClock() + Self.lingerSeconds)
        updateInterest(connection, .read)
        if let box = connection.box { forgetIfFinished(box) }
        connection.box = nil
    }

    func closeNow(_ connection: Connection) {
        if case .closed = connection.state { return }
        connection.state = .closed
        if connection.fd >= 0 {
            if connection.registered { poller.remove(connection.fd) }
            close(connection.fd)
            connection.fd = -1
        }
        connections[connection.token] = nil
        if let box = connection.box {
            if case .client = connection.role {
                box.client = nil
                forgetIfFinished(box)
            }
        }
    }

    /// Drops a finished session, unless it still has commands to run: the loop holds the only
    /// strong reference to its box, and a client whose write failed finishes the session with
    /// its last commands (the exchange's record, the upstream's close) still queued, run by the
    /// `process` that follows.
    func forgetIfFinished(_ box: SessionBox) {
        if box.session.isFinished && !box.session.hasCommands { sessions[box.session.id] = nil }
    }

    // MARK: - Interest

    func refreshInterest(_ box: SessionBox) {
        let upstreamBacklog = box.upstreams.values.reduce(0) { $0 + $1.pendingOutput }
        if let client = box.client, case .open = client.state {
            var interest: Interest = []
            let ownBacklog = box.session.answersClientItself ? client.pendingOutput : 0
            if !client.readEOF && box.session.wantsClientData && upstreamBacklog < Self.writeHighWater
                && ownBacklog < Self.writeHighWater {
                interest.insert(.read)
            }
            if client.pendingOutput > 0 { interest.insert(.write) }
            updateInterest(client, interest)
        }
        let clientBacklog = box.client?.pendingOutput ?? 0
        for upstream in box.upstreams.values {
            guard case .open = upstream.state else { continue }
            var interest: Interest = []
            if !upstream.readEOF && box.session.wantsUpstreamData && clientBacklog < Self.writeHighWater {
                interest.insert(.read)
            }
            if upstream.pendingOutput > 0 { interest.insert(.write) }
            updateInterest(upstream, interest)
        }
    }

    func updateInterest(_ connection: Connection, _ interest: Interest) {
        guard connection.fd >= 0 else { return }
        if connection.registered && connection.interest == interest { return }
        // Nothing to wait for and not registered: stay out (see the hang-up note in handle).
        if !connection.registered && interest.isEmpty && connection.readEOF { return }
        if connection.registered {
            poller.modify(connection.fd, token: connection.token, interest: interest)
        } else {
            poller.add(connection.fd, token: connection.token, interest: interest)
            connection.registered = true
        }
        connection.interest = interest
    }
}

/// One `sendmsg` of `regions` in order (a gathered write); the bytes written, or -1 with errno set.
func gatherSend(_ fd: Int32, _ regions: [UnsafeRawBufferPointer]) -> Int {
    var vectors = regions.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
    return vectors.withUnsafeMutableBufferPointer { buffer in
        var message = msghdr()
        message.msg_iov = buffer.baseAddress
        message.msg_iovlen = buffer.count
        return sendmsg(fd, &message, harrec_send_flags())
    }
}
