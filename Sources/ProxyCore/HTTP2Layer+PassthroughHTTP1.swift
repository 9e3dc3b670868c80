import HTTP1
import HTTP2
import Recording

// `harrec replay --passthrough` to an upstream that chose HTTP/1.1 in ALPN: the client still
// speaks h2 to the replay (it was answered before any upstream existed), so each forwarded
// stream becomes one HTTP/1.1 exchange on the connection, one at a time (RFC 9113 §8.2.3 for
// cookies, §8.2.2 for connection-specific fields, dropped from responses by
// `HTTPFields.removingHopByHop` as for HTTP/1 clients), and the response goes back as the stream's.
extension HTTP2Layer {
    /// The HTTP/1.1 side of a passthrough connection.
    final class PassthroughHTTP1 {
        var decoder = HTTP1ResponseDecoder()
        /// The stream whose request went out and whose response is being read.
        var inFlight: Stream?
        /// Serialized requests not yet handed to the session.
        var output: [UInt8] = []
        /// The server said it closes after this response (or broke framing): nothing more goes on it.
        var closing = false
        /// Exchanges completed on it: a request that meets the close of a reused idle connection
        /// (the server timed it out as the request left) is sent again on a new one.
        var completed = 0
        /// Whether any byte of the in-flight response arrived.
        var answered = false
    }

    /// Response bytes buffered toward a client that reads slowly before harrec stops reading the
    /// upstream connection (HTTP/1.1 has no window; the socket's own buffer paces the server).
    static let passthroughHTTP1BufferLimit = 1 << 20

    /// False while the client is behind on an HTTP/1.1 passthrough response (`passthroughHTTP1BufferLimit`).
    var wantsUpstreamBytes: Bool {
        guard let h1 = passthroughHTTP1, let stream = h1.inFlight else { return true }
        return client.bufferedOutgoingBytes(on: stream.clientID) < Self.passthroughHTTP1BufferLimit
    }

    /// Sends the next waiting stream when the connection is free.
    func sendNextHTTP1() {
        guard let h1 = passthroughHTTP1, h1.inFlight == nil, !h1.closing else { return }
        while !awaitingUpstream.isEmpty {
            let stream = awaitingUpstream.removeFirst()
            guard let request = stream.replay, !stream.recorded, !stream.clientClosed else { continue }
            do {
                h1.output += try Self.http1Request(fields: request.fields, body: request.body, trailers: stream.requestTrailers)
            } catch {
                answerOrReset(stream, status: 502, reason: "cannot forward the request as HTTP/1.1: \(error)",
                              resetCode: HTTP2ErrorCode.refusedStream)
                continue
            }
            pool.assign(&stream.flow)
            stream.flow.instants.sendStart = now
            stream.flow.instants.sendEnd = now
            stream.lastUpstreamActivity = now
            h1.decoder.expectResponse(toMethod: stream.flow.request.method)
            h1.inFlight = stream
            h1.answered = false
            return
        }
    }

    /// Bytes from an HTTP/1.1 passthrough connection.
    func passthroughHTTP1Received(_ bytes: [UInt8]) {
        guard let h1 = passthroughHTTP1 else { return }
        guard let stream = h1.inFlight, !h1.closing else { return } // nothing asked: ignored, the connection is not reused
        stream.lastUpstreamActivity = now
        h1.answered = true
        h1.decoder.feed(bytes)
        readHTTP1Responses(h1)
    }

