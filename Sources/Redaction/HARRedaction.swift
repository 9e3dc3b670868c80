import HAR

extension RedactionEngine {
    /// Redacts a whole log in place, entry by entry in order (so placeholder numbers follow the
    /// file), and returns what was replaced.
    @discardableResult
    public func redact(_ log: inout HARLog) -> RedactionReport {
        redactLogFields(&log)
        for index in log.entries.indices {
            redact(&log.entries[index], index: index)
        }
        return currentReport
    }

    /// Redacts what the log has outside its entries (page titles, comments). Call it before the
    /// entries when redacting them one by one with `redact(_:index:)`.
    public func redactLogFields(_ log: inout HARLog) {
        if var pages = log.pages {
            for index in pages.indices {
                let base = "log.pages[\(index)]"
                if let r = scanText(pages[index].title, .other, { base + ".title" }) { pages[index].title = r }
                redactComment(&pages[index].comment, base)
            }
            log.pages = pages
        }
        redactComment(&log.comment, "log")
    }

    /// Redacts one entry in place; `index` is its position, for paths in findings.
    public func redact(_ entry: inout HAREntry, index: Int) {
        journal.removeAll(keepingCapacity: true)
        entriesSeen += 1
        let base = "log.entries[\(index)]"
        redactRequest(&entry.request, base + ".request")
        redactResponse(&entry.response, base + ".response")
        if let ip = entry.serverIPAddress, let r = scanText(ip, .other, { base + ".serverIPAddress" }) {
            entry.serverIPAddress = r
        }
        redactComment(&entry.comment, base)
        entry.custom = redactCustom(entry.custom, base)
    }

    // MARK: - Request

    private func redactRequest(_ request: inout HARRequest, _ base: String) {
        if let r = redactURL(request.url, .url, { base + ".url" }) { request.url = r }
        redactHeaders(&request.headers, base, isResponse: false)
        for i in request.cookies.indices {
            redactCookieValue(&request.cookies[i], rule: .cookies, enabled: flags.cookies, "\(base).cookies[\(i)]")
            redactCookieAttributes(&request.cookies[i], "\(base).cookies[\(i)]")
        }
        for i in request.queryString.indices {
            let item = request.queryString[i]
            if let r = redactParameterValue(name: item.name, value: item.value, .query, { "\(base).queryString[\(i)].value" }) {
                request.queryString[i].value = r
            }
        }
        if var post = request.postData {
            let oldCount = post.text.map(Self.decodedLength(post)) ?? 0
            if var params = post.params {
                for i in params.indices {
                    guard let value = params[i].value else { continue }
                    if let r = redactParameterValue(name: params[i].name, value: value, .body,
                                                    { "\(base).postData.params[\(i)].value" }) {
                        params[i].value = r
                    }
                    if let fileName = params[i].fileName,
                       let r = scanText(fileName, .body, { "\(base).postData.params[\(i)].fileName" }) {
                        params[i].fileName = r
                    }
                }
                post.params = params
            }
            let isBase64 = post.custom.contains { $0.key == "encoding" && $0.value.stringValue == "base64" }
            if let text = post.text,
               let r = redactBody(text, base64: isBase64, mimeType: post.mimeType, .body, { base + ".postData.text" }) {
                post.text = r
                let newCount = Self.decodedLength(post)(r)
                adjustLength(headers: &request.headers, bodySize: &request.bodySize, from: oldCount, to: newCount)
            }
            redactComment(&post.comment, base + ".postData")
            request.postData = post
        }
        redactComment(&request.comment, base)
        request.custom = redactCustom(request.custom, base)
    }

    private static func decodedLength(_ post: HARPostData) -> (String) -> Int {
        let isBase64 = post.custom.contains { $0.key == "encoding" && $0.value.stringValue == "base64" }
        return { text in isBase64 ? (HARBuild.base64DecodedCount(text) ?? text.utf8.count) : text.utf8.count }
    }

    // MARK: - Response

    private func redactResponse(_ response: inout HARResponse, _ base: String) {
        redactHeaders(&response.headers, base, isResponse: true)
        for i in response.cookies.indices {
            redactCookieValue(&response.cookies[i], rule: .setCookies, enabled: flags.setCookies, "\(base).cookies[\(i)]")
            redactCookieAttributes(&response.cookies[i], "\(base).cookies[\(i)]")
        }
        if let r = redactURL(response.redirectURL, .url, { base + ".redirectURL" }) { response.redirectURL = r }
        var content = response.content
        if let text = content.text {
            let isBase64 = content.encoding == "base64"
            let oldCount = isBase64 ? (HARBuild.base64DecodedCount(text) ?? content.size) : text.utf8.count
            if let r = redactBody(text, base64: isBase64, mimeType: content.mimeType, .body, { base + ".content.text" }) {
                content.text = r
                let newCount = isBase64 ? (HARBuild.base64DecodedCount(r) ?? r.utf8.count) : r.utf8.count
                content.size = newCount
                if let compression = content.compression {
                    // The transferred size did not change; what compression saved did.
                    content.compression = compression + newCount - oldCount
                } else {
                    adjustLength(headers: &response.headers, bodySize: &response.bodySize, from: oldCount, to: newCount)
                }
            }
        }
        redactComment(&content.comment, base + ".content")
        content.custom = redactCustom(content.custom, base + ".content")
        response.content = content
        redactComment(&response.comment, base)
        response.custom = redactCustom(response.custom, base)
    }

