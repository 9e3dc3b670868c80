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
// Use `HARValidator` to find out what was wrong with a file; the reader does not report it.

/// Why a document could not be read as a HAR.
public enum HARReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not valid JSON.
    case json(JSONParseError)
    /// Valid JSON, but not a HAR: no top-level object with a `log` object.
    case notHAR(String)

    public var description: String {
        switch self {
        case .json(let e): return "invalid JSON: \(e)"
        case .notHAR(let reason): return "not a HAR file: \(reason)"
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

    /// Reads the `log` object itself.
    public init(lenient json: JSONValue) {
        self.init(version: "1.1", creator: HARCreator(name: "", version: ""))
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "version": version = v.lenientString ?? "1.1"
            case "creator": creator = HARCreator(lenient: v)
            case "browser": if case .object = v { browser = HARCreator(lenient: v) } else { custom.append((k, v)) }
            case "pages":
                if let items = v.arrayValue { pages = items.map(HARPage.init(lenient:)) } else { custom.append((k, v)) }
            case "entries": entries = (v.arrayValue ?? []).map(HAREntry.init(lenient:))
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

/// Removes a leading UTF-8 byte order mark.
func stripBOM(_ bytes: [UInt8]) -> [UInt8] {
    if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
        return Array(bytes[3...])
    }
    return bytes
}

extension HARCreator {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(name: "", version: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "name": name = v.lenientString ?? ""
            case "version": version = v.lenientString ?? ""
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARPage {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(startedDateTime: "", id: "", title: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "startedDateTime": startedDateTime = v.lenientString ?? ""
            case "id": id = v.lenientString ?? ""
            case "title": title = v.lenientString ?? ""
            case "pageTimings": pageTimings = HARPageTimings(lenient: v)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARPageTimings {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init()
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "onContentLoad": readOptional(k, v, into: &onContentLoad, custom: &custom)
            case "onLoad": readOptional(k, v, into: &onLoad, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HAREntry {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(startedDateTime: "", time: 0,
                  request: HARRequest(method: "", url: "", httpVersion: ""),
                  response: HARResponse(status: 0, statusText: "", httpVersion: "", content: HARContent(size: 0, mimeType: "")),
                  timings: HARTimings(send: 0, wait: 0, receive: 0))
        var sawTime = false
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "pageref": readOptional(k, v, into: &pageref, custom: &custom)
            case "startedDateTime": startedDateTime = v.lenientString ?? ""
            case "time":
                if let t = v.lenientDouble { time = t; sawTime = true }
            case "request": request = HARRequest(lenient: v)
            case "response": response = HARResponse(lenient: v)
            case "cache": cache = HARCache(lenient: v)
            case "timings": timings = HARTimings(lenient: v)
            case "serverIPAddress": readOptional(k, v, into: &serverIPAddress, custom: &custom)
            case "connection": readOptional(k, v, into: &connection, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
        if !sawTime { time = timings.total }
    }
}

extension HARRequest {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(method: "", url: "", httpVersion: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "method": method = v.lenientString ?? ""
            case "url": url = v.lenientString ?? ""
            case "httpVersion": httpVersion = v.lenientString ?? ""
            case "cookies": cookies = (v.arrayValue ?? []).map(HARCookie.init(lenient:))
            case "headers": headers = (v.arrayValue ?? []).map(HARHeader.init(lenient:))
            case "queryString": queryString = (v.arrayValue ?? []).map(HARQueryParam.init(lenient:))
            case "postData":
                if case .object = v { postData = HARPostData(lenient: v) } else { custom.append((k, v)) }
            case "headersSize": headersSize = v.lenientInt ?? -1
            case "bodySize": bodySize = v.lenientInt ?? -1
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARResponse {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(status: 0, statusText: "", httpVersion: "", content: HARContent(size: 0, mimeType: ""))
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "status": status = v.lenientInt ?? 0
            case "statusText": statusText = v.lenientString ?? ""
            case "httpVersion": httpVersion = v.lenientString ?? ""
            case "cookies": cookies = (v.arrayValue ?? []).map(HARCookie.init(lenient:))
            case "headers": headers = (v.arrayValue ?? []).map(HARHeader.init(lenient:))
            case "content": content = HARContent(lenient: v)
            case "redirectURL": redirectURL = v.lenientString ?? ""
            case "headersSize": headersSize = v.lenientInt ?? -1
            case "bodySize": bodySize = v.lenientInt ?? -1
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARContent {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(size: 0, mimeType: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "size": size = v.lenientInt ?? 0
            case "compression": readOptional(k, v, into: &compression, custom: &custom)
            case "mimeType": mimeType = v.lenientString ?? ""
            case "text": readOptional(k, v, into: &text, custom: &custom)
            case "encoding": readOptional(k, v, into: &encoding, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARPostData {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(mimeType: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "mimeType": mimeType = v.lenientString ?? ""
            case "params":
                if let items = v.arrayValue { params = items.map(HARPostParam.init(lenient:)) } else { custom.append((k, v)) }
            case "text": readOptional(k, v, into: &text, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARPostParam {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(name: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "name": name = v.lenientString ?? ""
            case "value": readOptional(k, v, into: &value, custom: &custom)
            case "fileName": readOptional(k, v, into: &fileName, custom: &custom)
            case "contentType": readOptional(k, v, into: &contentType, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARHeader {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(name: "", value: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "name": name = v.lenientString ?? ""
            case "value": value = v.lenientString ?? ""
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARQueryParam {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(name: "", value: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "name": name = v.lenientString ?? ""
            case "value": value = v.lenientString ?? ""
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARCookie {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(name: "", value: "")
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "name": name = v.lenientString ?? ""
            case "value": value = v.lenientString ?? ""
            case "path": readOptional(k, v, into: &path, custom: &custom)
            case "domain": readOptional(k, v, into: &domain, custom: &custom)
            case "expires": readOptional(k, v, into: &expires, custom: &custom)
            case "httpOnly": readOptional(k, v, into: &httpOnly, custom: &custom)
            case "secure": readOptional(k, v, into: &secure, custom: &custom)
            case "sameSite": readOptional(k, v, into: &sameSite, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARCache {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init()
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "beforeRequest":
                if case .object = v { beforeRequest = HARCacheEntry(lenient: v) } else { custom.append((k, v)) }
            case "afterRequest":
                if case .object = v { afterRequest = HARCacheEntry(lenient: v) } else { custom.append((k, v)) }
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARCacheEntry {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(lastAccess: "", eTag: "", hitCount: 0)
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "expires": readOptional(k, v, into: &expires, custom: &custom)
            case "lastAccess": lastAccess = v.lenientString ?? ""
            case "eTag": eTag = v.lenientString ?? ""
            case "hitCount": hitCount = v.lenientInt ?? 0
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

extension HARTimings {
    /// Reads this object leniently from `json` (see the rules at the top of HARRead.swift).
    public init(lenient json: JSONValue) {
        self.init(send: 0, wait: 0, receive: 0)
        for (k, v) in json.objectValue ?? [] {
            switch k {
            case "blocked": readOptional(k, v, into: &blocked, custom: &custom)
            case "dns": readOptional(k, v, into: &dns, custom: &custom)
            case "connect": readOptional(k, v, into: &connect, custom: &custom)
            case "send": send = v.lenientDouble ?? 0
            case "wait": wait = v.lenientDouble ?? 0
            case "receive": receive = v.lenientDouble ?? 0
            case "ssl": readOptional(k, v, into: &ssl, custom: &custom)
            case "comment": readOptional(k, v, into: &comment, custom: &custom)
            default: custom.append((k, v))
            }
        }
    }
}

// MARK: - Helpers

private func readOptional(_ key: String, _ v: JSONValue, into slot: inout String?, custom: inout JSONFields) {
    if case .string(let s) = v { slot = s } else { custom.append((key, v)) }
}

private func readOptional(_ key: String, _ v: JSONValue, into slot: inout Bool?, custom: inout JSONFields) {
    if case .bool(let b) = v { slot = b } else { custom.append((key, v)) }
}

private func readOptional(_ key: String, _ v: JSONValue, into slot: inout Int?, custom: inout JSONFields) {
    if let i = v.intValue { slot = i } else { custom.append((key, v)) }
}

private func readOptional(_ key: String, _ v: JSONValue, into slot: inout Double?, custom: inout JSONFields) {
    if let d = v.doubleValue, d.isFinite { slot = d } else { custom.append((key, v)) }
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
