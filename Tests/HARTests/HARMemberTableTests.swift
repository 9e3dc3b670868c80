import XCTest
@testable import HAR

/// The member tables (HARMembers.swift) are the one list of each HAR type's members: these
/// tests fail when a stored property is added without a table row, or a row is read, written or
/// validated differently from the others.
final class HARMemberTableTests: XCTestCase {
    private func assertTableMatchesStoredProperties<T: HARObject>(_ value: T, file: StaticString = #filePath, line: UInt = #line) {
        // `HARContent.deferred` is no member of its own: the `text` row writes it as the text.
        let stored = Mirror(reflecting: value).children.compactMap(\.label).filter { $0 != "custom" && $0 != "deferred" }
        XCTAssertEqual(T.schema.members.map(\.name), stored, "\(T.self): table rows and stored properties differ", file: file, line: line)
    }

    func testEveryStoredPropertyHasATableRowInDeclarationOrder() {
        let entry = Self.fullEntry()
        assertTableMatchesStoredProperties(Self.fullLog(entry))
        assertTableMatchesStoredProperties(entry.request.cookies[0])
        assertTableMatchesStoredProperties(entry.request.headers[0])
        assertTableMatchesStoredProperties(entry.request.queryString[0])
        assertTableMatchesStoredProperties(entry.request.postData!)
        assertTableMatchesStoredProperties(entry.request.postData!.params![0])
        assertTableMatchesStoredProperties(entry.request)
        assertTableMatchesStoredProperties(entry.response)
        assertTableMatchesStoredProperties(entry.response.content)
        assertTableMatchesStoredProperties(entry.cache)
        assertTableMatchesStoredProperties(entry.cache.beforeRequest!)
        assertTableMatchesStoredProperties(entry.timings)
        assertTableMatchesStoredProperties(entry)
        assertTableMatchesStoredProperties(HARCreator(name: "a", version: "1"))
        assertTableMatchesStoredProperties(HARPage(startedDateTime: "", id: "", title: ""))
        assertTableMatchesStoredProperties(HARPageTimings())
    }

    /// Every optional member set: whatever the writer writes, the reader reads back, and the
    /// validator finds nothing wrong.
    func testAFullyPopulatedLogRoundTripsAndValidates() throws {
        let log = Self.fullLog(Self.fullEntry())
        let bytes = log.serialize()
        XCTAssertEqual(try HARLog.parse(bytes), log)
        XCTAssertEqual(HARValidator.validate(bytes: bytes), [])
        let text = String(decoding: bytes, as: UTF8.self)
        for name in ["browser", "pageref", "serverIPAddress", "connection", "sameSite", "compression", "fileName",
                     "beforeRequest", "afterRequest", "hitCount", "onContentLoad", "ssl", "_custom"] {
            XCTAssertTrue(text.contains("\"\(name)\""), "\(name) was not written")
        }
    }

    func testEqualityComparesEveryMemberAndCustom() {
        let entry = Self.fullEntry()
        var changed = entry
        changed.request.postData?.encoding = nil
        XCTAssertNotEqual(entry, changed)
        changed = entry
        changed.cache.afterRequest?.hitCount += 1
        XCTAssertNotEqual(entry, changed)
        changed = entry
        changed.timings.custom = [(key: "_queued", value: .integer(1))]
        XCTAssertNotEqual(entry, changed)
        changed = entry
        changed.timings.custom = []
        XCTAssertEqual(entry, changed)
    }

