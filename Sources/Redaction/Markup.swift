import HAR

// Markup: XML and HTML elements whose names (or name attributes) say their content is a secret.

extension RedactionEngine {
    /// `<password>value</password>` (the element's local name decides; CDATA too), and HTML
    /// `<input>`/`<meta>` whose `name`, `id` or `property` is a secret: their `value`/`content`.
    /// The start tag's own attributes are scanned like any text.
    func markup(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ reading: Reading, _ path: () -> String) -> TextMatch? {
        var j = i + 1
        while j < p.count && (Self.isNameByte(p[j]) || p[j] == 0x3A) && j - i <= 64 { j += 1 }
        let tagName = i + 1..<j
        guard j < p.count, p[j] == 0x3E || p[j] == 0x20 || p[j] == 0x2F || p[j] == 0x09 || p[j] == 0x0A || p[j] == 0x0D
        else { return nil }
        // The end of the start tag, skipping quoted attribute values. As in HTML's tokenizer, a
        // quote opens a value only after '=' (`<input a"b>` ends at its '>').
        var k = j
        var quote: UInt8 = 0
        var afterEquals = false
        while k < p.count && k - i < 4096 {
            let c = p[k]
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if afterEquals && (c == 0x22 || c == 0x27) {
                quote = c
            } else if c == 0x3E {
                break
            }
            if c == 0x3D { afterEquals = quote == 0 } else if c != 0x20 && c != 0x09 && c != 0x0A && c != 0x0D { afterEquals = false }
            k += 1
        }
        guard k < p.count, p[k] == 0x3E else { return nil }
        let tagEnd = k + 1
        let lowerName = string(p, tagName).lowercased()
        if ["input", "meta", "param", "option", "button"].contains(lowerName) {
            return htmlNamedValue(p, i..<tagEnd, attributes: j..<k, reading, path)
        }
        var localStart = tagName.lowerBound
        for c in tagName where p[c] == 0x3A { localStart = c + 1 }
        let nameClass = markupNameClass(p, localStart..<tagName.upperBound, reading)
        // An element about an address, a person or a place: its attributes and children are its
        // members (`<Address zip="97229">`, `<Address><Zip>97229</Zip>`), as a JSON object's are.
        // Up to `scopeDepth` levels (a customer's address): deeper, by its own name only.
        var scope = PersonalNames.scope(of: nameClass)
        if scope == .secret || reading.scopeDepth >= Self.scopeDepth { scope = .ordinary }
        let selfClosing = p[k - 1] == 0x2F  // <empty/>
        // An element that is neither named nor scoped is left to the scan, attributes and all.
        if scope == .ordinary && (selfClosing || nameClass == .ordinary) { return nil }
        let attributes = tagName.upperBound..<k
        // Without the tag's '>': a value there must not run into it (`"phone":415555>` would take
        // the '>' along, and the next run, finding no tag, would read on past it).
        let scannedAttributes = self.scannedAttributes(p, attributes, scope: scope, reading, path).map { $0 + [0x3E] }
        func tag(_ end: Int, content: [UInt8]?) -> TextMatch {
            guard scannedAttributes != nil || content != nil else { return TextMatch(start: i, end: end, replacement: "", keep: true) }
            var replacement = string(p, i..<tagName.upperBound)
            replacement += scannedAttributes.map { String(decoding: $0, as: UTF8.self) } ?? string(p, attributes.lowerBound..<tagEnd)
            replacement += content.map { String(decoding: $0, as: UTF8.self) } ?? string(p, tagEnd..<end)
            return TextMatch(start: i, end: end, replacement: replacement)
        }
        if selfClosing { return tag(tagEnd, content: nil) }
        let first = firstNonSpace(p, from: tagEnd)
        if scope != .ordinary, first < p.count, p[first] == 0x3C, !hasPrefix(p, at: first, "<![CDATA["),
           let close = closingTag(p, tagName, from: tagEnd) {
            return tag(close, content: scanBytes(UnsafeBufferPointer(rebasing: p[tagEnd..<close]), reading.scoped(scope), path))
        }
        guard nameClass != .ordinary else { return nil }
        // The content, up to the next tag; CDATA is unwrapped.
        var contentStart = first
        var contentEnd: Int
        if hasPrefix(p, at: contentStart, "<![CDATA[") {
            contentStart += 9
            contentEnd = contentStart
            while contentEnd + 3 <= p.count && !hasPrefix(p, at: contentEnd, "]]>") { contentEnd += 1 }
            if contentEnd + 3 > p.count { contentEnd = p.count }
        } else {
            contentEnd = contentStart
            while contentEnd < p.count && p[contentEnd] != 0x3C { contentEnd += 1 }
            // An element, not a stray '<': its content ends at its own closing tag.
            guard hasPrefix(p, at: contentEnd, "</"),
                  UnsafeBufferPointer(rebasing: p[(contentEnd + 2)..<min(p.count, contentEnd + 2 + tagName.count)])
                    .elementsEqual(UnsafeBufferPointer(rebasing: p[tagName])) else { return nil }
            while contentEnd > contentStart && (p[contentEnd - 1] == 0x20 || p[contentEnd - 1] == 0x0A
                || p[contentEnd - 1] == 0x0D || p[contentEnd - 1] == 0x09) { contentEnd -= 1 }
        }
        guard contentEnd > contentStart,
              let value = namedValueMatch(p, contentStart..<contentEnd, nameClass, secretRule: .secretAssignments,
                                          decode: false, reading, path) else { return nil }
        // The start tag's attributes are scanned like any text (not its name: that would find this
        // element again); then the content's placeholder, or the content as it is (a version).
        if value.keep && scannedAttributes == nil {
            return TextMatch(start: i, end: contentEnd, replacement: "", keep: true)
        }
        let content = string(p, tagEnd..<contentStart) + (value.keep ? string(p, contentStart..<contentEnd) : value.replacement)
        return tag(contentEnd, content: Array(content.utf8))
    }

