import HTTP1
import Recording
import TextEncodings

/// The proxy's own host, `http://harrec/...` or `https://harrec/...` through the proxy (as
/// mitmproxy has `mitm.it`):
/// answered by harrec, never forwarded and never recorded as an entry.
///
/// - `/mark?name=NAME`: a scenario marker; requests from now on belong to a new HAR page.
///   `harrec mark NAME` sends this, and so can a UI-test runner between steps.
/// - `/ca.pem`: the CA certificate, so a device can install it from its browser.
/// - `/reset`: `harrec replay` only: every queue back to its first item (between tests).
/// - `/`: what the host offers.
///
/// Pure: the request head in, the answer and what to record out.
enum ReservedHost {
    static let name = "harrec"

    /// The longest marker name kept: a title, not a payload.
    static let maximumMarkNameLength = 200

    struct Answer: Equatable {
        var status: Int
        var contentType = "text/plain; charset=utf-8"
        var body: [UInt8]
        /// The marker this request set, if any.
        var mark: String?
        /// The request asks a replay to restart its queues.
        var reset = false
    }

    /// Whether a request or tunnel is for the reserved host: `http://harrec/...`, or
    /// `https://harrec/...` (a CONNECT to harrec:443, intercepted with a leaf from harrec's CA).
    static func isReserved(_ target: ProxyTarget) -> Bool {
        target.host.lowercased() == name && (target.port == 80 || target.port == 443)
    }

    /// On a reverse listener harrec's own paths are under `/harrec/` (`/harrec/mark?name=`):
    /// the path as `answer` takes it, or nil for a path that goes upstream.
    static func reversePath(_ target: String) -> String? {
        let prefix = "/" + name
        guard target.hasPrefix(prefix) else { return nil }
        let rest = target.dropFirst(prefix.count)
        if rest.isEmpty || rest.hasPrefix("?") { return "/" + rest }
        return rest.hasPrefix("/") ? String(rest) : nil
    }

    /// `replaying`: the proxy is `harrec replay` (marks are not taken; `/reset` is).
    static func answer(method: String, originForm: String, caCertificatePEM: [UInt8]?, replaying: Bool = false) -> Answer {
        let (path, query) = split(originForm)
        guard method == "GET" || method == "HEAD" else {
            return Answer(status: 405, body: text("harrec: use GET for http://harrec\(path)"))
        }
        switch path {
        case "/reset":
            guard replaying else {
                return Answer(status: 404, body: text("harrec: /reset restarts a replay's queues; this harrec is recording"))
            }
            return Answer(status: 200, body: text("harrec: replay queues restarted"), reset: true)
        case "/mark" where replaying:
            return Answer(status: 404, body: text("harrec: this harrec is replaying; marks are for recording"))
        case "/mark":
            let name = trimmingSpacesAndTabs(query.first { $0.name == "name" }?.value ?? "")
            guard !name.isEmpty else {
                return Answer(status: 400, body: text("harrec: give the scenario a name: http://harrec/mark?name=login"))
            }
            guard name.count <= maximumMarkNameLength else {
                return Answer(status: 400, body: text("harrec: a scenario name has at most \(maximumMarkNameLength) characters"))
            }
            guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return Answer(status: 400, body: text("harrec: a scenario name has no control characters"))
            }
            return Answer(status: 200, body: text("harrec: scenario \"\(name)\" starts now"), mark: name)
        case "/ca.pem":
            guard let pem = caCertificatePEM else {
                return Answer(status: 404, body: text("harrec: no CA (TLS interception is off)"))
            }
            return Answer(status: 200, contentType: "application/x-pem-file", body: pem)
        case "/" where replaying:
            return Answer(status: 200, body: text("""
                harrec replay, serving a recording
                  http://harrec/reset            restart every queue (between tests)
                  http://harrec/ca.pem           harrec's CA certificate, to install on a device
                """))
        case "/":
            return Answer(status: 200, body: text("""
                harrec, the recording proxy
                  http://harrec/mark?name=NAME   start a new scenario (a HAR page) now
                  http://harrec/ca.pem           harrec's CA certificate, to install on a device
                """))
        default:
            return Answer(status: 404, body: text("harrec: no \(path) here (try http://harrec/)"))
        }
    }

    /// The response bytes for an answer; `close` adds `Connection: close`.
    static func response(_ answer: Answer, headOnly: Bool, close: Bool) -> [UInt8] {
        var fields = HTTPFields()
        fields.append(name: "Content-Type", value: answer.contentType)
        fields.append(name: "Content-Length", value: String(answer.body.count))
        fields.append(name: "Cache-Control", value: "no-store")
        if close { fields.append(name: "Connection", value: "close") }
        let reason = HTTP1Forwarding.reasonPhrase(answer.status)
        let head = (try? HTTP1Serializer.responseHead(version: .http11, status: answer.status, reason: reason, fields: fields)) ?? []
        return headOnly ? head : head + answer.body
    }

    private static func text(_ line: String) -> [UInt8] { Array((line + "\n").utf8) }

    private static func split(_ originForm: String) -> (path: String, query: [(name: String, value: String)]) {
        guard let mark = originForm.firstIndex(of: "?") else { return (originForm, []) }
        let query = originForm[originForm.index(after: mark)...].split(separator: "&").map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentEncoding.decoded(String(parts[0]), plusAsSpace: true)
            let value = parts.count > 1 ? PercentEncoding.decoded(String(parts[1]), plusAsSpace: true) : ""
            return (name, value)
        }
        return (String(originForm[..<mark]), query.map { (name: $0.0, value: $0.1) })
    }
}
