import HAR
import TextEncodings

/// Pass 2 of one unit (an entry, or the log's own fields): markers become the placeholders the
/// frozen table gave their values, wraps are encoded again, and every value the file replaced
/// anywhere is replaced here too wherever it stands bare (`KnownValueIndex`), also inside base64
/// of text.
struct Finalizer {
    let syntax: MarkerSyntax
    /// The final placeholder of each value the unit's markers name.
    let placeholders: UnitPlaceholders
    let known: KnownValueIndex?
    /// Known values replaced, with a masked preview each.
    var hits: [String] = []
    /// For deferred bodies (finalized as they are written): their windows' cut bytes, and where
    /// the known values they replace are counted.
    var deferredContext: DeferredBodyContext?
    /// The unit's deferred bodies with their pass-2 transforms, for `--check`, which reads them
    /// through instead of writing them (`knownValuesInDeferredBodies`).
    var deferredFinalizers: [(DeferredFinalizer, HARDeferredBody)] = []

    init(syntax: MarkerSyntax, placeholders: UnitPlaceholders, known: KnownValueIndex?) {
        self.syntax = syntax
        self.placeholders = placeholders
        self.known = (known?.isEmpty ?? true) ? nil : known
    }

    /// `queryFrom`: the byte offset where URL query encoding starts (a URL's query, a form body).
    mutating func text(_ s: String, sameLength: Bool = false, queryFrom: Int = .max) -> String? {
        // Shorter than any known value and no room for a mark: nothing to do.
        if s.utf8.count < KnownValueIndex.minimumLength { return nil }
        var copy = s
        return copy.withUTF8 { bytes($0, sameLength: sameLength, queryFrom: queryFrom) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A URL with the offset of its query (after the first '?'), where a known value found bare is
    /// replaced query-encoded.
    mutating func url(_ s: String) -> String? {
        text(s, queryFrom: s.utf8.firstIndex(of: 0x3F).map { s.utf8.distance(from: s.utf8.startIndex, to: $0) + 1 } ?? .max)
    }

    /// The unit's text with every mark resolved and every known value replaced; nil when nothing
    /// changed. `sameLength`: a binary body, where known values keep their byte length. From
    /// `queryFrom` on, the text is URL-query encoded (a form body, a URL's query): a known value
    /// found bare there is replaced by its placeholder query-encoded (`+` in a phone placeholder
    /// would read as a space, and the next run would see another value). Marks' wraps encode
    /// their own content.
    mutating func bytes(_ p: UnsafeBufferPointer<UInt8>, sameLength: Bool, queryFrom: Int = .max) -> [UInt8]? {
        var out: [UInt8] = []
        var copied = 0
        var i = 0
        let n = p.count
        func emit(_ start: Int, _ end: Int, _ replacement: [UInt8]) {
            if out.isEmpty { out.reserveCapacity(n + 64) }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<start]))
            out.append(contentsOf: replacement)
            copied = end
        }
        /// A mark of this run at `start` (a 0xEE 0x80 lead checked): written out, and where it
        /// ends; nil when it is none. A plain mark, the common case (one per replaced value), has
        /// its placeholder's bytes go straight into `out`, without an array of their own.
        func emitMark(at start: Int) -> Int? {
            if p[start + 2] == 0x80, let m = syntax.parseValue(p, at: start), m.index < placeholders.count,
               case .plain = m.modifier {
                if out.isEmpty { out.reserveCapacity(n + 64) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<start]))
                placeholders.withBytes(m.index) { out.append(contentsOf: $0) }
                copied = m.end
                return m.end
            }
            guard let (end, replacement) = resolveMark(p, at: start) else { return nil }
            emit(start, end, replacement)
            return end
        }
        guard let base = p.baseAddress else { return nil }
        guard let known = self.known else {
            // Marks only.
            while i < n {
                if base[i] == 0xEE, i + 6 <= n, base[i + 1] == 0x80, let end = emitMark(at: i) {
                    i = end
                    continue
                }
                i += 1
            }
            guard copied > 0 else { return nil }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<n]))
            return out
        }
        // Encoded runs (base64, percent) are looked into once each, from their first word start.
        var encodedCheckedUntil = 0
        Self.byteClass.withUnsafeBufferPointer { cls in
            while i < n {
                let b = base[i]
                if b == 0xEE, i + 6 <= n, base[i + 1] == 0x80, let end = emitMark(at: i) {
                    i = end
                    continue
                }
                let c = cls[Int(b)]
                // A known value starts where a word starts (the loop skips the rest of each word,
                // so a word byte here is a word start), or at a symbol.
                guard c & Self.startClass != 0 else { i += 1; continue }
                // The rest of the word is no word start.
                var wordEnd = i + 1
                if c & Self.wordClass != 0 {
                    var found = false
                    while wordEnd + 8 <= n {
                        let m = ByteShape.nonAlnumMask(UInt64(littleEndian: UnsafeRawPointer(base + wordEnd).loadUnaligned(as: UInt64.self)))
                        if m != 0 { wordEnd += m.trailingZeroBitCount >> 3; found = true; break }
                        wordEnd += 8
                    }
                    if !found {
                        while wordEnd < n && cls[Int(base[wordEnd])] & Self.wordClass != 0 { wordEnd += 1 }
                    }
                }
                if c & Self.wordClass == 0 || known.mayStart(wordOf: wordEnd - i, before: wordEnd < n ? base[wordEnd] : nil),
                   let m = known.match(p, at: i), let start = Self.replacedStart(p, i, m.end, queryFrom: queryFrom) {
                    var replacement = known.replacement(of: m.form)
                    if sameLength { replacement = Self.fit(replacement, m.end - start) }
                    // A `%` is the escape of an encoded form's replacement: placeholders have none.
                    if i >= queryFrom { replacement = URLParts.percentEncodedQueryValue(replacement, keepingPercent: true) }
                    hits.append(RedactionEngine.mask(String(decoding: UnsafeBufferPointer(rebasing: p[i..<m.end]), as: UTF8.self)))
                    // A phone known without its `+` (`1 415 555 0100`) met with it: the `+` goes
                    // too, or the placeholder would follow it (`++12015550100`, no placeholder).
                    let plus = !sameLength && start == i && i < queryFrom && i > copied && base[i - 1] == 0x2B && replacement.first == 0x2B
                    // A value that ends in symbols (base64's `=` padding) met right before more of a
                    // token: the symbols stay, or the placeholder would run into the rest and read
                    // as another token (`Bearer abc.de==X` -> `Bearer redacted-1X`, which a second
                    // run replaces, where `==X` said "no credential").
                    var replacedEnd = m.end
                    if !sameLength && m.end < n && RedactionEngine.isTokenByte(base[m.end]), let last = replacement.last,
                       RedactionEngine.isAlnum(last) {
                        while replacedEnd > start + 1 && !RedactionEngine.isAlnum(base[replacedEnd - 1]) { replacedEnd -= 1 }
                    }
                    emit(plus ? i - 1 : start, replacedEnd, replacement)
                    i = m.end
                    continue
                }
                // A run of base64 or percent-encoding that decodes to text: the known values inside.
                // Only a long word or one that goes on in an encoding's characters can start one.
                if !sameLength && i >= encodedCheckedUntil && (c & Self.wordClass != 0 || b == 0x25)
                    && (wordEnd - i >= 12 || (wordEnd < n && cls[Int(base[wordEnd])] & Self.encodedClass != 0)) {
                    let (end, replacement) = knownInEncodedRun(p, at: i, classes: cls)
                    encodedCheckedUntil = end
                    if let replacement {
                        emit(i, end, replacement)
                        i = end
                        continue
                    }
                }
                i = wordEnd
            }
        }
        guard copied > 0 else { return nil }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<n]))
        return out
    }

    /// Where a known value found bare at `i..<end` is replaced from; nil when it is not. In
    /// query-encoded text, `queryMatchStart`. A value that begins with JSON's structure (`: [eyJh`,
    /// the content of a broken string) keeps that structure where it is met bare: replaced, the
    /// colon after `":"` went with it, and a second run read that name as a secret array's element.
    static func replacedStart(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int, queryFrom: Int) -> Int? {
        guard var start = i < queryFrom ? i : queryMatchStart(p, i, end, queryFrom: queryFrom) else { return nil }
        while start < end && isJSONStructure(p[start]) { start += 1 }
        return start < end ? start : nil
    }

    /// `: , [ ] { }` and the spaces JSON allows between them.
    @inline(__always) static func isJSONStructure(_ b: UInt8) -> Bool {
        b == 0x3A || b == 0x2C || b == 0x5B || b == 0x5D || b == 0x7B || b == 0x7D || b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D
    }

    /// Where a known value found at `i` in query-encoded text (from `queryFrom` on) is replaced
    /// from: past the `=` that ends its item's name when the value starts with one (`#=zzcc...`,
    /// for a value `=zzcc...` known from a body), so the item keeps its name and a second run reads
    /// the same items; nil when the match spans the query's syntax.
    static func queryMatchStart(_ p: UnsafeBufferPointer<UInt8>, _ i: Int, _ end: Int, queryFrom: Int) -> Int? {
        let start = p[i] == 0x3D && crossesQuerySyntax(p, i..<end, queryFrom: queryFrom) ? i + 1 : i
        return start < end && !crossesQuerySyntax(p, start..<end, queryFrom: queryFrom) ? start : nil
    }

    /// Whether a known value found bare in query-encoded text (from `queryFrom` on) spans the
    /// query's own syntax: a `&` or `#`, or the `=` that ends its item's name (`415 555 0100N=`,
    /// a phone read from a parameter value, found again in `"phone":415 555 0100N="...`).
    /// Replaced there, it would merge the name into the value; a second run would read another
    /// query. A base64 value's own padding (`t=dGhp...==`) comes after that `=` and is kept.
    static func crossesQuerySyntax(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, queryFrom: Int) -> Bool {
        var equals = false
        for k in range {
            let b = p[k]
            if b == 0x26 || b == 0x23 { return true }
            if b == 0x3D { equals = true }
        }
        guard equals else { return false }
        // An '=' before the match in the same item ended the name already (items end at `&`, and
        // the query's and the fragment's first begin after `?` and `#`).
        var k = range.lowerBound - 1
        while k >= queryFrom && p[k] != 0x26 && p[k] != 0x3F && p[k] != 0x23 {
            if p[k] == 0x3D { return false }
            k -= 1
        }
        return true
    }

    /// Byte classes for the scan: word bytes (letters and digits) and bytes a known value may
    /// start with (printable ASCII but quotes).
    static let wordClass: UInt8 = 1, startClass: UInt8 = 2, encodedClass: UInt8 = 4
    static let byteClass: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 256)
        for b in 0x21..<0x7F where b != 0x22 && b != 0x27 { t[b] |= startClass }
        for b in 0..<256 where RedactionEngine.isAlnum(UInt8(b)) { t[b] |= wordClass | encodedClass }
        for b in "+/-_%.~".utf8 { t[Int(b)] |= encodedClass }
        return t
    }()

    /// The placeholder of mark `index` in a binary body, at the length it replaced.
    func binaryPlaceholder(_ index: Int, _ modifier: MarkerModifier) -> [UInt8] {
        let n: Int
        if case .sameLength(let length) = modifier { n = length } else { n = placeholders[index].utf8.count }
        return Self.fit(Self.plain(placeholders[index]), n)
    }

    /// A mark of this run at `i`: where it ends and what it becomes.
    private mutating func resolveMark(_ p: UnsafeBufferPointer<UInt8>, at i: Int) -> (Int, [UInt8])? {
        switch p[i + 2] {
        case 0x80:
            guard let m = syntax.parseValue(p, at: i), m.index < placeholders.count else { return nil }
            let placeholder = Array(placeholders[m.index].utf8)
            switch m.modifier {
            case .plain: return (m.end, placeholder)
            case .percentAt: return (m.end, Self.percentAt(placeholder))
            case .sameLength(let n): return (m.end, Self.fit(Self.plain(placeholders[m.index]), n))
            }
        case 0x82:
            guard syntax.matches(MarkerSyntax.base64Open, p, at: i), i + 8 <= p.count,
                  let w = syntax.wrapEnd(p, from: i, open: MarkerSyntax.base64Open, close: MarkerSyntax.base64Close),
                  i + 8 <= w.contentEnd else { return nil }
            let urlSafe = p[i + 6] == UInt8(ascii: "u"), padded = p[i + 7] == UInt8(ascii: "p")
            let content = UnsafeBufferPointer(rebasing: p[(i + 8)..<w.contentEnd])
            let inner = bytes(content, sameLength: false) ?? Array(content)
            return (w.end, Array(Base64URL.encode(inner, urlSafe: urlSafe, padded: padded).utf8))
        case 0x84:
            guard syntax.matches(MarkerSyntax.binaryOpen, p, at: i),
                  let w = syntax.wrapEnd(p, from: i, open: MarkerSyntax.binaryOpen, close: MarkerSyntax.binaryClose)
            else { return nil }
            var assembled: [UInt8] = []
            var j = i + 6
            while j < w.contentEnd {
                if p[j] == 0xEE, let m = syntax.parseValue(p, at: j), m.index < placeholders.count {
                    assembled += binaryPlaceholder(m.index, m.modifier)
                    j = m.end
                    continue
                }
                var k = j
                while k < w.contentEnd && p[k] != 0xEE { k += 1 }
                if let chunk = Base64.decode(String(decoding: UnsafeBufferPointer(rebasing: p[j..<k]), as: UTF8.self)) {
                    assembled += chunk
                }
                j = k == j ? j + 1 : k
            }
            let final = assembled.withUnsafeBufferPointer { bytes($0, sameLength: true) } ?? assembled
            return (w.end, Array(Base64.encode(final).utf8))
        case 0x86:
            guard syntax.matches(MarkerSyntax.percentOpen, p, at: i),
                  let w = syntax.wrapEnd(p, from: i, open: MarkerSyntax.percentOpen, close: MarkerSyntax.percentClose)
            else { return nil }
            let content = UnsafeBufferPointer(rebasing: p[(i + 6)..<w.contentEnd])
            let inner = bytes(content, sameLength: false) ?? Array(content)
            return (w.end, URLParts.percentEncodedQueryValue(inner))
        default:
            return nil
        }
    }

    /// Base64 of text (16 or more characters, bounded by non-alphanumerics), or a percent-encoded
    /// run (`%73ession...` in a path), holding a known value: where the run ends, and its
    /// replacement when a known value was inside.
    private mutating func knownInEncodedRun(_ p: UnsafeBufferPointer<UInt8>, at i: Int,
                                            classes cls: UnsafeBufferPointer<UInt8>) -> (Int, [UInt8]?) {
        var j = i
        var percent = false, base64 = true, upper = false
        while j < p.count && cls[Int(p[j])] & Self.encodedClass != 0 {
            let c = p[j]
            if c &- 0x41 < 26 { upper = true }
            if c == 0x25 {
                guard j + 2 < p.count, RedactionEngine.isHex(p[j + 1]), RedactionEngine.isHex(p[j + 2]) else { break }
                percent = true
                base64 = false
            } else if c == 0x2E || c == 0x7E {
                base64 = false
            }
            j += 1
        }
        if percent {
            // Only the part up to a '/' or '+' is one encoded value (a path segment, a query value).
            var end = i
            while end < j && p[end] != 0x2F && p[end] != 0x2B { end += 1 }
            guard end - i >= KnownValueIndex.minimumLength else { return (end, nil) }
            let decoded = Array(PercentEncoding.decoded(String(decoding: UnsafeBufferPointer(rebasing: p[i..<end]), as: UTF8.self),
                                                        plusAsSpace: false).utf8)
            guard let inner = decoded.withUnsafeBufferPointer({ bytes($0, sameLength: false) }) else { return (end, nil) }
            return (end, URLParts.percentEncodedQueryValue(inner))
        }
        // Base64 of text has both cases (`Base64View.decode`): lowercase ids and hex digests are none.
        guard base64, upper, j - i >= Base64View.minimumLength else { return (j, nil) }
        var padding = 0
        while j < p.count, p[j] == 0x3D, padding < 2 { j += 1; padding += 1 }
        guard j - i <= 1 << 20, let view = Base64View.decode(UnsafeBufferPointer(rebasing: p[i..<j])),
              let inner = view.text.withUnsafeBufferPointer({ bytes($0, sameLength: false) }) else { return (j, nil) }
        return (j, Array(Base64URL.encode(inner, urlSafe: view.urlSafe, padded: view.padded).utf8))
    }

    /// A placeholder as it is written into binary bodies: a placeholder JWT as its `redacted-N`
    /// (padding after a JWT shape would no longer be one).
    static func plain(_ placeholder: String) -> [UInt8] {
        if let n = JWTShape.placeholderNumber(placeholder) { return Array("redacted-\(n)".utf8) }
        return Array(placeholder.utf8)
    }

    /// `placeholder` in exactly `n` bytes: padded with '*', or all '*' when it does not fit.
    static func fit(_ placeholder: [UInt8], _ n: Int) -> [UInt8] {
        if placeholder.count == n { return placeholder }
        if placeholder.count < n { return placeholder + [UInt8](repeating: 0x2A, count: n - placeholder.count) }
        return [UInt8](repeating: 0x2A, count: n)
    }

    static func percentAt(_ placeholder: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for b in placeholder { if b == 0x40 { out += [0x25, 0x34, 0x30] } else { out.append(b) } }
        return out
    }
}

/// The placeholders a unit's markers name, by marker index: looked up in the file's numbering
/// when a marker is met (building an array of every unit value's placeholder retained each
/// string once per entry), or given as a list.
struct UnitPlaceholders {
    private let ids: [Int32]
    private let numbering: FileNumbering?
    private let list: [String]

    /// Marker index k stands for value `ids[k]` of `numbering` (negative: a plain "redacted").
    init(ids: [Int32], numbering: FileNumbering) {
        self.ids = ids
        self.numbering = numbering
        list = []
    }

    init(_ list: [String]) {
        ids = []
        numbering = nil
        self.list = list
    }

    var count: Int { numbering == nil ? list.count : ids.count }

    subscript(index: Int) -> String {
        guard let numbering else { return list[index] }
        return ids[index] >= 0 ? numbering.placeholder(ids[index]) : "redacted"
    }

    /// Calls `body` with the bytes of `self[index]`.
    @inline(__always)
    func withBytes<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let numbering, ids[index] >= 0 { return numbering.withPlaceholderBytes(ids[index], body) }
        var placeholder = self[index]
        return placeholder.withUTF8(body)
    }
}
