import Foundation
import HAR

// Finds secrets in free text (header values, URLs, bodies, WebSocket messages) in one pass over
// the UTF-8 bytes. Each detector is anchored on a byte (a 256-entry table says which bytes can
// start or end a match), so ordinary text costs a table lookup per byte, and a text with nothing
// to redact allocates nothing.
//
// Matches never overlap: the scan goes left to right and a match that starts inside an earlier
// one is dropped. Detectors that look backwards (emails at '@', parameters at '=', internal hosts
// at '.') therefore lose to a match found earlier in the text, which is what keeps
// "https://user:pass@host" from also being read as the email "pass@host".

extension RedactionEngine {
    /// Redacts `text`; nil when nothing changed.
    func scanText(_ text: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        var copy = text
        let result = copy.withUTF8 { scanBytes($0, location, path) }
        return result.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Redacts UTF-8 `bytes`; nil when nothing changed.
    func scanBytes(_ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> [UInt8]? {
        var out: [UInt8] = []
        var copied = 0  // bytes of p already in `out` (or skipped by a replacement)
        var floor = 0  // detectors that look back stop here: the end of the last match
        let n = p.count
        var i = 0
        pairTable.withUnsafeBufferPointer { pairs in
            while i < n {
                let b = p[i]
                // Most bytes fail here: is this byte, followed by the next one, a possible start?
                let next = i + 1 < n ? p[i + 1] : 0
                if pairs[Int(b) << 8 | Int(next)] == 0 {
                    i += 1
                    continue
                }
                if let m = detect(at: i, byte: b, p, lowerBound: floor, location, path) {
                    if m.keep {
                        // Matched but left as is (placeholders, allowed values): its bytes are
                        // still not up for a look-back detector (`redacted-2@host` is no email).
                        floor = m.end
                        i = m.resume ?? m.end
                        continue
                    }
                    if out.isEmpty { out.reserveCapacity(n + 64) }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<m.start]))
                    out.append(contentsOf: m.replacement.utf8)
                    copied = m.end
                    floor = m.end
                    i = m.resume ?? m.end
                } else {
                    i += 1
                }
            }
        }
        var changed = copied > 0
        if changed {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<n]))
        }
        if !config.patterns.isEmpty {
            let current = changed ? String(decoding: out, as: UTF8.self) : String(decoding: p, as: UTF8.self)
            if let patterned = applyPatterns(current, location, path) {
                out = Array(patterned.utf8)
                changed = true
            }
        }
        return changed ? out : nil
    }

    struct TextMatch {
        var start: Int
        var end: Int
        var replacement: String
        /// Where scanning continues, when not at `end` (userinfo: the host after it is scanned too).
        var resume: Int? = nil
        /// The text matched but stays as it is (already placeholders or allowed).
        var keep = false
    }

    /// `table[first << 8 | second]` is 1 when a detector can start at `first` followed by
    /// `second` (0 stands for the end of the text). Two bytes rule out nearly every position at
    /// the cost of one lookup, so common letters like 'e' and 's' cost no call.
    static func makePairTable(internalSuffixes: [[UInt8]]) -> [UInt8] {
        var t = [UInt8](repeating: 0, count: 1 << 16)
        func allow(_ first: Character, _ seconds: [UInt8]) {
            for second in seconds { t[Int(first.asciiValue!) << 8 | Int(second)] = 1 }
        }
        func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
        let all = (0...255).map(UInt8.init)
        allow("e", bytes("y"))                       // eyJ (JWT)
        allow("b", bytes("eE")); allow("B", bytes("eE"))  // bearer
        allow("A", bytes("KSI"))                     // AKIA, ASIA, AIza
        allow("g", bytes("hi"))                      // ghp_, github_pat_
        allow("x", bytes("o"))                       // xox?-
        allow("s", bytes("k")); allow("r", bytes("k"))  // sk_live_, rk_live_
        allow("-", bytes("-"))                       // -----BEGIN
        allow(":", bytes("/"))                       // ://userinfo@
        allow("@", all)                              // email
        allow("=", all)                              // name=value
        allow("1", bytes("0123456789."))             // 10., 172., 192., 169.
        allow("f", bytes("cdeCDE")); allow("F", bytes("cdeCDE"))  // fc00::/7, fe80::/10
        var firsts = Set<UInt8>()
        for suffix in internalSuffixes where suffix.count >= 2 {
            firsts.insert(suffix[1])
            if suffix[1] >= 0x61 && suffix[1] <= 0x7A { firsts.insert(suffix[1] - 0x20) }
        }
        allow(".", Array(firsts))                    // .internal, .corp, ...
        return t
    }

    private func detect(at i: Int, byte b: UInt8, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int,
                        _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        switch b {
        case UInt8(ascii: "e"):
            return flags.jwt ? jwt(at: i, p, location, path) : nil
        case UInt8(ascii: "b"), UInt8(ascii: "B"):
            return flags.bearer ? bearer(at: i, p, location, path) : nil
        case UInt8(ascii: "A"):
            if flags.aws, let m = fixedToken(at: i, p, prefixes: ["AKIA", "ASIA"], exactly: 16, upperAlnumOnly: true,
                                             rule: .awsAccessKey, location, path) { return m }
            if flags.google, let m = fixedToken(at: i, p, prefixes: ["AIza"], exactly: 35, upperAlnumOnly: false,
                                                rule: .googleAPIKey, location, path) { return m }
            return nil
        case UInt8(ascii: "g"):
            return flags.github ? github(at: i, p, location, path) : nil
        case UInt8(ascii: "x"):
            return flags.slack ? slack(at: i, p, location, path) : nil
        case UInt8(ascii: "s"), UInt8(ascii: "r"):
            return flags.stripe ? stripe(at: i, p, location, path) : nil
        case UInt8(ascii: "-"):
            return flags.privateKey ? privateKeyBlock(at: i, p, location, path) : nil
        case UInt8(ascii: ":"):
            return flags.userinfo ? userinfo(at: i, p, location, path) : nil
        case UInt8(ascii: "@"):
            return flags.email ? email(at: i, p, lowerBound: lowerBound, location, path) : nil
        case UInt8(ascii: "="):
            return flags.parameters ? parameter(at: i, p, lowerBound: lowerBound, location, path) : nil
        case UInt8(ascii: "."):
            return flags.internalHost ? internalHost(at: i, p, lowerBound: lowerBound, location, path) : nil
        case UInt8(ascii: "1"):
            return flags.privateIP ? ipv4(at: i, p, location, path) : nil
        case UInt8(ascii: "f"), UInt8(ascii: "F"):
            return flags.privateIP ? ipv6(at: i, p, location, path) : nil
        default:
            return nil
        }
    }

    // MARK: - Byte classes

    @inline(__always) static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x7A)
    }
    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    @inline(__always) static func isHex(_ b: UInt8) -> Bool {
        isDigit(b) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66)
    }
    @inline(__always) static func isHostByte(_ b: UInt8) -> Bool { isAlnum(b) || b == 0x2D }
    /// Characters of tokens (bearer credentials, API keys): base64, base64url and a few separators.
    @inline(__always) static func isTokenByte(_ b: UInt8) -> Bool {
        isAlnum(b) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E || b == 0x2B || b == 0x2F
    }

    private func hasPrefix(_ p: UnsafeBufferPointer<UInt8>, at i: Int, _ prefix: StaticString, caseInsensitive: Bool = false) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard i + count <= p.count else { return false }
        let q = prefix.utf8Start
        for k in 0..<count {
            let a = p[i + k], e = q[k]
            if caseInsensitive ? (a | 0x20) != (e | 0x20) : a != e { return false }
        }
        return true
    }

    private func string(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
    }

    /// A secret match for `range`, or nil when the value is allowed or already a placeholder.
    private func secretMatch(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, rule: RedactionRule,
                             _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        let value = string(p, range)
        guard let replacement = replaceSecret(value, rule, location, path) else { return nil }
        return TextMatch(start: range.lowerBound, end: range.upperBound, replacement: replacement)
    }

    // MARK: - Detectors

    /// `eyJ...` `.` `...` `.` `...` whose first part decodes to a JSON object with "alg".
    private func jwt(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "eyJ"), i == 0 || !Base64URL.isAlphabet(p[i - 1]) else { return nil }
        var j = i
        var dots = 0
        while j < p.count {
            let c = p[j]
            if Base64URL.isAlphabet(c) { j += 1; continue }
            if c == 0x2E && dots < 2 { dots += 1; j += 1; continue }
            break
        }
        guard dots == 2 else { return nil }
        let value = string(p, i..<j)
        guard JWTShape.header(of: value) != nil,
              let replacement = replaceSecret(value, .jwt, location, path) else { return nil }
        return TextMatch(start: i, end: j, replacement: replacement)
    }

    /// "Bearer <token>": the token is replaced, the word kept.
    private func bearer(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "bearer", caseInsensitive: true), i == 0 || !Self.isAlnum(p[i - 1]) else { return nil }
        var j = i + 6
        let spaces = j
        while j < p.count && p[j] == 0x20 { j += 1 }
        guard j > spaces else { return nil }
        let start = j
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
        return secretMatch(p, start..<j, rule: .bearerToken, location, path)
    }

    /// A prefix and then exactly `exactly` characters, with word boundaries on both sides.
    private func fixedToken(at i: Int, _ p: UnsafeBufferPointer<UInt8>, prefixes: [StaticString], exactly: Int,
                            upperAlnumOnly: Bool, rule: RedactionRule, _ location: RedactionLocation,
                            _ path: () -> String) -> TextMatch? {
        guard i == 0 || !(Self.isAlnum(p[i - 1]) || p[i - 1] == 0x5F || p[i - 1] == 0x2D) else { return nil }
        guard prefixes.contains(where: { hasPrefix(p, at: i, $0) }) else { return nil }
        let end = i + 4 + exactly
        guard end <= p.count else { return nil }
        for k in i + 4..<end {
            let c = p[k]
            let ok = upperAlnumOnly ? (Self.isDigit(c) || (c >= 0x41 && c <= 0x5A)) : (Self.isAlnum(c) || c == 0x2D || c == 0x5F)
            if !ok { return nil }
        }
        if end < p.count, Self.isAlnum(p[end]) || p[end] == 0x5F || p[end] == 0x2D { return nil }
        return secretMatch(p, i..<end, rule: rule, location, path)
    }

    private func run(_ p: UnsafeBufferPointer<UInt8>, from start: Int, _ accept: (UInt8) -> Bool) -> Int {
        var j = start
        while j < p.count && accept(p[j]) { j += 1 }
        return j
    }

    /// ghp_/gho_/ghu_/ghs_/ghr_ + 36 or more alphanumerics; github_pat_ + 22 or more.
    private func github(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard i == 0 || !(Self.isAlnum(p[i - 1]) || p[i - 1] == 0x5F) else { return nil }
        if hasPrefix(p, at: i, "github_pat_") {
            let end = run(p, from: i + 11) { Self.isAlnum($0) || $0 == 0x5F }
            return end - (i + 11) >= 22 ? secretMatch(p, i..<end, rule: .githubToken, location, path) : nil
        }
        guard i + 4 <= p.count, p[i + 1] == UInt8(ascii: "h"), p[i + 3] == 0x5F,
              "pousr".utf8.contains(p[i + 2]) else { return nil }
        let end = run(p, from: i + 4, Self.isAlnum)
        return end - (i + 4) >= 36 ? secretMatch(p, i..<end, rule: .githubToken, location, path) : nil
    }

    /// xoxb-, xoxp-, xoxa-, xoxo-, xoxs-, xoxr- + 10 or more of [A-Za-z0-9-].
    private func slack(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "xox"), i + 5 <= p.count, "abposr".utf8.contains(p[i + 3]), p[i + 4] == 0x2D,
              i == 0 || !Self.isAlnum(p[i - 1]) else { return nil }
        let end = run(p, from: i + 5) { Self.isAlnum($0) || $0 == 0x2D }
        return end - (i + 5) >= 10 ? secretMatch(p, i..<end, rule: .slackToken, location, path) : nil
    }

    /// sk_live_ / rk_live_ + 10 or more alphanumerics.
    private func stripe(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i + 1, "k_live_"), i == 0 || !(Self.isAlnum(p[i - 1]) || p[i - 1] == 0x5F) else { return nil }
        let end = run(p, from: i + 8, Self.isAlnum)
        return end - (i + 8) >= 10 ? secretMatch(p, i..<end, rule: .stripeKey, location, path) : nil
    }

    /// A PEM block whose label contains "PRIVATE KEY", through its END line (or the end of the
    /// text when the block is cut off). The BEGIN/END lines are kept, the base64 replaced.
    private func privateKeyBlock(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "-----BEGIN ") else { return nil }
        let labelStart = i + 11
        var j = labelStart
        while j + 5 <= p.count && !hasPrefix(p, at: j, "-----") {
            if p[j] == 0x0A { return nil }
            j += 1
        }
        guard j + 5 <= p.count else { return nil }
        let label = string(p, labelStart..<j)
        guard label.hasSuffix("PRIVATE KEY") else { return nil }
        let bodyStart = j + 5
        let endMarker = Array("-----END \(label)-----".utf8)
        var end = p.count
        var bodyEnd = p.count
        var k = bodyStart
        while k + endMarker.count <= p.count {
            if p[k] == 0x2D && UnsafeBufferPointer(rebasing: p[k..<k + endMarker.count]).elementsEqual(endMarker) {
                bodyEnd = k
                end = k + endMarker.count
                break
            }
            k += 1
        }
        let body = string(p, bodyStart..<bodyEnd)
        guard !body.contains("redacted-"),
              let replacement = replaceSecret(string(p, i..<end), .privateKey, location, path) else { return nil }
        return TextMatch(start: bodyStart, end: bodyEnd, replacement: "\n" + replacement + "\n")
    }

    /// `scheme://user:pass@host`: user and password become placeholders; the host is scanned on.
    private func userinfo(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard hasPrefix(p, at: i, "://"), i > 0, Self.isAlnum(p[i - 1]) else { return nil }
        let start = i + 3
        var j = start
        var at: Int?
        while j < p.count {
            let c = p[j]
            if c == 0x2F || c == 0x3F || c == 0x23 || c <= 0x20 || c == 0x22 || c == 0x27 || c == 0x3C || c == 0x3E
                || c == 0x5C { break }
            if c == 0x40 { at = j }
            j += 1
        }
        guard let at, at > start else { return nil }
        let info = string(p, start..<at)
        let parts = info.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var replaced: [String] = []
        var changed = false
        for part in parts {
            if let r = replaceSecret(part, .urlUserinfo, location, path) {
                replaced.append(r)
                changed = true
            } else {
                replaced.append(part)
            }
        }
        guard changed else { return TextMatch(start: start, end: at, replacement: "", resume: at, keep: true) }
        return TextMatch(start: start, end: at, replacement: replaced.joined(separator: ":"), resume: at)
    }

    /// local@domain.tld, found at the '@'.
    private func email(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        func isLocal(_ c: UInt8) -> Bool {
            Self.isAlnum(c) || c == 0x2E || c == 0x5F || c == 0x25 || c == 0x2B || c == 0x2D
        }
        var start = i
        while start > lowerBound && isLocal(p[start - 1]) { start -= 1 }
        while start < i && p[start] == 0x2E { start += 1 }
        guard start < i else { return nil }
        // Domain: labels of [A-Za-z0-9-] joined by dots; the last label alphabetic, 2+ long.
        var j = i + 1
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
        let value = string(p, start..<j)
        guard let replacement = replaceEmail(value, location, path) else { return nil }
        return TextMatch(start: start, end: j, replacement: replacement)
    }

    /// `name=value` where name is a secret parameter, at the start of the text or after
    /// `?`, `&`, `;`, `#`, `,` or whitespace; the value runs to the next delimiter.
    private func parameter(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        var start = i
        while start > lowerBound {
            let c = p[start - 1]
            if Self.isAlnum(c) || c == 0x5F || c == 0x2D || c == 0x2E || c == 0x5B || c == 0x5D { start -= 1 } else { break }
        }
        guard start < i, i - start <= 64 else { return nil }
        if start > 0 {
            let c = p[start - 1]
            guard c == 0x3F || c == 0x26 || c == 0x3B || c == 0x23 || c == 0x2C || c <= 0x20 else { return nil }
        }
        let name = string(p, start..<i).lowercased()
        let isSecretName = config.secretParameterNames.contains(name)
        guard isSecretName || learnedCookieNames.contains(name) else { return nil }
        var j = i + 1
        while j < p.count {
            let c = p[j]
            if c == 0x26 || c == 0x23 || c <= 0x20 || c == 0x22 || c == 0x27 || c == 0x3C || c == 0x3E || c == 0x3B
                || c == 0x2C || c == 0x29 || c == 0x5C { break }
            j += 1
        }
        guard j > i + 1 else { return nil }
        let raw = string(p, i + 1..<j)
        let value = HARBuild.percentDecoded(raw, plusAsSpace: false)
        if !isSecretName {
            // A cookie's name: only a value already replaced as that cookie's is replaced again.
            guard let known = table.knownSecret(value) else { return nil }
            note(.cookies, location, value, path)
            return TextMatch(start: i + 1, end: j, replacement: known)
        }
        guard let replacement = replaceSecret(value, .secretParameters, location, path) else { return nil }
        return TextMatch(start: i + 1, end: j, replacement: replacement)
    }

    /// A hostname ending in an internal suffix, found at the suffix's dot.
    private func internalHost(at i: Int, _ p: UnsafeBufferPointer<UInt8>, lowerBound: Int, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        guard i > lowerBound, Self.isHostByte(p[i - 1]) else { return nil }
        var suffixEnd: Int?
        for suffix in internalSuffixBytes where i + suffix.count <= p.count {
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
        while start < i && p[start] == 0x2E { start += 1 }
        guard start < i else { return nil }
        let host = string(p, start..<end)
        guard let replacement = replaceHost(host, location, path) else { return nil }
        return TextMatch(start: start, end: end, replacement: replacement)
    }

    /// A dotted-quad IPv4 literal in 10/8, 172.16/12, 192.168/16 or 169.254/16 (all start with '1').
    private func ipv4(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        if i > 0, Self.isAlnum(p[i - 1]) || p[i - 1] == 0x2E { return nil }
        guard let (octets, end) = Self.parseIPv4(p, at: i) else { return nil }
        guard Self.isPrivateIPv4(octets) else { return nil }
        guard let replacement = replaceIPv4(string(p, i..<end), location, path) else { return nil }
        return TextMatch(start: i, end: end, replacement: replacement)
    }

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
    private func ipv6(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
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
        guard let replacement = replaceIPv6(string(p, i..<end), location, path) else { return nil }
        return TextMatch(start: i, end: end, replacement: replacement)
    }

    /// The first 16-bit group of a syntactically valid IPv6 address (RFC 4291 text form, without
    /// an embedded IPv4 part), or nil.
    static func firstIPv6Group(_ text: String) -> Int? {
        let halves = text.components(separatedBy: "::")
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

    // MARK: - User patterns

    private func applyPatterns(_ text: String, _ location: RedactionLocation, _ path: () -> String) -> String? {
        var current = text
        var changed = false
        for (pattern, rule) in zip(config.patterns, patternRules) {
            let matches = current.matches(of: pattern.regex)
            guard !matches.isEmpty else { continue }
            var result = ""
            var last = current.startIndex
            var replacedAny = false
            for m in matches where !m.range.isEmpty {
                let value = String(current[m.range])
                result += current[last..<m.range.lowerBound]
                if let r = replaceSecret(value, rule, location, path) {
                    result += r
                    replacedAny = true
                } else {
                    result += value
                }
                last = m.range.upperBound
            }
            if replacedAny {
                result += current[last...]
                current = result
                changed = true
            }
        }
        return changed ? current : nil
    }
}
