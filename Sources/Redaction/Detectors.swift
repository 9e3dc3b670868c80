#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import TextEncodings

// The structural detectors: JWTs, bearer tokens, PEM key blocks, URL userinfo, emails, internal
// hosts and private IPs. Each starts at the byte the pair table anchored it on.

extension RedactionEngine {
    /// `eyJ...` `.` `...` `.` `...` whose first part decodes to a JSON object with "alg".
    func jwt(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        // In a binary body the byte before may be a length prefix that happens to be printable.
        guard hasPrefix(p, at: i, "eyJ"), i == 0 || reading.keepsLength || !Base64URL.isAlphabet(p[i - 1]) else { return nil }
        var j = i
        var dots = 0
        while j < p.count {
            let c = p[j]
            if Base64URL.isAlphabet(c) { j += 1; continue }
            if c == 0x2E && dots < 2 { dots += 1; j += 1; continue }
            break
        }
        guard dots == 2, JWTShape.header(of: string(p, i..<j)) != nil else { return nil }
        return secretMatch(p, i..<j, rule: .jwt, reading, path)
    }

    /// Where the credential after an authorization scheme word (`scheme`, lowercase) at `i`
    /// starts: the word stands alone, then one or more spaces.
    private func schemeCredentialStart(_ scheme: StaticString, at i: Int, _ p: UnsafeBufferPointer<UInt8>) -> Int? {
        guard hasPrefix(p, at: i, scheme, caseInsensitive: true), i == 0 || !Self.isAlnum(p[i - 1]) else { return nil }
        var j = i + scheme.utf8CodeUnitCount
        let spaces = j
        while j < p.count && p[j] == 0x20 { j += 1 }
        return j > spaces ? j : nil
    }

