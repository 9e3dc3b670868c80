/// A body's text left in the file (`HARLazyDocument.entryLeavingOutTexts`).
public struct LeftOutText: Sendable, Equatable {
    /// The bytes between the quotes of the text (`response.content.text`,
    /// `request.postData.text`), in the file.
    public var range: Range<Int>
    /// The text's length once its escapes are decoded.
    public var textCount: Int
    /// The encoding is base64: the body is the text decoded (leniently) from base64.
    public var base64: Bool
    /// The body's length: the text's, or what its base64 decodes to.
    public var bodyCount: Int
}

/// The side of an exchange whose body text an entry holds.
public enum BodySide: Sendable, CaseIterable {
    /// `request.postData.text`.
    case request
    /// `response.content.text`.
    case response

    /// The member names on the way to the text.
    var path: [StaticString] {
        switch self {
        case .request: ["request", "postData", "text"]
        case .response: ["response", "content", "text"]
        }
    }

    /// The encoding the entry gives this side's text.
    func encoding(in entry: HAREntry) -> String? {
        switch self {
        case .request: entry.request.postData?.encoding
        case .response: entry.response.content.encoding
        }
    }
}

extension HARLazyDocument {
    /// Entry `index` parsed with its response body's text left out (an empty string in the
    /// entry), and where that text lies in the file: a reader streams the body from there
    /// (`harrec replay`), so a body of any size is never in memory whole. The text is checked as
    /// the parser would check it (escapes, UTF-8) and, for base64, decoded in count only.
    ///
    /// Nil when the document was parsed whole, when the entry's shape is unusual (its path to the
    /// text has a repeated or escaped member name), or when the entry or its text would not parse
    /// or decode: the caller then parses the entry as usual, which reports any error.
    public func entryLeavingOutResponseText(_ index: Int) -> (entry: HAREntry, text: LeftOutText)? {
        guard let (entry, texts) = entryLeavingOutTexts(index, of: [.response]), let text = texts[.response] else { return nil }
        return (entry, text)
    }

    /// Entry `index` parsed with the texts of `sides` left out, those of `minimumBytes` bytes or
    /// more in the file, as `entryLeavingOutResponseText` leaves one out. Nil when none is that
    /// large, and as `entryLeavingOutResponseText` is nil.
    public func entryLeavingOutTexts(_ index: Int, of sides: [BodySide], minimumBytes: Int = 0)
        -> (entry: HAREntry, texts: [BodySide: LeftOutText])? {
        withEntryBytes(index) { whole, entryStart -> (entry: HAREntry, texts: [BodySide: LeftOutText])? in
            let found = sides.compactMap { side in
                Self.textRange(in: whole, path: side.path).flatMap { $0.count >= minimumBytes ? (side, $0) : nil }
            }.sorted { $0.1.lowerBound < $1.1.lowerBound }
            guard !found.isEmpty else { return nil }
            var rest: [UInt8] = []
            var k = 0
            for (_, range) in found {
                rest.append(contentsOf: whole[k..<range.lowerBound])
                k = range.upperBound
            }
            rest.append(contentsOf: whole[k...])
            guard let entry = try? Self.entry(parsing: rest) else { return nil }
            var texts: [BodySide: LeftOutText] = [:]
            for (side, range) in found {
                let base64 = side.encoding(in: entry)?.lowercased() == "base64"
                guard let (textCount, bodyCount) = Self.decodedCounts(UnsafeBufferPointer(rebasing: whole[range]), base64: base64)
                else { return nil }
                let start = entryStart + range.lowerBound
                texts[side] = LeftOutText(range: start..<(start + range.count), textCount: textCount, base64: base64,
                                          bodyCount: bodyCount)
            }
            return (entry, texts)
        }
    }

    /// The range of the content of the string at `path` within one entry's bytes; nil when a
    /// member on the way is missing, repeated, not of its type, or has an escaped name.
    static func textRange(in entry: UnsafeBufferPointer<UInt8>, path: [StaticString]) -> Range<Int>? {
        var c = EntriesScanner.Cursor(p: entry)
        c.skipSpace()
        var found: Range<Int>?
        var seen = [Int](repeating: 0, count: path.count)
        func walk(_ c: inout EntriesScanner.Cursor, level: Int) -> Bool {
            c.members { c, key in
                guard c.isKey(key, path[level]) else { return c.skipValue() }
                seen[level] += 1
                guard level == path.count - 1 else { return walk(&c, level: level + 1) }
                found = c.string()
                return found != nil
            }
        }
        guard walk(&c, level: 0), seen.allSatisfy({ $0 == 1 }) else { return nil }
        return found
    }
}
