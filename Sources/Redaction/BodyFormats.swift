import HAR
import TextEncodings

// Body formats beyond JSON: server-sent events, JSON lines, multipart, binary bodies (scanned for
// printable runs, every replacement the same length), and values that are base64 of text.

/// A value that is entirely base64 (or base64url) of UTF-8 text: `eyJ1c2VyIjoi...` in a header,
/// a cookie or a JSON field. Its text is redacted and encoded back in the same alphabet.
struct Base64View {
    var text: [UInt8]
    var urlSafe: Bool
    var padded: Bool

    /// Shortest value decoded: shorter base64 is mostly ids and words.
    static let minimumLength = 16

    static func decode(_ p: UnsafeBufferPointer<UInt8>) -> Base64View? {
        guard p.count >= minimumLength, p.count <= 16 << 20 else { return nil }
        var urlSafe = false, standard = false
        var padding = 0
        var upper = false, lower = false
        for b in p {
            if b >= 0x41 && b <= 0x5A { upper = true } else if b >= 0x61 && b <= 0x7A { lower = true }
            if padding > 0 {
                guard b == 0x3D, padding < 2 else { return nil }
                padding += 1
                continue
            }
            if RedactionEngine.isAlnum(b) { continue }
            switch b {
            case 0x2B, 0x2F: standard = true
            case 0x2D, 0x5F: urlSafe = true
            case 0x3D: padding = 1
            default: return nil
            }
        }
        // Base64 of 12 or more bytes of text has both cases; ids and hex digests do not.
        guard upper && lower, !(urlSafe && standard), (p.count - padding) % 4 != 1 else { return nil }
        guard let bytes = Base64URL.decode(p), bytes.count >= 8, isText(bytes) else { return nil }
        return Base64View(text: bytes, urlSafe: urlSafe, padded: padding > 0 || (!urlSafe && p.count % 4 == 0))
    }

    /// Valid UTF-8 with no control characters but tab and newlines: text, not binary that
    /// happens to decode.
    static func isText(_ bytes: [UInt8]) -> Bool {
        for b in bytes where b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D || b == 0x7F { return false }
        return String(validating: bytes, as: UTF8.self) != nil
    }
}

extension RedactionEngine {
    /// The words of `p` that are base64 of text holding something to redact, in order, each with
    /// its replacement (its text redacted, to be encoded back in the same alphabet). A word is a
    /// run of the base64 alphabets with its padding, between other bytes.
    func redactedBase64Words(_ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String,
                             nestingLevel: Int) -> [(range: Range<Int>, replacement: [UInt8])] {
        var words: [(range: Range<Int>, replacement: [UInt8])] = []
        var i = 0
        while i < p.count {
            guard Self.isBase64Byte(p[i]) else { i += 1; continue }
            var end = i
            while end < p.count && Self.isBase64Byte(p[end]) { end += 1 }
            let text = end
            while end < p.count && p[end] == 0x3D && end - text < 2 { end += 1 }
            // A part of a dotted token (a JWT's header or payload) is the token's: its detector
            // sees it whole.
            let dotted = (i >= 2 && p[i - 1] == 0x2E && Self.isBase64Byte(p[i - 2]))
                || (end + 1 < p.count && p[end] == 0x2E && Self.isBase64Byte(p[end + 1]))
            if !dotted, end - i >= Base64View.minimumLength,
               let view = Base64View.decode(UnsafeBufferPointer(rebasing: p[i..<end])) {
                let before = mark
                if let inner = view.text.withUnsafeBufferPointer({ redactValueBytes($0, reading, path, nestingLevel: nestingLevel + 1) }) {
                    words.append((i..<end, syntax.base64(inner, urlSafe: view.urlSafe, padded: view.padded)))
                } else {
                    rollBack(to: before)
                }
            }
            i = end
        }
        return words
    }