    /// `ending`: the connection is gone (its close ends a close-delimited body); nothing is sent
    /// or reopened from here then.
    func readHTTP1Responses(_ h1: PassthroughHTTP1, ending: Bool = false) {
        while let stream = h1.inFlight {
            let event: HTTP1ResponseEvent?
            do {
                event = try h1.decoder.next()
            } catch {
                h1.inFlight = nil
                h1.closing = true
                answerOrReset(stream, status: 502, reason: "bad upstream response: \(error)", resetCode: HTTP2ErrorCode.internalError)
                if !ending { retireHTTP1Connection() }
                return
            }
            guard let event else { return }
            guard !stream.recorded, !stream.clientClosed else {
                // The client gave up on it (or it timed out): the rest of this response is unwanted.
                h1.inFlight = nil
                h1.closing = true
                if !ending { retireHTTP1Connection() }
                return
            }
            switch event {
            case .head(let head, let framing):
                if head.status >= 100 && head.status < 200 { continue } // the whole request went out already
                if !head.keepAlive { h1.closing = true }
                var fields = [HTTPField(name: ":status", value: String(head.status))]
                // The same hop-by-hop rule as for HTTP/1 clients (Connection and what it names).
                for field in head.fields.removingHopByHop() {
                    let name = field.name.lowercased()
                    if name == "content-length" && framing == .chunked { continue }
                    fields.append(HTTPField(name: name, value: field.value))
                }
                forwardResponseHead(stream, fields: fields, endStream: false)
            case .body(let bytes):
                if let part = stream.flow.recordBody(bytes, .response, cap: context.maxRecordedBodyBytes,
                                                     partSize: context.bodyPartSize,
                                                 filter: context.recordingFilter) {
                    outputs.append(.recordPart(part))
                }
                client.sendData(bytes, on: stream.clientID)
            case .end(let trailers):
                let h2Trailers = trailers.removingHopByHop().fields.map { HTTPField(name: $0.name.lowercased(), value: $0.value) }
                if !h2Trailers.isEmpty {
                    stream.flow.response?.trailers = h2Trailers.map { RecordedField(name: $0.name, value: $0.value) }
                }
                client.sendData([], on: stream.clientID, end: true, trailers: h2Trailers.isEmpty ? nil : h2Trailers)
                stream.response = .ended
                stream.flow.instants.responseEnd = now
                complete(stream)
                h1.inFlight = nil
                h1.completed += 1
                stream.replay?.body = []
                if ending { return }
                if h1.closing { retireHTTP1Connection() } else { sendNextHTTP1() }
            }
        }
    }

    /// The HTTP/1.1 connection carries nothing more: the waiting streams get a new connection.
    func retireHTTP1Connection() {
        replayUpstream = .goingAway
        if !awaitingUpstream.isEmpty { reopenPassthroughUpstream() }
    }

    /// The connection ended: a close-delimited response ends with it; one cut short fails.
    /// Returns true when the connection had served its last response whole (the waiting streams
    /// then get a new one).
    func endHTTP1Connection(reason: String) -> Bool {
        guard let h1 = passthroughHTTP1 else { return false }
        passthroughHTTP1 = nil
        guard let stream = h1.inFlight, !stream.recorded else { return true }
        if !h1.answered && h1.completed > 0, let request = stream.replay, !request.retried {
            request.retried = true
            awaitingUpstream.insert(stream, at: 0)
            return true
        }
        h1.decoder.finish()
        readHTTP1Responses(h1, ending: true)
        if stream.recorded && stream.flow.error == nil { return true }
        if !stream.recorded { answerOrReset(stream, status: 502, reason: reason, resetCode: HTTP2ErrorCode.internalError) }
        return false
    }

    /// An h2 request as HTTP/1.1 bytes: the request line from `:method` and `:path`, `Host` from
    /// `:authority`, cookies joined, the body framed by its length (chunked when it has trailers).
    static func http1Request(fields: [HTTPField], body: [UInt8], trailers: [HTTPField]?) throws -> [UInt8] {
        var method = "GET", path = "/", authority: String?
        var regular = HTTPFields()
        var cookies: [String] = []
        for field in fields {
            switch field.name {
            case ":method": method = field.value
            case ":path": path = field.value
            case ":authority": authority = field.value
            case "cookie": cookies.append(field.value)
            case "content-length", "transfer-encoding", "te", "connection", "keep-alive", "proxy-connection", "upgrade":
                continue
            default:
                if field.name.hasPrefix(":") { continue }
                if field.name == "host" { authority = authority ?? field.value; continue }
                regular.append(field)
            }
        }
        var head = HTTPFields()
        if let authority { head.append(name: "host", value: authority) }
        for field in regular { head.append(field) }
        if !cookies.isEmpty { head.append(name: "cookie", value: cookies.joined(separator: "; ")) }
        let chunked = trailers?.isEmpty == false
        if chunked {
            head.append(name: "transfer-encoding", value: "chunked")
        } else if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
            head.append(name: "content-length", value: String(body.count))
        }
        var bytes = try HTTP1Serializer.requestHead(method: method, target: path, version: .http11, fields: head)
        if chunked {
            if !body.isEmpty { HTTP1Serializer.appendChunk(body, to: &bytes) }
            bytes += HTTP1Serializer.lastChunk(trailers: HTTPFields(trailers!))
        } else {
            bytes += body
        }
        return bytes
    }
}
