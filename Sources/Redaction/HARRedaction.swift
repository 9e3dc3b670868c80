import HAR
import TextEncodings

/// A body pass 1 changed: its decoded length before, so pass 2 can set `content.size`, `bodySize`
/// and `Content-Length` from the final bytes.
struct BodyLengthFixup {
    enum Body { case request, response }
    var body: Body
    var oldLength: Int
}

extension RedactionEngine {
    /// Pass 1 of what the log has outside its entries (page titles, comments).
    func collectLogFields(_ log: inout HARLog) {
        if var pages = log.pages {
            for index in pages.indices {
                let base = "log.pages[\(index)]"
                if let r = redactTextOrJSON(pages[index].title, .other, { base + ".title" }) { pages[index].title = r }
                redactComment(&pages[index].comment, base)
            }
            log.pages = pages
        }
        redactComment(&log.comment, "log")
    }

    /// Pass 1 of one entry, in place: markers where values go. Returns the body length fixups.
    func collectEntry(_ entry: inout HAREntry, index: Int) -> [BodyLengthFixup] {
        journal.removeAll(keepingCapacity: true)
        entriesSeen += 1
        var fixups: [BodyLengthFixup] = []
        let base = "log.entries[\(index)]"
        redactRequest(&entry.request, base + ".request", &fixups)
        redactResponse(&entry.response, base + ".response", &fixups)
        if let ip = entry.serverIPAddress, let r = scanText(ip, .other, { base + ".serverIPAddress" }) {
            entry.serverIPAddress = r
        }
        redactComment(&entry.comment, base)
        entry.custom = redactCustom(entry.custom, base)
        return fixups
    }

    // MARK: - Request

    private func redactRequest(_ request: inout HARRequest, _ base: String, _ fixups: inout [BodyLengthFixup]) {
        if let r = redactURL(request.url, .url, { base + ".url" }) { request.url = r }
        redactHeaders(&request.headers, base, isResponse: false)
        for i in request.cookies.indices {
            redactCookieValue(&request.cookies[i], rule: .cookies, "\(base).cookies[\(i)]")
            redactCookieAttributes(&request.cookies[i], "\(base).cookies[\(i)]")
        }
        for i in request.queryString.indices {
            let item = request.queryString[i]
            if let r = redactParameterValue(name: item.name, value: item.value, .query, { "\(base).queryString[\(i)].value" }) {
                request.queryString[i].value = r
            }
        }
        if var post = request.postData {
            if var params = post.params {
                for i in params.indices {
                    if let value = params[i].value,
                       let r = redactParameterValue(name: params[i].name, value: value, .body, { "\(base).postData.params[\(i)].value" }) {
                        params[i].value = r
                    }
                    if let fileName = params[i].fileName,
                       let r = scanText(fileName, .body, { "\(base).postData.params[\(i)].fileName" }) {
                        params[i].fileName = r
                    }
                }
                post.params = params
            }
            let isBase64 = post.encoding == "base64"
            let deferredDone = post.deferred.map { redactDeferred(&post, $0, mimeType: post.mimeType, { base + ".postData.text" }) } ?? false
            if !deferredDone, let text = post.text {
                let old = Self.decodedLength(text, base64: isBase64)
                if let r = redactBody(text, base64: isBase64, mimeType: post.mimeType, .body, { base + ".postData.text" }) {
                    post.text = r
                    fixups.append(BodyLengthFixup(body: .request, oldLength: old))
                }
            }
            redactComment(&post.comment, base + ".postData")
            request.postData = post
        }
        redactComment(&request.comment, base)
        request.custom = redactCustom(request.custom, base)
    }

    static func decodedLength(_ text: String, base64: Bool) -> Int {
        base64 ? (Base64.decodedCount(text) ?? text.utf8.count) : text.utf8.count
    }

    // MARK: - Response

