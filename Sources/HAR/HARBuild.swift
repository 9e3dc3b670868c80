import TextEncodings
/// Pure helpers that turn HTTP pieces into HAR model values when exporting.
public enum HARBuild {
    // MARK: Cookies

    /// Parses a `Cookie` request header ("a=1; b=2"). Spaces and tabs around names and values
    /// are trimmed, a value in double quotes loses its quotes, empty pieces are skipped, and a
    /// piece without "=" becomes a cookie with an empty name (as RFC 6265bis and browsers do).
    public static func cookies(fromCookieHeader header: String) -> [HARCookie] {
        var out: [HARCookie] = []
        for piece in header.split(separator: ";", omittingEmptySubsequences: false) {
            let trimmed = trimOWS(piece)
            if trimmed.isEmpty { continue }
            let (name, value) = splitPair(trimmed)
            out.append(HARCookie(name: name, value: value))
        }
        return out
    }

    /// Parses a `Set-Cookie` response header. Returns nil when both name and value are empty.
    ///
    /// - `Path`, `Domain`, `SameSite` are copied as written (last one wins).
    /// - `Expires` is converted to ISO 8601 (`HARDate.parseHTTPDate` formats); an unparseable
    ///   date is left out.
    /// - `Max-Age` is relative to when the response arrived, which this pure function only knows
    ///   if `receivedAt` (epoch seconds) is given: then `expires` is `receivedAt + Max-Age`, and
    ///   Max-Age wins over Expires (RFC 6265 §5.3 step 3). Without `receivedAt` Max-Age is
    ///   ignored.
    /// - `httpOnly` and `secure` are always written, false when the attribute is absent (as
    ///   Chrome does).
    public static func cookie(fromSetCookie header: String, receivedAt: Double? = nil) -> HARCookie? {
        var parts = header.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let first = parts.next() else { return nil }
        let (name, value) = splitPair(trimOWS(first))
        if name.isEmpty && value.isEmpty { return nil }
        var cookie = HARCookie(name: name, value: value, httpOnly: false, secure: false)
        var expires: Double? = nil
        var maxAge: Int? = nil
        while let part = parts.next() {
            let attr = trimOWS(part)
            let eq = attr.firstIndex(of: "=")
            let attrName = trimOWS(eq.map { attr[..<$0] } ?? attr[...]).lowercased()
            let attrValue = eq.map { trimOWS(attr[attr.index(after: $0)...]) } ?? ""
            switch attrName {
            case "path": cookie.path = attrValue
            case "domain": cookie.domain = attrValue
            case "expires": if let t = HARDate.parseHTTPDate(attrValue) { expires = t }
            case "max-age":
                // max-age-av = "Max-Age=" non-zero-digit *DIGIT, but RFC 6265 §5.2.2 accepts a
                // leading "-" and zero (both mean "expire now").
                if let n = Int(attrValue) { maxAge = n }
            case "httponly": cookie.httpOnly = true
            case "secure": cookie.secure = true
            case "samesite": if !attrValue.isEmpty { cookie.sameSite = attrValue }
            default: break
            }
        }
        if let maxAge, let receivedAt {
            // Max-Age <= 0 means "already expired": the earliest representable time (RFC 6265).
            let seconds = maxAge <= 0 ? HARDate.minimumEpochSeconds : receivedAt + Double(maxAge)
            cookie.expires = HARDate.format(epochSeconds: seconds)
        } else if let expires {
            cookie.expires = HARDate.format(epochSeconds: expires)
        }
        return cookie
    }

    private static func trimOWS(_ s: Substring) -> String {
        var t = s
        while let f = t.first, f == " " || f == "\t" { t.removeFirst() }
        while let l = t.last, l == " " || l == "\t" { t.removeLast() }
        return String(t)
    }

    private static func splitPair(_ s: String) -> (String, String) {
        guard let eq = s.firstIndex(of: "=") else { return ("", unquote(s)) }
        let name = trimOWS(s[..<eq])
        let value = trimOWS(s[s.index(after: eq)...])
        return (name, unquote(value))
    }

    private static func unquote(_ s: String) -> String {
        if s.count >= 2, s.first == "\"", s.last == "\"" { return String(s.dropFirst().dropLast()) }
        return s
    }

    // MARK: Query strings and forms

    /// The query of `url` (after the first "?", before any "#") as name/value pairs: split on
    /// "&", the first "=" separates name from value ("a" alone has value ""), empty pairs are
    /// skipped, "+" is a space, percent escapes are decoded (invalid ones kept literally), and
    /// bytes that do not form UTF-8 become U+FFFD.
    public static func queryString(fromURL url: String) -> [HARQueryParam] {
        let bytes = Array(url.utf8)
        let end = bytes.firstIndex(of: 0x23) ?? bytes.count  // a "?" inside the fragment is not a query
        guard let q = bytes[..<end].firstIndex(of: 0x3F) else { return [] }
        return formPairs(bytes[(q + 1)..<end]).map { HARQueryParam(name: $0.0, value: $0.1) }
    }

    /// An `application/x-www-form-urlencoded` body as params, decoded like `queryString(fromURL:)`.
    public static func formParams(fromURLEncoded body: [UInt8]) -> [HARPostParam] {
        formPairs(body[...]).map { HARPostParam(name: $0.0, value: $0.1) }
    }

    private static func formPairs(_ bytes: ArraySlice<UInt8>) -> [(String, String)] {
        var out: [(String, String)] = []
        for pair in bytes.split(separator: 0x26, omittingEmptySubsequences: true) {
            if let eq = pair.firstIndex(of: 0x3D) {
                out.append((formDecode(pair[pair.startIndex..<eq]), formDecode(pair[(eq + 1)...])))
            } else {
                out.append((formDecode(pair), ""))
            }
        }
        return out
    }

    /// Decodes "+" and percent escapes; "%zz" or a truncated "%4" stays as written.
    static func formDecode(_ s: ArraySlice<UInt8>, plusAsSpace: Bool = true) -> String {
        String(decoding: PercentEncoding.decodedBytes(s, plusAsSpace: plusAsSpace), as: UTF8.self)
    }
}
