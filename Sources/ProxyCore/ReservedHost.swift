import HTTP1
import Recording
import TextEncodings

/// The proxy's own host, `http://harrec/...` or `https://harrec/...` through the proxy (as
/// mitmproxy has `mitm.it`):
/// answered by harrec, never forwarded and never recorded as an entry.
///
/// - `/mark?name=NAME`: a scenario marker; requests from now on belong to a new HAR page.
///   `harrec mark NAME` sends this, and so can a UI-test runner between steps.
/// - `/ca.pem`, `/ca.crt` (DER), `/ca.mobileconfig` (an iOS profile): the CA certificate, so a
///   device can install it from its browser.
/// - `/reset`: `harrec replay` only: every queue back to its first item (between tests).
/// - `/`: the setup page: what the host offers, and how to trust the CA on each platform.
///
/// The same paths are under `/harrec/` on a reverse listener, and on a forward listener asked
/// directly (`http://192.168.1.20:8888/harrec/`, a phone's first visit, before its proxy is set).
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

    /// Under `/harrec/` (a reverse listener, or a forward one asked directly): the path as
    /// `answer` takes it, or nil for a path that is not harrec's.
    static func reversePath(_ target: String) -> String? {
        let prefix = "/" + name
        guard target.hasPrefix(prefix) else { return nil }
        let rest = target.dropFirst(prefix.count)
        if rest.isEmpty || rest.hasPrefix("?") { return "/" + rest }
        return rest.hasPrefix("/") ? String(rest) : nil
    }

    /// Paths anyone who reaches the listener may read without proxy credentials: the setup page
    /// and the CA certificate (public by nature). Marks and resets change the session.
    static func isPublic(_ originForm: String) -> Bool {
        ["/", "/ca.pem", "/ca.crt", "/ca.mobileconfig"].contains(split(originForm).path)
    }

    /// `replaying`: the proxy is `harrec replay` (marks are not taken; `/reset` is). `base`: the
    /// prefix the page's links need (`/harrec` when asked as `/harrec/`, "" on `http://harrec/`).
    static func answer(method: String, originForm: String, ca: CADownloads?, replaying: Bool = false, base: String = "") -> Answer {
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
        case "/ca.pem", "/ca.crt", "/ca.mobileconfig":
            guard let ca else {
                return Answer(status: 404, body: text("harrec: no CA (TLS interception is off)"))
            }
            switch path {
            case "/ca.pem": return Answer(status: 200, contentType: "application/x-pem-file", body: ca.pem)
            case "/ca.crt": return Answer(status: 200, contentType: "application/x-x509-ca-cert", body: ca.der)
            default: return Answer(status: 200, contentType: "application/x-apple-aspen-config", body: ca.mobileConfig)
            }
        case "/":
            return Answer(status: 200, contentType: "text/html; charset=utf-8",
                          body: Array(SetupPage.html(base: base, replaying: replaying, hasCA: ca != nil).utf8))
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
