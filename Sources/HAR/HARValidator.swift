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
/// equal to the sum of timings, content.size equal to the decoded text length).
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
            return ([HARProblem(path: "", message: "invalid JSON at line \(error.line), column \(error.column): \(error.reason)",
                                rule: .jsonSyntax)], 0)
        }
    }

    /// Validates a parsed document `{"log": {...}}`. Problems come in document order.
    public static func validate(_ json: JSONValue) -> [HARProblem] {
        var v = Checker()
        v.root(json)
        return v.problems
    }
}

// MARK: - Known members (HAR 1.2 field lists)

private enum Known {
    static let root: Set<String> = ["log"]
    static let log: Set<String> = ["version", "creator", "browser", "pages", "entries", "comment"]
    static let creator: Set<String> = ["name", "version", "comment"]
    static let page: Set<String> = ["startedDateTime", "id", "title", "pageTimings", "comment"]
    static let pageTimings: Set<String> = ["onContentLoad", "onLoad", "comment"]
    static let entry: Set<String> = ["pageref", "startedDateTime", "time", "request", "response", "cache", "timings",
                                     "serverIPAddress", "connection", "comment"]
    static let request: Set<String> = ["method", "url", "httpVersion", "cookies", "headers", "queryString", "postData",
                                       "headersSize", "bodySize", "comment"]
    static let response: Set<String> = ["status", "statusText", "httpVersion", "cookies", "headers", "content",
                                        "redirectURL", "headersSize", "bodySize", "comment"]
    // "sameSite" is not HAR 1.2 but Chrome writes it and so does harrec.
    static let cookie: Set<String> = ["name", "value", "path", "domain", "expires", "httpOnly", "secure", "sameSite", "comment"]
    static let nameValue: Set<String> = ["name", "value", "comment"]
    /// `encoding` is not in HAR 1.2's postData; harrec writes it (as content.encoding, "base64")
    /// for binary request bodies, as HAR 1.3 drafts and several tools do, so it is accepted here.
    static let postData: Set<String> = ["mimeType", "params", "text", "encoding", "comment"]
    static let param: Set<String> = ["name", "value", "fileName", "contentType", "comment"]
    static let content: Set<String> = ["size", "compression", "mimeType", "text", "encoding", "comment"]
    static let cache: Set<String> = ["beforeRequest", "afterRequest", "comment"]
    static let cacheEntry: Set<String> = ["expires", "lastAccess", "eTag", "hitCount", "comment"]
    static let timings: Set<String> = ["blocked", "dns", "connect", "send", "wait", "receive", "ssl", "comment"]
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

private func lastValue(_ fields: JSONFields, _ key: String) -> JSONValue? {
    for f in fields.reversed() where f.key == key { return f.value }
    return nil
}

private struct Checker {
    var problems: [HARProblem] = []
    var pageIDs: Set<String>? = nil

