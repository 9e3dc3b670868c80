/// One field line: `field-line = field-name ":" OWS field-value OWS` (RFC 9112 §5).
public struct HTTPField: Equatable, Sendable {
    /// The field name as received (case preserved).
    public var name: String
    /// The field value without surrounding whitespace.
    public var value: String
    /// True when the wire bytes were not valid UTF-8 and were decoded as ISO-8859-1; the
    /// serializer then writes each scalar as one byte so forwarding is byte-exact.
    public var valueIsLatin1: Bool

    /// Creates a field.
    public init(name: String, value: String, valueIsLatin1: Bool = false) {
        self.name = name
        self.value = value
        self.valueIsLatin1 = valueIsLatin1
    }
}

/// An ordered list of fields in wire order, duplicates kept. Name lookups are ASCII
/// case-insensitive (RFC 9110 §5.1).
public struct HTTPFields: Sequence, Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// The fields in wire order.
    public var fields: [HTTPField]

    /// Creates a list from fields in order.
    public init(_ fields: [HTTPField] = []) {
        self.fields = fields
    }

    /// Creates a list from a literal; the literal's order is kept.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { HTTPField(name: $0.0, value: $0.1) }
    }

    /// Iterates the fields in wire order.
    public func makeIterator() -> IndexingIterator<[HTTPField]> {
        fields.makeIterator()
    }

    /// The value of the first field called `name` (ASCII case-insensitive), if any.
    public subscript(name: String) -> String? {
        fields.first(where: { asciiCaseInsensitiveEquals($0.name, name) })?.value
    }

    /// Values of all fields called `name`, in wire order.
    public func values(_ name: String) -> [String] {
        fields.filter { asciiCaseInsensitiveEquals($0.name, name) }.map(\.value)
    }

    /// True when at least one field is called `name`.
    public func contains(_ name: String) -> Bool {
        fields.contains(where: { asciiCaseInsensitiveEquals($0.name, name) })
    }

    /// Appends a field at the end.
    public mutating func append(name: String, value: String) {
        fields.append(HTTPField(name: name, value: value))
    }

    /// Appends a field at the end.
    public mutating func append(_ field: HTTPField) {
        fields.append(field)
    }

    /// Removes every field called `name`.
    public mutating func removeAll(named name: String) {
        fields.removeAll(where: { asciiCaseInsensitiveEquals($0.name, name) })
    }

    /// Number of fields.
    public var count: Int { fields.count }

    /// True when there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// Tokens of all Connection headers, lowercased, empty list elements dropped.
    /// `Connection = [ connection-option *( OWS "," OWS connection-option ) ]` (RFC 9110 §7.6.1)
    public var connectionTokens: [String] {
        var tokens: [String] = []
        for field in fields where asciiCaseInsensitiveEquals(field.name, "connection") {
            // One pass over the value: lowercase each comma-separated element, trim SP/HTAB.
            var token: [UInt8] = []
            func flush() {
                while let last = token.last, isWhitespace(last) { token.removeLast() }
                if !token.isEmpty { tokens.append(String(decoding: token, as: UTF8.self)) }
                token.removeAll(keepingCapacity: true)
            }
            for byte in field.value.utf8 {
                if byte == UInt8(ascii: ",") {
                    flush()
                } else if !(token.isEmpty && isWhitespace(byte)) {
                    token.append(asciiLowercased(byte))
                }
            }
            flush()
        }
        return tokens
    }

    /// Names (lowercase) that are hop-by-hop by definition (RFC 9110 §7.6.1, RFC 9112 §6.1,
    /// RFC 9110 §11.7.1/§11.7.2 for the proxy credentials, and the legacy Proxy-Connection/Keep-Alive).
    /// An array: names are compared ignoring case, never hashed.
    static let hopByHopNames: [String] = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authorization", "proxy-authenticate",
        // RFC 9113 §3.1 / RFC 7540 §3.2.1: only meaningful for an h2c upgrade on one connection.
        "http2-settings",
    ]

    /// Fields a Connection option may never remove. Deliberate deviation from RFC 9110 §7.6.1:
    /// "Connection: content-length" or "Connection: host" is a known trick to make a proxy strip
    /// framing or routing information and desynchronize the next hop, so those two always survive.
    static let protectedFromConnectionOptions: Set<String> = ["content-length", "host"]

    /// A copy without hop-by-hop fields: Connection and every field it names, Proxy-Connection,
    /// Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade (kept when `keepUpgrade` is true; the
    /// caller then re-adds "Connection: upgrade"), Proxy-Authorization, Proxy-Authenticate.
    /// Content-Length and Host are never removed because Connection names them (see
    /// `protectedFromConnectionOptions`).
    public func removingHopByHop(keepUpgrade: Bool = false) -> HTTPFields {
        // Runs twice per proxied exchange, so it allocates nothing in the common case: a name is
        // compared (ignoring case, no lowercased copy, no hashing) only with the candidates of its
        // own length, and a message with nothing to remove is returned as is.
        var named: [String] = []
        var namedLengths: UInt64 = 0
        var namedLong = false
        for token in connectionTokens where !Self.protectedFromConnectionOptions.contains(token) {
            named.append(token)
            let length = token.utf8.count
            if length < 64 { namedLengths |= 1 << UInt64(length) } else { namedLong = true }
        }
        let candidateLengths = Self.hopByHopNameLengths | namedLengths
        var out: [HTTPField]?
        for (index, field) in fields.enumerated() {
            let length = field.name.utf8.count
            var remove = false
            if length < 64 ? candidateLengths & (1 << UInt64(length)) != 0 : namedLong {
                if !(keepUpgrade && asciiCaseInsensitiveEquals(field.name, "upgrade")) {
                    // asciiCaseInsensitiveEquals compares lengths first.
                    remove = Self.hopByHopNames.contains { asciiCaseInsensitiveEquals(field.name, $0) }
                        || named.contains { asciiCaseInsensitiveEquals(field.name, $0) }
                }
            }
            if remove {
                if out == nil {
                    out = Array(fields[..<index])
                    out!.reserveCapacity(fields.count)
                }
            } else {
                out?.append(field)
            }
        }
        return out.map(HTTPFields.init) ?? self
    }

    /// Bit n set when some hop-by-hop name is n bytes long.
    static let hopByHopNameLengths: UInt64 = hopByHopNames.reduce(0) { $0 | (1 << UInt64($1.utf8.count)) }
}
