// The HAR 1.2 object model (http://www.softwareishard.com/blog/har-12-spec/).
//
// Properties are declared in the order the spec lists them, which is also the order they are
// written in. Every object carries `custom`: members the model does not know (HAR custom fields
// start with "_"), kept in document order by the reader and written after the standard members.
// Do not put a standard member's name into `custom`: it would be written twice.

/// The `log` object, root of a HAR file.
public struct HARLog: Sendable, Equatable {
    public var version: String
    public var creator: HARCreator
    public var browser: HARCreator?
    public var pages: [HARPage]?
    public var entries: [HAREntry]
    public var comment: String?
    public var custom: JSONFields

    public init(version: String = "1.2", creator: HARCreator, browser: HARCreator? = nil, pages: [HARPage]? = nil,
                entries: [HAREntry] = [], comment: String? = nil, custom: JSONFields = []) {
        self.version = version
        self.creator = creator
        self.browser = browser
        self.pages = pages
        self.entries = entries
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARLog, b: HARLog) -> Bool {
        a.version == b.version && a.creator == b.creator && a.browser == b.browser && a.pages == b.pages
            && a.entries == b.entries && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// The `creator` and `browser` objects.
public struct HARCreator: Sendable, Equatable {
    public var name: String
    public var version: String
    public var comment: String?
    public var custom: JSONFields

    public init(name: String, version: String, comment: String? = nil, custom: JSONFields = []) {
        self.name = name
        self.version = version
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARCreator, b: HARCreator) -> Bool {
        a.name == b.name && a.version == b.version && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A `pages` element.
public struct HARPage: Sendable, Equatable {
    public var startedDateTime: String
    public var id: String
    public var title: String
    public var pageTimings: HARPageTimings
    public var comment: String?
    public var custom: JSONFields

    public init(startedDateTime: String, id: String, title: String, pageTimings: HARPageTimings = HARPageTimings(),
                comment: String? = nil, custom: JSONFields = []) {
        self.startedDateTime = startedDateTime
        self.id = id
        self.title = title
        self.pageTimings = pageTimings
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARPage, b: HARPage) -> Bool {
        a.startedDateTime == b.startedDateTime && a.id == b.id && a.title == b.title && a.pageTimings == b.pageTimings
            && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A page's `pageTimings`: milliseconds since the page's start, -1 when not applicable.
public struct HARPageTimings: Sendable, Equatable {
    public var onContentLoad: Double?
    public var onLoad: Double?
    public var comment: String?
    public var custom: JSONFields

    public init(onContentLoad: Double? = nil, onLoad: Double? = nil, comment: String? = nil, custom: JSONFields = []) {
        self.onContentLoad = onContentLoad
        self.onLoad = onLoad
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARPageTimings, b: HARPageTimings) -> Bool {
        a.onContentLoad == b.onContentLoad && a.onLoad == b.onLoad && a.comment == b.comment
            && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// An `entries` element: one HTTP exchange.
public struct HAREntry: Sendable, Equatable {
    public var pageref: String?
    /// ISO 8601 with milliseconds and a time zone; see `HARDate.format(epochSeconds:)`.
    public var startedDateTime: String
    /// Total milliseconds: the sum of the non-negative timings except `ssl`.
    public var time: Double
    public var request: HARRequest
    public var response: HARResponse
    public var cache: HARCache
    public var timings: HARTimings
    public var serverIPAddress: String?
    public var connection: String?
    public var comment: String?
    /// `_error`, `_resourceType`, `_webSocketMessages`, ...
    public var custom: JSONFields

    public init(pageref: String? = nil, startedDateTime: String, time: Double, request: HARRequest,
                response: HARResponse, cache: HARCache = HARCache(), timings: HARTimings,
                serverIPAddress: String? = nil, connection: String? = nil, comment: String? = nil,
                custom: JSONFields = []) {
        self.pageref = pageref
        self.startedDateTime = startedDateTime
        self.time = time
        self.request = request
        self.response = response
        self.cache = cache
        self.timings = timings
        self.serverIPAddress = serverIPAddress
        self.connection = connection
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HAREntry, b: HAREntry) -> Bool {
        a.pageref == b.pageref && a.startedDateTime == b.startedDateTime && a.time == b.time
            && a.request == b.request && a.response == b.response && a.cache == b.cache && a.timings == b.timings
            && a.serverIPAddress == b.serverIPAddress && a.connection == b.connection && a.comment == b.comment
            && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// The `request` object.
public struct HARRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var httpVersion: String
    public var cookies: [HARCookie]
    public var headers: [HARHeader]
    public var queryString: [HARQueryParam]
    public var postData: HARPostData?
    /// Bytes from the start of the request to the body's first byte; -1 when unknown.
    public var headersSize: Int
    /// Body bytes as sent (before any decoding); -1 when unknown.
    public var bodySize: Int
    public var comment: String?
    public var custom: JSONFields

    public init(method: String, url: String, httpVersion: String, cookies: [HARCookie] = [],
                headers: [HARHeader] = [], queryString: [HARQueryParam] = [], postData: HARPostData? = nil,
                headersSize: Int = -1, bodySize: Int = -1, comment: String? = nil, custom: JSONFields = []) {
        self.method = method
        self.url = url
        self.httpVersion = httpVersion
        self.cookies = cookies
        self.headers = headers
        self.queryString = queryString
        self.postData = postData
        self.headersSize = headersSize
        self.bodySize = bodySize
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARRequest, b: HARRequest) -> Bool {
        a.method == b.method && a.url == b.url && a.httpVersion == b.httpVersion && a.cookies == b.cookies
            && a.headers == b.headers && a.queryString == b.queryString && a.postData == b.postData
            && a.headersSize == b.headersSize && a.bodySize == b.bodySize && a.comment == b.comment
            && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// The `response` object.
public struct HARResponse: Sendable, Equatable {
    public var status: Int
    public var statusText: String
    public var httpVersion: String
    public var cookies: [HARCookie]
    public var headers: [HARHeader]
    public var content: HARContent
    public var redirectURL: String
    public var headersSize: Int
    public var bodySize: Int
    public var comment: String?
    public var custom: JSONFields

    public init(status: Int, statusText: String, httpVersion: String, cookies: [HARCookie] = [],
                headers: [HARHeader] = [], content: HARContent, redirectURL: String = "", headersSize: Int = -1,
                bodySize: Int = -1, comment: String? = nil, custom: JSONFields = []) {
        self.status = status
        self.statusText = statusText
        self.httpVersion = httpVersion
        self.cookies = cookies
        self.headers = headers
        self.content = content
        self.redirectURL = redirectURL
        self.headersSize = headersSize
        self.bodySize = bodySize
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARResponse, b: HARResponse) -> Bool {
        a.status == b.status && a.statusText == b.statusText && a.httpVersion == b.httpVersion
            && a.cookies == b.cookies && a.headers == b.headers && a.content == b.content
            && a.redirectURL == b.redirectURL && a.headersSize == b.headersSize && a.bodySize == b.bodySize
            && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A response's `content`.
public struct HARContent: Sendable, Equatable {
    /// Length of the decoded body in bytes.
    public var size: Int
    /// Bytes saved by content coding (decoded size minus transferred size).
    public var compression: Int?
    public var mimeType: String
    /// The decoded body as text, or its base64 when `encoding` is "base64".
    public var text: String?
    public var encoding: String?
    public var comment: String?
    public var custom: JSONFields

    public init(size: Int, compression: Int? = nil, mimeType: String, text: String? = nil, encoding: String? = nil,
                comment: String? = nil, custom: JSONFields = []) {
        self.size = size
        self.compression = compression
        self.mimeType = mimeType
        self.text = text
        self.encoding = encoding
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARContent, b: HARContent) -> Bool {
        a.size == b.size && a.compression == b.compression && a.mimeType == b.mimeType && a.text == b.text
            && a.encoding == b.encoding && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A request's `postData`.
///
/// HAR 1.2 calls `params` and `text` mutually exclusive, but Chrome and mitmproxy write both;
/// harrec writes `text` always and `params` for `application/x-www-form-urlencoded` bodies.
public struct HARPostData: Sendable, Equatable {
    public var mimeType: String
    public var params: [HARPostParam]?
    public var text: String?
    public var comment: String?
    public var custom: JSONFields

    public init(mimeType: String, params: [HARPostParam]? = nil, text: String? = nil, comment: String? = nil,
                custom: JSONFields = []) {
        self.mimeType = mimeType
        self.params = params
        self.text = text
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARPostData, b: HARPostData) -> Bool {
        a.mimeType == b.mimeType && a.params == b.params && a.text == b.text && a.comment == b.comment
            && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A `postData.params` element.
public struct HARPostParam: Sendable, Equatable {
    public var name: String
    public var value: String?
    public var fileName: String?
    public var contentType: String?
    public var comment: String?
    public var custom: JSONFields

    public init(name: String, value: String? = nil, fileName: String? = nil, contentType: String? = nil,
                comment: String? = nil, custom: JSONFields = []) {
        self.name = name
        self.value = value
        self.fileName = fileName
        self.contentType = contentType
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARPostParam, b: HARPostParam) -> Bool {
        a.name == b.name && a.value == b.value && a.fileName == b.fileName && a.contentType == b.contentType
            && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A `headers` element.
public struct HARHeader: Sendable, Equatable {
    public var name: String
    public var value: String
    public var comment: String?
    public var custom: JSONFields

    public init(name: String, value: String, comment: String? = nil, custom: JSONFields = []) {
        self.name = name
        self.value = value
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARHeader, b: HARHeader) -> Bool {
        a.name == b.name && a.value == b.value && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A `queryString` element (same shape as a header, a distinct type for clarity).
public struct HARQueryParam: Sendable, Equatable {
    public var name: String
    public var value: String
    public var comment: String?
    public var custom: JSONFields

    public init(name: String, value: String, comment: String? = nil, custom: JSONFields = []) {
        self.name = name
        self.value = value
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARQueryParam, b: HARQueryParam) -> Bool {
        a.name == b.name && a.value == b.value && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// A `cookies` element.
///
/// `sameSite` is not in HAR 1.2; it is written as "sameSite" (after `secure`), the way Chrome
/// does, and harrec's schema allows it as an optional string.
public struct HARCookie: Sendable, Equatable {
    public var name: String
    public var value: String
    public var path: String?
    public var domain: String?
    /// ISO 8601 with milliseconds, see `HARDate`.
    public var expires: String?
    public var httpOnly: Bool?
    public var secure: Bool?
    public var sameSite: String?
    public var comment: String?
    public var custom: JSONFields

    public init(name: String, value: String, path: String? = nil, domain: String? = nil, expires: String? = nil,
                httpOnly: Bool? = nil, secure: Bool? = nil, sameSite: String? = nil, comment: String? = nil,
                custom: JSONFields = []) {
        self.name = name
        self.value = value
        self.path = path
        self.domain = domain
        self.expires = expires
        self.httpOnly = httpOnly
        self.secure = secure
        self.sameSite = sameSite
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARCookie, b: HARCookie) -> Bool {
        a.name == b.name && a.value == b.value && a.path == b.path && a.domain == b.domain && a.expires == b.expires
            && a.httpOnly == b.httpOnly && a.secure == b.secure && a.sameSite == b.sameSite
            && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// The entry's `cache` object. harrec writes `{}` (no cache information).
public struct HARCache: Sendable, Equatable {
    public var beforeRequest: HARCacheEntry?
    public var afterRequest: HARCacheEntry?
    public var comment: String?
    /// Also holds `beforeRequest`/`afterRequest` when a file had them as `null` (HAR's "no cache
    /// entry"), so reading and writing such a file keeps the value.
    public var custom: JSONFields

    public init(beforeRequest: HARCacheEntry? = nil, afterRequest: HARCacheEntry? = nil, comment: String? = nil,
                custom: JSONFields = []) {
        self.beforeRequest = beforeRequest
        self.afterRequest = afterRequest
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARCache, b: HARCache) -> Bool {
        a.beforeRequest == b.beforeRequest && a.afterRequest == b.afterRequest && a.comment == b.comment
            && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// `cache.beforeRequest` / `cache.afterRequest`.
public struct HARCacheEntry: Sendable, Equatable {
    public var expires: String?
    public var lastAccess: String
    public var eTag: String
    public var hitCount: Int
    public var comment: String?
    public var custom: JSONFields

    public init(expires: String? = nil, lastAccess: String, eTag: String, hitCount: Int, comment: String? = nil,
                custom: JSONFields = []) {
        self.expires = expires
        self.lastAccess = lastAccess
        self.eTag = eTag
        self.hitCount = hitCount
        self.comment = comment
        self.custom = custom
    }

    public static func == (a: HARCacheEntry, b: HARCacheEntry) -> Bool {
        a.expires == b.expires && a.lastAccess == b.lastAccess && a.eTag == b.eTag && a.hitCount == b.hitCount
            && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}

/// The entry's `timings`, in milliseconds. Optional phases use -1 for "does not apply"; `nil`
/// leaves the member out. `ssl` is part of `connect` (HAR 1.2, for HAR 1.1 compatibility).
public struct HARTimings: Sendable, Equatable {
    public var blocked: Double?
    public var dns: Double?
    public var connect: Double?
    public var send: Double
    public var wait: Double
    public var receive: Double
    public var ssl: Double?
    public var comment: String?
    public var custom: JSONFields

    public init(blocked: Double? = nil, dns: Double? = nil, connect: Double? = nil, send: Double, wait: Double,
                receive: Double, ssl: Double? = nil, comment: String? = nil, custom: JSONFields = []) {
        self.blocked = blocked
        self.dns = dns
        self.connect = connect
        self.send = send
        self.wait = wait
        self.receive = receive
        self.ssl = ssl
        self.comment = comment
        self.custom = custom
    }

    /// The entry `time` these timings imply: the sum of non-negative phases, `ssl` excluded
    /// because it is already inside `connect`.
    public var total: Double {
        var sum = 0.0
        for v in [blocked, dns, connect] { if let v, v > 0 { sum += v } }
        for v in [send, wait, receive] where v > 0 { sum += v }
        return sum
    }

    public static func == (a: HARTimings, b: HARTimings) -> Bool {
        a.blocked == b.blocked && a.dns == b.dns && a.connect == b.connect && a.send == b.send && a.wait == b.wait
            && a.receive == b.receive && a.ssl == b.ssl && a.comment == b.comment && jsonFieldsEqual(a.custom, b.custom)
    }
}
