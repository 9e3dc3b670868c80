#if canImport(FoundationEssentials)
import FoundationEssentials
import TextEncodings
#else
import Foundation
#endif
import HAR
import HARScenarios

/// How one response body appears in the generated scenario.
enum PlannedBody: Equatable {
    case empty
    /// `.text(...)`, spelled with `SwiftSource.readableLiteral`.
    case text(String)
    /// `.base64(...)`.
    case base64(String)
    /// `.fixture(name)`.
    case fixture(String)
}

/// Decides, body by body, between inline and fixture files, and names the fixtures.
///
/// Rule (see `GeneratorOptions`): empty bodies are `.empty`; valid JSON bodies (by Content-Type)
/// go to a `jq -S`-formatted `.json` fixture (always, or beyond the inline limit when
/// `jsonBodiesInFixtures` is off); other bodies up to the inline limit are inline (`.text` as
/// recorded, `.base64` for binary); larger ones go to a fixture holding the exact bytes, named
/// with an extension for their type. Bodies labelled JSON that do not parse are kept byte for byte
/// under `.txt`, because a file named `.json` must parse.
struct FixturePlanner {
    let scenarioPart: String
    let inlineLimit: Int
    let jsonBodiesInFixtures: Bool

    private(set) var fixtures: [GeneratedFile] = []
    /// Lowercased names taken so far: fixture directories may live on case-insensitive file systems.
    private var takenNames: Set<String> = []
    /// A body already written for a resource is reused rather than written twice.
    private var nameForContent: [FixtureKey: String] = [:]

    private struct FixtureKey: Hashable {
        var resource: String
        var ext: String
        var bytes: [UInt8]
    }

    init(scenarioName: String, inlineLimit: Int, jsonBodiesInFixtures: Bool) {
        let part = FixturePlanner.fileNamePart(scenarioName)
        self.scenarioPart = part.isEmpty ? "scenario" : part
        self.inlineLimit = max(0, inlineLimit)
        self.jsonBodiesInFixtures = jsonBodiesInFixtures
    }

    /// The result for one body, plus a note for a comment in the generated code (or nil).
    mutating func plan(_ body: ResponseBody, headers: [HTTPHeader], path: String) -> (body: PlannedBody, note: String?) {
        let mime = FixturePlanner.mediaType(headers)
        let bytes: [UInt8]
        let recordedAsText: Bool
        switch body {
        case .empty:
            return (.empty, nil)
        case .fixture(let name):
            return (.fixture(name), nil)
        case .text(let text):
            bytes = Array(text.utf8)
            recordedAsText = true
        case .base64(let encoded):
            guard let decoded = Base64.decodeLenient(encoded) else {
                // Served as recorded; the runtime reports it when it cannot decode it.
                return (.base64(encoded), "the recorded base64 body does not decode")
            }
            bytes = decoded
            recordedAsText = false
        }
        if bytes.isEmpty { return (.empty, nil) }

        var note: String? = nil
        if FixturePlanner.isJSON(mime) {
            if let value = try? JSONParser.parse(bytes) {
                if jsonBodiesInFixtures || bytes.count > inlineLimit {
                    return (.fixture(addFixture(JQFormatter.format(value), ext: "json", path: path)), nil)
                }
            } else {
                note = "the body is not valid JSON although its Content-Type is \(mime); kept as recorded"
            }
        }
        if bytes.count <= inlineLimit {
            if recordedAsText, case .text(let text) = body { return (.text(text), note) }
            return (.base64(Base64.encode(bytes)), note)
        }
        let ext = FixturePlanner.fileExtension(mime: mime, bytes: bytes, labelledJSONButInvalid: note != nil)
        return (.fixture(addFixture(bytes, ext: ext, path: path)), note)
    }

    private mutating func addFixture(_ bytes: [UInt8], ext: String, path: String) -> String {
        let resource = FixturePlanner.resourceName(path: path)
        let key = FixtureKey(resource: resource, ext: ext, bytes: bytes)
        if let existing = nameForContent[key] { return existing }
        var name = "\(resource)-\(scenarioPart).\(ext)"
        var n = 2
        while takenNames.contains(name.lowercased()) {
            name = "\(resource)-\(scenarioPart)-\(n).\(ext)"
            n += 1
        }
        takenNames.insert(name.lowercased())
        nameForContent[key] = name
        fixtures.append(GeneratedFile(relativePath: name, role: .fixture, bytes: bytes))
        return name
    }

    // MARK: - Names

    /// Longest resource part of a fixture name, so names stay readable and far below file-system limits.
    static let maximumResourceLength = 48

