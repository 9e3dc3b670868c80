import HTTP1

/// A reverse listener: an ordinary server whose requests (origin-form, no proxy settings on the
/// client) go to fixed upstreams and are recorded under the upstreams' URLs, so fixtures match
/// production. Pure: which upstream a path goes to, and how a response's absolute references to
/// an upstream are turned back toward the listener.
public struct ReverseProxy: Sendable, Equatable {
    /// One upstream origin, and the paths that go to it.
    public struct Upstream: Sendable, Equatable, CustomStringConvertible {
        /// Requests whose path starts with this go here: "/" for every path. Paths are sent
        /// upstream as they are (the prefix is not stripped).
        public var pathPrefix: String
        /// "http" or "https".
        public var scheme: String
        public var target: ProxyTarget

        public init(pathPrefix: String = "/", scheme: String, target: ProxyTarget) {
            self.pathPrefix = pathPrefix
            self.scheme = scheme
            self.target = target
        }

        /// The scheme's default port.
        var defaultPort: UInt16 { scheme == "https" ? 443 : 80 }

        /// `https://host[:port]`, the origin recorded URLs start with.
        public var origin: String { "\(scheme)://\(target.authority(defaultPort: defaultPort))" }

        public var description: String { pathPrefix == "/" ? origin : "\(pathPrefix)=\(origin)" }

        /// Parses `URL` or `/prefix=URL`, where URL is `http[s]://host[:port]` with no path.
        public init(parsing text: String) throws(TargetError) {
            var prefix = "/"
            var url = Substring(text)
            if text.hasPrefix("/"), let equals = text.firstIndex(of: "=") {
                prefix = String(text[..<equals])
                url = text[text.index(after: equals)...]
            }
            let scheme = url.prefix { $0 != ":" }.lowercased()
            guard scheme == "http" || scheme == "https" else {
                throw .invalid("'\(text)': a reverse upstream is http://host[:port] or https://host[:port]")
            }
            let absolute = try parseAbsoluteTarget(String(url), schemes: ["http", "https"])
            guard absolute.originForm == "/", !url.contains("@"), !url.contains("#"),
                  url.hasSuffix("/") || !url.dropFirst(scheme.count + 3).contains("/") else {
                throw .invalid("'\(text)': give the upstream as scheme://host[:port] only; paths are sent as the client asks for them")
            }
            self.init(pathPrefix: prefix, scheme: scheme, target: absolute.target)
        }

        /// Whether `path` (origin-form, query included) goes here: the prefix matches whole
        /// segments, so `/auth` takes `/auth`, `/auth/x` and `/auth?x`, not `/authors`.
        func takes(_ path: String) -> Bool {
            guard pathPrefix != "/" else { return true }
            guard path.hasPrefix(pathPrefix) else { return false }
            let rest = path.utf8.dropFirst(pathPrefix.utf8.count)
            guard let next = rest.first else { return true }
            return pathPrefix.hasSuffix("/") || next == UInt8(ascii: "/") || next == UInt8(ascii: "?")
        }
    }

    /// Longest prefix first, so `/auth` wins over `/` whatever the order given.
    public private(set) var upstreams: [Upstream]
    /// Turn absolute references to an upstream in `Location` and `Set-Cookie` back toward the
    /// listener, so redirects and cookies keep working through it.
    public var rewritesBack: Bool
    /// The name on harrec's leaf for a TLS client that sends no server name (the listener's
    /// address). The listener speaks TLS to a client that starts with a ClientHello, and plain
    /// HTTP to one that does not.
    public var tlsName = "localhost"

    public init(upstreams: [Upstream], rewritesBack: Bool = true) {
        self.upstreams = upstreams.sorted { $0.pathPrefix.utf8.count > $1.pathPrefix.utf8.count }
        self.rewritesBack = rewritesBack
    }

    /// The upstream an origin-form path goes to, or nil when none takes it.
    public func upstream(forPath path: String) -> Upstream? {
        upstreams.first { $0.takes(path) }
    }

    /// The response fields toward the client: an absolute `Location` on an upstream origin that
    /// routes back to the same upstream becomes one on `listenerOrigin` (the scheme and Host the
    /// client used), and a `Set-Cookie` for an upstream's domain becomes host-only (and neither
    /// `Secure` nor `SameSite=None` when the listener is plain http, since a client would drop it
    /// there).
    /// Unchanged when `rewritesBack` is off.
    func responseFields(_ fields: HTTPFields, listenerOrigin origin: @autoclosure () -> String) -> HTTPFields {
        // Most responses have neither: they go on as they are, without a copy.
        guard rewritesBack, fields.fields.contains(where: {
            $0.name.equalsIgnoringASCIICase("Location") || $0.name.equalsIgnoringASCIICase("Set-Cookie")
        }) else { return fields }
        let listenerOrigin = origin()
        let listenerIsTLS = listenerOrigin.hasPrefix("https:")
        var out = HTTPFields()
        for field in fields.fields {
            var value = field.value
            if field.name.equalsIgnoringASCIICase("Location") {
                value = location(value, listenerOrigin: listenerOrigin)
            } else if field.name.equalsIgnoringASCIICase("Set-Cookie") {
                value = setCookie(value, listenerIsTLS: listenerIsTLS)
            }
            out.append(name: field.name, value: value)
        }
        return out
    }

    func location(_ value: String, listenerOrigin: String) -> String {
        guard let absolute = try? parseAbsoluteTarget(value, schemes: ["http", "https"]) else { return value }
        let scheme = value.prefix { $0 != ":" }.lowercased()
        guard let upstream = upstream(forPath: absolute.originForm), upstream.scheme == scheme,
              upstream.target == absolute.target else { return value }
        return listenerOrigin + absolute.originForm
    }

    func setCookie(_ value: String, listenerIsTLS: Bool) -> String {
        var attributes = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard attributes.count > 1 else { return value }
        let hosts = Set(upstreams.map(\.target.host))
        var changed = false
        attributes = [attributes[0]] + attributes.dropFirst().filter { attribute in
            let trimmed = attribute.drop { $0 == " " || $0 == "\t" }
            let name = trimmed.prefix { $0 != "=" }.trimmingSpaces().lowercased()
            if name == "domain" {
                var domain = trimmed.drop { $0 != "=" }.dropFirst().trimmingSpaces().lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                // Domain=example.com covers api.example.com: drop it when it covers an upstream.
                if hosts.contains(where: { $0 == domain || $0.hasSuffix("." + domain) }) { changed = true; return false }
            } else if (name == "secure" || (name == "samesite" && trimmed.lowercased().hasSuffix("none"))) && !listenerIsTLS {
                // Browsers refuse SameSite=None without Secure: both go on a plain listener.
                changed = true
                return false
            }
            return true
        }
        return changed ? attributes.joined(separator: ";") : value
    }
}

private extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