    func testPostDataEncodingIsAMember() throws {
        let post = HARPostData(lenient: try JSONParser.parse(Array(#"{"mimeType":"application/octet-stream","text":"AAE=","encoding":"base64","_x":1}"#.utf8)))
        XCTAssertEqual(post.encoding, "base64")
        XCTAssertEqual(post.custom.map(\.key), ["_x"])
        var log = Self.fullLog(Self.fullEntry())
        log.entries[0].request.postData = HARPostData(mimeType: "application/octet-stream", text: "AA=E", encoding: "base64")
        XCTAssertEqual(HARValidator.validate(bytes: log.serialize()).map(\.rule), [.base64])
        log.entries[0].request.postData?.encoding = "gzip"
        XCTAssertEqual(HARValidator.validate(bytes: log.serialize()).map(\.rule), [.encoding])
    }

    /// The reader puts a value an optional member cannot hold into `custom`, and the writer
    /// writes it back: nothing is lost.
    func testOptionalMembersOfTheWrongTypeGoToCustomAndSurvive() throws {
        let json = #"{"name":"a","value":"b","httpOnly":"yes","expires":null,"secure":true}"#
        let cookie = HARCookie(lenient: try JSONParser.parse(Array(json.utf8)))
        XCTAssertEqual(cookie.httpOnly, nil)
        XCTAssertEqual(cookie.secure, true)
        XCTAssertEqual(cookie.custom.map(\.key), ["httpOnly", "expires"])
        var w = JSONWriter(pretty: false)
        cookie.write(to: &w)
        XCTAssertEqual(String(decoding: w.finish(), as: UTF8.self), #"{"name":"a","value":"b","secure":true,"httpOnly":"yes","expires":null}"#)
    }

    static func fullEntry() -> HAREntry {
        let cacheEntry = HARCacheEntry(expires: "2026-12-07T10:00:00.000Z", lastAccess: "2026-12-07T09:00:00.000Z",
                                       eTag: "\"e1\"", hitCount: 2, comment: "c")
        let request = HARRequest(
            method: "POST", url: "https://api.example.com/v1/items?q=1", httpVersion: "HTTP/1.1",
            cookies: [HARCookie(name: "sid", value: "1", path: "/", domain: "example.com", expires: "2026-12-08T00:00:00.000Z",
                                httpOnly: true, secure: true, sameSite: "Lax", comment: "c")],
            headers: [HARHeader(name: "Content-Type", value: "multipart/form-data", comment: "c")],
            queryString: [HARQueryParam(name: "q", value: "1", comment: "c")],
            postData: HARPostData(mimeType: "multipart/form-data",
                                  params: [HARPostParam(name: "f", value: "v", fileName: "a.txt", contentType: "text/plain", comment: "c")],
                                  text: "AAE=", encoding: "base64", comment: "c"),
            headersSize: 120, bodySize: 2, comment: "c")
        let response = HARResponse(
            status: 200, statusText: "OK", httpVersion: "HTTP/1.1",
            headers: [HARHeader(name: "Content-Length", value: "2")],
            content: HARContent(size: 2, compression: 0, mimeType: "text/plain", text: "hi", encoding: nil, comment: "c"),
            redirectURL: "", headersSize: 80, bodySize: 2, comment: "c")
        let timings = HARTimings(blocked: 1, dns: 2, connect: 5, send: 1, wait: 10, receive: 1, ssl: 3, comment: "c")
        return HAREntry(pageref: "p1", startedDateTime: "2026-12-07T09:00:00.000Z", time: timings.total, request: request,
                        response: response, cache: HARCache(beforeRequest: cacheEntry, afterRequest: cacheEntry, comment: "c"),
                        timings: timings, serverIPAddress: "127.0.0.1", connection: "1", comment: "c",
                        custom: [(key: "_custom", value: .bool(true))])
    }

    static func fullLog(_ entry: HAREntry) -> HARLog {
        HARLog(creator: HARCreator(name: "harrec", version: "1", comment: "c"), browser: HARCreator(name: "curl", version: "8"),
               pages: [HARPage(startedDateTime: "2026-12-07T09:00:00.000Z", id: "p1", title: "t",
                               pageTimings: HARPageTimings(onContentLoad: 1, onLoad: -1, comment: "c"), comment: "c")],
               entries: [entry], comment: "c")
    }
}
