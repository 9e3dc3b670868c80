// Sans-IO sniffing of a TLS ClientHello (RFC 8446 §4.1.2, RFC 5246 §7.4.1.2): record type, SNI,
// ALPN, supported_versions. Pure Swift, no OpenSSL. The parser only peeks: the proxy keeps the
// bytes and forwards or replays them to whichever layer it picks.
//
//   struct {
//       ContentType type;                 // 22 = handshake
//       ProtocolVersion legacy_record_version;
//       uint16 length;                    // <= 2^14
//       opaque fragment[TLSPlaintext.length];
//   } TLSPlaintext;
//
//   struct {
//       ProtocolVersion legacy_version = 0x0303;
//       Random random;                    // 32 bytes
//       opaque legacy_session_id<0..32>;
//       CipherSuite cipher_suites<2..2^16-2>;
//       opaque legacy_compression_methods<1..2^8-1>;
//       Extension extensions<8..2^16-1>;  // absent in some TLS 1.0-1.2 hellos
//   } ClientHello;

/// What the sniffer learned from a complete ClientHello.
public struct ClientHelloInfo: Equatable, Sendable {
    /// `legacy_record_version` of the first record (0x0301 for most clients).
    public var recordVersion: UInt16
    /// `legacy_version` of the ClientHello (0x0303 for TLS 1.2 and 1.3 clients).
    public var legacyVersion: UInt16
    /// The `server_name` extension's host_name entry, as sent (ASCII), or nil when absent.
    public var serverName: String?
    /// The ALPN protocol names in the client's order; empty when the extension is absent.
    /// Names that are not printable ASCII are given as `0x` followed by hex.
    public var alpnProtocols: [String]
    /// The `supported_versions` list (0x0304 = TLS 1.3), GREASE values included; empty when absent.
    public var supportedVersions: [UInt16]
    /// The offered cipher suites, in order.
    public var cipherSuites: [UInt16]
    /// Extension types in the order sent.
    public var extensionTypes: [UInt16]
    /// How many bytes of the stream the ClientHello's records take (record headers included).
    public var recordBytes: Int

    /// True when the client offers TLS 1.3 in `supported_versions`.
    public var offersTLS13: Bool { supportedVersions.contains(0x0304) }
}

/// The outcome of sniffing the first bytes of a connection.
public enum ClientHelloParseResult: Equatable, Sendable {
    /// The bytes so far are a valid prefix of a TLS ClientHello; feed more.
    case needMoreData
    /// A complete, well-formed ClientHello.
    case clientHello(ClientHelloInfo)
    /// The stream does not start with a TLS handshake record (plain HTTP, SOCKS, SSLv2, ...).
    case notTLS(String)
    /// The stream starts like TLS but the ClientHello is malformed or over a limit.
    case invalid(String)
}

/// Sniffs a TLS ClientHello from the first bytes of a connection, across any TCP segmentation
/// and any number of TLS records. `feed` buffers; `parse` is a pure function of a byte prefix.
public struct ClientHelloParser: Sendable {
    /// Largest ClientHello handshake body accepted. Real hellos are 200–2000 bytes; post-quantum
    /// key shares bring them to ~1.8 KiB, and 64 KiB leaves room for huge PSK lists while capping
    /// what one connection can make the proxy buffer before it decides what the stream is.
    public static let maximumClientHelloLength = 65_536
    /// TLSPlaintext.length must not exceed 2^14 (RFC 8446 §5.1); a ClientHello is never encrypted.
    public static let maximumRecordLength = 16_384
    /// Handshake record content type (RFC 8446 §5.1).
    static let handshakeContentType: UInt8 = 22
    /// HandshakeType client_hello (RFC 8446 §4).
    static let clientHelloType: UInt8 = 1
    /// Longest DNS name (RFC 1035 §3.1, 253 characters written without the trailing dot, plus room for it).
    static let maximumServerNameLength = 255

    private(set) var buffer: [UInt8] = []
    private var minimumNeeded = 1
    private var finalResult: ClientHelloParseResult?

    public init() {}

    /// The bytes fed so far, unchanged (the proxy replays these to the chosen layer).
    public var bufferedBytes: [UInt8] { buffer }

    /// Appends bytes and parses the buffer. Once a final result is reached it is returned again
    /// for any further bytes (which are then not buffered: stop feeding at a verdict).
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> ClientHelloParseResult where Bytes.Element == UInt8 {
        if let finalResult { return finalResult }
        buffer.append(contentsOf: bytes)
        if buffer.count < minimumNeeded { return .needMoreData }
        let (result, needed) = Self.parse(buffer[...])
        if case .needMoreData = result {
            minimumNeeded = max(needed, buffer.count + 1)
        } else {
            finalResult = result
        }
        return result
    }

