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

    /// Decodes percent escapes (and "+" as a space when `plusAsSpace`, as forms and harrec's
    /// `queryString` do); "%zz" or a truncated "%4" stays as written. Text without either is
    /// returned as is, without copying.
    public static func percentDecoded(_ text: String, plusAsSpace: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x25 || (plusAsSpace && $0 == 0x2B) }) else { return text }
        return formDecode(Array(text.utf8)[...], plusAsSpace: plusAsSpace)
    }

    /// Decodes "+" and percent escapes; "%zz" or a truncated "%4" stays as written.
    static func formDecode(_ s: ArraySlice<UInt8>, plusAsSpace: Bool = true) -> String {
        String(decoding: percentDecodedBytes(s, plusAsSpace: plusAsSpace), as: UTF8.self)
    }

    /// The bytes of `s` with percent escapes decoded (and "+" as a space when `plusAsSpace`);
    /// "%zz" or a truncated "%4" stays as written. The one percent decoder of the package.
    public static func percentDecodedBytes(_ s: ArraySlice<UInt8>, plusAsSpace: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == 0x2B && plusAsSpace {
                out.append(0x20)
            } else if c == 0x25, i + 2 < s.endIndex, let hi = hexValue(s[i + 1]), let lo = hexValue(s[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
                continue
            } else {
                out.append(c)
            }
            i += 1
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    // MARK: Base64 (RFC 4648 §4, standard alphabet, with padding)

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0...63 for alphabet bytes, 0xFF otherwise.
    private static let decodeTable: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }()

    /// Standard base64 with padding.
    public static func base64(_ bytes: [UInt8]) -> String {
        let outCount = (bytes.count + 2) / 3 * 4
        if outCount == 0 { return "" }
        return String(unsafeUninitializedCapacity: outCount) { out in
            bytes.withUnsafeBufferPointer { encodeBase64($0, into: out) }
            return outCount
        }
    }

    /// Appends the standard base64 (padded) of `src` to `out`.
    public static func appendBase64(_ src: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        let outCount = (src.count + 2) / 3 * 4
        guard outCount > 0 else { return }
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: outCount))
        out.withUnsafeMutableBufferPointer { encodeBase64(src, into: UnsafeMutableBufferPointer(rebasing: $0[start...])) }
    }

    /// Writes the base64 of `src` to the first (n + 2) / 3 * 4 bytes of `out`.
    private static func encodeBase64(_ src: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) {
        let n = src.count
        alphabet.withUnsafeBufferPointer { a in
            var i = 0
            var o = 0
            while i + 3 <= n {
                let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 0x3F)]
                out[o + 2] = a[Int(v >> 6 & 0x3F)]
                out[o + 3] = a[Int(v & 0x3F)]
                i += 3
                o += 4
            }
            let rest = n - i
            if rest > 0 {
                var v = UInt32(src[i]) << 16
                if rest == 2 { v |= UInt32(src[i + 1]) << 8 }
                out[o] = a[Int(v >> 18)]
                out[o + 1] = a[Int(v >> 12 & 0x3F)]
                out[o + 2] = rest == 2 ? a[Int(v >> 6 & 0x3F)] : 0x3D
                out[o + 3] = 0x3D
            }
        }
    }

    /// Strict decoding: length a multiple of 4, standard alphabet only, "=" only as 1 or 2
    /// final padding characters, unused bits of the last character zero (canonical), no
    /// whitespace. Returns nil otherwise.
    public static func decodeBase64(_ text: String) -> [UInt8]? {
        var s = text
        return s.withUTF8 { src -> [UInt8]? in
            var ok = true
            let out = [UInt8](unsafeUninitializedCapacity: src.count / 4 * 3) { buffer, initialized in
                let count = decodeBase64Core(src, into: buffer.baseAddress)
                ok = count != nil
                initialized = count ?? 0
            }
            return ok ? out : nil
        }
    }

    /// Lenient decoding, for bodies and messages any tool recorded: whitespace is skipped, the
    /// URL-safe alphabet and missing padding are accepted, and anything else (a stray character,
    /// data after padding) is not base64, so a body is never silently changed. The generator and
    /// HARMocking, which serves what it generates, both decode with this; `harrec validate` holds
    /// harrec's own output to the strict `decodeBase64`.
    public static func decodeLenientBase64(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case 0x41...0x5A: v = c - 0x41
            case 0x61...0x7A: v = c - 0x61 + 26
            case 0x30...0x39: v = c - 0x30 + 52
            case 0x2B, 0x2D: v = 62          // + and URL-safe -
            case 0x2F, 0x5F: v = 63          // / and URL-safe _
            case 0x3D: padding += 1; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            // Data after padding is not base64.
            if padding > 0 { return nil }
            values.append(v)
        }
        guard padding <= 2, values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i + 4 <= values.count {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6 | UInt32(values[i + 3])
            out += [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        let rest = values.count - i
        if rest >= 2 {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | (rest == 3 ? UInt32(values[i + 2]) << 6 : 0)
            out.append(UInt8(n >> 16 & 0xFF))
            if rest == 3 { out.append(UInt8(n >> 8 & 0xFF)) }
        }
        return out
    }

    /// The decoded length of strict base64 `text` (validating it without allocating), or nil.
    public static func base64DecodedCount(_ text: String) -> Int? {
        var s = text
        return s.withUTF8 { decodeBase64Core($0, into: nil) }
    }

    /// Decodes strict base64 `src` into `out` (room for count / 4 * 3 bytes) or, with `out` nil,
    /// only validates it: the decoded byte count, or nil when `src` is not strict base64. Bodies
    /// of tens of MB go through here, so a group at a time, straight into memory.
    private static func decodeBase64Core(_ src: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>?) -> Int? {
        let n = src.count
        if n == 0 { return 0 }
        guard n % 4 == 0 else { return nil }
        let pad = src[n - 1] == 0x3D ? (src[n - 2] == 0x3D ? 2 : 1) : 0
        return decodeTable.withUnsafeBufferPointer { t -> Int? in
            // Valid digits are below 64; anything else (0xFF) has a high bit set.
            var i = 0, o = 0
            while i + 4 < n {
                let a = t[Int(src[i])], b = t[Int(src[i + 1])], c = t[Int(src[i + 2])], d = t[Int(src[i + 3])]
                if (a | b | c | d) & 0xC0 != 0 { return nil }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                if let out {
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                }
                i += 4
                o += 3
            }
            // The last group: its padding, and no stray bits under it (canonical).
            let a = t[Int(src[i])], b = t[Int(src[i + 1])]
            let c = pad == 2 ? 0 : t[Int(src[i + 2])], d = pad >= 1 ? 0 : t[Int(src[i + 3])]
            if (a | b | c | d) & 0xC0 != 0 { return nil }
            let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            let bytes = 3 - pad
            if pad == 2 && v & 0xFFFF != 0 || pad == 1 && v & 0xFF != 0 { return nil }
            if let out {
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                if bytes > 1 { out[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
                if bytes > 2 { out[o + 2] = UInt8(truncatingIfNeeded: v) }
            }
            return o + bytes
        }
    }
}