    /// "Basic <base64 of user:password>" anywhere in text (a logged header, a config, a curl
    /// line): the credential is replaced, the word kept, and the password is chased elsewhere.
    func basicCredential(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard let start = schemeCredentialStart("basic", at: i, p) else { return nil }
        var j = start
        while j < p.count && (Self.isAlnum(p[j]) || p[j] == 0x2B || p[j] == 0x2F || p[j] == 0x2D || p[j] == 0x5F) { j += 1 }
        while j < p.count && p[j] == 0x3D { j += 1 }
        guard j - start >= 8, let decoded = Base64URL.decode(UnsafeBufferPointer(rebasing: p[start..<j])),
              let pair = String(validating: decoded, as: UTF8.self), let colon = pair.firstIndex(of: ":"),
              pair.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return nil }
        let password = String(pair[pair.index(after: colon)...])
        guard let m = secretMatch(p, start..<j, rule: .bearerToken, reading, path) else { return nil }
        if !password.isEmpty { collector.chase(.secret, password) }
        return m
    }

    /// "Bearer <token>": the token is replaced, the word kept.
    func bearer(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if p[i] | 0x20 == UInt8(ascii: "b") && i + 1 < p.count && p[i + 1] | 0x20 == UInt8(ascii: "a") {
            return basicCredential(at: i, p, reading, path)
        }
        guard let start = schemeCredentialStart("bearer", at: i, p) else { return nil }
        var j = start
        while j < p.count && Self.isTokenByte(p[j]) { j += 1 }
        let runEnd = j
        while j < p.count && p[j] == 0x3D { j += 1 }
        guard j - start >= 8 else { return nil }
        // `Bearer realm="api", authorization_uri="https://..."` (WWW-Authenticate) holds
        // auth-params, not a credential: a token68 ends at its '=' padding, so '=' followed by
        // more token means a parameter; so does a lowercase name, one '=' and a quote.
        if j < p.count && j > runEnd {
            let next = p[j]
            if Self.isTokenByte(next) { return nil }
            if next == 0x22 && j == runEnd + 1
                && UnsafeBufferPointer(rebasing: p[start..<runEnd]).allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D }) {
                return nil
            }
        }
        return secretMatch(p, start..<j, rule: .bearerToken, reading, path)
    }

    /// A PEM block whose label contains "PRIVATE KEY", BEGIN and END lines included (through the
    /// end of the text when the block is cut off), replaced by one plain placeholder: a PEM
    /// shape left behind would still trip every secret scanner.
    func privateKeyBlock(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "-----BEGIN ") else { return nil }
        let labelStart = i + 11
        var j = labelStart
        while j + 5 <= p.count && !hasPrefix(p, at: j, "-----") {
            if p[j] == 0x0A || j - labelStart > 64 { return nil }
            j += 1
        }
        guard j + 5 <= p.count else { return nil }
        let label = string(p, labelStart..<j)
        guard label.hasSuffix("PRIVATE KEY") || label == "OPENSSH PRIVATE KEY" || label.hasSuffix("PRIVATE KEY BLOCK")
        else { return nil }
        let endMarker = Array("-----END \(label)-----".utf8)
        var end = p.count
        var k = j + 5
        while k + endMarker.count <= p.count {
            if p[k] == 0x2D && UnsafeBufferPointer(rebasing: p[k..<k + endMarker.count]).elementsEqual(endMarker) {
                end = k + endMarker.count
                break
            }
            k += 1
        }
        return secretMatch(p, i..<end, rule: .privateKey, reading, path)
    }

    /// `scheme://user:pass@host`: the password is dropped (a `user:placeholder@` pair still reads
    /// as basic-auth credentials to every scanner) and the user becomes a placeholder; the host is
    /// scanned on.
    func userinfo(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "://"), i > 0, Self.isAlnum(p[i - 1]) else { return nil }
        let start = i + 3
        var j = start
        var at: Int?
        while j < p.count {
            let c = p[j]
            if c == 0x2F || c == 0x3F || c == 0x23 || c <= 0x20 || c == 0x22 || c == 0x27 || c == 0x3C || c == 0x3E
                || c == 0x5C || c >= 0x80 { break }
            if c == 0x40 { at = j }
            j += 1
        }
        guard let at, at > start else { return nil }
        let info = string(p, start..<at)
        let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let user = parts[0], password = parts.count == 2 ? parts[1] : nil
        let hasPassword = !(password?.isEmpty ?? true)
        var replacement = user
        if !user.isEmpty && !(Self.serviceUserNames.contains(user.lowercased()) && !hasPassword),
           let r = replaceSecret(PercentEncoding.decoded(user, plusAsSpace: false), .urlUserinfo, reading, path,
                                 length: at - start) {
            replacement = r
        }
        if let password, hasPassword, !isUntouchable(password) {
            note(.urlUserinfo, reading, password, path)
            // Dropped here, but chased everywhere else it appears.
            collector.chase(.secret, PercentEncoding.decoded(password, plusAsSpace: false))
        }
        guard replacement != user || hasPassword else {
            // Nothing to replace; the bytes up to '@' are still no email local part.
            return TextMatch(start: start, end: at, replacement: "", resume: at, keep: true)
        }
        if reading.keepsLength && replacement == user { replacement = String(repeating: "*", count: at - start) }
        return TextMatch(start: start, end: at, replacement: replacement, resume: at)
    }

    /// local@domain.tld, found at the '@' (or at a percent-encoded `%40`).
    func email(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        let encoded = p[i] == 0x25
        if encoded { guard hasPrefix(p, at: i, "%40") else { return nil } }
        func isLocal(_ c: UInt8) -> Bool {
            Self.isAlnum(c) || c == 0x2E || c == 0x5F || c == 0x25 || c == 0x2B || c == 0x2D
        }
        var start = i
        while start > lowerBound {
            // A `%XX` escape of a byte that is no local part ends it (`x%20c%40p.or` is `c`'s
            // address), as that byte does where a rule reads the text decoded.
            if start - 3 >= lowerBound, p[start - 3] == 0x25, let high = PercentEncoding.hexValue(p[start - 2]),
               let low = PercentEncoding.hexValue(p[start - 1]) {
                let decoded = high << 4 | low
                guard isLocal(decoded) && decoded != 0x25 else { break }
                start -= 3
                continue
            }
            guard isLocal(p[start - 1]) else { break }
            start -= 1
        }
        while start < i && p[start] == 0x2E { start += 1 }
        guard start < i else { return nil }
        // `a@b@c`: the address is the one at the first '@'; what follows the second is no local
        // part (after a first run, `user1@example.com@c` must not yield `example.com@c`).
        if start > 0 && p[start - 1] == 0x40 { return nil }
        // Domain: labels of [A-Za-z0-9-] joined by dots; the last label alphabetic, 2+ long.
        var j = i + (encoded ? 3 : 1)
        var lastLabelStart = j
        var labels = 0
        while j < p.count {
            let labelStart = j
            while j < p.count && Self.isHostByte(p[j]) { j += 1 }
            if j == labelStart { break }
            labels += 1
            lastLabelStart = labelStart
            if j + 1 < p.count && p[j] == 0x2E && Self.isHostByte(p[j + 1]) { j += 1 } else { break }
        }
        guard labels >= 2, j - lastLabelStart >= 2,
              UnsafeBufferPointer(rebasing: p[lastLabelStart..<j]).allSatisfy({ $0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A })
        else { return nil }
        // `cart@2x.png` is an iOS asset at a scale, not an address.
        if labels == 2, Self.isScaleLabel(UnsafeBufferPointer(rebasing: p[(i + (encoded ? 3 : 1))...])) { return nil }
        // `git@github.com:org/app.git` is an SSH remote, not an address. A placeholder right after
        // the `:` reads as that path: an address a first run replaced is a placeholder itself
        // now, so only one it kept is still read, and it must stay.
        if j < p.count, p[j] == 0x3A, j + 1 == p.count ? reading.context.contains(.placeholderFollows)
            : p[j + 1] == 0x2F || p[j + 1] == 0x7E || Self.isAlnum(p[j + 1]) && !Self.isDigit(p[j + 1]) {
            return nil
        }
        var value = string(p, start..<j)
        if encoded || value.utf8Contains(0x25) {
            value = PercentEncoding.decoded(value, plusAsSpace: false)
            guard Self.isWholeEmail(value) else { return nil }
        } else {
            // The scan above checked the shape `isWholeEmail` checks (local bytes, no leading
            // dot, two labels or more, a last label of letters); only the length is left.
            guard value.utf8.count <= 254 else { return nil }
            assert(Self.isWholeEmail(value), "the scan and isWholeEmail disagree on \(value)")
        }
        guard let marker = replaceEmail(value, reading, path, length: j - start) else { return nil }
        let replacement = encoded && !reading.keepsLength ? percentAtMarker(marker) : marker
        return TextMatch(start: start, end: j, replacement: replacement)
    }

    /// The marker of an email written with `%40`, flagged to be written the same way.
    func percentAtMarker(_ marker: String) -> String {
        var copy = marker
        return copy.withUTF8 { p -> String in
            guard let m = syntax.parseValue(p, at: 0) else { return marker }
            return syntax.value(m.index, .percentAt)
        }
    }

    /// A hostname ending in an internal suffix, found at the suffix's dot.
    func internalHost(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        guard i > lowerBound, Self.isHostByte(p[i - 1]) else { return nil }
        if hasPrefix(p, at: i, ".example.invalid") {
            // One of harrec's host placeholders (`internal-3.example.invalid`): kept, its number reserved.
            var start = i
            while start > lowerBound && Self.isHostByte(p[start - 1]) { start -= 1 }
            let host = string(p, start..<i + 16)
            guard isUntouchable(host) else { return nil }
            return TextMatch(start: start, end: i + 16, replacement: "", keep: true)
        }
        var suffixEnd: Int?
        for suffix in rules.internalSuffixBytes where i + suffix.count <= p.count {
            var same = true
            for k in 1..<suffix.count where p[i + k] | 0x20 != suffix[k] {
                same = false
                break
            }
            guard same else { continue }
            let end = i + suffix.count
            // The suffix must end the hostname: "api.corp.example.com" is not under ".corp".
            if end < p.count {
                let c = p[end]
                if Self.isHostByte(c) { continue }
                if c == 0x2E && end + 1 < p.count && Self.isHostByte(p[end + 1]) { continue }
            }
            suffixEnd = end
            break
        }
        guard let end = suffixEnd else { return nil }
        var start = i
        while start > lowerBound && (Self.isHostByte(p[start - 1]) || p[start - 1] == 0x2E) { start -= 1 }
        // After a JSON escape (`\u0005.corp`, how a control byte is written back into a string),
        // the name starts past it: the escape stands for one byte, no part of a name.
        var backslashes = 0
        while start - backslashes > lowerBound && p[start - backslashes - 1] == 0x5C { backslashes += 1 }
        if backslashes & 1 == 1 {
            let unicode = p[start] == 0x75 && start + 5 <= i && (start + 1..<start + 5).allSatisfy({ Self.isHex(p[$0]) })
            start += unicode ? 5 : 1
        }
        while start < i && p[start] == 0x2E { start += 1 }
        guard start < i else { return nil }
        return valueMatch(p, start..<end, .host, rule: .internalHost, reading, path)
    }

    /// A dotted-quad IPv4 literal in 10/8, 172.16/12, 192.168/16 or 169.254/16 (all start with '1').
    func ipv4(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if i > 0, Self.isAlnum(p[i - 1]) || p[i - 1] == 0x2E { return nil }
        // `d.`, `dd.` or `ddd.` and a digit: the shape of an address's start, before anything else.
        var k = i + 1
        while k < p.count && k - i < 3 && Self.isDigit(p[k]) { k += 1 }
        guard k + 1 < p.count, p[k] == 0x2E, Self.isDigit(p[k + 1]) else { return nil }
        // Every private range starts with a 1; any other address needs the word before it.
        if p[i] != 0x31 && !(flags.has(.clientIP) && Self.followsAddressWord(p, i)) { return nil }
        guard let (octets, end) = Self.parseIPv4(p, at: i) else { return nil }
        if Self.isPrivateIPv4(octets) {
            return flags.has(.privateIP) ? valueMatch(p, i..<end, .ipv4, rule: .privateIP, reading, path) : nil
        }
        // A public address is a client's where the words before it say so (`joined from 81.2.69.160`).
        guard flags.has(.clientIP), Self.followsAddressWord(p, i) else { return nil }
        return valueMatch(p, i..<end, .ipv4, rule: .clientIP, reading, path)
    }

    /// Whether the word before `i` (past spaces, `:`, `=`, quotes and brackets) is an address word.
    static func followsAddressWord(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> Bool {
        var e = i
        while e > 0 && i - e < 4 && (p[e - 1] == 0x20 || p[e - 1] == 0x3A || p[e - 1] == 0x3D || p[e - 1] == 0x22
                                        || p[e - 1] == 0x27 || p[e - 1] == 0x28 || p[e - 1] == 0x5B) { e -= 1 }
        var s = e
        while s > 0 && e - s < 12 && (p[s - 1] | 0x20 >= 0x61 && p[s - 1] | 0x20 <= 0x7A || isDigit(p[s - 1])) { s -= 1 }
        guard s < e, e - s >= 2, s == 0 || !isAlnum(p[s - 1]) else { return false }
        let word = UnsafeBufferPointer(rebasing: p[s..<e])
        return addressWordBytes.contains { $0.count == word.count && zip($0, word).allSatisfy { $0 == $1 | 0x20 } }
    }
    private static let addressWordBytes = addressWords.map { Array($0.utf8) }

    static func parseIPv4(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> ([Int], Int)? {
        var octets: [Int] = []
        var j = i
        while octets.count < 4 {
            let start = j
            var value = 0
            while j < p.count && isDigit(p[j]) && j - start < 3 {
                value = value * 10 + Int(p[j] - 0x30)
                j += 1
            }
            let digits = j - start
            guard digits > 0, value <= 255, !(digits > 1 && p[start] == 0x30) else { return nil }
            octets.append(value)
            if octets.count < 4 {
                guard j < p.count, p[j] == 0x2E else { return nil }
                j += 1
            }
        }
        if j < p.count {
            let c = p[j]
            if isAlnum(c) { return nil }
            if c == 0x2E && j + 1 < p.count && isDigit(p[j + 1]) { return nil }
        }
        return (octets, j)
    }

    static func isPrivateIPv4(_ o: [Int]) -> Bool {
        o[0] == 10 || (o[0] == 172 && (16...31).contains(o[1])) || (o[0] == 192 && o[1] == 168)
            || (o[0] == 169 && o[1] == 254)
    }

    /// An IPv6 literal in fc00::/7 or fe80::/10 (with an optional %zone).
    func ipv6(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        if i > 0, Self.isAlnum(p[i - 1]) || p[i - 1] == 0x3A { return nil }
        guard i + 2 < p.count, "cdeCDE".utf8.contains(p[i + 1]) else { return nil }
        var j = i
        var colons = 0
        while j < p.count && (Self.isHex(p[j]) || p[j] == 0x3A) {
            if p[j] == 0x3A { colons += 1 }
            j += 1
        }
        guard colons >= 2, j >= p.count || !(Self.isAlnum(p[j]) || p[j] == 0x2E) else { return nil }
        let literal = string(p, i..<j)
        guard let first = Self.firstIPv6Group(literal),
              (first & 0xFE00) == 0xFC00 || (first & 0xFFC0) == 0xFE80 else { return nil }
        var end = j
        if end < p.count && p[end] == 0x25 {  // %zone
            let zoneEnd = run(p, from: end + 1) { Self.isAlnum($0) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D }
            if zoneEnd > end + 1 { end = zoneEnd }
        }
        return valueMatch(p, i..<end, .ipv6, rule: .privateIP, reading, path)
    }

    /// The first 16-bit group of a syntactically valid IPv6 address (RFC 4291 text form, without
    /// an embedded IPv4 part), or nil.
    static func firstIPv6Group(_ text: String) -> Int? {
        let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
        guard halves.count <= 2 else { return nil }
        func groups(_ s: String) -> [Int]? {
            if s.isEmpty { return [] }
            var out: [Int] = []
            for g in s.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(g.count), let v = Int(g, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        let tail = halves.count == 2 ? groups(halves[1]) : []
        guard let tail else { return nil }
        let total = head.count + tail.count
        if halves.count == 2 { guard total <= 7 else { return nil } } else { guard total == 8 else { return nil } }
        return head.first ?? 0
    }
}