    /// The last meaningful segment of a URL path: empty segments, versions (`v1`, `v2.1`) and ids
    /// (numbers, UUIDs, long hex strings) are skipped, and so are segments with no file-name-safe
    /// characters; a file extension is dropped (`/v1/projects/42` → `projects`, `/small.json` →
    /// `small`). `root` for `/` (or only ids), `resource` when no segment has usable characters.
    static func resourceName(path: String) -> String {
        let segments = path.split(separator: "/").map { PercentEncoding.decoded(String($0), plusAsSpace: false) }
        var sawNamedSegment = false
        for segment in segments.reversed() where !isVersion(segment) && !isIdentifier(segment) {
            sawNamedSegment = true
            var part = fileNamePart(segment)
            if let dot = part.lastIndex(of: "."), dot != part.startIndex {
                part = String(part[..<dot])
            }
            part = String(part.prefix(maximumResourceLength))
            while part.hasSuffix("-") || part.hasSuffix(".") { part.removeLast() }
            if !part.isEmpty { return part }
        }
        return sawNamedSegment ? "resource" : "root"
    }

    /// `value` reduced to file-name-safe ASCII: letters, digits, `_`, `-`, `.`; runs of anything
    /// else become one `-`; no leading or trailing `-` or `.` (no hidden files, no `..`).
    static func fileNamePart(_ value: String) -> String {
        var out = ""
        var pendingDash = false
        for scalar in value.unicodeScalars {
            let v = scalar.value
            let safe = (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
                || v == 0x5F || v == 0x2D || v == 0x2E
            if safe {
                if pendingDash && !out.isEmpty { out += "-" }
                pendingDash = false
                if v == 0x2E && out.hasSuffix(".") { continue }
                out.unicodeScalars.append(scalar)
            } else {
                pendingDash = true
            }
        }
        while let first = out.first, first == "-" || first == "." { out.removeFirst() }
        while let last = out.last, last == "-" || last == "." { out.removeLast() }
        return out
    }

    static func isVersion(_ segment: String) -> Bool {
        let s = Array(segment.lowercased().utf8)
        guard s.count >= 2, s[0] == 0x76 else { return false }
        return s[1...].allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E } && s[1] != 0x2E
    }

    /// Numbers, UUIDs and hex ids of 12 or more digits with at least one decimal digit.
    static func isIdentifier(_ segment: String) -> Bool {
        let s = Array(segment.utf8)
        guard !s.isEmpty else { return true }
        if s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        let isHex: (UInt8) -> Bool = { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
        if s.count == 36 {
            let dashes = [8, 13, 18, 23]
            if s.indices.allSatisfy({ dashes.contains($0) ? s[$0] == 0x2D : isHex(s[$0]) }) { return true }
        }
        return s.count >= 12 && s.allSatisfy(isHex) && s.contains(where: { $0 >= 0x30 && $0 <= 0x39 })
    }

    // MARK: - Media types

    /// The response's media type, lowercased, without parameters ("" when there is none).
    static func mediaType(_ headers: [HTTPHeader]) -> String {
        guard let value = headers.last(where: { $0.name.lowercased() == "content-type" })?.value else { return "" }
        let type = value.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(type.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased()
    }

    static func isJSON(_ mime: String) -> Bool {
        mime == "application/json" || mime == "text/json" || mime.hasSuffix("+json")
    }

    private static let extensionsByType: [String: String] = [
        "application/json": "json", "text/json": "json", "text/html": "html", "application/xhtml+xml": "html",
        "application/xml": "xml", "text/xml": "xml", "text/plain": "txt", "text/css": "css",
        "text/csv": "csv", "text/javascript": "js", "application/javascript": "js",
        "application/x-javascript": "js", "text/markdown": "md", "application/x-www-form-urlencoded": "txt",
        "image/png": "png", "image/jpeg": "jpg", "image/jpg": "jpg", "image/gif": "gif", "image/webp": "webp",
        "image/svg+xml": "svg", "image/x-icon": "ico", "image/vnd.microsoft.icon": "ico", "image/avif": "avif",
        "image/heic": "heic", "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz",
        "application/protobuf": "pb", "application/x-protobuf": "pb", "application/octet-stream": "bin",
        "audio/mpeg": "mp3", "video/mp4": "mp4", "font/woff2": "woff2", "font/woff": "woff",
    ]

    /// A file extension for a fixture body: from the media type, else from the bytes' signature,
    /// else `txt` for UTF-8 text and `bin` for anything else.
    static func fileExtension(mime: String, bytes: [UInt8], labelledJSONButInvalid: Bool) -> String {
        if labelledJSONButInvalid { return "txt" }
        if let known = extensionsByType[mime], known != "bin" { return known }
        if mime.hasSuffix("+xml") { return "xml" }
        if let sniffed = sniffedExtension(bytes) { return sniffed }
        if mime.hasPrefix("text/") { return "txt" }
        if mime.isEmpty || mime == "application/octet-stream" {
            return String(strictUTF8: bytes) != nil && !bytes.contains(0) ? "txt" : "bin"
        }
        return "bin"
    }

    private static func sniffedExtension(_ b: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "jpg" }
        if starts(Array("GIF8".utf8)) { return "gif" }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return "webp" }
        if starts(Array("%PDF-".utf8)) { return "pdf" }
        if starts([0x1F, 0x8B]) { return "gz" }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return "zip" }
        return nil
    }
}

extension String {
    /// Strict UTF-8 decoding: nil when `bytes` are not valid UTF-8.
    init?(strictUTF8 bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: self = String(scalars); return
            case .error: return nil
            }
        }
    }
}