    /// What an element's or attribute's name says its value is: its own class, or, when that says
    /// nothing, its role in the element being read (`zip` in an `<Address>`).
    private func markupNameClass(_ p: UnsafeBufferPointer<UInt8>, _ name: Range<Int>, _ reading: Reading) -> NameClass {
        let own = classifyName(p, name, asParameter: false)
        guard own == .ordinary, reading.scope != .ordinary else { return own }
        return PersonalNames.role(nameMemo.info(UnsafeBufferPointer(rebasing: p[name])).roles, in: reading.scope)
    }

    /// A start tag's attributes (after its name, before '>') scanned as text; nil when nothing
    /// changed. Under a scope, an attribute whose name has a role there is that member.
    private func scannedAttributes(_ p: UnsafeBufferPointer<UInt8>, _ attributes: Range<Int>, scope: NameClass,
                                   _ reading: Reading, _ path: () -> String) -> [UInt8]? {
        var pre: [PreMatch] = []
        if scope != .ordinary {
            let inScope = reading.scoped(scope), base = attributes.lowerBound
            Self.forEachAttribute(p, attributes) { name, value in
                let nameClass = markupNameClass(p, name, inScope)
                guard nameClass != .ordinary,
                      let m = namedValueMatch(p, value, nameClass, secretRule: .secretAssignments, decode: false, reading, path)
                else { return }
                pre.append(PreMatch(match: TextMatch(start: m.start - base, end: m.end - base, replacement: m.replacement, keep: m.keep),
                                    source: .structure))
            }
        }
        return scanBytes(UnsafeBufferPointer(rebasing: p[attributes]), reading, path, preMatches: pre)
    }

    /// Where `</name>` starts after `from`, within `scopeReach` bytes. Only the text's `</`
    /// are read, found once per text, and not those an earlier search for the same name read in
    /// vain: a body of unclosed `<Address>` tags costs a read of its bytes, not one per tag.
    private func closingTag(_ p: UnsafeBufferPointer<UInt8>, _ name: Range<Int>, from: Int) -> Int? {
        let limit = min(p.count, from + Self.scopeReach)
        let nameBytes = UnsafeBufferPointer(rebasing: p[name])
        // One index per text: a detector reads a prefix of it (up to the next structural match),
        // a longer prefix each time, so the index grows with it and is never built twice.
        let index: Int
        if let found = closingTagIndexes.lastIndex(where: { $0.base == p.baseAddress }) {
            index = found
            closingTagIndexes[index].extend(to: p)
        } else {
            closingTagIndexes.append(ClosingTagIndex(p))
            index = closingTagIndexes.count - 1
        }
        var searchedFrom = from, k = from
        if let miss = closingTagIndexes[index].miss, miss.name.elementsEqual(nameBytes), miss.searched.lowerBound <= from,
           from <= miss.searched.upperBound {
            searchedFrom = miss.searched.lowerBound
            k = miss.searched.upperBound
        }
        let closers = closingTagIndexes[index].closers
        var c = 0, high = closers.count  // the first closer at or after k
        while c < high {
            let mid = (c + high) / 2
            if closers[mid] < k { c = mid + 1 } else { high = mid }
        }
        while c < closers.count, closers[c] + name.count + 3 <= limit {
            let at = closers[c]
            if p[at + 2 + name.count] == 0x3E,
               UnsafeBufferPointer(rebasing: p[(at + 2)..<(at + 2 + name.count)]).elementsEqual(nameBytes) {
                return at
            }
            c += 1
        }
        closingTagIndexes[index].miss = (Array(nameBytes), searchedFrom..<max(k, limit - name.count - 2))
        return nil
    }

    /// How far an element about an address, a person or a place is read as one: its members
    /// stand together, and a stray start tag must not cost a read of the whole body.
    static let scopeReach = 16384
    /// How many elements with a scope are read inside each other as members.
    static let scopeDepth = 3

    private func firstNonSpace(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var k = from
        while k < p.count && (p[k] == 0x20 || p[k] == 0x0A || p[k] == 0x0D || p[k] == 0x09) { k += 1 }
        return k
    }

