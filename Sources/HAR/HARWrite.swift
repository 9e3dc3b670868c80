// Writing the HAR model: members in HAR 1.2 spec order, optional members left out when nil,
// `custom` members last. Output is deterministic for a given model.

extension HARLog {
    /// The whole file, `{"log": {...}}`. Pretty output (2-space indent) ends with a newline;
    /// compact output has none.
    public func serialize(pretty: Bool = true) -> [UInt8] {
        // Rough size guess to avoid regrowing: bodies dominate, so count their text.
        var estimate = 4096
        for e in entries {
            estimate &+= 1500 &+ (e.response.content.text?.utf8.count ?? 0) &+ (e.request.postData?.text?.utf8.count ?? 0)
        }
        var w = JSONWriter(pretty: pretty, reservingCapacity: estimate)
        w.beginObject()
        w.key("log")
        write(to: &w)
        w.endObject()
        var out = w.finish()
        if pretty { out.append(0x0A) }
        return out
    }

    /// Writes the `log` object (without the enclosing `{"log": ...}`).
    public func write(to w: inout JSONWriter) {
        writeHead(to: &w)
        for e in entries { e.write(to: &w) }
        writeTail(to: &w)
    }

    /// Everything before the first entry: opens the log object and its `entries` array.
    func writeHead(to w: inout JSONWriter) {
        w.beginObject()
        w.key("version"); w.string(version)
        w.key("creator"); creator.write(to: &w)
        if let browser { w.key("browser"); browser.write(to: &w) }
        if let pages {
            w.key("pages")
            w.beginArray()
            for p in pages { p.write(to: &w) }
            w.endArray()
        }
        w.key("entries")
        w.beginArray()
    }

    /// Everything after the last entry: closes `entries` and the log object.
    func writeTail(to w: inout JSONWriter) {
        w.endArray()
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARCreator {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("version"); w.string(version)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARPage {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("startedDateTime"); w.string(startedDateTime)
        w.key("id"); w.string(id)
        w.key("title"); w.string(title)
        w.key("pageTimings"); pageTimings.write(to: &w)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARPageTimings {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("onContentLoad", onContentLoad)
        w.field("onLoad", onLoad)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HAREntry {
    /// Writes one entry object; usable for streaming entries into an open `entries` array.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("pageref", pageref)
        w.key("startedDateTime"); w.string(startedDateTime)
        w.key("time"); w.double(time)
        w.key("request"); request.write(to: &w)
        w.key("response"); response.write(to: &w)
        w.key("cache"); cache.write(to: &w)
        w.key("timings"); timings.write(to: &w)
        w.field("serverIPAddress", serverIPAddress)
        w.field("connection", connection)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARRequest {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("method"); w.string(method)
        w.key("url"); w.string(url)
        w.key("httpVersion"); w.string(httpVersion)
        w.key("cookies"); writeArray(cookies, to: &w) { $0.write(to: &$1) }
        w.key("headers"); writeArray(headers, to: &w) { $0.write(to: &$1) }
        w.key("queryString"); writeArray(queryString, to: &w) { $0.write(to: &$1) }
        if let postData { w.key("postData"); postData.write(to: &w) }
        w.key("headersSize"); w.int(headersSize)
        w.key("bodySize"); w.int(bodySize)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARResponse {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("status"); w.int(status)
        w.key("statusText"); w.string(statusText)
        w.key("httpVersion"); w.string(httpVersion)
        w.key("cookies"); writeArray(cookies, to: &w) { $0.write(to: &$1) }
        w.key("headers"); writeArray(headers, to: &w) { $0.write(to: &$1) }
        w.key("content"); content.write(to: &w)
        w.key("redirectURL"); w.string(redirectURL)
        w.key("headersSize"); w.int(headersSize)
        w.key("bodySize"); w.int(bodySize)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARContent {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("size"); w.int(size)
        w.field("compression", compression)
        w.key("mimeType"); w.string(mimeType)
        w.field("text", text)
        w.field("encoding", encoding)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARPostData {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("mimeType"); w.string(mimeType)
        if let params { w.key("params"); writeArray(params, to: &w) { $0.write(to: &$1) } }
        w.field("text", text)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARPostParam {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.field("value", value)
        w.field("fileName", fileName)
        w.field("contentType", contentType)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARHeader {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("value"); w.string(value)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARQueryParam {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("value"); w.string(value)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARCookie {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("value"); w.string(value)
        w.field("path", path)
        w.field("domain", domain)
        w.field("expires", expires)
        w.field("httpOnly", httpOnly)
        w.field("secure", secure)
        w.field("sameSite", sameSite)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARCache {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let beforeRequest { w.key("beforeRequest"); beforeRequest.write(to: &w) }
        if let afterRequest { w.key("afterRequest"); afterRequest.write(to: &w) }
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARCacheEntry {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("expires", expires)
        w.key("lastAccess"); w.string(lastAccess)
        w.key("eTag"); w.string(eTag)
        w.key("hitCount"); w.int(hitCount)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

extension HARTimings {
    /// Writes this object to `w` (members in spec order, then `custom`).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("blocked", blocked)
        w.field("dns", dns)
        w.field("connect", connect)
        w.key("send"); w.double(send)
        w.key("wait"); w.double(wait)
        w.key("receive"); w.double(receive)
        w.field("ssl", ssl)
        w.field("comment", comment)
        w.fields(custom)
        w.endObject()
    }
}

@inline(__always)
private func writeArray<T>(_ items: [T], to w: inout JSONWriter, _ body: (T, inout JSONWriter) -> Void) {
    w.beginArray()
    for item in items { body(item, &w) }
    w.endArray()
}
