// A lenient HAR reader for files written by other tools (mitmproxy, Chrome, Firefox, Proxyman,
// Charles). The JSON must be valid; the HAR inside may not be. Rules:
// - A leading UTF-8 BOM is skipped (HAR 1.2 asks readers to ignore one).
// - Unknown members, with or without "_", go to `custom` in document order.
// - An optional member of the wrong type (e.g. `"expires": null`) also goes to `custom`, so
//   nothing is lost and writing the model back keeps it.
// - A required member that is missing or of the wrong type gets a default: "" for strings, -1 for
//   header/body sizes, 0 for other numbers, [] for arrays; numbers written as strings ("200") and
//   integral numbers written with a fraction (63.0) are converted.
// - When a member is duplicated, the last one wins (as with `JSON.parse`).
// Each type's `init(lenient:)` walks its member table (HARSchema.swift, HARMembers.swift).
// Use `HARValidator` to find out what was wrong with a file; the reader does not report it.

/// Why a document could not be read as a HAR.
public enum HARReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not valid JSON.
    case json(JSONParseError)
    /// Valid JSON, but not a HAR: no top-level object with a `log` object.
    case notHAR(String)
    /// A file read a window at a time could not be read again where the scan found an entry (it
    /// changed under the reader, or the read failed).
    case unreadable(String)

    public var description: String {
        switch self {
        case .json(let e): return "invalid JSON: \(e)"
        case .notHAR(let reason): return "not a HAR file: \(reason)"
        case .unreadable(let reason): return "cannot read the file: \(reason)"
        }
    }
}

extension HARLog {
    /// Reads a HAR file leniently (see the rules at the top of HARRead.swift).
    public static func parse(_ bytes: [UInt8]) throws(HARReadError) -> HARLog {
        let json: JSONValue
        do {
            json = try JSONParser.parse(stripBOM(bytes))
        } catch {
            throw .json(error)
        }
        return try HARLog(document: json)
    }

    /// Reads the model from a parsed document `{"log": {...}}`. Members of the top-level object
    /// other than `log` are ignored.
    public init(document: JSONValue) throws(HARReadError) {
        guard case .object = document else {
            throw .notHAR("the top-level value is \(document.typeName), expected an object")
        }
        guard let log = document["log"], case .object = log else {
            throw .notHAR("the top-level object has no \"log\" object")
        }
        self.init(lenient: log)
    }
}

/// Removes a leading UTF-8 byte order mark.
func stripBOM(_ bytes: [UInt8]) -> [UInt8] {
    if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
        return Array(bytes[3...])
    }
    return bytes
}

extension JSONValue {
    /// Strings as is; numbers as their literal; booleans as "true"/"false".
    var lenientString: String? {
        switch self {
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b ? "true" : "false"
        default: return nil
        }
    }

    /// Integral numbers, non-integral numbers rounded, and numeric strings.
    var lenientInt: Int? {
        switch self {
        case .number(let n):
            if let i = JSONValue.integer(fromLiteral: n) { return i }
            return Double(n).flatMap(clampedInt)
        case .string(let s):
            let t = s.trimmingASCIIWhitespace()
            if let i = Int(t) { return i }
            return Double(t).flatMap(clampedInt)
        default:
            return nil
        }
    }

    /// Finite numbers and numeric strings.
    var lenientDouble: Double? {
        switch self {
        case .number(let n):
            if let d = Double(n), d.isFinite { return d }
            return nil
        case .string(let s):
            if let d = Double(s.trimmingASCIIWhitespace()), d.isFinite { return d }
            return nil
        default:
            return nil
        }
    }
}

private func clampedInt(_ d: Double) -> Int? {
    guard d.isFinite, d > -9.0e18, d < 9.0e18 else { return nil }
    return Int(d.rounded())
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return String(s)
    }
}
