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
///
/// Names: every fixture of a scenario is in one directory named after the scenario
/// (`directoryName(_:)`), its file named after the request's path (`pathName(_:)`) plus the
/// extension: `/v1/orders` → `browse/v1-orders.json`. A name already taken in the scenario's
/// directory (compared case-insensitively: fixture directories may live on case-insensitive file
/// systems) gets `-2`, `-3`, ... before the extension, the first free one in queue order: a repeat of
/// a path with a different body (`v1-orders-2.json`), the same path with another query, and
/// different paths that sanitize to the same name. The same body for the same name is written once.
struct FixturePlanner {
    /// The directory below the fixtures directory that holds this scenario's fixtures.
    let directory: String
    let inlineLimit: Int
    let jsonBodiesInFixtures: Bool

    private(set) var fixtures: [GeneratedFile] = []
    /// Lowercased file names taken so far in `directory`.
    private var takenNames: Set<String> = []
    /// A body already written under a name is reused rather than written twice.
    private var nameForContent: [FixtureKey: String] = [:]

    private struct FixtureKey: Hashable {
        var base: String
        var ext: String
        var bytes: [UInt8]
    }

    init(scenarioName: String, inlineLimit: Int, jsonBodiesInFixtures: Bool) {
        self.directory = FixturePlanner.directoryName(scenarioName)
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
        let base = FixturePlanner.pathName(path)
        let key = FixtureKey(base: base, ext: ext, bytes: bytes)
        if let existing = nameForContent[key] { return existing }
        var file = "\(base).\(ext)"
        var n = 2
        while takenNames.contains(file.lowercased()) {
            file = "\(base)-\(n).\(ext)"
            n += 1
        }
        takenNames.insert(file.lowercased())
        let name = directory + "/" + file
        nameForContent[key] = name
        fixtures.append(GeneratedFile(relativePath: name, role: .fixture, bytes: bytes))
        return name
    }

    // MARK: - Names

    /// Longest path name and scenario directory name, so names stay readable and far below
    /// file-system limits (a fixture's file name is at most this, a `-N` and its extension).
    static let maximumNameLength = 64

    /// A fixture's name for a request path, without extension: the path's segments, each
    /// percent-decoded and reduced to file-name-safe ASCII (`fileNamePart`), joined with `-`
    /// (`/v1/orders/42` → `v1-orders-42`). The query is not part of it. Empty segments and those
    /// with nothing file-name-safe (`..`, non-ASCII only) are left out; the last segment loses a
    /// file extension (a `.` followed by 1 to 8 ASCII letters or digits, at least one a letter:
    /// `/static/app.min.js` → `static-app.min`), since the fixture gets its own. A name longer
    /// than `maximumNameLength` keeps its last segments, as many whole ones as fit (the end of a
    /// path says the most), or the first `maximumNameLength` characters of the last segment when
    /// that alone is too long. `root` for `/`; `resource` when no segment has a usable character.
    /// A Windows device name (`con`, `nul`, `com1`, ... before the first `.`, any case) gets a
    /// `_` after it (`/aux` → `aux_`).
    static func pathName(_ path: String) -> String {
        let segments = path.split(separator: "/")
        if segments.isEmpty { return "root" }
        var parts = segments.map { fileNamePart(PercentEncoding.decoded(String($0), plusAsSpace: false)) }
        if let last = parts.last { parts[parts.count - 1] = droppingExtension(last) }
        parts.removeAll { $0.isEmpty }
        guard var name = parts.popLast() else { return "resource" }
        if name.count > maximumNameLength {
            name = trimmed(String(name.prefix(maximumNameLength)))
        } else {
            while let previous = parts.last, name.count + 1 + previous.count <= maximumNameLength {
                name = previous + "-" + name
                parts.removeLast()
            }
        }
        return avoidingDeviceNames(name)
    }

    /// The directory of a scenario's fixtures: its name reduced to file-name-safe ASCII
    /// (`fileNamePart`), at most `maximumNameLength` characters; `scenario` when nothing is left.
    static func directoryName(_ scenarioName: String) -> String {
        let part = trimmed(String(fileNamePart(scenarioName).prefix(maximumNameLength)))
        return part.isEmpty ? "scenario" : avoidingDeviceNames(part)
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
        return trimmed(out)
    }

    /// `part` without a file extension: a last `.` (not the first character) followed by 1 to 8
    /// ASCII letters or digits, at least one of them a letter.
    static func droppingExtension(_ part: String) -> String {
        guard let dot = part.lastIndex(of: "."), dot != part.startIndex else { return part }
        let ext = part.unicodeScalars[part.unicodeScalars.index(after: dot)...]
        let isLetter: (Unicode.Scalar) -> Bool = { ($0.value >= 0x41 && $0.value <= 0x5A) || ($0.value >= 0x61 && $0.value <= 0x7A) }
        guard (1...8).contains(ext.count), ext.allSatisfy({ isLetter($0) || ($0.value >= 0x30 && $0.value <= 0x39) }),
              ext.contains(where: isLetter) else { return part }
        return trimmed(String(part[..<dot]))
    }

    /// Without leading and trailing `-` and `.`.
    private static func trimmed(_ value: String) -> String {
        var out = Substring(value)
        while let first = out.first, first == "-" || first == "." { out.removeFirst() }
        while let last = out.last, last == "-" || last == "." { out.removeLast() }
        return String(out)
    }

    /// Names Windows reserves for devices, whatever the extension (`nul.json` cannot be created).
    private static let deviceNames = Set(["con", "prn", "aux", "nul"] + (1...9).flatMap { ["com\($0)", "lpt\($0)"] })

    /// `name` with `_` after the part before its first `.` when that part is a Windows device
    /// name (`aux` → `aux_`, `nul.min` → `nul_.min`).
    private static func avoidingDeviceNames(_ name: String) -> String {
        let stem = name.prefix { $0 != "." }
        guard deviceNames.contains(stem.lowercased()) else { return name }
        return stem + "_" + name.dropFirst(stem.count)
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