    /// Parses a prefix of a connection's bytes without consuming them.
    public static func parse(_ bytes: [UInt8]) -> ClientHelloParseResult {
        parse(bytes[...]).result
    }

    /// Returns the result and, for `.needMoreData`, the total number of bytes required before
    /// another parse can make progress.
    static func parse(_ bytes: ArraySlice<UInt8>) -> (result: ClientHelloParseResult, needed: Int) {
        var handshake: [UInt8] = []
        var position = bytes.startIndex
        var recordVersion: UInt16 = 0
        var handshakeTotal: Int? = nil  // 4 + body length, once the header is known
        var recordIndex = 0

        while true {
            // Record header.
            let available = bytes.endIndex - position
            if recordIndex == 0 {
                if available >= 1, bytes[position] != handshakeContentType {
                    return (.notTLS("first byte \(hex8(bytes[position])) is not a TLS handshake record"), 0)
                }
                if available >= 2, bytes[position + 1] != 3 {
                    return (.notTLS("record version major \(hex8(bytes[position + 1])) is not 3"), 0)
                }
            }
            if available < 5 {
                return (.needMoreData, (position - bytes.startIndex) + 5)
            }
            let type = bytes[position]
            let version = UInt16(bytes[position + 1]) << 8 | UInt16(bytes[position + 2])
            let length = Int(bytes[position + 3]) << 8 | Int(bytes[position + 4])
            if type != handshakeContentType {
                return (.invalid("record \(recordIndex + 1) has content type \(type) inside the ClientHello"), 0)
            }
            if version >> 8 != 3 || version & 0xFF > 4 {
                return (.invalid("record version \(hex16(version)) is not TLS"), 0)
            }
            if recordIndex == 0 { recordVersion = version }
            if length == 0 {
                return (.invalid("zero-length handshake record"), 0)
            }
            if length > maximumRecordLength {
                return (.invalid("record length \(length) exceeds \(maximumRecordLength)"), 0)
            }
            let fragmentStart = position + 5
            let inRecord = min(length, bytes.endIndex - fragmentStart)
            handshake.append(contentsOf: bytes[fragmentStart..<(fragmentStart + inRecord)])
            if let first = handshake.first, first != clientHelloType {
                return (.invalid("first handshake message has type \(first), not client_hello"), 0)
            }
            if handshakeTotal == nil, handshake.count >= 4 {
                let bodyLength = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
                if bodyLength > maximumClientHelloLength {
                    return (.invalid("ClientHello length \(bodyLength) exceeds \(maximumClientHelloLength)"), 0)
                }
                handshakeTotal = 4 + bodyLength
            }
            if let total = handshakeTotal, handshake.count - inRecord + length > total {
                return (.invalid("record carries data after the ClientHello"), 0)
            }
            if inRecord < length {
                return (.needMoreData, (fragmentStart - bytes.startIndex) + length)
            }
            position = fragmentStart + length
            recordIndex += 1
            if let total = handshakeTotal, handshake.count == total {
                let recordBytes = position - bytes.startIndex
                do {
                    var info = try parseBody(handshake[4...])
                    info.recordVersion = recordVersion
                    info.recordBytes = recordBytes
                    return (.clientHello(info), 0)
                } catch let error as HelloError {
                    return (.invalid(error.reason), 0)
                } catch {
                    return (.invalid("malformed ClientHello"), 0)
                }
            }
        }
    }

    private struct HelloError: Error { var reason: String }

    /// A bounds-checked reader over the handshake body.
    private struct Reader {
        var bytes: ArraySlice<UInt8>
        var what: String

        var isEmpty: Bool { bytes.isEmpty }

