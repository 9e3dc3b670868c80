/// An opaque relay between the client and one upstream (a tunnel harrec does not parse, or a
/// connection after a 101): each direction stays open until its sender's EOF, which is forwarded
/// as a half-close, and the relay ends when both directions have.
struct TunnelRelay: Equatable {
    let upstreamID: UpstreamID
    private(set) var clientToUpstreamOpen = true
    private(set) var upstreamToClientOpen = true

    init(upstreamID: UpstreamID) {
        self.upstreamID = upstreamID
    }

    enum Step: Equatable {
        /// Forward the client's end: half-close the upstream's write side.
        case halfCloseUpstream
        /// Forward the upstream's end: half-close the client's write side.
        case halfCloseClient
        /// Both directions ended: close the connection.
        case finish
    }

    /// The client sent EOF (or a TLS close_notify).
    mutating func clientEnded() -> Step {
        clientToUpstreamOpen = false
        return upstreamToClientOpen ? .halfCloseUpstream : .finish
    }

    /// The upstream sent EOF (or a TLS close_notify).
    mutating func upstreamEnded() -> Step {
        upstreamToClientOpen = false
        return clientToUpstreamOpen ? .halfCloseClient : .finish
    }
}
