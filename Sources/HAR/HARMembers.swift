// The member tables of the HAR 1.2 types (http://www.softwareishard.com/blog/har-12-spec/), in
// spec order. Reader, writer, equality and validator all use these; see HARSchema.swift.

extension HARLog: HARObject {
    public static let schema = HARSchema<HARLog>(blank: { HARLog(version: "1.1", creator: HARCreator(name: "", version: "")) }, [
        .string("version", { $1($0.version) }, { $0.version = $1 }, default: "1.1", format: .version),
        .object("creator", { $1($0.creator) }, { $0.creator = $1 }),
        .optionalObject("browser", { $1($0.browser) }, { $0.browser = $1 }),
        .optionalArray("pages", { $1($0.pages) }, { $0.pages = $1 }),
        .array("entries", { $1($0.entries) }, { $0.entries = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARCreator: HARObject {
    public static let schema = HARSchema<HARCreator>(blank: { HARCreator(name: "", version: "") }, [
        .string("name", { $1($0.name) }, { $0.name = $1 }),
        .string("version", { $1($0.version) }, { $0.version = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARPage: HARObject {
    public static let schema = HARSchema<HARPage>(blank: { HARPage(startedDateTime: "", id: "", title: "") }, [
        .string("startedDateTime", { $1($0.startedDateTime) }, { $0.startedDateTime = $1 }, format: .dateTime(strict: true)),
        .string("id", { $1($0.id) }, { $0.id = $1 }),
        .string("title", { $1($0.title) }, { $0.title = $1 }),
        .object("pageTimings", { $1($0.pageTimings) }, { $0.pageTimings = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ], relations: { checker, fields, path, _ in checker.notePage(fields, path) })
}

extension HARPageTimings: HARObject {
    public static let schema = HARSchema<HARPageTimings>(blank: { HARPageTimings() }, [
        .optionalNumber("onContentLoad", { $1($0.onContentLoad) }, { $0.onContentLoad = $1 }, rule: .notApplicableOrNonNegative),
        .optionalNumber("onLoad", { $1($0.onLoad) }, { $0.onLoad = $1 }, rule: .notApplicableOrNonNegative),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HAREntry: HARObject {
    public static let schema = HARSchema<HAREntry>(blank: {
        HAREntry(startedDateTime: "", time: 0, request: .blank, response: .blank, timings: HARTimings(send: 0, wait: 0, receive: 0))
    }, [
        .optionalString("pageref", { $1($0.pageref) }, { $0.pageref = $1 }, format: .pageReference),
        .string("startedDateTime", { $1($0.startedDateTime) }, { $0.startedDateTime = $1 }, format: .dateTime(strict: true)),
        .number("time", { $1($0.time) }, { $0.time = $1 }),
        .object("request", { $1($0.request) }, { $0.request = $1 }),
        .object("response", { $1($0.response) }, { $0.response = $1 }),
        .object("cache", { $1($0.cache) }, { $0.cache = $1 }),
        .object("timings", { $1($0.timings) }, { $0.timings = $1 }),
        .optionalString("serverIPAddress", { $1($0.serverIPAddress) }, { $0.serverIPAddress = $1 }),
        .optionalString("connection", { $1($0.connection) }, { $0.connection = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ], finishReading: { entry, fields in
        // Without a usable `time`, the entry lasted as long as its timings say.
        if !fields.contains(where: { $0.key == "time" && $0.value.lenientDouble != nil }) { entry.time = entry.timings.total }
    }, relations: { checker, fields, path, _ in checker.checkEntryRelations(fields, path) })
}

extension HARRequest: HARObject {
    static let blank = HARRequest(method: "", url: "", httpVersion: "")

    public static let schema = HARSchema<HARRequest>(blank: { .blank }, [
        .string("method", { $1($0.method) }, { $0.method = $1 }),
        .string("url", { $1($0.url) }, { $0.url = $1 }, format: .url),
        .string("httpVersion", { $1($0.httpVersion) }, { $0.httpVersion = $1 }),
        .array("cookies", { $1($0.cookies) }, { $0.cookies = $1 }),
        .array("headers", { $1($0.headers) }, { $0.headers = $1 }),
        .array("queryString", { $1($0.queryString) }, { $0.queryString = $1 }),
        .optionalObject("postData", { $1($0.postData) }, { $0.postData = $1 }),
        .integer("headersSize", { $1($0.headersSize) }, { $0.headersSize = $1 }, default: -1, minimum: -1),
        .integer("bodySize", { $1($0.bodySize) }, { $0.bodySize = $1 }, default: -1, minimum: -1),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARResponse: HARObject {
    static let blank = HARResponse(status: 0, statusText: "", httpVersion: "", content: HARContent(size: 0, mimeType: ""))

    public static let schema = HARSchema<HARResponse>(blank: { .blank }, [
        .integer("status", { $1($0.status) }, { $0.status = $1 }, default: 0, minimum: 0, maximum: 999),
        .string("statusText", { $1($0.statusText) }, { $0.statusText = $1 }),
        .string("httpVersion", { $1($0.httpVersion) }, { $0.httpVersion = $1 }),
        .array("cookies", { $1($0.cookies) }, { $0.cookies = $1 }),
        .array("headers", { $1($0.headers) }, { $0.headers = $1 }),
        .object("content", { $1($0.content) }, { $0.content = $1 }),
        .string("redirectURL", { $1($0.redirectURL) }, { $0.redirectURL = $1 }),
        .integer("headersSize", { $1($0.headersSize) }, { $0.headersSize = $1 }, default: -1, minimum: -1),
        .integer("bodySize", { $1($0.bodySize) }, { $0.bodySize = $1 }, default: -1, minimum: -1),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARContent: HARObject {
    public static let schema = HARSchema<HARContent>(blank: { HARContent(size: 0, mimeType: "") }, [
        .integer("size", { $1($0.size) }, { $0.size = $1 }, default: 0, minimum: -1),
        // Negative when the coding made a small body larger (gzip of a few bytes): still the truth.
        .optionalInteger("compression", { $1($0.compression) }, { $0.compression = $1 }, minimum: Int.min),
        .string("mimeType", { $1($0.mimeType) }, { $0.mimeType = $1 }),
        .deferrableText,
        .optionalString("encoding", { $1($0.encoding) }, { $0.encoding = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ], relations: { checker, fields, path, _ in checker.checkContentRelations(fields, path) })
}

/// A body's `text`, which an export may hold as a `HARDeferredBody` instead.
public protocol HARDeferrableText {
    var text: String? { get set }
    var deferred: HARDeferredBody? { get set }
}

extension HARContent: HARDeferrableText {}
extension HARPostData: HARDeferrableText {}

extension HARMember where Root: HARDeferrableText {
    /// `text`: a string, or a deferred body written as one.
    static var deferrableText: Self {
        let plain = HARMember.optionalString("text", { $1($0.text) }, { $0.text = $1 })
        return Self(name: "text", required: false, shape: plain.shape, access: .nested(HARNestedAccess(
            read: { root, v, custom in plain.access.read("text", &root, v, &custom) },
            write: { root, w in
                if let body = root.deferred {
                    w.key("text")
                    w.deferredString(body)
                } else {
                    plain.access.write("text", root, &w)
                }
            },
            equal: { a, b in plain.access.equal(a, b) && a.deferred === b.deferred })))
    }
}

extension HARPostData: HARObject {
    public static let schema = HARSchema<HARPostData>(blank: { HARPostData(mimeType: "") }, [
        .string("mimeType", { $1($0.mimeType) }, { $0.mimeType = $1 }),
        .optionalArray("params", { $1($0.params) }, { $0.params = $1 }),
        .deferrableText,
        .optionalString("encoding", { $1($0.encoding) }, { $0.encoding = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ], relations: { checker, fields, path, _ in checker.checkPostDataRelations(fields, path) })
}

extension HARPostParam: HARObject {
    public static let schema = HARSchema<HARPostParam>(blank: { HARPostParam(name: "") }, [
        .string("name", { $1($0.name) }, { $0.name = $1 }),
        .optionalString("value", { $1($0.value) }, { $0.value = $1 }),
        .optionalString("fileName", { $1($0.fileName) }, { $0.fileName = $1 }),
        .optionalString("contentType", { $1($0.contentType) }, { $0.contentType = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARNameValue: HARObject {
    public static let schema = HARSchema<HARNameValue>(blank: { HARNameValue(name: "", value: "") }, [
        .string("name", { $1($0.name) }, { $0.name = $1 }),
        .string("value", { $1($0.value) }, { $0.value = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARCookie: HARObject {
    public static let schema = HARSchema<HARCookie>(blank: { HARCookie(name: "", value: "") }, [
        .string("name", { $1($0.name) }, { $0.name = $1 }),
        .string("value", { $1($0.value) }, { $0.value = $1 }),
        .optionalString("path", { $1($0.path) }, { $0.path = $1 }),
        .optionalString("domain", { $1($0.domain) }, { $0.domain = $1 }),
        .optionalString("expires", { $1($0.expires) }, { $0.expires = $1 }, format: .dateTime(strict: false)),
        .optionalBool("httpOnly", { $1($0.httpOnly) }, { $0.httpOnly = $1 }),
        .optionalBool("secure", { $1($0.secure) }, { $0.secure = $1 }),
        // Not in HAR 1.2; Chrome writes it here, and so does harrec.
        .optionalString("sameSite", { $1($0.sameSite) }, { $0.sameSite = $1 }),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARCache: HARObject {
    public static let schema = HARSchema<HARCache>(blank: { HARCache() }, [
        // `null` is HAR 1.2's "no cache entry"; the reader keeps it in `custom`.
        .optionalObject("beforeRequest", { $1($0.beforeRequest) }, { $0.beforeRequest = $1 }, nullable: true),
        .optionalObject("afterRequest", { $1($0.afterRequest) }, { $0.afterRequest = $1 }, nullable: true),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARCacheEntry: HARObject {
    public static let schema = HARSchema<HARCacheEntry>(blank: { HARCacheEntry(lastAccess: "", eTag: "", hitCount: 0) }, [
        .optionalString("expires", { $1($0.expires) }, { $0.expires = $1 }, format: .dateTime(strict: false)),
        .string("lastAccess", { $1($0.lastAccess) }, { $0.lastAccess = $1 }, format: .dateTime(strict: false)),
        .string("eTag", { $1($0.eTag) }, { $0.eTag = $1 }),
        .integer("hitCount", { $1($0.hitCount) }, { $0.hitCount = $1 }, default: 0, minimum: 0),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ])
}

extension HARTimings: HARObject {
    public static let schema = HARSchema<HARTimings>(blank: { HARTimings(send: 0, wait: 0, receive: 0) }, [
        .optionalNumber("blocked", { $1($0.blocked) }, { $0.blocked = $1 }, rule: .notApplicableOrNonNegative),
        .optionalNumber("dns", { $1($0.dns) }, { $0.dns = $1 }, rule: .notApplicableOrNonNegative),
        .optionalNumber("connect", { $1($0.connect) }, { $0.connect = $1 }, rule: .notApplicableOrNonNegative),
        .number("send", { $1($0.send) }, { $0.send = $1 }, rule: .nonNegative),
        .number("wait", { $1($0.wait) }, { $0.wait = $1 }, rule: .nonNegative),
        .number("receive", { $1($0.receive) }, { $0.receive = $1 }, rule: .nonNegative),
        .optionalNumber("ssl", { $1($0.ssl) }, { $0.ssl = $1 }, rule: .notApplicableOrNonNegative),
        .optionalString("comment", { $1($0.comment) }, { $0.comment = $1 }),
    ], relations: { checker, fields, path, clean in checker.checkTimingsRelations(fields, path, clean: clean) })
}