    private func redactResponse(_ response: inout HARResponse, _ base: String, _ fixups: inout [BodyLengthFixup]) {
        redactHeaders(&response.headers, base, isResponse: true)
        for i in response.cookies.indices {
            redactCookieValue(&response.cookies[i], rule: .setCookies, "\(base).cookies[\(i)]")
            redactCookieAttributes(&response.cookies[i], "\(base).cookies[\(i)]")
        }
        if let r = redactURL(response.redirectURL, .url, { base + ".redirectURL" }) { response.redirectURL = r }
        let deferredDone = response.content.deferred.map {
            redactDeferred(&response.content, $0, mimeType: response.content.mimeType, { base + ".content.text" })
        } ?? false
        if !deferredDone, let text = response.content.text {
            let isBase64 = response.content.encoding == "base64"
            let old = isBase64 ? (Base64.decodedCount(text) ?? response.content.size) : text.utf8.count
            if deferBodies && !isBase64 && !text.isEmpty {
                // Kept as bytes for pass 2 (`deferredResponseBody`); the text is set there.
                let rewritten = rewriteDecodedBody(text, mimeType: response.content.mimeType, .body, { base + ".content.text" }, asBytes: true)
                switch rewritten {
                case .string(let r): response.content.text = r
                case .bytes(let r): response.content.text = nil; deferredResponseBody = r
                case nil: break
                }
                if rewritten != nil { fixups.append(BodyLengthFixup(body: .response, oldLength: old)) }
            } else if let r = redactBody(text, base64: isBase64, mimeType: response.content.mimeType, .body, { base + ".content.text" }) {
                response.content.text = r
                fixups.append(BodyLengthFixup(body: .response, oldLength: old))
            }
        }
        redactComment(&response.content.comment, base + ".content")
        response.content.custom = redactCustom(response.content.custom, base + ".content")
        redactComment(&response.comment, base)
        response.custom = redactCustom(response.custom, base, isResponse: true)
    }

    /// A request or response body: base64 bodies of text are decoded, redacted and wrapped to be
    /// encoded again; binary ones are scanned for printable runs, lengths kept.
    private func redactBody(_ text: String, base64: Bool, mimeType: String, _ reading: Reading,
                            _ path: () -> String) -> String? {
        guard !text.isEmpty else { return nil }
        guard base64 else { return redactDecodedBody(text, mimeType: mimeType, reading, path) }
        guard let bytes = Base64.decode(text), !bytes.isEmpty else { return nil }
        let textual = BodyKind.isTextual(mimeType: mimeType) || bytes.withUnsafeBufferPointer(Self.looksLikeJSON)
        if textual, let decoded = String(validating: bytes, as: UTF8.self) {
            return redactDecodedBody(decoded, mimeType: mimeType, reading, path)
                .map { String(decoding: syntax.base64(Array($0.utf8), urlSafe: false, padded: true), as: UTF8.self) }
        }
        return redactBinary(bytes, reading, path)
    }

    // MARK: - Headers and cookies

    private func redactHeaders(_ headers: inout [HARHeader], _ base: String, isResponse: Bool, field: String = "headers") {
        for i in headers.indices {
            let name = headers[i].name.lowercased()
            let value = headers[i].value
            let path = { "\(base).\(field)[\(i)].value" }
            var replacement: String?
            switch name {
            case "authorization", "proxy-authorization":
                replacement = flags.has(.authorizationHeader) ? redactAuthorization(value, path) : scanText(value, .header, path)
            case "cookie" where !isResponse:
                replacement = redactCookieHeader(value, path)
            case "set-cookie" where isResponse:
                replacement = flags.has(.setCookies) ? redactSetCookie(value, path) : scanText(value, .header, path)
            case "location", "content-location", "referer", "origin":
                replacement = redactURL(value, .header, path)
            default:
                replacement = redactNamedHeader(name, value, path)
            }
            if let replacement { headers[i].value = replacement }
            redactComment(&headers[i].comment, "\(base).\(field)[\(i)]")
        }
    }

    /// Protocol headers whose names hold a secret word but whose values are no secret.
    static let protocolHeaders: Set<String> = [
        "sec-websocket-key", "sec-websocket-accept", "sec-websocket-extensions", "sec-websocket-protocol",
        "sec-websocket-version", "www-authenticate", "proxy-authenticate", "keep-alive", "public-key-pins",
        "public-key-pins-report-only", "access-control-allow-headers", "access-control-expose-headers",
        "access-control-request-headers", "vary",
    ]

