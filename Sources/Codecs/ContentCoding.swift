// Content-Encoding names (RFC 9110 §8.4) and the decoding entry point.

/// A content coding harrec can decode.
public enum ContentCoding: String, Sendable, CaseIterable {
    /// RFC 1952 gzip (also registered as `x-gzip`).
    case gzip
    /// RFC 1950 zlib-wrapped DEFLATE; raw RFC 1951 DEFLATE is accepted too (servers send both).
    case deflate
    /// RFC 7932 Brotli.
    case br
    /// RFC 8878 Zstandard.
    case zstd
    /// No transformation.
    case identity

    /// Looks up one coding token, case-insensitively; `x-gzip` is `gzip` (RFC 9110 §8.4.1.3).
    public init?(token: String) {
        switch token.lowercased() {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        case "br": self = .br
        case "zstd": self = .zstd
        case "identity": self = .identity
        default: return nil
        }
    }
}

/// Parses a `Content-Encoding` field value into codings in the order they were applied.
///
/// `Content-Encoding = #content-coding` (RFC 9110 §8.4): comma-separated tokens with optional
/// whitespace; empty list elements are ignored (RFC 9110 §5.6.1). `"br, gzip"` means Brotli was
/// applied first, then gzip. Returns `nil` if any coding is unknown (e.g. `compress`), so the
/// caller keeps the body encoded. An empty or all-whitespace value gives `[]`.
public func parseContentEncoding(_ headerValue: String) -> [ContentCoding]? {
    var result: [ContentCoding] = []
    for element in headerValue.split(separator: ",", omittingEmptySubsequences: false) {
        let token = element.trimmingOWS()
        if token.isEmpty { continue }
        guard let coding = ContentCoding(token: String(token)) else { return nil }
        result.append(coding)
    }
    return result
}

/// Why decoding failed.
public struct ContentDecodingError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The failure class, for callers that react differently (e.g. keep the raw body).
    public enum Kind: Sendable, Equatable {
        /// The input ended before the compressed stream did.
        case truncated
        /// The input is not valid for the coding (bad header, checksum, trailing garbage...).
        case corrupt
        /// The decoded output would exceed the caller's limit (decompression-bomb guard).
        case limitExceeded
        /// The library could not be set up (out of memory, bad parameters).
        case setup
    }

    /// What went wrong.
    public var kind: Kind
    /// One-line, printable explanation.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// One-shot decoding of a whole body.
public enum ContentDecoder {
    /// Decodes `data`, undoing `codings` in reverse order of application (`identity` is skipped).
    ///
    /// Throws ``ContentDecodingError`` when the data is corrupt or truncated, or when any stage's
    /// output would exceed `limit` bytes (the error says so; this is the zip-bomb guard). Output is
    /// produced in fixed-size chunks; sizes declared inside the data are never trusted. An empty
    /// input decodes to an empty output for every coding: servers routinely send
    /// `Content-Encoding: gzip` on empty 204/304 bodies.
    public static func decode(_ data: [UInt8], codings: [ContentCoding], limit: Int) throws -> [UInt8] {
        let limit = max(0, limit)
        var current = data
        for coding in codings.reversed() {
            switch coding {
            case .identity:
                continue
            case .gzip:
                current = try WholeBufferGzip.decode(current, limit: limit)
                    ?? ZlibDecoding.decode(current, format: .gzip, limit: limit)
            case .deflate:
                current = try ZlibDecoding.decodeDeflate(current, limit: limit)
            case .br:
                current = try BrotliDecoding.decode(current, limit: limit)
            case .zstd:
                current = try ZstdDecoding.decode(current, limit: limit)
            }
        }
        if current.count > limit {
            throw ContentDecodingError.limit(limit)
        }
        return current
    }
}

extension ContentDecodingError {
    static func limit(_ limit: Int) -> ContentDecodingError {
        ContentDecodingError(.limitExceeded, "decoded body exceeds the limit of \(limit) bytes (possible decompression bomb)")
    }
}

/// Size of each output chunk handed to the C decoders. 64 KiB keeps the overshoot past the limit
/// (what is in flight when we stop) small while needing few calls for ordinary bodies.
let decodeChunkSize = 64 * 1024

/// Appends decoded chunks and enforces the output limit before growing.
struct BoundedOutput {
    let limit: Int
    private(set) var bytes: [UInt8] = []

    init(limit: Int) { self.limit = limit }

    mutating func append(_ chunk: UnsafeBufferPointer<UInt8>) throws {
        guard chunk.count <= limit - bytes.count else { throw ContentDecodingError.limit(limit) }
        bytes.append(contentsOf: chunk)
    }
}

/// Library error text made safe for a one-line message.
func sanitizedCString(_ p: UnsafePointer<CChar>?) -> String {
    guard let p else { return "unknown error" }
    let s = String(cString: p)
    return String(s.unicodeScalars.map { ($0.value >= 0x20 && $0.value < 0x7F) ? Character($0) : "?" })
}

extension Substring {
    /// Strips RFC 9110 OWS (spaces and tabs) from both ends.
    func trimmingOWS() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
