import HAR
import TextEncodings

// Pass 2 over a HAR entry's fields and bodies (the byte scan is in Finalize.swift).
extension Finalizer {
    /// Pass 2 of the log's own fields.
    mutating func finalizeLogFields(_ log: inout HARLog) {
        if var pages = log.pages {
            for i in pages.indices {
                if let r = text(pages[i].title) { pages[i].title = r }
                finalize(&pages[i].comment)
            }
            log.pages = pages
        }
        finalize(&log.comment)
    }

    /// Pass 2 of one entry, with the body length fixups of pass 1. Returns how many known values
    /// were replaced per location.
    /// `responseBody`: the response body pass 1 kept as bytes (the entry's text is nil).
    mutating func finalizeEntry(_ entry: inout HAREntry, fixups: [BodyLengthFixup], responseBody: [UInt8]? = nil) -> [RedactionLocation: Int] {
        var counts: [RedactionLocation: Int] = [:]
        func count(_ location: RedactionLocation, _ work: () -> Void) {
            let before = hits.count
            work()
            if hits.count > before { counts[location, default: 0] += hits.count - before }
        }
        var request = entry.request
        count(.url) { if let r = url(request.url) { request.url = r } }
        count(.header) { finalize(&request.headers) }
        count(.cookie) { finalize(&request.cookies) }
        count(.query) {
            for i in request.queryString.indices {
                if let r = text(request.queryString[i].value) { request.queryString[i].value = r }
                if let r = text(request.queryString[i].name) { request.queryString[i].name = r }
            }
        }
        if var post = request.postData {
            let isBase64 = post.encoding == "base64"
            count(.body) {
                if var params = post.params {
                    for i in params.indices {
                        if let value = params[i].value, let r = text(value) { params[i].value = r }
                        if let name = params[i].fileName, let r = text(name) { params[i].fileName = r }
                    }
                    post.params = params
                }
                if let body = post.text {
                    let old = fixups.first { $0.body == .request }?.oldLength
                        ?? RedactionEngine.decodedLength(body, base64: isBase64)
                    if let r = finalizeBody(body, base64: isBase64, mimeType: post.mimeType) {
                        post.text = r
                    }
                    let new = RedactionEngine.decodedLength(post.text ?? "", base64: isBase64)
                    Self.adjustLength(headers: &request.headers, bodySize: &request.bodySize, from: old, to: new)
                } else if let deferred = post.deferred, let deferredContext {
                    finalizeDeferred(deferred, deferredContext)
                }
                finalize(&post.comment)
                post.custom = finalize(post.custom)
            }
            request.postData = post
        }
        count(.other) {
            finalize(&request.comment)
            request.custom = finalize(request.custom)
        }
        entry.request = request

        var response = entry.response
        count(.header) { finalize(&response.headers) }
        count(.cookie) { finalize(&response.cookies) }
        count(.url) { if let r = url(response.redirectURL) { response.redirectURL = r } }
        count(.body) {
            var content = response.content
            let isBase64 = content.encoding == "base64"
            var old: Int?
            if let body = responseBody {
                old = fixups.first { $0.body == .response }?.oldLength ?? body.count
                let queryFrom = BodyKind.isURLEncoded(content.mimeType) ? 0 : Int.max
                let final = body.withUnsafeBufferPointer { bytes($0, sameLength: false, queryFrom: queryFrom) } ?? body
                content.text = String(decoding: final, as: UTF8.self)
            } else if let body = content.text {
                old = fixups.first { $0.body == .response }?.oldLength
                    ?? (isBase64 ? (Base64.decodedCount(body) ?? content.size) : body.utf8.count)
                if let r = finalizeBody(body, base64: isBase64, mimeType: content.mimeType) { content.text = r }
            } else if let deferred = content.deferred, let deferredContext {
                finalizeDeferred(deferred, deferredContext)
            }
            if let old {
                let newText = content.text ?? ""
                let new = isBase64 ? (Base64.decodedCount(newText) ?? newText.utf8.count) : newText.utf8.count
                if old != new {
                    content.size = new
                    if let compression = content.compression {
                        // The transferred size did not change; what compression saved did.
                        content.compression = compression + new - old
                    } else {
                        Self.adjustLength(headers: &response.headers, bodySize: &response.bodySize, from: old, to: new)
                    }
                }
            }
            finalize(&content.comment)
            response.content = content
        }
        count(.webSocket) { response.content.custom = finalize(response.content.custom) }
        count(.other) {
            finalize(&response.comment)
            response.custom = finalize(response.custom)
        }
        entry.response = response
        count(.other) {
            if let ip = entry.serverIPAddress, let r = text(ip) { entry.serverIPAddress = r }
            finalize(&entry.comment)
        }
        count(.webSocket) { entry.custom = finalize(entry.custom) }
        return counts
    }

