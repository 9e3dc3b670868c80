// The HAR 1.2 object model (http://www.softwareishard.com/blog/har-12-spec/).
//
// Properties are declared in the order the spec lists them. Each type's member table
// (HARMembers.swift) says how it is read, written, compared and validated. Every object carries
// `custom`: members the table does not know (HAR custom fields start with "_"), kept in document
// order by the reader and written after the standard members. Do not put a standard member's
// name into `custom`: it would be written twice.

/// The `log` object, root of a HAR file.
public struct HARLog: Sendable {
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
}

/// The `creator` and `browser` objects.
public struct HARCreator: Sendable {
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
}

/// A `pages` element.
public struct HARPage: Sendable {
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
}

/// A page's `pageTimings`: milliseconds since the page's start, -1 when not applicable.
public struct HARPageTimings: Sendable {
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
}

/// An `entries` element: one HTTP exchange.
public struct HAREntry: Sendable {
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
}

/// The `request` object.
public struct HARRequest: Sendable {
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
}

/// The `response` object.
public struct HARResponse: Sendable {
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
}

/// A response's `content`.
public struct HARContent: Sendable {
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
    /// A body too large to hold, written as `text` (its base64) when the HAR is written; `text`
    /// is then nil. Only an export builds these.
    public var deferred: HARDeferredBody?

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
}

/// A request's `postData`.
///
/// HAR 1.2 calls `params` and `text` mutually exclusive, but Chrome and mitmproxy write both;
/// harrec writes `text` always and `params` for `application/x-www-form-urlencoded` bodies.
public struct HARPostData: Sendable {
    public var mimeType: String
    public var params: [HARPostParam]?
    public var text: String?
    /// "base64" when `text` is the base64 of a binary body. Not in HAR 1.2's postData; harrec
    /// writes it as `content.encoding` is written, as HAR 1.3 drafts and several tools do.
    public var encoding: String?
    public var comment: String?
    public var custom: JSONFields
    /// A body too large to hold, written as `text` (its base64) when the HAR is written; `text`
    /// is then nil. Only an export builds these.
    public var deferred: HARDeferredBody?

    public init(mimeType: String, params: [HARPostParam]? = nil, text: String? = nil, encoding: String? = nil,
                comment: String? = nil, custom: JSONFields = []) {
        self.mimeType = mimeType
        self.params = params
        self.text = text
        self.encoding = encoding
        self.comment = comment
        self.custom = custom
    }
}

/// A `postData.params` element.
public struct HARPostParam: Sendable {
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
}

/// A `headers` or `queryString` element: HAR 1.2 gives both the same members.
public struct HARNameValue: Sendable {
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
}

/// A `headers` element.
public typealias HARHeader = HARNameValue

/// A `queryString` element.
public typealias HARQueryParam = HARNameValue

/// A `cookies` element.
///
/// `sameSite` is not in HAR 1.2; it is written as "sameSite" (after `secure`), the way Chrome
/// does, and harrec's schema allows it as an optional string.
public struct HARCookie: Sendable {
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
}

/// The entry's `cache` object. harrec writes `{}` (no cache information).
public struct HARCache: Sendable {
    public var beforeRequest: HARCacheEntry? {
        get { entries?.before }
        set { entries = Entries(before: newValue, after: afterRequest) }
    }
    public var afterRequest: HARCacheEntry? {
        get { entries?.after }
        set { entries = Entries(before: beforeRequest, after: newValue) }
    }
    /// The two entries, boxed: almost every HAR leaves them out, and inline they took 160 bytes
    /// of every entry (a replay or export holds hundreds of thousands of entries).
    private var entries: Entries?
    public var comment: String?
    /// Also holds `beforeRequest`/`afterRequest` when a file had them as `null` (HAR's "no cache
    /// entry"), so reading and writing such a file keeps the value.
    public var custom: JSONFields

    public init(beforeRequest: HARCacheEntry? = nil, afterRequest: HARCacheEntry? = nil, comment: String? = nil,
                custom: JSONFields = []) {
        entries = Entries(before: beforeRequest, after: afterRequest)
        self.comment = comment
        self.custom = custom
    }

    /// Immutable: a change makes a new box, so copies never share a change.
    private final class Entries: Sendable {
        let before: HARCacheEntry?
        let after: HARCacheEntry?

        /// Nil when both are.
        init?(before: HARCacheEntry?, after: HARCacheEntry?) {
            guard before != nil || after != nil else { return nil }
            self.before = before
            self.after = after
        }
    }
}

extension HARCache: CustomReflectable {
    /// The members as a HAR has them: the box the two entries live in is storage, not a member.
    public var customMirror: Mirror {
        Mirror(self, children: ["beforeRequest": beforeRequest as Any, "afterRequest": afterRequest as Any,
                                "comment": comment as Any, "custom": custom])
    }
}

/// `cache.beforeRequest` / `cache.afterRequest`.
public struct HARCacheEntry: Sendable {
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
}

/// The entry's `timings`, in milliseconds. Optional phases use -1 for "does not apply"; `nil`
/// leaves the member out. `ssl` is part of `connect` (HAR 1.2, for HAR 1.1 compatibility).
public struct HARTimings: Sendable {
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
}