    /// `p` with `words` replaced, and the text between them scanned.
    func scanning(_ p: UnsafeBufferPointer<UInt8>, around words: [(range: Range<Int>, replacement: [UInt8])],
                  _ reading: Reading, _ path: () -> String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(p.count + 64)
        var at = 0
        func scanned(_ range: Range<Int>) {
            let part = UnsafeBufferPointer(rebasing: p[range])
            if let changed = scanBytes(part, reading, path, shape: .unknown) { out += changed } else { out += part }
        }
        for word in words {
            scanned(at..<word.range.lowerBound)
            out += word.replacement
            at = word.range.upperBound
        }
        scanned(at..<p.count)
        return out
    }

    /// A byte of the base64 or base64url alphabet (not its padding).
    @inline(__always) static func isBase64Byte(_ b: UInt8) -> Bool {
        isAlnum(b) || b == 0x2B || b == 0x2F || b == 0x2D || b == 0x5F
    }

    /// Shortest printable run of a binary body that is scanned.
    static let minimumPrintableRun = 8

    /// A decoded body by its type: forms, multipart, server-sent events, JSON lines, then JSON,
    /// base64 text or plain text.
    func redactDecodedBody(_ text: String, mimeType: String, _ reading: Reading, _ path: () -> String) -> String? {
        switch rewriteDecodedBody(text, mimeType: mimeType, reading, path, asBytes: false) {
        case .string(let s): return s
        case .bytes(let b): return String(decoding: b, as: UTF8.self)
        case nil: return nil
        }
    }

    /// A body's new text, as a string or as bytes.
    enum BodyText {
        case string(String)
        case bytes([UInt8])
    }

    /// `redactDecodedBody`; with `asBytes`, a JSON document or scanned text comes back as the
    /// bytes it was rewritten into: a string made of them here would be read as bytes again in
    /// pass 2 (`FileRedaction` keeps a response body's bytes for it), and building one cost
    /// ~1,800 instructions per value replaced.
    func rewriteDecodedBody(_ text: String, mimeType: String, _ reading: Reading, _ path: () -> String,
                            asBytes: Bool) -> BodyText? {
        func result(_ bytes: [UInt8]?) -> BodyText? {
            bytes.map { asBytes ? .bytes($0) : .string(String(decoding: $0, as: UTF8.self)) }
        }
        let type = mimeType.lowercased()
        if BodyKind.isURLEncoded(type) {
            return redactQuery(text, reading, path, plusAsSpace: true).map(BodyText.string)
        }
        if let boundary = BodyKind.boundary(of: mimeType) {
            return redactMultipart(text, boundary: boundary, reading, path).map(BodyText.string)
        }
        if type.hasPrefix("text/csv") || type.hasPrefix("application/csv") {
            return redactCSV(text, separator: 0x2C, reading, path).map(BodyText.string)
        }
        if type.hasPrefix("text/tab-separated-values") {
            return redactCSV(text, separator: 0x09, reading, path).map(BodyText.string)
        }
        if type.hasPrefix("text/event-stream") {
            return redactLines(text) { line in
                // `data: {...}`: the payload is JSON or text; other fields are scanned as text.
                guard line.count >= 5, line.starts(with: "data:".utf8) else { return scanBytes(line, reading, path) }
                let start = line.count > 5 && line[5] == 0x20 ? 6 : 5
                return redactValueBytes(UnsafeBufferPointer(rebasing: line[start...]), reading, path)
                    .map { Array(line[..<start]) + $0 }
            }.map(BodyText.string)
        }
        var copy = text
        return copy.withUTF8 { p -> BodyText? in
            if Self.looksLikeJSON(p) {
                switch rewriteJSON(p, reading, path) {
                case .edited(let edits): return asBytes ? .bytes(Self.applying(edits, to: p)) : .string(Self.applying(edits, to: text))
                case .unchanged: return nil
                case .notJSON:
                    // JSON lines (NDJSON), or JSON cut off or broken: line by line keeps each
                    // document's keys and types.
                    if p.contains(0x0A) { return redactJSONLines(text, reading, path).map(BodyText.string) }
                    return result(redactBrokenJSON(p, reading, path))
                }
            }
            return result(redactValueBytes(p, reading, path))
        }
    }

