import HAR

// Markup: XML and HTML elements whose names (or name attributes) say their content is a secret.

extension RedactionEngine {
    /// `<password>value</password>` (the element's local name decides; CDATA too), and HTML
    /// `<input>`/`<meta>` whose `name`, `id` or `property` is a secret: their `value`/`content`.
    /// The start tag's own attributes are scanned like any text.
    func markup(at i: Int, _ p: UnsafeBufferPointer<UInt8>, _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
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
            return htmlNamedValue(p, i..<tagEnd, attributes: j..<k, location, path)
        }
        guard p[k - 1] != 0x2F else { return nil }  // <empty/>
        var localStart = tagName.lowerBound
        for c in tagName where p[c] == 0x3A { localStart = c + 1 }
        let nameClass = classifyName(p, localStart..<tagName.upperBound, asParameter: false)
        guard nameClass != .ordinary else { return nil }
        // The content, up to the next tag; CDATA is unwrapped.
        var contentStart = tagEnd
        while contentStart < p.count && (p[contentStart] == 0x20 || p[contentStart] == 0x0A || p[contentStart] == 0x0D
            || p[contentStart] == 0x09) { contentStart += 1 }
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
                                          decode: false, location, path) else { return nil }
        // The start tag's attributes are scanned like any text (not its name: that would find this
        // element again); then the content's placeholder, or the content as it is (a version).
        // Without the tag's '>': a value there must not run into it (`"phone":415555>` would take
        // the '>' along, and the next run, finding no tag, would read on past it).
        let attributes = UnsafeBufferPointer(rebasing: p[tagName.upperBound..<k])
        let scannedAttributes = scanBytes(attributes, location, path).map { $0 + [0x3E] }
        if value.keep && scannedAttributes == nil {
            return TextMatch(start: i, end: contentEnd, replacement: "", keep: true)
        }
        var replacement = string(p, i..<tagName.upperBound)
        replacement += scannedAttributes.map { String(decoding: $0, as: UTF8.self) } ?? string(p, tagName.upperBound..<tagEnd)
        replacement += string(p, tagEnd..<contentStart) + (value.keep ? string(p, contentStart..<contentEnd) : value.replacement)
        return TextMatch(start: i, end: contentEnd, replacement: replacement)
    }

    /// An HTML element whose name/id/property attribute names a secret: its value/content
    /// attribute is replaced; the other attributes are scanned like any text.
    private func htmlNamedValue(_ p: UnsafeBufferPointer<UInt8>, _ tag: Range<Int>, attributes: Range<Int>,
                                _ location: RedactionLocation, _ path: () -> String) -> TextMatch? {
        var nameClass = NameClass.ordinary
        var valueRange: Range<Int>?
        var j = attributes.lowerBound
        while j < attributes.upperBound {
            // Names as HTML's tokenizer reads them: up to a space, '/', '=' or '>', quotes and
            // all (`"phone":41555=5"value=5` is one name and its value, and stays so once a rule
            // has replaced `41555=5` and left `"phone":+12015550100"value=5`).
            while j < attributes.upperBound && (p[j] <= 0x20 || p[j] == 0x2F) { j += 1 }
            let nameStart = j
            while j < attributes.upperBound && p[j] > 0x20 && p[j] != 0x2F && p[j] != 0x3D && p[j] != 0x3E { j += 1 }
            if j == nameStart { j += 1; continue }  // a stray '='
            let name = string(p, nameStart..<j).lowercased()
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
            switch name {
            case "name", "id", "property", "itemprop", "key", "data-name":
                let c = classifyName(p, valueStart..<valueEnd, asParameter: true)
                if c != .ordinary { nameClass = c }
            case "value", "content", "data-value":
                valueRange = valueStart..<valueEnd
            default:
                break
            }
        }
        guard nameClass != .ordinary, let valueRange else { return nil }
        // A value left as it is (a placeholder from an earlier run) still makes this tag one match,
        // so a second run sees the same tag boundaries as the first.
        let named = namedValueMatch(p, valueRange, nameClass, secretRule: .secretAssignments, decode: false, location, path)
        // A personal-data name claims only values of its kind: any other value is text.
        if named == nil && nameClass.isValueGated { return nil }
        let value = named ?? TextMatch(start: valueRange.lowerBound, end: valueRange.upperBound, replacement: "", keep: true)
        let base = attributes.lowerBound
        let pre = [PreMatch(match: TextMatch(start: valueRange.lowerBound - base, end: valueRange.upperBound - base,
                                             replacement: value.replacement, keep: value.keep), source: .structure)]
        // The attributes are scanned without the tag's '>' (`attributes` ends before it), so a
        // value there cannot run into it.
        guard let out = scanBytes(UnsafeBufferPointer(rebasing: p[attributes]), location, path, preMatches: pre)
        else { return TextMatch(start: tag.lowerBound, end: tag.upperBound, replacement: "", keep: true) }
        return TextMatch(start: tag.lowerBound, end: tag.upperBound,
                         replacement: string(p, tag.lowerBound..<base) + String(decoding: out, as: UTF8.self)
                            + string(p, attributes.upperBound..<tag.upperBound), valueEnd: valueRange.upperBound)
    }
}
