import TextEncodings
/// One thing wrong with a HAR document.
public struct HARProblem: Equatable, Sendable, CustomStringConvertible {
    /// Where, like `log.entries[3].response.content.size`; "" for the document itself.
    public var path: String
    /// One line, no raw control characters.
    public var message: String
    /// Which check failed.
    public var rule: HARRule

    public init(path: String, message: String, rule: HARRule) {
        self.path = path
        self.message = message
        self.rule = rule
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// The checks `HARValidator` makes.
public enum HARRule: String, Sendable, CaseIterable {
    /// The bytes are not valid JSON (the message has line and column).
    case jsonSyntax
    /// A required member is missing.
    case required
    /// A member has the wrong JSON type.
    case type
    /// A number that must be an integer is not (sizes, status, hitCount, compression).
    case integer
    /// A number is outside its allowed range (sizes below -1, status outside 0...999, ...).
    case range
    /// A date-time is not ISO 8601 (startedDateTime also needs fractional seconds and a zone).
    case dateTime
    /// `log.version` is not "1.2" (or "1.1").
    case version
    /// Entries are not sorted by startedDateTime.
    case entryOrder
    /// A timing is negative (send/wait/receive) or neither -1 nor >= 0 (the others).
    case timing
    /// `timings.ssl` is larger than `timings.connect`: ssl time must be included in connect.
    case sslInConnect
    /// `time` is not the sum of the non-negative timings (ssl excluded).
    case timeSum
    /// `content.encoding` is something other than "base64".
    case encoding
    /// `content.text` is not strict base64 although encoding is "base64".
    case base64
    /// `content.size` is not the decoded length of `content.text`.
    case contentSize
    /// A request URL is not absolute (scheme://host) or has a fragment or whitespace.
    case url
    /// `postData` has neither `text` nor `params`.
    case postData
    /// A member that is not in HAR 1.2 and does not start with "_".
    case customField
    /// An object has the same key twice.
    case duplicateKey
    /// An entry's pageref names no page, or two pages share an id.
    case pageref
}

/// Checks a document against HAR 1.2 strictly (plus harrec's own rules: sorted entries, time
/// equal to the sum of timings, content.size equal to the decoded text length). Which members
/// each object has, and what each must hold, comes from the types' member tables
/// (HARMembers.swift), the same ones the reader and writer use.
public enum HARValidator {
    /// Allowed difference between `time` and the sum of the timings, in milliseconds.
    /// harrec writes every number with 3 decimals, so each of up to 7 rounded values (time and
    /// six phases) is off by at most 0.0005 ms: 0.0035 ms in the worst case. 0.01 ms covers that
    /// plus binary floating-point error, while any real discrepancy (a phase counted twice, ssl
    /// added on top of connect) is far larger.
    public static let timeSumTolerance = 0.01

    /// Validates raw bytes; invalid JSON is one `.jsonSyntax` problem with line and column.
    /// A leading UTF-8 BOM is allowed (HAR 1.2 asks readers to ignore one).
    public static func validate(bytes: [UInt8]) -> [HARProblem] {
        validateCountingEntries(bytes: bytes).problems
    }

    /// `validate(bytes:)`, and the number of entries in the same parse (0 when the JSON does not
    /// parse or has no entries array), so a caller reports the count of what was validated.
    public static func validateCountingEntries(bytes: [UInt8]) -> (problems: [HARProblem], entryCount: Int) {
        do {
            let json = try JSONParser.parse(stripBOM(bytes))
            return (validate(json), json["log"]?["entries"]?.arrayValue?.count ?? 0)
        } catch {
            return ([syntaxProblem(error)], 0)
        }
    }

    /// `validateCountingEntries(bytes:)` over a document read entry by entry: one entry's JSON
    /// is held at a time, so memory follows the largest entry, not the file. The problems are
    /// the same, in the same order. Nil when the document was parsed whole (an unusual shape):
    /// the caller validates its bytes.
    ///
    /// `open` reads the document: its syntax error is the one problem; nil from it, or a
    /// document that is no HAR, is left to the caller too. Throws `.unreadable` when an entry
    /// cannot be read again.
    public static func validateCountingEntries(reading open: () throws(HARReadError) -> HARLazyDocument?) throws(HARReadError) -> (problems: [HARProblem], entryCount: Int)? {
        let opened: HARLazyDocument?
        do {
            opened = try open()
        } catch .json(let error) {
            return ([syntaxProblem(error)], 0)
        } catch .notHAR {
            return nil
        }
        guard let document = opened, let (head, count, entry) = document.entriesJSON else { return nil }
        var v = HARChecker()
        var failure: HARReadError?
        // A mapped file's pages leave memory 16 MiB at a time, once their entries are read.
        var read = 0, kept = 0
        v.streamedEntries = HARChecker.StreamedEntries(count: count) { index in
            do throws(HARReadError) {
                defer {
                    kept += document.byteCount(ofEntry: index)
                    if kept >= 16 << 20 || index == count - 1 {
                        document.dropResidentBytes(ofEntries: read..<(index + 1))
                        read = index + 1
                        kept = 0
                    }
                }
                return try entry(index)
            } catch {
                failure = error
                return nil
            }
        }
        v.root(head)
        switch failure {
        case nil: return (v.problems, count)
        case .json(let error)?: return ([syntaxProblem(error)], 0)
        case let other?: throw other
        }
    }

    /// The one problem of a document that is not JSON.
    public static func syntaxProblem(_ error: JSONParseError) -> HARProblem {
        HARProblem(path: "", message: "invalid JSON at line \(error.line), column \(error.column): \(error.reason)", rule: .jsonSyntax)
    }

    /// Validates a parsed document `{"log": {...}}`. Problems come in document order.
    public static func validate(_ json: JSONValue) -> [HARProblem] {
        var v = HARChecker()
        v.root(json)
        return v.problems
    }
}

/// Quotes a value from the document for a message: control characters escaped, long values cut.
func quoted(_ s: String, limit: Int = 60) -> String {
    var out = "\""
    var n = 0
    for scalar in s.unicodeScalars {
        if n == limit { out += "..."; break }
        switch scalar.value {
        case 0x22: out += "\\\""
        case 0x5C: out += "\\\\"
        case 0..<0x20, 0x7F, 0x2028, 0x2029: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
        n += 1
    }
    return out + "\""
}

/// Walks a document with the member tables and collects problems in document order.
struct HARChecker {
    private(set) var problems: [HARProblem] = []
    /// `log.entries` read one at a time instead of from the document (which holds an empty
    /// array there).
    struct StreamedEntries {
        let count: Int
        /// Entry `index`'s JSON; nil stops the walk (it could not be read).
        let entry: (Int) -> JSONValue?
    }
    var streamedEntries: StreamedEntries?
    /// The ids of the pages seen so far; entries come after pages in the log.
    private var pageIDs: Set<String> = []
    /// The previous entry's valid start, for the order check.
    private var previousEntryStart: Double?
    /// The sum the last checked `timings` object implies, when all its timings were valid; the
    /// entry that holds it takes it.
    private var timingsSum: Double?

    mutating func report(_ path: String, _ message: String, _ rule: HARRule) {
        problems.append(HARProblem(path: path, message: message, rule: rule))
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    mutating func root(_ json: JSONValue) {
        guard case .object(let top) = json else {
            report("", "the document must be an object with a \"log\" member, found \(json.typeName)", .type)
            return
        }
        checkKeys(top, "", known: ["log"])
        guard let log = lastValue(top, "log") else {
            report("log", "missing required object", .required)
            return
        }
        check(.object(nullable: false, check: { $0.check(HARLog.self, $1, $2) }), log, "log")
    }

    /// Checks one object against `T`'s member table, then the relations between its members.
    mutating func check<T: HARObject>(_ type: T.Type, _ fields: JSONFields, _ path: String) {
        let schema = T.schema
        let before = problems.count
        checkKeys(fields, path, known: schema.names)
        for member in schema.members {
            guard let value = lastValue(fields, member.name) else {
                if member.required { report(join(path, member.name), "missing required \(member.shape.noun)", .required) }
                continue
            }
            check(member.shape, value, join(path, member.name))
        }
        schema.relations(&self, fields, path, problems.count == before)
    }

    /// Reports duplicate keys and members that are neither known nor "_"-prefixed.
    private mutating func checkKeys(_ fields: JSONFields, _ path: String, known: Set<String>) {
        var seen = Set<String>()
        seen.reserveCapacity(fields.count)
        for f in fields {
            if !seen.insert(f.key).inserted {
                report(join(path, f.key), "duplicate key \(quoted(f.key))", .duplicateKey)
            }
            if !known.contains(f.key) && !f.key.hasPrefix("_") {
                report(join(path, f.key), "unknown member \(quoted(f.key)); custom fields must start with \"_\"", .customField)
            }
        }
    }

    private mutating func check(_ shape: HARShape, _ value: JSONValue, _ path: String) {
        switch shape {
        case .string(let format):
            guard case .string(let s) = value else {
                return report(path, "must be a string, found \(value.typeName)", .type)
            }
            check(s, format, path)
        case .integer(let minimum, let maximum):
            guard case .number(let literal) = value else {
                return report(path, "must be an integer, found \(value.typeName)", .type)
            }
            guard let i = JSONValue.integer(fromLiteral: literal) else {
                return report(path, "must be an integer, found \(literal)", .integer)
            }
            if i < minimum || i > maximum {
                let range = maximum == Int.max ? ">= \(minimum)" : "in \(minimum)...\(maximum)"
                report(path, "must be \(range), found \(i)", .range)
            }
        case .number(let rule):
            guard case .number(let literal) = value else {
                return report(path, "must be a number, found \(value.typeName)", .type)
            }
            guard let d = Double(literal), d.isFinite else {
                return report(path, "number \(literal) is out of range", .range)
            }
            switch rule {
            case .any: break
            case .nonNegative where d < 0:
                report(path, "must be >= 0, found \(formatMs(d))", .timing)
            case .notApplicableOrNonNegative where d < 0 && d != -1:
                report(path, "must be -1 or >= 0, found \(formatMs(d))", .timing)
            case .nonNegative, .notApplicableOrNonNegative: break
            }
        case .bool:
            if case .bool = value { return }
            report(path, "must be a boolean, found \(value.typeName)", .type)
        case .object(let nullable, let checkObject):
            switch value {
            case .object(let inner): checkObject(&self, inner, path)
            case .null where nullable: break
            default: report(path, "must be an object\(nullable ? " or null" : ""), found \(value.typeName)", .type)
            }
        case .array(let checkElement):
            guard case .array(let items) = value else {
                return report(path, "must be an array, found \(value.typeName)", .type)
            }
            if path == "log.entries", let stream = streamedEntries {
                for i in 0..<stream.count {
                    guard let item = stream.entry(i) else { return }
                    checkItem(item, "\(path)[\(i)]", checkElement)
                }
                return
            }
            for (i, item) in items.enumerated() { checkItem(item, "\(path)[\(i)]", checkElement) }
        }
    }

    private mutating func checkItem(_ item: JSONValue, _ path: String, _ checkElement: (inout HARChecker, JSONFields, String) -> Void) {
        guard case .object(let fields) = item else {
            return report(path, "must be an object, found \(item.typeName)", .type)
        }
        checkElement(&self, fields, path)
    }

    private mutating func check(_ s: String, _ format: HARStringFormat, _ path: String) {
        switch format {
        case .text:
            break
        case .dateTime(let strict):
            if let parsed = HARDate.parseISO(s), !strict || parsed.hasFraction { return }
            let want = strict ? "an ISO 8601 date-time with fractional seconds and a time zone (like 2009-07-24T19:20:30.123+02:00)"
                              : "an ISO 8601 date-time with a time zone"
            report(path, "must be \(want), found \(quoted(s))", .dateTime)
        case .url:
            if let reason = urlProblem(s) { report(path, reason, .url) }
        case .version:
            if s != "1.2" && s != "1.1" { report(path, "must be \"1.2\", found \(quoted(s))", .version) }
        case .pageReference:
            if !pageIDs.contains(s) { report(path, "no page has id \(quoted(s))", .pageref) }
        }
    }

    // MARK: Relations between members

    /// A page's id must be unique; entries may then refer to it.
    mutating func notePage(_ fields: JSONFields, _ path: String) {
        guard case .string(let id)? = lastValue(fields, "id") else { return }
        if !pageIDs.insert(id).inserted { report(join(path, "id"), "duplicate page id \(quoted(id))", .pageref) }
    }

    /// Entries are sorted by start, and `time` is the sum of the timings.
    mutating func checkEntryRelations(_ fields: JSONFields, _ path: String) {
        let sum = timingsSum
        timingsSum = nil
        if let sum, let time = validNumber(fields, "time"), abs(time - sum) > HARValidator.timeSumTolerance {
            report(join(path, "time"), "time \(formatMs(time)) is not the sum of the timings \(formatMs(sum)) (blocked+dns+connect+send+wait+receive, -1 excluded, ssl counted inside connect)", .timeSum)
        }
        guard case .string(let s)? = lastValue(fields, "startedDateTime"), let started = HARDate.parseISO(s),
              started.hasFraction else { return }
        if let previousEntryStart, started.epochSeconds < previousEntryStart {
            report(join(path, "startedDateTime"), "entries must be sorted by startedDateTime; this one starts before the previous entry", .entryOrder)
        }
        previousEntryStart = started.epochSeconds
    }

    /// ssl is inside connect; the sum is compared with `time` only when every timing is valid,
    /// so one bad phase is one problem.
    mutating func checkTimingsRelations(_ fields: JSONFields, _ path: String, clean: Bool) {
        if let ssl = validNumber(fields, "ssl"), ssl >= 0 {
            let connect = validNumber(fields, "connect").flatMap { $0 < 0 && $0 != -1 ? nil : $0 } ?? -1
            if connect < ssl {
                report(join(path, "ssl"), "ssl \(formatMs(ssl)) is larger than connect \(formatMs(connect)); ssl time must be included in connect", .sslInConnect)
            }
        }
        guard clean else { return }
        var sum = 0.0
        for key in ["blocked", "dns", "connect", "send", "wait", "receive"] {
            if let d = validNumber(fields, key), d > 0 { sum += d }
        }
        timingsSum = sum
    }

    /// postData needs text or params, and base64 text must decode.
    mutating func checkPostDataRelations(_ fields: JSONFields, _ path: String) {
        if lastValue(fields, "text") == nil && lastValue(fields, "params") == nil {
            report(path, "postData must have text or params", .postData)
        }
        _ = decodedLength(fields, path)
    }

    /// `size` is the decoded length of `text`.
    mutating func checkContentRelations(_ fields: JSONFields, _ path: String) {
        guard let decoded = decodedLength(fields, path), case .number(let literal)? = lastValue(fields, "size"),
              let size = JSONValue.integer(fromLiteral: literal), size >= 0, size != decoded else { return }
        var message = "size \(size) is not the decoded length of text (\(decoded) bytes)"
        if size < decoded { message += "; it looks like the compressed (transferred) size" }
        report(join(path, "size"), message, .contentSize)
    }

    /// The byte length `text` stands for, reporting an encoding other than base64 and base64
    /// that does not decode.
    private mutating func decodedLength(_ fields: JSONFields, _ path: String) -> Int? {
        let text = lastValue(fields, "text")?.stringValue
        switch lastValue(fields, "encoding") {
        case nil:
            return text?.utf8.count
        case .string(let encoding)? where encoding != "base64":
            report(join(path, "encoding"), "must be \"base64\", found \(quoted(encoding))", .encoding)
            return nil
        case .string?:
            break
        case _?:
            return nil  // the member check reported the type
        }
        guard let text else { return nil }
        guard let n = Base64.decodedCount(text) else {
            report(join(path, "text"), "is not valid base64 (RFC 4648 alphabet, padded, no whitespace)", .base64)
            return nil
        }
        return n
    }
}

private func lastValue(_ fields: JSONFields, _ key: String) -> JSONValue? {
    for f in fields.reversed() where f.key == key { return f.value }
    return nil
}

/// A member's value when it is a finite JSON number.
private func validNumber(_ fields: JSONFields, _ key: String) -> Double? {
    guard case .number(let literal)? = lastValue(fields, key), let d = Double(literal), d.isFinite else { return nil }
    return d
}
private func formatMs(_ d: Double) -> String {
    var out: [UInt8] = []
    JSONWriter.appendDouble(d, to: &out)
    return String(decoding: out, as: UTF8.self)
}

/// Why `url` is not an absolute URL without fragment, or nil when it is fine.
func urlProblem(_ url: String) -> String? {
    let b = Array(url.utf8)
    if b.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
        return "url must not contain whitespace or control characters"
    }
    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    var i = 0
    func isAlpha(_ c: UInt8) -> Bool { (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) }
    guard i < b.count, isAlpha(b[i]) else { return "url must be absolute (scheme://host...), found \(quoted(url))" }
    while i < b.count, isAlpha(b[i]) || (b[i] >= 0x30 && b[i] <= 0x39) || b[i] == 0x2B || b[i] == 0x2D || b[i] == 0x2E {
        i += 1
    }
    guard i + 2 < b.count, b[i] == 0x3A, b[i + 1] == 0x2F, b[i + 2] == 0x2F else {
        return "url must be absolute (scheme://host...), found \(quoted(url))"
    }
    i += 3
    var authorityEnd = i
    while authorityEnd < b.count, b[authorityEnd] != 0x2F, b[authorityEnd] != 0x3F, b[authorityEnd] != 0x23 {
        authorityEnd += 1
    }
    var hostStart = i
    if let at = b[i..<authorityEnd].lastIndex(of: 0x40) { hostStart = at + 1 }
    if hostStart >= authorityEnd || b[hostStart] == 0x3A {
        return "url has no host, found \(quoted(url))"
    }
    if b.contains(0x23) {
        return "url must not contain a fragment (HAR 1.2: fragments are not included)"
    }
    return nil
}