    private func redactNamedHeader(_ lowercasedName: String, _ value: String, _ path: () -> String) -> String? {
        if Self.protocolHeaders.contains(lowercasedName) { return scanText(value, .header, path) }
        var nameClass = nameMemo.classify(lowercasedName)
        if config.secretHeaderNames.contains(lowercasedName) { nameClass = .secret }
        if nameClass == .bareKey { nameClass = .secret }
        switch nameClass {
        case .ordinary:
            return redactTextOrJSON(value, .header, path)
        case .version:
            return redactTextOrJSON(value, Reading.header.with(.version), path)
        default:
            if let r = replaceNamedValue(value, nameClass, secretRule: .secretHeaders, .header, path) { return r }
            if nameClass == .secret && flags.has(.secretHeaders) { return nil }
            return redactTextOrJSON(value, .header, path)
        }
    }

    /// "Bearer abc" -> "Bearer redacted-1": the scheme stays, the credential goes.
    private func redactAuthorization(_ value: String, _ path: () -> String) -> String? {
        let trimmed = value.trimmingSpaces
        guard let space = trimmed.firstIndex(ofByte: 0x20) else {
            return replaceSecret(trimmed, .authorizationHeader, .header, path)
        }
        let scheme = trimmed[..<space]
        let credential = trimmed[space...].trimmingSpaces
        guard let r = replaceSecret(credential, .authorizationHeader, .header, path) else { return nil }
        if scheme.lowercased() == "basic", let decoded = Base64.decode(credential),
           let pair = String(validating: decoded, as: UTF8.self), let colon = pair.firstIndex(of: ":") {
            // The password inside is chased wherever else it appears (a form, a config dump).
            let password = String(pair[pair.index(after: colon)...])
            if !password.isEmpty { collector.chase(.secret, password) }
        }
        return scheme + " " + r
    }

    /// "a=1; b=2" -> "a=redacted-1; b=redacted-2": every cookie's value, names kept. With the
    /// rule off, each value is redacted as text (a base64 JSON cookie is still looked into).
    private func redactCookieHeader(_ value: String, _ path: () -> String) -> String? {
        var changed = false
        let pieces = value.pieces(splitAt: 0x3B).map { piece -> String in
            guard let eq = piece.firstIndex(ofByte: 0x3D) else { return String(piece) }
            let cookieValue = String(piece[piece.index(afterByte: eq)...]).trimmingSpaces
            guard flags.has(.cookies) else {
                guard let r = redactTextOrJSON(cookieValue, .cookie, path) else { return String(piece) }
                changed = true
                return String(piece[...eq]) + r
            }
            guard let r = replaceSecret(cookieValue, .cookies, .cookie, path) else { return String(piece) }
            collector.cookie(String(piece[..<eq]).trimmingSpaces, cookieValue)
            changed = true
            return String(piece[...eq]) + r
        }
        return changed ? pieces.joined(separator: ";") : nil
    }

    /// "sid=abc; Path=/; Domain=x.corp" -> the value replaced, the attributes scanned as text.
    private func redactSetCookie(_ value: String, _ path: () -> String) -> String? {
        let semicolon = value.firstIndex(ofByte: 0x3B) ?? value.endIndex
        let pair = value[..<semicolon]
        var attributes = String(value[semicolon...])
        var changed = false
        var head = String(pair)
        if let eq = pair.firstIndex(ofByte: 0x3D) {
            let cookieValue = String(pair[pair.index(afterByte: eq)...]).trimmingSpaces
            if let r = replaceSecret(cookieValue, .setCookies, .cookie, path) {
                collector.cookie(String(pair[..<eq]).trimmingSpaces, cookieValue)
                head = String(pair[...eq]) + r
                changed = true
            }
        }
        if let r = scanText(attributes, .cookie, path) {
            attributes = r
            changed = true
        }
        return changed ? head + attributes : nil
    }

    /// A `cookies` element's value: a placeholder when the rule is on; redacted as text when it
    /// is off, exactly as the header it came from is, so the array never keeps what the header lost.
    private func redactCookieValue(_ cookie: inout HARCookie, rule: RedactionRule, _ base: String) {
        let path = { base + ".value" }
        if flags.has(rule) {
            if let r = replaceSecret(cookie.value, rule, .cookie, path) {
                collector.cookie(cookie.name, cookie.value)
                cookie.value = r
            }
        } else if let r = redactTextOrJSON(cookie.value, .cookie, path) {
            cookie.value = r
        }
    }

