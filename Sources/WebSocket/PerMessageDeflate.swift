// permessage-deflate (RFC 7692) parameters as agreed in the 101 response.

/// Why a `Sec-WebSocket-Extensions` value could not be used.
public struct PerMessageDeflateError: Error, CustomStringConvertible, Equatable, Sendable {
    /// One printable line.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// The permessage-deflate parameters a server accepted (RFC 7692 §7.1).
///
/// "client_*" parameters govern what the client compresses (client to server), "server_*" what
/// the server compresses. A decoder only needs the sender's side: its context takeover and its
/// LZ77 window.
public struct PerMessageDeflate: Equatable, Sendable {
    /// The client resets its compression context after every message.
    public var clientNoContextTakeover: Bool
    /// The server resets its compression context after every message.
    public var serverNoContextTakeover: Bool
    /// The client's LZ77 window, 8...15 bits (15 when not negotiated).
    public var clientMaxWindowBits: Int
    /// The server's LZ77 window, 8...15 bits (15 when not negotiated).
    public var serverMaxWindowBits: Int

    /// Creates parameters directly (tests, or a caller that negotiated itself). Window bits are
    /// clamped to 8...15.
    public init(clientNoContextTakeover: Bool = false, serverNoContextTakeover: Bool = false,
                clientMaxWindowBits: Int = 15, serverMaxWindowBits: Int = 15) {
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientMaxWindowBits = min(15, max(8, clientMaxWindowBits))
        self.serverMaxWindowBits = min(15, max(8, serverMaxWindowBits))
    }

    /// Whether the sender in `direction` resets its context after each message.
    public func noContextTakeover(for direction: WebSocketDirection) -> Bool {
        direction == .clientToServer ? clientNoContextTakeover : serverNoContextTakeover
    }

    /// The inflate window for messages sent in `direction`: the sender's max_window_bits, with
    /// 8 raised to 9. zlib cannot compress raw DEFLATE with an 8-bit window and uses 9 when asked
    /// (RFC 7692 §7.1.2.1 notes the issue); a larger decoder window is always safe.
    public func inflateWindowBits(for direction: WebSocketDirection) -> Int {
        max(9, direction == .clientToServer ? clientMaxWindowBits : serverMaxWindowBits)
    }

    /// Reads the `Sec-WebSocket-Extensions` value of a 101 response (several field lines joined
    /// with ", ").
    ///
    /// Returns nil when permessage-deflate is not among the extensions (other extensions are
    /// ignored). Throws when it is present but malformed, since the messages could then not be
    /// decoded reliably. Grammar (RFC 6455 §9.1, RFC 7692 §7):
    /// ```
    /// Sec-WebSocket-Extensions = extension-list
    /// extension-list = 1#extension
    /// extension = extension-token *( ";" extension-param )
    /// extension-param = token [ "=" (token | quoted-string) ]
    /// ```
    /// Checks: a server selects permessage-deflate at most once; each parameter at most once;
    /// unknown parameters, values on the no_context_takeover flags, and max_window_bits values
    /// other than a decimal 8...15 are errors (RFC 7692 §7.1). Leniencies (named): names compare
    /// case-insensitively, empty list elements are skipped, and `client_max_window_bits` without
    /// a value (only legal in an offer) is taken as 15.
    public init?(extensionHeader: String) throws(PerMessageDeflateError) {
        let extensions = try ExtensionListParser.parse(Array(extensionHeader.utf8))
        let matches = extensions.filter { $0.name == "permessage-deflate" }
        guard let agreed = matches.first else { return nil }
        guard matches.count == 1 else {
            throw PerMessageDeflateError("permessage-deflate: accepted \(matches.count) times in one response")
        }
        self.init()
        var seen: Set<String> = []
        for (name, value) in agreed.params {
            guard seen.insert(name).inserted else {
                throw PerMessageDeflateError("permessage-deflate: parameter \(name) appears twice")
            }
            switch name {
            case "client_no_context_takeover", "server_no_context_takeover":
                if let value {
                    throw PerMessageDeflateError("permessage-deflate: \(name) takes no value (got \"\(printable(value.utf8))\")")
                }
                if name == "client_no_context_takeover" { clientNoContextTakeover = true } else { serverNoContextTakeover = true }
            case "client_max_window_bits", "server_max_window_bits":
                let bits: Int
                if let value {
                    guard let parsed = Self.windowBits(value) else {
                        throw PerMessageDeflateError("permessage-deflate: \(name) must be 8...15 (got \"\(printable(value.utf8))\")")
                    }
                    bits = parsed
                } else if name == "client_max_window_bits" {
                    bits = 15
                } else {
                    throw PerMessageDeflateError("permessage-deflate: server_max_window_bits needs a value")
                }
                if name == "client_max_window_bits" { clientMaxWindowBits = bits } else { serverMaxWindowBits = bits }
            default:
                throw PerMessageDeflateError("permessage-deflate: unknown parameter \(printable(name.utf8))")
            }
        }
    }

    /// `1*DIGIT` without a leading zero, 8...15.
    static func windowBits(_ value: String) -> Int? {
        let digits = Array(value.utf8)
        guard (1...2).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              digits[0] != 0x30 else { return nil }
        let n = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return (8...15).contains(n) ? n : nil
    }
}

/// A small parser for `extension-list`.
enum ExtensionListParser {
    struct Extension {
        var name: String
        var params: [(String, String?)]
    }

    private static func isTChar(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    static func parse(_ s: [UInt8]) throws(PerMessageDeflateError) -> [Extension] {
        var i = 0
        func skipOWS() { while i < s.count && (s[i] == 0x20 || s[i] == 0x09) { i += 1 } }
        func token(_ what: String) throws(PerMessageDeflateError) -> String {
            let start = i
            while i < s.count && isTChar(s[i]) { i += 1 }
            guard i > start else {
                let found = i < s.count ? "\"\(printable([s[i]]))\"" : "end of value"
                throw PerMessageDeflateError("Sec-WebSocket-Extensions: expected \(what) at offset \(i), found \(found)")
            }
            return String(decoding: s[start..<i], as: UTF8.self).lowercased()
        }
        func quoted() throws(PerMessageDeflateError) -> String {
            i += 1  // opening quote
            var out: [UInt8] = []
            while i < s.count {
                let b = s[i]
                if b == 0x22 { i += 1; return String(decoding: out, as: UTF8.self) }
                if b == 0x5C {
                    i += 1
                    guard i < s.count else { break }
                }
                out.append(s[i])
                i += 1
            }
            throw PerMessageDeflateError("Sec-WebSocket-Extensions: unterminated quoted-string")
        }

        var result: [Extension] = []
        while true {
            skipOWS()
            if i == s.count { break }
            if s[i] == UInt8(ascii: ",") { i += 1; continue }  // empty element
            var ext = Extension(name: try token("an extension name"), params: [])
            skipOWS()
            while i < s.count && s[i] == UInt8(ascii: ";") {
                i += 1
                skipOWS()
                let name = try token("a parameter name")
                skipOWS()
                var value: String?
                if i < s.count && s[i] == UInt8(ascii: "=") {
                    i += 1
                    skipOWS()
                    value = i < s.count && s[i] == 0x22 ? try quoted() : try token("a parameter value")
                    skipOWS()
                }
                ext.params.append((name, value))
            }
            result.append(ext)
            if i == s.count { break }
            guard s[i] == UInt8(ascii: ",") else {
                throw PerMessageDeflateError("Sec-WebSocket-Extensions: unexpected \"\(printable([s[i]]))\" at offset \(i)")
            }
            i += 1
        }
        return result
    }
}