    mutating func report(_ path: String, _ message: String, _ rule: HARRule) {
        problems.append(HARProblem(path: path, message: message, rule: rule))
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// Reports duplicate keys and members that are neither known nor "_"-prefixed.
    mutating func checkKeys(_ fields: JSONFields, _ path: String, _ known: Set<String>) {
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

    /// The object at `key`: reports missing / wrong type, returns its fields when it is an object.
    mutating func object(_ fields: JSONFields, _ key: String, _ path: String, required: Bool) -> JSONFields? {
        guard let v = lastValue(fields, key) else {
            if required { report(join(path, key), "missing required object", .required) }
            return nil
        }
        guard case .object(let inner) = v else {
            report(join(path, key), "must be an object, found \(v.typeName)", .type)
            return nil
        }
        return inner
    }

    mutating func array(_ fields: JSONFields, _ key: String, _ path: String, required: Bool) -> [JSONValue]? {
        guard let v = lastValue(fields, key) else {
            if required { report(join(path, key), "missing required array", .required) }
            return nil
        }
        guard case .array(let items) = v else {
            report(join(path, key), "must be an array, found \(v.typeName)", .type)
            return nil
        }
        return items
    }

    @discardableResult
    mutating func string(_ fields: JSONFields, _ key: String, _ path: String, required: Bool) -> String? {
        guard let v = lastValue(fields, key) else {
            if required { report(join(path, key), "missing required string", .required) }
            return nil
        }
        guard case .string(let s) = v else {
            report(join(path, key), "must be a string, found \(v.typeName)", .type)
            return nil
        }
        return s
    }

    mutating func bool(_ fields: JSONFields, _ key: String, _ path: String) {
        guard let v = lastValue(fields, key) else { return }
        if case .bool = v { return }
        report(join(path, key), "must be a boolean, found \(v.typeName)", .type)
    }

    mutating func number(_ fields: JSONFields, _ key: String, _ path: String, required: Bool) -> Double? {
        guard let v = lastValue(fields, key) else {
            if required { report(join(path, key), "missing required number", .required) }
            return nil
        }
        guard case .number(let literal) = v else {
            report(join(path, key), "must be a number, found \(v.typeName)", .type)
            return nil
        }
        guard let d = Double(literal), d.isFinite else {
            report(join(path, key), "number \(literal) is out of range", .range)
            return nil
        }
        return d
    }

    /// An integer member within `minimum...maximum`.
    @discardableResult
    mutating func integer(_ fields: JSONFields, _ key: String, _ path: String, required: Bool,
                          minimum: Int, maximum: Int = Int.max) -> Int? {
        guard let v = lastValue(fields, key) else {
            if required { report(join(path, key), "missing required integer", .required) }
            return nil
        }
        guard case .number(let literal) = v else {
            report(join(path, key), "must be an integer, found \(v.typeName)", .type)
            return nil
        }
        guard let i = JSONValue.integer(fromLiteral: literal) else {
            report(join(path, key), "must be an integer, found \(literal)", .integer)
            return nil
        }
        if i < minimum || i > maximum {
            let range = maximum == Int.max ? ">= \(minimum)" : "in \(minimum)...\(maximum)"
            report(join(path, key), "must be \(range), found \(i)", .range)
            return nil
        }
        return i
    }

    mutating func comment(_ fields: JSONFields, _ path: String) {
        string(fields, "comment", path, required: false)
    }

    /// A date-time member. `strict` (startedDateTime) requires fractional seconds.
    mutating func dateTime(_ fields: JSONFields, _ key: String, _ path: String, required: Bool, strict: Bool) -> Double? {
        guard let s = string(fields, key, path, required: required) else { return nil }
        guard let parsed = HARDate.parseISO(s), !strict || parsed.hasFraction else {
            let want = strict ? "an ISO 8601 date-time with fractional seconds and a time zone (like 2009-07-24T19:20:30.123+02:00)"
                              : "an ISO 8601 date-time with a time zone"
            report(join(path, key), "must be \(want), found \(quoted(s))", .dateTime)
            return nil
        }
        return parsed.epochSeconds
    }

    // MARK: Objects

    mutating func root(_ json: JSONValue) {
        guard case .object(let top) = json else {
            report("", "the document must be an object with a \"log\" member, found \(json.typeName)", .type)
            return
        }
        checkKeys(top, "", Known.root)
        guard let log = object(top, "log", "", required: true) else { return }
        self.log(log, "log")
    }

    mutating func log(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.log)
        if let version = string(f, "version", path, required: true), version != "1.2" && version != "1.1" {
            report(join(path, "version"), "must be \"1.2\", found \(quoted(version))", .version)
        }
        if let c = object(f, "creator", path, required: true) { creator(c, join(path, "creator")) }
        if let b = object(f, "browser", path, required: false) { creator(b, join(path, "browser")) }
        if let pages = array(f, "pages", path, required: false) {
            var ids = Set<String>()
            for (i, p) in pages.enumerated() {
                let pp = "\(path).pages[\(i)]"
                guard case .object(let pf) = p else {
                    report(pp, "must be an object, found \(p.typeName)", .type)
                    continue
                }
                if let id = page(pf, pp), !ids.insert(id).inserted {
                    report(pp + ".id", "duplicate page id \(quoted(id))", .pageref)
                }
            }
            pageIDs = ids
        }
        if let entries = array(f, "entries", path, required: true) {
            var previous: Double? = nil
            for (i, e) in entries.enumerated() {
                let ep = "\(path).entries[\(i)]"
                guard case .object(let ef) = e else {
                    report(ep, "must be an object, found \(e.typeName)", .type)
                    continue
                }
                if let started = entry(ef, ep) {
                    if let previous, started < previous {
                        report(ep + ".startedDateTime", "entries must be sorted by startedDateTime; this one starts before the previous entry", .entryOrder)
                    }
                    previous = started
                }
            }
        }
        comment(f, path)
    }

    mutating func creator(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.creator)
        string(f, "name", path, required: true)
        string(f, "version", path, required: true)
        comment(f, path)
    }