    private func redactCookieAttributes(_ cookie: inout HARCookie, _ base: String) {
        if let domain = cookie.domain, let r = scanText(domain, .cookie, { base + ".domain" }) { cookie.domain = r }
        redactComment(&cookie.comment, base)
    }

    // MARK: - Comments and custom fields

    /// `base` is made only for a comment that is there (a path built per header and cookie showed).
    func redactComment(_ comment: inout String?, _ base: @autoclosure () -> String) {
        if let text = comment, let r = redactTextOrJSON(text, .other, { base() + ".comment" }) { comment = r }
    }

    /// Custom fields: `_webSocketMessages` message by message, `_trailers` (request and response
    /// trailer fields) exactly as headers, every other string as text.
    private func redactCustom(_ custom: JSONFields, _ base: String, isResponse: Bool = false) -> JSONFields {
        guard !custom.isEmpty else { return custom }
        var result = custom
        for i in result.indices {
            let key = result[i].key
            if key == "_webSocketMessages", case .array(let messages) = result[i].value {
                result[i].value = .array(redactWebSocketMessages(messages, base + "._webSocketMessages"))
            } else if key == "_trailers", case .array(let items) = result[i].value {
                result[i].value = .array(redactTrailers(items, base, isResponse: isResponse))
            } else {
                result[i].value = redactJSONStrings(result[i].value, .other, base + "." + key)
            }
        }
        return result
    }

    /// Trailer fields (`{"name", "value"}` objects) get the header rules; anything else in the
    /// array is scanned as text.
    private func redactTrailers(_ items: [JSONValue], _ base: String, isResponse: Bool) -> [JSONValue] {
        var out = items
        var fields: [(index: Int, header: HARHeader)] = []
        for (i, item) in items.enumerated() {
            if case .object(let object) = item, let name = object.first(where: { $0.key == "name" })?.value.stringValue,
               let value = object.first(where: { $0.key == "value" })?.value.stringValue {
                fields.append((i, HARHeader(name: name, value: value)))
            } else {
                out[i] = redactJSONStrings(item, .header, "\(base)._trailers[\(i)]")
            }
        }
        var headers = fields.map(\.header)
        redactHeaders(&headers, base, isResponse: isResponse, field: "_trailers")
        for (k, field) in fields.enumerated() where headers[k].value != field.header.value {
            guard case .object(var object) = out[field.index],
                  let valueIndex = object.firstIndex(where: { $0.key == "value" }) else { continue }
            object[valueIndex].value = .string(headers[k].value)
            out[field.index] = .object(object)
        }
        return out
    }

    private func redactWebSocketMessages(_ messages: [JSONValue], _ base: String) -> [JSONValue] {
        var out = messages
        for i in out.indices {
            guard case .object(var fields) = out[i],
                  let dataIndex = fields.firstIndex(where: { $0.key == "data" }),
                  let data = fields[dataIndex].value.stringValue else { continue }
            let opcode = fields.first { $0.key == "opcode" }?.value.intValue ?? 1
            let path = { "\(base)[\(i)].data" }
            // Binary messages, and text messages harrec had to store as base64 (invalid UTF-8).
            let isBase64 = fields.contains { ($0.key == "_encoding" || $0.key == "encoding") && $0.value.stringValue == "base64" }
            var redacted: String?
            if opcode == 2 || isBase64 {
                if let bytes = Base64.decode(data), !bytes.isEmpty { redacted = redactBinary(bytes, .webSocket, path) }
            } else {
                redacted = opcode == 1 ? redactTextOrJSON(data, .webSocket, path) : scanText(data, .webSocket, path)
            }
            if let redacted {
                fields[dataIndex].value = .string(redacted)
                out[i] = .object(fields)
            }
        }
        return out
    }

    private func redactJSONStrings(_ value: JSONValue, _ reading: Reading, _ path: String) -> JSONValue {
        switch value {
        case .string(let s):
            return redactTextOrJSON(s, reading, { path }).map(JSONValue.string) ?? value
        case .array(let items):
            return .array(items.enumerated().map { redactJSONStrings($0.element, reading, "\(path)[\($0.offset)]") })
        case .object(let fields):
            return .object(fields.map { (key: $0.key, value: redactJSONStrings($0.value, reading, path + "." + $0.key)) })
        default:
            return value
        }
    }
}