    /// A body: marks resolved; a base64 body pass 1 left alone is decoded to look for known values
    /// (binary ones keep their length).
    private mutating func finalizeBody(_ body: String, base64: Bool, mimeType: String) -> String? {
        var copy = body
        let marked = copy.withUTF8 { syntax.containsMarks($0) }
        if marked || !base64 { return text(body, queryFrom: BodyKind.isURLEncoded(mimeType) ? 0 : .max) }
        guard known != nil, let bytes = Base64.decode(body), !bytes.isEmpty else { return nil }
        let isText = BodyKind.isTextual(mimeType: mimeType) && String(validating: bytes, as: UTF8.self) != nil
        guard let r = bytes.withUnsafeBufferPointer({ self.bytes($0, sameLength: !isText) }) else { return nil }
        return Base64.encode(r)
    }

    private mutating func finalize(_ comment: inout String?) {
        if let s = comment, let r = text(s) { comment = r }
    }

    private mutating func finalize(_ headers: inout [HARHeader]) {
        for i in headers.indices {
            if let r = text(headers[i].value) { headers[i].value = r }
            finalize(&headers[i].comment)
        }
    }

    private mutating func finalize(_ cookies: inout [HARCookie]) {
        for i in cookies.indices {
            if let r = text(cookies[i].value) { cookies[i].value = r }
            if let d = cookies[i].domain, let r = text(d) { cookies[i].domain = r }
            if let p = cookies[i].path, let r = text(p) { cookies[i].path = r }
            finalize(&cookies[i].comment)
        }
    }

    /// Custom fields: every string; WebSocket messages stored as base64 are decoded (binary ones
    /// keep their length).
    private mutating func finalize(_ custom: JSONFields) -> JSONFields {
        guard !custom.isEmpty else { return custom }
        var result = custom
        for i in result.indices {
            if result[i].key == "_webSocketMessages", case .array(var messages) = result[i].value {
                for m in messages.indices {
                    guard case .object(var fields) = messages[m],
                          let d = fields.firstIndex(where: { $0.key == "data" }), let data = fields[d].value.stringValue
                    else { messages[m] = finalize(messages[m]); continue }
                    let binary = fields.first { $0.key == "opcode" }?.value.intValue == 2
                        || fields.contains { ($0.key == "_encoding" || $0.key == "encoding") && $0.value.stringValue == "base64" }
                    if let r = binary ? finalizeBody(data, base64: true, mimeType: "application/octet-stream") : text(data) {
                        fields[d].value = .string(r)
                        messages[m] = .object(fields)
                    }
                }
                result[i].value = .array(messages)
            } else {
                result[i].value = finalize(result[i].value)
            }
        }
        return result
    }

    private mutating func finalize(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s): return text(s).map(JSONValue.string) ?? value
        case .array(let items): return .array(items.map { finalize($0) })
        case .object(let fields): return .object(fields.map { (key: $0.key, value: finalize($0.value)) })
        default: return value
        }
    }

    /// Keeps Content-Length and bodySize equal to the body harrec writes, when the body is not
    /// content-coded (a coded body's wire length is unknown after redaction and is left as is).
    static func adjustLength(headers: inout [HARHeader], bodySize: inout Int, from old: Int, to new: Int) {
        guard old != new else { return }
        let coded = headers.contains { $0.name.lowercased() == "content-encoding" && $0.value.lowercased() != "identity" }
        guard !coded else { return }
        if bodySize == old { bodySize = new }
        for i in headers.indices where headers[i].name.lowercased() == "content-length" && headers[i].value == String(old) {
            headers[i].value = String(new)
        }
    }
}
