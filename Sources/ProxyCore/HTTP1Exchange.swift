import HTTP1
import Recording

/// One HTTP/1 exchange in flight: the request's progress toward the upstream and the response's
/// toward the client as two state machines, and the connection decisions the response made.
///
/// A class: the session reads and changes it on every event, and a struct stored in the
/// session's class is copied out (the flow's buffers retained and released) on each read.
final class HTTP1Exchange {
    enum RequestState: Equatable {
        /// The head waits for a ready upstream. `bodyComplete`: the request's end was already read
        /// (a bodiless request retried on a fresh connection), so the head is the whole request.
        case awaitingUpstream(bodyComplete: Bool)
        /// The head went out; body bytes are forwarded as the decoder delivers them.
        case sendingBody
        /// The last request byte was queued to the upstream.
        case sent
    }

    enum ResponseState: Equatable {
        /// Nothing forwarded yet (a 502 or 504 can still replace the response).
        case awaitingHead
        /// A 1xx head arrived; the decoder's next `.end` closes it, not the exchange.
        case interim
        /// The final head was forwarded; body bytes follow, re-framed as chunks for the client
        /// when `chunked`.
        case body(chunked: Bool)
        /// The response's end was forwarded.
        case complete
    }

    var flow: Flow
    var target: ProxyTarget
    /// The head as received and its origin-form target: an h2 upstream gets them as a header list.
    let requestHead: HTTPRequestHead
    let originForm: String
    var method: String
    var requestFraming: HTTPBodyFraming
    /// The serialized head, kept to retry once on a stale keep-alive connection.
    var forwardedHead: [UInt8]
    var clientVersion: HTTPVersion
    var clientKeepAlive: Bool
    var isUpgradeRequest: Bool
    var request = RequestState.awaitingUpstream(bodyComplete: false)
    var response = ResponseState.awaitingHead
    /// The client connection ends with this response (its framing cannot be kept, the request
    /// body was cut short, or harrec is stopping).
    var closeClientAfter = false
    /// The upstream said keep-alive.
    var upstreamReusable = true
    /// Already retried once on a fresh connection.
    var retried = false
    var lastUpstreamActivity: Double
    /// The HTTP upstream proxy the request went to in absolute form (`target` is the proxy's),
    /// nil when it went to its origin (directly or through a tunnel).
    var forwardedVia: UpstreamProxy?
    /// `harrec replay --passthrough`: the body gathered for matching. `forwardedHead` carries it
    /// framed for HTTP/1; an h2 upstream gets it as the stream's DATA.
    var gatheredBody: [UInt8]?

    init(flow: Flow, target: ProxyTarget, requestHead: HTTPRequestHead, originForm: String, method: String,
         requestFraming: HTTPBodyFraming, forwardedHead: [UInt8], clientVersion: HTTPVersion, clientKeepAlive: Bool,
         isUpgradeRequest: Bool, lastUpstreamActivity: Double) {
        self.flow = flow
        self.target = target
        self.requestHead = requestHead
        self.originForm = originForm
        self.method = method
        self.requestFraming = requestFraming
        self.forwardedHead = forwardedHead
        self.clientVersion = clientVersion
        self.clientKeepAlive = clientKeepAlive
        self.isUpgradeRequest = isUpgradeRequest
        self.lastUpstreamActivity = lastUpstreamActivity
    }

    var headSent: Bool {
        if case .awaitingUpstream = request { return false }
        return true
    }

    var requestDone: Bool { request == .sent }

    /// The decoder delivered the request's end (it may be replayed on a retry).
    var endConsumed: Bool { request == .sent || request == .awaitingUpstream(bodyComplete: true) }

    /// The final response head went to the client: the exchange can only be cut now, not
    /// answered with an error response.
    var finalHeadForwarded: Bool {
        switch response {
        case .body, .complete: return true
        case .awaitingHead, .interim: return false
        }
    }

    var chunkedToClient: Bool { response == .body(chunked: true) }
}