    /// Returns the page id.
    mutating func page(_ f: JSONFields, _ path: String) -> String? {
        checkKeys(f, path, Known.page)
        _ = dateTime(f, "startedDateTime", path, required: true, strict: true)
        let id = string(f, "id", path, required: true)
        string(f, "title", path, required: true)
        if let t = object(f, "pageTimings", path, required: true) {
            let tp = join(path, "pageTimings")
            checkKeys(t, tp, Known.pageTimings)
            for key in ["onContentLoad", "onLoad"] {
                if let d = number(t, key, tp, required: false), d < 0 && d != -1 {
                    report(join(tp, key), "must be -1 or >= 0, found \(d)", .timing)
                }
            }
            comment(t, tp)
        }
        comment(f, path)
        return id
    }

    /// Returns the entry's start time (epoch seconds) when it is valid.
    mutating func entry(_ f: JSONFields, _ path: String) -> Double? {
        checkKeys(f, path, Known.entry)
        if let ref = string(f, "pageref", path, required: false) {
            if pageIDs?.contains(ref) != true {
                report(join(path, "pageref"), "no page has id \(quoted(ref))", .pageref)
            }
        }
        let started = dateTime(f, "startedDateTime", path, required: true, strict: true)
        let time = number(f, "time", path, required: true)
        if let r = object(f, "request", path, required: true) { request(r, join(path, "request")) }
        if let r = object(f, "response", path, required: true) { response(r, join(path, "response")) }
        if let c = object(f, "cache", path, required: true) { cache(c, join(path, "cache")) }
        if let t = object(f, "timings", path, required: true) {
            // The sum is only compared when every timing is valid, so one bad phase is one problem.
            if let sum = timings(t, join(path, "timings")), let time, abs(time - sum) > HARValidator.timeSumTolerance {
                report(join(path, "time"), "time \(formatMs(time)) is not the sum of the timings \(formatMs(sum)) (blocked+dns+connect+send+wait+receive, -1 excluded, ssl counted inside connect)", .timeSum)
            }
        }
        string(f, "serverIPAddress", path, required: false)
        string(f, "connection", path, required: false)
        comment(f, path)
        return started
    }

    mutating func request(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.request)
        string(f, "method", path, required: true)
        if let url = string(f, "url", path, required: true), let reason = urlProblem(url) {
            report(join(path, "url"), reason, .url)
        }
        string(f, "httpVersion", path, required: true)
        cookies(f, path)
        nameValues(f, "headers", path)
        nameValues(f, "queryString", path)
        if let p = object(f, "postData", path, required: false) { postData(p, join(path, "postData")) }
        integer(f, "headersSize", path, required: true, minimum: -1)
        integer(f, "bodySize", path, required: true, minimum: -1)
        comment(f, path)
    }

