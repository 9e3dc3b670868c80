/// An HTTP protocol version as written on the wire: `HTTP-version = HTTP-name "/" DIGIT "." DIGIT`
/// (RFC 9112 §2.3). The decoders accept only HTTP/1.0 and HTTP/1.1.
public struct HTTPVersion: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// Creates a version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// `HTTP/1.0`.
    public static let http10 = HTTPVersion(major: 1, minor: 0)
    /// `HTTP/1.1`.
    public static let http11 = HTTPVersion(major: 1, minor: 1)

    /// The wire form, for example `HTTP/1.1`.
    public var description: String { "HTTP/\(major).\(minor)" }

    /// True for HTTP/1.1 and any later version (persistent connections by default).
    var defaultsToKeepAlive: Bool { major > 1 || (major == 1 && minor >= 1) }
}
