/// Where a value is read and how: its place in the entry, and what the text around it said about
/// it. It is passed down by value with the bytes, so a nested reading (JSON in a header, a part
/// of a multipart body) inherits its context, and no reading can leave one behind for the next.
struct Reading {
    /// The part of the entry, for the report's columns.
    let location: RedactionLocation
    var context: ReadingContext = []
    /// The scope of the markup element being read (an `<Address>`'s children and attributes are
    /// its lines), `.ordinary` outside one.
    var scope: NameClass = .ordinary
    /// How many scoped elements this reading is inside.
    var scopeDepth = 0

    init(_ location: RedactionLocation, _ context: ReadingContext = []) {
        self.location = location
        self.context = context
    }

    /// This reading with `more` context.
    func with(_ more: ReadingContext) -> Reading {
        var r = self
        r.context.formUnion(more)
        return r
    }

    /// This reading inside an element with `scope`.
    func scoped(_ scope: NameClass) -> Reading {
        var r = self
        r.scope = scope
        r.scopeDepth += 1
        return r
    }

    var keepsLength: Bool { context.contains(.sameLength) }

    static let header = Reading(.header), cookie = Reading(.cookie), query = Reading(.query),
               body = Reading(.body), webSocket = Reading(.webSocket), url = Reading(.url), other = Reading(.other)
}

/// What the text around a value says about how to read it.
struct ReadingContext: OptionSet, Equatable {
    let rawValue: UInt8
    /// The printable runs of a binary body: every replacement keeps the byte length, so
    /// length-prefixed framing (protobuf, gRPC) stays valid.
    static let sameLength = ReadingContext(rawValue: 1)
    /// A value under a version name: a dotted quad there is a version, not an address.
    static let version = ReadingContext(rawValue: 2)
    /// JSON that does not parse: its quoted keys are the JSON key pass's, not assignments.
    static let lenientJSON = ReadingContext(rawValue: 4)
    /// The text was cut just before one of harrec's placeholders: a detector that looks past
    /// its value's end sees the end of the text where that placeholder stands. A first run saw
    /// the value the placeholder replaced there, so a check of what follows must not read the
    /// end as "nothing follows" (`a@b.io:` before a placeholder is still `a@b.io:path`).
    static let placeholderFollows = ReadingContext(rawValue: 8)
}
