/// CSV and TSV bodies (`text/csv`, `text/tab-separated-values`): the header row names each
/// column, and a cell is redacted by its column's name as a JSON member's value is by its name
/// (`first_name`, `dob`, `phone`, `password`), or scanned as text. A table with personal
/// columns (an email, a phone, a birth date, a person's name) describes people: its `name`
/// column is a person's name and its `zip`/`street` columns are addresses.
extension RedactionEngine {
    func redactCSV(_ text: String, separator: UInt8, _ reading: Reading, _ path: () -> String) -> String? {
        var copy = text
        return copy.withUTF8 { p -> String? in
            var lines = Self.csvRecords(p)
            guard lines.count >= 2 else { return nil }
            let header = lines.removeFirst()
            let names = Self.csvCells(p, header, separator).map { cell in
                String(decoding: UnsafeBufferPointer(rebasing: p[cell.content]), as: UTF8.self)
            }
            var classes = names.map { nameMemo.classify($0) }
            let aboutPeople = zip(names, classes).contains { name, nameClass in
                nameClass == .personName || nameClass == .phone || nameClass == .birthDate || nameClass == .address
                    || NameMatcher.nameWords(name).contains("email")
            }
            if aboutPeople {
                for k in classes.indices where classes[k] == .ordinary {
                    classes[k] = PersonalNames.role(of: NameMatcher.nameWords(names[k]), in: .address) ?? .ordinary
                }
            }
            var out: [UInt8] = []
            var copied = 0
            for line in lines {
                for (column, cell) in Self.csvCells(p, line, separator).enumerated() {
                    let raw = UnsafeBufferPointer(rebasing: p[cell.content])
                    let value = cell.quoted ? String(decoding: raw, as: UTF8.self).replacingDoubledQuotes()
                                            : String(decoding: raw, as: UTF8.self)
                    let nameClass = column < classes.count ? classes[column] : .ordinary
                    // A value's replacement (quoted again as the cell was), or the raw cell scanned
                    // as text (its quoting kept as it was).
                    var replacement: [UInt8]?
                    if nameClass != .ordinary && nameClass != .version,
                       let r = replaceNamedValue(value, nameClass, secretRule: .jsonKeys, reading, path) {
                        let bytes = Array(r.utf8)
                        let needsQuotes = !cell.quoted && bytes.contains { $0 == separator || $0 == 0x22 || $0 == 0x0A }
                        let escaped = cell.quoted || needsQuotes ? bytes.flatMap { $0 == 0x22 ? [0x22, 0x22] : [$0] } : bytes
                        replacement = needsQuotes ? [0x22] + escaped + [0x22] : escaped
                    } else if !(nameClass == .secret && flags.has(.jsonKeys)) {
                        replacement = redactValueBytes(raw, reading, path)
                    }
                    guard let replacement else { continue }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied..<cell.content.lowerBound]))
                    out += replacement
                    copied = cell.content.upperBound
                }
            }
            guard copied > 0 else { return nil }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: p[copied...]))
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The records of a CSV text: line ranges, a quoted cell's line breaks kept inside.
    static func csvRecords(_ p: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var records: [Range<Int>] = []
        var start = 0, i = 0, quoted = false
        while i < p.count {
            let c = p[i]
            if c == 0x22 { quoted.toggle() }
            if c == 0x0A && !quoted {
                var end = i
                if end > start && p[end - 1] == 0x0D { end -= 1 }
                if end > start { records.append(start..<end) }
                start = i + 1
            }
            i += 1
        }
        if start < p.count { records.append(start..<p.count) }
        return records
    }

    /// The cells of one record: each one's content (inside its quotes, when quoted).
    static func csvCells(_ p: UnsafeBufferPointer<UInt8>, _ record: Range<Int>, _ separator: UInt8)
        -> [(content: Range<Int>, quoted: Bool)] {
        var cells: [(content: Range<Int>, quoted: Bool)] = []
        var i = record.lowerBound
        while i <= record.upperBound {
            if i < record.upperBound && p[i] == 0x22 {
                var j = i + 1
                while j < record.upperBound {
                    if p[j] == 0x22 {
                        if j + 1 < record.upperBound && p[j + 1] == 0x22 { j += 2; continue }
                        break
                    }
                    j += 1
                }
                cells.append((i + 1..<min(j, record.upperBound), true))
                i = j + 1
                while i < record.upperBound && p[i] != separator { i += 1 }
                i += 1
            } else {
                var j = i
                while j < record.upperBound && p[j] != separator { j += 1 }
                cells.append((i..<j, false))
                i = j + 1
            }
        }
        return cells
    }
}

extension String {
    /// A quoted CSV cell's content with each `""` read as `"`.
    func replacingDoubledQuotes() -> String {
        guard utf8.contains(0x22) else { return self }
        var out: [UInt8] = []
        var skip = false
        for b in utf8 {
            if b == 0x22 && !skip { skip = true; out.append(b); continue }
            if b == 0x22 && skip { skip = false; continue }
            skip = false
            out.append(b)
        }
        return String(decoding: out, as: UTF8.self)
    }
}
