/// Resource limits applied by the decoders. Every limit bounds memory a peer can make us hold
/// before we have understood the message.
public struct HTTP1Limits: Sendable {
    /// Largest head (start line + field lines + final CRLF). Other implementations: Apache 8 KiB per
    /// field line, nginx 4×8 KiB buffers, node 16 KiB, h11 16 KiB, Tomcat 8 KiB, Go 1 MiB. A recording
    /// proxy should not reject what real servers accept (large cookie and JWT headers), so we take
    /// the generous end of the common range: 64 KiB.
    public var maxHeadBytes = 64 * 1024
    /// Most field lines in one head (and in one trailer section). Apache's LimitRequestFields is
    /// 100 and real browsers send 10–30; 256 leaves room for chatty APIs while bounding the number
    /// of per-field allocations a peer can cause per head.
    public var maxFieldCount = 256
    /// Most chunk-extension bytes on one chunk-size line. Extensions are unused in practice; hyper
    /// caps them at 16 KiB in total to stop "endless extension" slowloris, we do the same per line.
    public var maxChunkExtensionBytes = 16 * 1024
    /// Largest trailer section (after the last chunk). hyper uses 16 KiB; trailers are rare and
    /// small (gRPC status, checksums).
    public var maxTrailerBytes = 16 * 1024
    /// Empty lines (CRLF) ignored before a request line. RFC 9112 §2.2 says a server SHOULD ignore
    /// at least one (old clients sent an extra CRLF after a POST body); more is not a real client.
    public var maxLeadingEmptyLines = 8

    /// Creates the default limits.
    public init() {}

    /// The defaults documented on each property.
    public static let `default` = HTTP1Limits()
}