    /// `text` with `edits` (ranges of its UTF-8, in order, at ASCII token boundaries) applied. The
    /// unchanged parts are appended as substrings, which copies them without validating them
    /// again: `String(decoding:)` of the whole rewritten body validated every byte, markers making
    /// it non-ASCII (5% of a redaction's instructions).
    static func applying(_ edits: JSONEdits, to text: String) -> String {
        let utf8 = text.utf8
        var result = ""
        result.reserveCapacity(utf8.count + edits.count * 16)
        var copied = utf8.startIndex, copiedOffset = 0
        edits.forEach { range, bytes in
            let start = utf8.index(copied, offsetBy: range.lowerBound - copiedOffset)
            result.append(contentsOf: Substring(utf8[copied..<start]))
            result.append(String(decoding: bytes, as: UTF8.self))
            copied = utf8.index(start, offsetBy: range.count)
            copiedOffset = range.upperBound
        }
        result.append(contentsOf: Substring(utf8[copied...]))
        return result
    }

    /// `p` with `edits` applied, as bytes.
    static func applying(_ edits: JSONEdits, to p: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(p.count + edits.count * 16)
        var copied = 0
        edits.forEach { range, bytes in
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<range.lowerBound]))
            out.append(contentsOf: bytes)
            copied = range.upperBound
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied...]))
        return out
    }

    /// Each line on its own: a JSON document is rewritten, anything else scanned (JSON lines,
    /// JSON cut off by --max-body).
    private func redactJSONLines(_ text: String, _ reading: Reading, _ path: () -> String) -> String? {
        redactLines(text) { line in
            guard Self.looksLikeJSON(line) else { return scanBytes(line, reading, path) }
            switch rewriteJSON(line, reading, path) {
            case .edited(let edits): return Self.applying(edits, to: line)
            case .unchanged: return nil
            case .notJSON: return redactBrokenJSON(line, reading, path)
            }
        }
    }

    /// Applies `redactLine` to each line (without its '\n'); nil when no line changed.
    func redactLines(_ text: String, _ redactLine: (UnsafeBufferPointer<UInt8>) -> [UInt8]?) -> String? {
        var copy = text
        return copy.withUTF8 { p -> String? in
            var out: [UInt8] = []
            var changed = false
            var start = 0
            while start <= p.count {
                var end = start
                while end < p.count && p[end] != 0x0A { end += 1 }
                let line = UnsafeBufferPointer(rebasing: p[start..<end])
                if let r = redactLine(line) {
                    if !changed { out.reserveCapacity(p.count + 64); out.append(contentsOf: UnsafeBufferPointer(rebasing: p[0..<start])) }
                    changed = true
                    out += r
                } else if changed {
                    out.append(contentsOf: line)
                }
                if end < p.count && changed { out.append(0x0A) }
                start = end + 1
            }
            return changed ? String(decoding: out, as: UTF8.self) : nil
        }
    }

    /// A binary body (protobuf, gRPC-web, msgpack, images): its printable runs are scanned, and
    /// every replacement keeps the byte length, so length-prefixed framing stays valid. Returns a
    /// binary wrap for pass 2, or nil when nothing changed.
    func redactBinary(_ bytes: [UInt8], _ reading: Reading, _ path: () -> String) -> String? {
        binaryBodies += 1
        // Find the printable runs that change first: most binary bodies (tens of MB of media)
        // have none, and then nothing is copied.
        var edits: [(run: Range<Int>, marked: [UInt8])] = []
        bytes.withUnsafeBufferPointer { p in
            for run in Self.printableRuns(p) {
                if let marked = scanBytes(UnsafeBufferPointer(rebasing: p[run]), reading.with(.sameLength), path) { edits.append((run, marked)) }
            }
        }
        guard !edits.isEmpty else { return nil }
        // The wrap: bytes outside marks as base64 chunks, marks (same-length placeholders) as they are.
        var content: [UInt8] = []
        var chunkStart = 0  // bytes[chunkStart..<] not yet written, when no marked run is open
        var pending: [UInt8] = []  // the unmarked bytes of marked runs, not yet written
        func flush<Raw: Sequence<UInt8>>(_ raw: Raw, _ content: inout [UInt8], _ pending: inout [UInt8]) {
            pending.append(contentsOf: raw)
            guard !pending.isEmpty else { return }
            content.append(contentsOf: Base64.encode(pending).utf8)
            pending.removeAll(keepingCapacity: true)
        }
        for (run, marked) in edits {
            pending.append(contentsOf: bytes[chunkStart..<run.lowerBound])
            marked.withUnsafeBufferPointer { m in
                var k = 0, plain = 0
                while k < m.count {
                    if m[k] == 0xEE, let v = syntax.parseValue(m, at: k) {
                        flush(m[plain..<k], &content, &pending)
                        content.append(contentsOf: m[k..<v.end])
                        k = v.end
                        plain = k
                    } else {
                        k += 1
                    }
                }
                pending.append(contentsOf: m[plain..<m.count])
            }
            chunkStart = run.upperBound
        }
        flush(bytes[chunkStart...], &content, &pending)
        return String(decoding: MarkerSyntax.binaryOpen + syntax.nonce + content + MarkerSyntax.binaryClose + syntax.nonce,
                      as: UTF8.self)
    }

    /// The runs of printable bytes of a binary body at least `minimumPrintableRun` long, in order.
    static func printableRuns(_ p: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        printableClass.withUnsafeBufferPointer { printable in
            let n = p.count
            var done = 0  // the end of the last run found
            // A run of 8 or more printable bytes holds a whole 4-byte block at a multiple of 4
            // (one that starts after the last such block is at most 7 bytes long), so blocks
            // with a byte that is not printable are skipped 4 bytes at a time.
            var b = 0
            while b + 4 <= n {
                if printable[Int(p[b])] & printable[Int(p[b + 1])] & printable[Int(p[b + 2])] & printable[Int(p[b + 3])] == 0 {
                    b += 4
                    continue
                }
                var start = b
                while start > done && printable[Int(p[start - 1])] != 0 { start -= 1 }
                var end = b + 4
                while end < n && printable[Int(p[end])] != 0 { end += 1 }
                if end - start >= minimumPrintableRun { runs.append(start..<end) }
                done = end
                b = (end + 3) & ~3
            }
        }
        return runs
    }

    /// Printable bytes of a binary body: ASCII graphic characters, space, tab and line breaks.
    private static let printableClass: [UInt8] = (0..<256).map { b in b >= 0x20 && b < 0x7F || b == 0x09 || b == 0x0A || b == 0x0D ? 1 : 0 }
}

/// What a body is, from its MIME type.
enum BodyKind {
    static func isTextual(mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        if type.isEmpty { return false }
        if type.hasPrefix("text/") { return true }
        for marker in ["json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql", "yaml", "csv",
                       "html", "multipart/form-data", "x-ndjson", "problem", "jwt", "plain", "x-sh", "toml", "ini"]
            where type.contains(marker) { return true }
        return false
    }

    static func boundary(of mimeType: String) -> String? {
        guard mimeType.lowercased().hasPrefix("multipart/") else { return nil }
        for parameter in mimeType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimming(" ").lowercased() == "boundary" else { continue }
            var value = pair[1].trimming(" ")
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    static func isURLEncoded(_ mimeType: String) -> Bool {
        mimeType.lowercased().hasPrefix("application/x-www-form-urlencoded")
    }
}