    mutating func response(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.response)
        integer(f, "status", path, required: true, minimum: 0, maximum: 999)
        string(f, "statusText", path, required: true)
        string(f, "httpVersion", path, required: true)
        cookies(f, path)
        nameValues(f, "headers", path)
        if let c = object(f, "content", path, required: true) { content(c, join(path, "content")) }
        string(f, "redirectURL", path, required: true)
        integer(f, "headersSize", path, required: true, minimum: -1)
        integer(f, "bodySize", path, required: true, minimum: -1)
        comment(f, path)
    }

    mutating func cookies(_ f: JSONFields, _ path: String) {
        guard let items = array(f, "cookies", path, required: true) else { return }
        for (i, item) in items.enumerated() {
            let cp = "\(path).cookies[\(i)]"
            guard case .object(let c) = item else {
                report(cp, "must be an object, found \(item.typeName)", .type)
                continue
            }
            checkKeys(c, cp, Known.cookie)
            string(c, "name", cp, required: true)
            string(c, "value", cp, required: true)
            string(c, "path", cp, required: false)
            string(c, "domain", cp, required: false)
            _ = dateTime(c, "expires", cp, required: false, strict: false)
            bool(c, "httpOnly", cp)
            bool(c, "secure", cp)
            string(c, "sameSite", cp, required: false)
            comment(c, cp)
        }
    }

    mutating func nameValues(_ f: JSONFields, _ key: String, _ path: String) {
        guard let items = array(f, key, path, required: true) else { return }
        for (i, item) in items.enumerated() {
            let hp = "\(path).\(key)[\(i)]"
            guard case .object(let h) = item else {
                report(hp, "must be an object, found \(item.typeName)", .type)
                continue
            }
            checkKeys(h, hp, Known.nameValue)
            string(h, "name", hp, required: true)
            string(h, "value", hp, required: true)
            comment(h, hp)
        }
    }

    mutating func postData(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.postData)
        string(f, "mimeType", path, required: true)
        let text = string(f, "text", path, required: false)
        let params = array(f, "params", path, required: false)
        if lastValue(f, "text") == nil && lastValue(f, "params") == nil {
            report(path, "postData must have text or params", .postData)
        }
        if let encoding = string(f, "encoding", path, required: false) {
            if encoding != "base64" {
                report(join(path, "encoding"), "must be \"base64\", found \(quoted(encoding))", .encoding)
            } else if let text, Base64.decodedCount(text) == nil {
                report(join(path, "text"), "is not valid base64 (RFC 4648 alphabet, padded, no whitespace)", .base64)
            }
        }
        for (i, item) in (params ?? []).enumerated() {
            let pp = "\(path).params[\(i)]"
            guard case .object(let p) = item else {
                report(pp, "must be an object, found \(item.typeName)", .type)
                continue
            }
            checkKeys(p, pp, Known.param)
            string(p, "name", pp, required: true)
            string(p, "value", pp, required: false)
            string(p, "fileName", pp, required: false)
            string(p, "contentType", pp, required: false)
            comment(p, pp)
        }
        comment(f, path)
    }

    mutating func content(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.content)
        let size = integer(f, "size", path, required: true, minimum: -1)
        // Negative when the coding made a small body larger (gzip of a few bytes): still the truth.
        integer(f, "compression", path, required: false, minimum: Int.min)
        string(f, "mimeType", path, required: true)
        let text = string(f, "text", path, required: false)
        let encoding = string(f, "encoding", path, required: false)
        comment(f, path)

        var decodedLength: Int? = nil
        if let encoding {
            if encoding != "base64" {
                report(join(path, "encoding"), "must be \"base64\", found \(quoted(encoding))", .encoding)
            } else if let text {
                if let n = Base64.decodedCount(text) {
                    decodedLength = n
                } else {
                    report(join(path, "text"), "is not valid base64 (RFC 4648 alphabet, padded, no whitespace)", .base64)
                }
            }
        } else if let text {
            decodedLength = text.utf8.count
        }
        if let size, size >= 0, let decodedLength, size != decodedLength {
            var message = "size \(size) is not the decoded length of text (\(decodedLength) bytes)"
            if size < decodedLength { message += "; it looks like the compressed (transferred) size" }
            report(join(path, "size"), message, .contentSize)
        }
    }

    mutating func cache(_ f: JSONFields, _ path: String) {
        checkKeys(f, path, Known.cache)
        for key in ["beforeRequest", "afterRequest"] {
            guard let v = lastValue(f, key) else { continue }
            let cp = join(path, key)
            switch v {
            case .null:
                continue  // HAR 1.2: null means "no cache entry"
            case .object(let c):
                checkKeys(c, cp, Known.cacheEntry)
                _ = dateTime(c, "expires", cp, required: false, strict: false)
                _ = dateTime(c, "lastAccess", cp, required: true, strict: false)
                string(c, "eTag", cp, required: true)
                integer(c, "hitCount", cp, required: true, minimum: 0)
                comment(c, cp)
            default:
                report(cp, "must be an object or null, found \(v.typeName)", .type)
            }
        }
        comment(f, path)
    }

    /// Checks the timings and returns the sum that `time` must equal, or nil when a timing is
    /// missing or invalid (already reported).
    mutating func timings(_ f: JSONFields, _ path: String) -> Double? {
        let before = problems.count
        checkKeys(f, path, Known.timings)
        var sum = 0.0
        var values: [String: Double] = [:]
        for key in ["blocked", "dns", "connect", "send", "wait", "receive", "ssl"] {
            let required = key == "send" || key == "wait" || key == "receive"
            guard let d = number(f, key, path, required: required) else { continue }
            if required {
                if d < 0 { report(join(path, key), "must be >= 0, found \(formatMs(d))", .timing); continue }
            } else if d < 0 && d != -1 {
                report(join(path, key), "must be -1 or >= 0, found \(formatMs(d))", .timing)
                continue
            }
            values[key] = d
            if key != "ssl" && d > 0 { sum += d }
        }
        let allValid = problems.count == before
        if let ssl = values["ssl"], ssl >= 0 {
            let connect = values["connect"] ?? -1
            if connect < ssl {
                report(join(path, "ssl"), "ssl \(formatMs(ssl)) is larger than connect \(formatMs(connect)); ssl time must be included in connect", .sslInConnect)
            }
        }
        comment(f, path)
        return allValid ? sum : nil
    }
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
