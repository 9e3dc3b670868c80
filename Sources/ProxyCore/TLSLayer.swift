import TLS

/// TLS on one side of a session (toward the client, or toward one upstream): a byte transformer
/// between the peer's ciphertext and the inner layer's plaintext.
///
/// Ciphertext in (`receive`) gives plaintext and what happened (handshake done, close_notify,
/// failure) as one `Received` value; plaintext out is gathered (`write`) and encrypted once per
/// event (`flush`), so a response head and its body become one record and one write. The session
/// decides what each outcome means (which log line, which error response); this type only
/// speaks TLS. OpenSSL sits behind `TLSEngine`'s memory BIOs, so this stays sans-IO.
struct TLSLayer {
    /// Where the handshake stands.
    enum State: Equatable {
        case handshaking
        case established
        /// close_notify was sent or received.
        case closing
        case failed
    }

    /// What one `receive` produced, in the order the session must handle it: `output` goes to
    /// the peer first (handshake messages, an alert), then `plaintext`, then the end.
    struct Received {
        /// Ciphertext to send back to the same peer.
        var output: [UInt8] = []
        var plaintext: [UInt8] = []
        /// The handshake finished during this receive.
        var handshakeCompleted = false
        /// The peer's close_notify arrived: it sends nothing more.
        var closed = false
        /// The connection failed; nothing more will come. `output` may hold an alert.
        var failure: TLSError?
    }

    private let engine: TLSEngine
    private var pendingPlaintext: [UInt8] = []
    /// When the handshake began and ended (`timings.ssl`).
    let startedAt: Double
    private(set) var establishedAt: Double?

    /// The client-facing side: terminates the client's TLS with a leaf for its server name.
    static func server(context: TLSServerContext, fallbackServerName: String, at time: Double) throws -> TLSLayer {
        TLSLayer(engine: try TLSEngine.server(context: context, fallbackServerName: fallbackServerName), at: time)
    }

    /// The upstream side: a TLS client for `serverName` (SNI and verification). Its ClientHello
    /// is ready in `flush()` at once.
    /// `alpnProtocols`, when given, replaces the context's offer (the client's own list, so the
    /// upstream chooses the protocol before the client is answered).
    static func client(context: TLSClientContext, serverName: String, alpnProtocols: [String]? = nil,
                       at time: Double) throws -> TLSLayer {
        TLSLayer(engine: try TLSEngine.client(context: context, serverName: serverName, alpnProtocols: alpnProtocols), at: time)
    }

    private init(engine: TLSEngine, at time: Double) {
        self.engine = engine
        startedAt = time
    }

    var state: State {
        switch engine.state {
        case .handshaking: return .handshaking
        case .established: return .established
        case .closing: return .closing
        case .failed: return .failed
        }
    }

    /// The protocol ALPN chose, once the handshake completed (nil when none was negotiated).
    var negotiatedALPN: String? { engine.negotiatedALPN }

    /// Server side, before the ClientHello is fed: the protocols this connection accepts, in
    /// preference order, instead of its context's.
    func acceptALPN(_ protocols: [String]) throws {
        try engine.acceptALPN(protocols)
    }

    /// True once the handshake completed (even if the connection has closed since).
    var handshakeDone: Bool { establishedAt != nil }

    /// Ciphertext from the peer.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, at time: Double) -> Received {
        engine.feedNetwork(bytes)
        var received = Received()
        while let event = engine.next() {
            switch event {
            case .handshakeCompleted:
                establishedAt = time
                received.handshakeCompleted = true
            case .plaintext(let chunk):
                received.plaintext += chunk
            case .closed:
                received.closed = true
            case .failed(let error):
                received.failure = error
            }
            if received.failure != nil { break }
        }
        received.output = engine.takeNetworkOutput()
        return received
    }

    /// Plaintext for the peer, encrypted at the next `flush()`.
    mutating func write(_ plaintext: [UInt8]) {
        pendingPlaintext += plaintext
    }

    /// True when `write` gathered plaintext that `flush()` has not encrypted yet.
    var hasPendingPlaintext: Bool { !pendingPlaintext.isEmpty }

    /// Encrypts what was written since the last flush; returns the ciphertext to send (empty
    /// when there is none).
    mutating func flush() -> [UInt8] {
        if !pendingPlaintext.isEmpty {
            engine.writePlaintext(pendingPlaintext)
            pendingPlaintext.removeAll(keepingCapacity: true)
        }
        return engine.takeNetworkOutput()
    }

    /// Drops plaintext written but not yet flushed (its connection is gone).
    mutating func discardPending() {
        pendingPlaintext.removeAll(keepingCapacity: true)
    }

    /// Encrypts what is pending, then close_notify; returns the ciphertext to send.
    mutating func close() -> [UInt8] {
        if !pendingPlaintext.isEmpty {
            engine.writePlaintext(pendingPlaintext)
            pendingPlaintext.removeAll(keepingCapacity: true)
        }
        engine.close()
        return engine.takeNetworkOutput()
    }
}
