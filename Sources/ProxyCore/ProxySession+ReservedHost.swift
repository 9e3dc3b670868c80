import HTTP1
import Recording

// Requests to http://harrec/ (ReservedHost): answered here, a scenario marker recorded, nothing
// forwarded and no entry recorded.
extension ProxySession {
    /// `base`: the prefix harrec's paths were asked under (`/harrec`), "" on `http://harrec/`.
    func answerReservedHost(_ head: HTTPRequestHead, framing: HTTPBodyFraming, originForm: String, base: String = "") {
        let answer = ReservedHost.answer(method: head.method, originForm: originForm, ca: configuration.caDownloads,
                                         replaying: configuration.replay != nil, base: base)
        // A request body is not read: the connection ends after the answer instead.
        let close = framing != .none || !head.keepAlive || shuttingDown
        sendClient(ReservedHost.response(answer, headOnly: head.method == "HEAD", close: close))
        applyReserved(answer)
        if close { finish(log: nil) }
    }
}
