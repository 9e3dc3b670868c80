import HTTP1
import Recording

/// The responses harrec makes itself (errors, proxy authentication, the CONNECT reply), built
/// through `HTTP1Serializer` so they get the same validation as forwarded heads. Bodies are one
/// line of text, the reason sanitized: nothing from the wire reaches a client's terminal raw.
enum ErrorResponses {
    /// A response harrec sends itself: the bytes, and the same response as recorded.
    struct Answer {
        let bytes: [UInt8]
        let recorded: RecordedResponse
    }

    /// A `text/plain` response whose body is `harrec: <reason>`; `close` adds `Connection: close`.
    static func plain(status: Int, reason: String, close: Bool, extraFields: [HTTPField] = []) -> [UInt8] {
        answer(status: status, reason: reason, close: close, extraFields: extraFields).bytes
    }

    /// `plain`, with the response as the recording keeps it (for entries of refused requests).
    static func answer(status: Int, reason: String, close: Bool, extraFields: [HTTPField] = []) -> Answer {
        let body = Array("harrec: \(sanitizedForLog(reason))\n".utf8)
        var fields = HTTPFields(extraFields)
        fields.append(name: "Content-Type", value: "text/plain; charset=utf-8")
        fields.append(name: "Content-Length", value: String(body.count))
        if close { fields.append(name: "Connection", value: "close") }
        // The fields are ours and valid, so the serializer cannot refuse them.
        let reason = HTTP1Forwarding.reasonPhrase(status, fallback: "Error")
        let head = (try? HTTP1Serializer.responseHead(version: .http11, status: status, reason: reason, fields: fields)) ?? []
        var recorded = RecordedResponse(status: status, reason: reason, httpVersion: "HTTP/1.1",
                                        fields: fields.fields, headSize: head.count)
        recorded.body = RecordedBody(bytes: body, wireSize: body.count)
        return Answer(bytes: head + body, recorded: recorded)
    }

    /// 407 asking for Basic credentials.
    static func proxyAuthenticationRequired(close: Bool) -> Answer {
        answer(status: 407, reason: "proxy authentication required", close: close,
               extraFields: [HTTPField(name: "Proxy-Authenticate", value: "Basic realm=\"harrec\"")])
    }

    /// The reply to a CONNECT harrec accepted.
    static let connectionEstablished: [UInt8] =
        (try? HTTP1Serializer.responseHead(version: .http11, status: 200, reason: "Connection established", fields: HTTPFields())) ?? []
}