    /// Keeps Content-Length and bodySize equal to the body harrec writes, when the body is not
    /// content-coded (a coded body's wire length is unknown after redaction and is left as is).
    private func adjustLength(headers: inout [HARHeader], bodySize: inout Int, from old: Int, to new: Int) {
        guard old != new else { return }
        let coded = headers.contains { $0.name.lowercased() == "content-encoding" && $0.value.lowercased() != "identity" }
        guard !coded else { return }
        if bodySize == old { bodySize = new }
        for i in headers.indices where headers[i].name.lowercased() == "content-length" && headers[i].value == String(old) {
            headers[i].value = String(new)
        }
    }

    /// A request or response body: base64 text bodies are decoded, redacted and re-encoded;
    /// binary ones are counted and left alone.
    private func redactBody(_ text: String, base64: Bool, mimeType: String, _ location: RedactionLocation,
                            _ path: () -> String) -> String? {
        guard !text.isEmpty else { return nil }
        if base64 {
            guard let bytes = HARBuild.decodeBase64(text), !bytes.isEmpty,
                  BodyKind.isTextual(mimeType: mimeType) || bytes.withUnsafeBufferPointer(Self.looksLikeJSON),
                  let decoded = String(validating: bytes, as: UTF8.self)
            else {
                binaryBodies += 1
                return nil
            }
            return redactDecodedBody(decoded, mimeType: mimeType, location, path).map { HARBuild.base64(Array($0.utf8)) }
        }
        return redactDecodedBody(text, mimeType: mimeType, location, path)
    }

    private func redactDecodedBody(_ text: String, mimeType: String, _ location: RedactionLocation,
                                   _ path: () -> String) -> String? {
        if BodyKind.isURLEncoded(mimeType) {
            return redactQuery(text, location, path, plusAsSpace: true)
        }
        if let boundary = BodyKind.boundary(of: mimeType) {
            return redactMultipart(text, boundary: boundary, location, path)
        }
        return redactTextOrJSON(text, location, path)
    }

    // MARK: - Headers and cookies

    private func redactHeaders(_ headers: inout [HARHeader], _ base: String, isResponse: Bool) {
        for i in headers.indices {
            let name = headers[i].name.lowercased()
            let value = headers[i].value
            let path = { "\(base).headers[\(i)].value" }
            var replacement: String?
            switch name {
            case "authorization", "proxy-authorization":
                replacement = flags.authorization ? redactAuthorization(value, path) : scanText(value, .header, path)
            case "cookie" where !isResponse:
                replacement = flags.cookies ? redactCookieHeader(value, path) : scanText(value, .header, path)
            case "set-cookie" where isResponse:
                replacement = flags.setCookies ? redactSetCookie(value, path) : scanText(value, .header, path)
            case "location", "content-location", "referer", "origin":
                replacement = redactURL(value, .header, path)
            default:
                if flags.secretHeaders && isSecretHeader(name) {
                    replacement = replaceSecret(value, .secretHeaders, .header, path)
                } else {
                    replacement = scanText(value, .header, path) ?? replaceKnownSecret(value, .header, path)
                }
            }
            if let replacement { headers[i].value = replacement }
            redactComment(&headers[i].comment, "\(base).headers[\(i)]")
        }
    }

    func isSecretHeader(_ lowercasedName: String) -> Bool {
        if config.secretHeaderNames.contains(lowercasedName) { return true }
        return config.secretHeaderNameParts.contains { lowercasedName.contains($0) }
    }

    /// "Bearer abc" -> "Bearer redacted-1": the scheme stays, the credential goes.
    private func redactAuthorization(_ value: String, _ path: () -> String) -> String? {
        let trimmed = value.trimmingSpaces
        guard let space = trimmed.firstIndex(of: " ") else {
            return replaceSecret(trimmed, .authorizationHeader, .header, path)
        }
        let scheme = trimmed[..<space]
        let credential = trimmed[space...].trimmingSpaces
        guard let r = replaceSecret(credential, .authorizationHeader, .header, path) else { return nil }
        return scheme + " " + r
    }

