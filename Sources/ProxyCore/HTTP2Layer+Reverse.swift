import HTTP1
import HTTP2
import Recording

// HTTP/2 on a reverse listener (h2c with prior knowledge, or h2 over the listener's TLS): every
// stream goes to the listener's one upstream, with that upstream's `:authority` and `:scheme`,
// and is recorded under its URL, as an HTTP/1 request to the listener is. `Location` and
// `Set-Cookie` go back toward the origin the client used. harrec's own paths (`/harrec/...`)
// are answered here.
extension HTTP2Layer {
    /// The listener's upstream, and what answering harrec's own paths needs.
    struct ReverseRoute {
        var proxy: ReverseProxy
        var caDownloads: CADownloads?

        /// The one upstream. The streams of a connection share one upstream connection, so a
        /// listener with upstreams by path prefix speaks HTTP/1.1 (ALPN says so over TLS) and
        /// answers h2c streams 505: nil then.
        var upstream: ReverseProxy.Upstream? { proxy.upstreams.count == 1 ? proxy.upstreams[0] : nil }
    }

    /// A request on a reverse listener's stream, as the client sent it.
    struct ReverseRequest {
        var method: String
        /// What the client used: where redirects and cookies are pointed back at.
        var listenerOrigin: String
        var path: String
    }

    /// The fields to send upstream for `request`, with the stream's URL set to the upstream's;
    /// nil when the stream was answered here (harrec's own path, or a path no upstream takes).
    func reverseFields(_ fields: [HTTPField], _ request: ReverseRequest, _ stream: Stream, route: ReverseRoute) -> [HTTPField]? {
        stream.listenerOrigin = request.listenerOrigin
        if let own = ReservedHost.reversePath(request.path) {
            answerReserved(stream, method: request.method, originForm: own, route: route)
            return nil
        }
        guard let upstream = route.upstream else {
            answerOrReset(stream, status: 505, reason: "this listener sends paths to several upstreams and speaks HTTP/1.1 only "
                          + "(give each upstream its own port, --reverse PORT=URL, for HTTP/2)", resetCode: HTTP2ErrorCode.refusedStream)
            return nil
        }
        guard upstream.takes(request.path) else {
            answerOrReset(stream, status: 404, reason: "no --reverse upstream takes \(sanitizedForLog(String(request.path.prefix(200))))",
                          resetCode: HTTP2ErrorCode.refusedStream)
            return nil
        }
        let authority = upstream.target.authority(defaultPort: upstream.defaultPort)
        stream.flow.request.url = upstream.origin + request.path
        stream.flow.request.fields = stream.flow.request.fields.map {
            $0.name == "host" ? RecordedField(name: $0.name, value: authority) : $0
        }
        return fields.map { field in
            switch field.name {
            case ":authority", "host": return HTTPField(name: field.name, value: authority)
            case ":scheme": return HTTPField(name: field.name, value: upstream.scheme)
            default: return field
            }
        }
    }

    /// A response head toward the client of a reverse listener's stream: absolute references to
    /// the upstream pointed back at the listener (`--no-rewrite-back` keeps them).
    func reverseResponseFields(_ fields: [HTTPField], _ stream: Stream) -> [HTTPField] {
        guard let route = context.reverse, let origin = stream.listenerOrigin else { return fields }
        return route.proxy.responseFields(HTTPFields(fields), listenerOrigin: origin).fields
    }

    /// harrec's own page, CA or mark, as the stream's answer; a mark or reset goes to the session.
    private func answerReserved(_ stream: Stream, method: String, originForm: String, route: ReverseRoute) {
        let answer = ReservedHost.answer(method: method, originForm: originForm, ca: route.caDownloads,
                                         replaying: context.replay != nil, base: "/" + ReservedHost.name)
        stream.recorded = true // harrec's own answers are not entries
        stream.response = .ended
        let fields = [HTTPField(name: ":status", value: String(answer.status)),
                      HTTPField(name: "content-type", value: answer.contentType),
                      HTTPField(name: "content-length", value: String(answer.body.count)),
                      HTTPField(name: "cache-control", value: "no-store")]
        let body = method == "HEAD" ? [] : answer.body
        do {
            try client.sendResponse(fields, on: stream.clientID, endStream: body.isEmpty)
            stream.forwardedHead()
            if !body.isEmpty { client.sendData(body, on: stream.clientID, end: true) }
        } catch {
            client.reset(stream.clientID, errorCode: HTTP2ErrorCode.internalError)
        }
        if answer.mark != nil || answer.reset { outputs.append(.reserved(answer)) }
    }
}