    /// Each `name=value` of a start tag, as HTML's tokenizer reads them: names up to a space,
    /// '/', '=' or '>', quotes and all (`"phone":41555=5"value=5` is one name and its value, and
    /// stays so once a rule has replaced `41555=5` and left `"phone":+12015550100"value=5`).
    static func forEachAttribute(_ p: UnsafeBufferPointer<UInt8>, _ attributes: Range<Int>,
                                 _ body: (_ name: Range<Int>, _ value: Range<Int>) -> Void) {
        var j = attributes.lowerBound
        while j < attributes.upperBound {
            while j < attributes.upperBound && (p[j] <= 0x20 || p[j] == 0x2F) { j += 1 }
            let nameStart = j
            while j < attributes.upperBound && p[j] > 0x20 && p[j] != 0x2F && p[j] != 0x3D && p[j] != 0x3E { j += 1 }
            if j == nameStart { j += 1; continue }  // a stray '='
            let name = nameStart..<j
            guard j < attributes.upperBound, p[j] == 0x3D else { continue }
            j += 1
            var valueStart = j, valueEnd = j
            if j < attributes.upperBound, p[j] == 0x22 || p[j] == 0x27 {
                let quote = p[j]
                valueStart = j + 1
                valueEnd = valueStart
                while valueEnd < attributes.upperBound && p[valueEnd] != quote { valueEnd += 1 }
                j = min(valueEnd + 1, attributes.upperBound)
            } else {
                while valueEnd < attributes.upperBound && p[valueEnd] > 0x20 && p[valueEnd] != 0x3E { valueEnd += 1 }
                j = valueEnd
            }
            body(name, valueStart..<valueEnd)
        }
    }

    /// An HTML element whose name/id/property attribute names a secret: its value/content
    /// attribute is replaced; the other attributes are scanned like any text.
    private func htmlNamedValue(_ p: UnsafeBufferPointer<UInt8>, _ tag: Range<Int>, attributes: Range<Int>,
                                _ reading: Reading, _ path: () -> String) -> TextMatch? {
        var nameClass = NameClass.ordinary
        var valueRange: Range<Int>?
        Self.forEachAttribute(p, attributes) { nameRange, value in
            switch string(p, nameRange).lowercased() {
            case "name", "id", "property", "itemprop", "key", "data-name":
                let c = classifyName(p, value, asParameter: true)
                if c != .ordinary { nameClass = c }
            case "value", "content", "data-value":
                valueRange = value
            default:
                break
            }
        }
        guard nameClass != .ordinary, let valueRange else { return nil }
        // A value left as it is (a placeholder from an earlier run) still makes this tag one match,
        // so a second run sees the same tag boundaries as the first.
        let named = namedValueMatch(p, valueRange, nameClass, secretRule: .secretAssignments, decode: false, reading, path)
        // A personal-data name claims only values of its kind: any other value is text.
        if named == nil && nameClass.isValueGated { return nil }
        let value = named ?? TextMatch(start: valueRange.lowerBound, end: valueRange.upperBound, replacement: "", keep: true)
        let base = attributes.lowerBound
        let pre = [PreMatch(match: TextMatch(start: valueRange.lowerBound - base, end: valueRange.upperBound - base,
                                             replacement: value.replacement, keep: value.keep), source: .structure)]
        // The attributes are scanned without the tag's '>' (`attributes` ends before it), so a
        // value there cannot run into it.
        guard let out = scanBytes(UnsafeBufferPointer(rebasing: p[attributes]), reading, path, preMatches: pre)
        else { return TextMatch(start: tag.lowerBound, end: tag.upperBound, replacement: "", keep: true) }
        return TextMatch(start: tag.lowerBound, end: tag.upperBound,
                         replacement: string(p, tag.lowerBound..<base) + String(decoding: out, as: UTF8.self)
                            + string(p, attributes.upperBound..<tag.upperBound), valueEnd: valueRange.upperBound)
    }
}

/// The `</` of one text (as far as it has been read), for `closingTag`, and its last search that
/// found nothing: no `</name>` starts in `searched`.
struct ClosingTagIndex {
    let base: UnsafePointer<UInt8>?
    /// How many bytes of the text `closers` covers.
    private(set) var count = 0
    private(set) var closers: [Int] = []
    var miss: (name: [UInt8], searched: Range<Int>)?

    init(_ text: UnsafeBufferPointer<UInt8>) {
        base = text.baseAddress
        extend(to: text)
    }

    /// Adds the `</` of `text` (the same bytes, as long or longer) past those already found.
    mutating func extend(to text: UnsafeBufferPointer<UInt8>) {
        guard text.count > count else { return }
        var k = max(0, count - 1)
        while k + 1 < text.count {
            if text[k] == 0x3C && text[k + 1] == 0x2F { closers.append(k) }
            k += 1
        }
        count = text.count
    }

    /// Whether the text lies within `region`: its scan has ended when the region's has.
    func lies(in region: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base, let start = region.baseAddress else { return false }
        return base >= start && base < start + max(region.count, 1)
    }
}