        mutating func u8() throws -> UInt8 {
            guard let byte = bytes.first else { throw HelloError(reason: "\(what) is truncated") }
            bytes = bytes.dropFirst()
            return byte
        }
        mutating func u16() throws -> UInt16 {
            let high = try u8()
            return UInt16(high) << 8 | UInt16(try u8())
        }
        mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard count <= bytes.count else { throw HelloError(reason: "\(what) is truncated") }
            let part = bytes.prefix(count)
            bytes = bytes.dropFirst(count)
            return part
        }
        /// A vector with a one-byte length prefix.
        mutating func vector8(_ name: String) throws -> Reader {
            Reader(bytes: try take(Int(try u8())), what: name)
        }
        /// A vector with a two-byte length prefix.
        mutating func vector16(_ name: String) throws -> Reader {
            Reader(bytes: try take(Int(try u16())), what: name)
        }
        func expectEnd() throws {
            if !bytes.isEmpty { throw HelloError(reason: "\(bytes.count) trailing bytes in \(what)") }
        }
    }

    private static func parseBody(_ body: ArraySlice<UInt8>) throws -> ClientHelloInfo {
        var reader = Reader(bytes: body, what: "ClientHello")
        let legacyVersion = try reader.u16()
        if legacyVersion >> 8 != 3 {
            throw HelloError(reason: "ClientHello version \(hex16(legacyVersion)) is not TLS")
        }
        _ = try reader.take(32)  // random
        let sessionID = try reader.vector8("session id")
        if sessionID.bytes.count > 32 {
            throw HelloError(reason: "session id length \(sessionID.bytes.count) exceeds 32")
        }
        var suites = try reader.vector16("cipher suites")
        if suites.bytes.isEmpty || suites.bytes.count % 2 != 0 {
            throw HelloError(reason: "cipher suites length \(suites.bytes.count) is not a positive even number")
        }
        var cipherSuites: [UInt16] = []
        while !suites.isEmpty { cipherSuites.append(try suites.u16()) }
        let compression = try reader.vector8("compression methods")
        if compression.bytes.isEmpty {
            throw HelloError(reason: "no compression methods")
        }
        var info = ClientHelloInfo(
            recordVersion: 0, legacyVersion: legacyVersion, serverName: nil, alpnProtocols: [],
            supportedVersions: [], cipherSuites: cipherSuites, extensionTypes: [], recordBytes: 0)
        if reader.isEmpty { return info }  // no extensions (allowed before TLS 1.3)

        var extensions = try reader.vector16("extensions")
        try reader.expectEnd()
        var seen = Set<UInt16>()
        while !extensions.isEmpty {
            let type = try extensions.u16()
            var data = try extensions.vector16("extension \(type)")
            if !seen.insert(type).inserted {
                throw HelloError(reason: "duplicate extension \(type)")  // RFC 8446 §4.2
            }
            info.extensionTypes.append(type)
            switch type {
            case 0: info.serverName = try parseServerName(&data)
            case 16: info.alpnProtocols = try parseALPN(&data)
            case 43: info.supportedVersions = try parseSupportedVersions(&data)
            default: break
            }
        }
        return info
    }

    /// RFC 6066 §3: ServerNameList; only host_name (0) is defined, at most one per type.
    private static func parseServerName(_ data: inout Reader) throws -> String? {
        if data.isEmpty { return nil }  // servers echo an empty extension; tolerate it from clients
        var list = try data.vector16("server_name list")
        try data.expectEnd()
        if list.isEmpty { throw HelloError(reason: "empty server_name list") }
        var hostName: String? = nil
        while !list.isEmpty {
            let nameType = try list.u8()
            let name = try list.vector16("server name")
            guard nameType == 0 else { continue }  // unknown name types are skipped
            if hostName != nil { throw HelloError(reason: "more than one host_name in server_name") }
            let bytes = name.bytes
            if bytes.isEmpty { throw HelloError(reason: "empty host_name in server_name") }
            if bytes.count > maximumServerNameLength {
                throw HelloError(reason: "host_name length \(bytes.count) exceeds \(maximumServerNameLength)")
            }
            for byte in bytes where !isHostNameByte(byte) {
                throw HelloError(reason: "host_name contains byte \(hex8(byte))")
            }
            hostName = String(decoding: bytes, as: UTF8.self)
        }
        return hostName
    }

    /// Letters, digits, '-', '.', '_' (seen in real names) are allowed; anything else (including
    /// control characters, spaces, ':' and '/') makes the hello invalid.
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// RFC 7301 §3.1: ProtocolNameList protocol_name_list<2..2^16-1>, ProtocolName <1..2^8-1>.
    private static func parseALPN(_ data: inout Reader) throws -> [String] {
        var list = try data.vector16("ALPN list")
        try data.expectEnd()
        if list.isEmpty { throw HelloError(reason: "empty ALPN list") }
        var names: [String] = []
        while !list.isEmpty {
            let name = try list.vector8("ALPN protocol name").bytes
            if name.isEmpty { throw HelloError(reason: "empty ALPN protocol name") }
            if name.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) {
                names.append(String(decoding: name, as: UTF8.self))
            } else {
                names.append("0x" + name.map { hexDigits($0) }.joined())
            }
        }
        return names
    }

    /// RFC 8446 §4.2.1: ProtocolVersion versions<2..254> in a ClientHello.
    private static func parseSupportedVersions(_ data: inout Reader) throws -> [UInt16] {
        var list = try data.vector8("supported_versions")
        try data.expectEnd()
        if list.bytes.isEmpty || list.bytes.count % 2 != 0 {
            throw HelloError(reason: "supported_versions length \(list.bytes.count) is not a positive even number")
        }
        var versions: [UInt16] = []
        while !list.isEmpty { versions.append(try list.u16()) }
        return versions
    }
}

private func hexDigits(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}

private func hex8(_ byte: UInt8) -> String { "0x" + hexDigits(byte) }

private func hex16(_ value: UInt16) -> String {
    "0x" + hexDigits(UInt8(value >> 8)) + hexDigits(UInt8(value & 0xFF))
}
