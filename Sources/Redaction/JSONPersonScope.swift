/// How the JSON rewriter tells an object about a person from one about a thing when its own
/// name says nothing: a bare `name` is a person's when it is written as one and a personal
/// member (an email, a phone, a birth date, a real name's part) stands beside it.
extension JSONRewriter {
    /// Whether the value at `i` is a string that reads as a person's name written as one: one to
    /// five words, each starting with a capital (or a non-ASCII letter), no digits (`Ada
    /// Lovelace`, `Mateo Van der Berg` is allowed a lowercase particle); a product's
    /// `mike alpha hotel` is not.
    func valueReadsAsCapitalizedName(at i: Int) -> Bool {
        guard i < p.count, p[i] == 0x22 else { return false }
        var j = i + 1
        while j < p.count && p[j] != 0x22 && p[j] != 0x5C && j - i <= 80 { j += 1 }
        guard j < p.count, p[j] == 0x22, j > i + 1 else { return false }
        // One pass over the words (split at spaces, empty ones skipped), with no array of them:
        // this runs for every string value in an object that names a person.
        var words = 0, capitalized = 0, atWordStart = true
        for k in (i + 1)..<j {
            let c = p[k]
            if c == 0x20 { atWordStart = true; continue }
            guard c >= 0x80 || c | 0x20 >= 0x61 && c | 0x20 <= 0x7A || c == 0x27 || c == 0x2D || c == 0x2E else { return false }
            if atWordStart {
                let upper = RedactionEngine.isUpper(c) || c >= 0x80
                if words == 0 && !upper { return false }
                words += 1
                if upper { capitalized += 1 }
                atWordStart = false
            }
        }
        return (1...5).contains(words) && capitalized * 2 > words
    }

    /// How far `laterMemberIsPersonal` reads ahead: a person's fields stand together, and a
    /// `name` before a large nested value must not cost a read of all of it.
    static let siblingLookAhead = 2048

    /// Whether a member after `start` (a value's start, in the object being read) is personal:
    /// its names at this object's level, read without parsing their values, within
    /// `siblingLookAhead` bytes.
    mutating func laterMemberIsPersonal(from start: Int) -> Bool {
        var k = start, depth = 0
        let end = min(p.count, start + Self.siblingLookAhead)
        while k < end {
            let c = p[k]
            if c == 0x22 {
                let nameStart = k + 1
                var j = nameStart, escaped = false
                while j < p.count && p[j] != 0x22 {
                    if p[j] == 0x5C { escaped = true; j += 2; continue }
                    j += 1
                }
                guard j < p.count else { return false }
                var n = j + 1
                while n < p.count && (p[n] == 0x20 || p[n] == 0x0A || p[n] == 0x0D || p[n] == 0x09) { n += 1 }
                if depth == 0 && !escaped && n < p.count && p[n] == 0x3A,
                   engine.nameMemo.info(UnsafeBufferPointer(rebasing: p[nameStart..<j])).roles.contains(.personal) {
                    return true
                }
                k = j + 1
                continue
            }
            if c == 0x7B || c == 0x5B {
                depth += 1
            } else if c == 0x7D || c == 0x5D {
                if depth == 0 { return false }
                depth -= 1
            }
            k += 1
        }
        return false
    }

}