    /// "a=1; b=2" -> "a=redacted-1; b=redacted-2": every cookie's value, names kept.
    private func redactCookieHeader(_ value: String, _ path: () -> String) -> String? {
        var changed = false
        let pieces = value.split(separator: ";", omittingEmptySubsequences: false).map { piece -> String in
            guard let eq = piece.firstIndex(of: "=") else { return String(piece) }
            let cookieValue = String(piece[piece.index(after: eq)...]).trimmingSpaces
            guard let r = replaceSecret(cookieValue, .cookies, .cookie, path) else { return String(piece) }
            learnCookieName(String(piece[..<eq]).trimmingSpaces)
            changed = true
            return String(piece[...eq]) + r
        }
        return changed ? pieces.joined(separator: ";") : nil
    }

    /// "sid=abc; Path=/; Domain=x.corp" -> the value replaced, the attributes scanned as text.
    private func redactSetCookie(_ value: String, _ path: () -> String) -> String? {
        let semicolon = value.firstIndex(of: ";") ?? value.endIndex
        let pair = value[..<semicolon]
        var attributes = String(value[semicolon...])
        var changed = false
        var head = String(pair)
        if let eq = pair.firstIndex(of: "=") {
            let cookieValue = String(pair[pair.index(after: eq)...]).trimmingSpaces
            if let r = replaceSecret(cookieValue, .setCookies, .cookie, path) {
                head = String(pair[...eq]) + r
                learnCookieName(String(pair[..<eq]).trimmingSpaces)
                changed = true
            }
        }
        if let r = scanText(attributes, .cookie, path) {
            attributes = r
            changed = true
        }
        return changed ? head + attributes : nil
    }

    /// A `cookies` element's value: a placeholder when the rule is on; scanned as text when it is
    /// off, exactly as the header it came from is, so the array never keeps what the header lost.
    private func redactCookieValue(_ cookie: inout HARCookie, rule: RedactionRule, enabled: Bool, _ base: String) {
        let path = { base + ".value" }
        if enabled {
            if let r = replaceSecret(cookie.value, rule, .cookie, path) {
                cookie.value = r
                learnCookieName(cookie.name)
            }
        } else if let r = scanText(cookie.value, .cookie, path) {
            cookie.value = r
        }
    }

    private func redactCookieAttributes(_ cookie: inout HARCookie, _ base: String) {
        if let domain = cookie.domain, let r = scanText(domain, .cookie, { base + ".domain" }) { cookie.domain = r }
        redactComment(&cookie.comment, base)
    }

    // MARK: - Comments and custom fields

    private func redactComment(_ comment: inout String?, _ base: String) {
        if let text = comment, let r = scanText(text, .other, { base + ".comment" }) { comment = r }
    }

    /// Custom fields: `_webSocketMessages` message by message, every other string as text.
    private func redactCustom(_ custom: JSONFields, _ base: String) -> JSONFields {
        guard !custom.isEmpty else { return custom }
        var result = custom
        for i in result.indices {
            let key = result[i].key
            if key == "_webSocketMessages", case .array(let messages) = result[i].value {
                result[i].value = .array(redactWebSocketMessages(messages, base + "._webSocketMessages"))
            } else {
                result[i].value = redactJSONStrings(result[i].value, .other, base + "." + key)
            }
        }
        return result
    }

    private func redactWebSocketMessages(_ messages: [JSONValue], _ base: String) -> [JSONValue] {
        var out = messages
        for i in out.indices {
            guard case .object(var fields) = out[i],
                  let dataIndex = fields.firstIndex(where: { $0.key == "data" }),
                  let data = fields[dataIndex].value.stringValue else { continue }
            let opcode = fields.first { $0.key == "opcode" }?.value.intValue ?? 1
            let path = { "\(base)[\(i)].data" }
            // Binary messages, and text messages harrec had to store as base64 (invalid UTF-8):
            // rewriting base64 as if it were text would corrupt it.
            let isBase64 = fields.contains { ($0.key == "_encoding" || $0.key == "encoding") && $0.value.stringValue == "base64" }
            if opcode == 2 || isBase64 {
                binaryBodies += 1
                continue
            }
            let redacted = opcode == 1 ? redactTextOrJSON(data, .webSocket, path) : scanText(data, .webSocket, path)
            if let redacted {
                fields[dataIndex].value = .string(redacted)
                out[i] = .object(fields)
            }
        }
        return out
    }

    private func redactJSONStrings(_ value: JSONValue, _ location: RedactionLocation, _ path: String) -> JSONValue {
        switch value {
        case .string(let s):
            return scanText(s, location, { path }).map(JSONValue.string) ?? value
        case .array(let items):
            return .array(items.enumerated().map { redactJSONStrings($0.element, location, "\(path)[\($0.offset)]") })
        case .object(let fields):
            return .object(fields.map { (key: $0.key, value: redactJSONStrings($0.value, location, path + "." + $0.key)) })
        default:
            return value
        }
    }
}
