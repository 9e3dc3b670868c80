// Writing the HAR model: members in HAR 1.2 spec order (each type's `write(to:)` walks its member
// table, HARMembers.swift), optional members left out when nil, `custom` members last. Output is
// deterministic for a given model.

extension HARLog {
    /// The whole file, `{"log": {...}}`. Pretty output (2-space indent) ends with a newline;
    /// compact output has none.
    public func serialize(pretty: Bool = true) -> [UInt8] {
        // Rough size guess to avoid regrowing: bodies dominate, so count their text.
        var estimate = 4096
        for e in entries {
            estimate &+= 1500 &+ (e.response.content.text?.utf8.count ?? 0) &+ (e.request.postData?.text?.utf8.count ?? 0)
        }
        var w = JSONWriter(pretty: pretty, reservingCapacity: estimate)
        w.beginObject()
        w.key("log")
        write(to: &w)
        w.endObject()
        var out = w.finish()
        if pretty { out.append(0x0A) }
        return out
    }

    /// Everything before the first entry: opens the log object and its `entries` array.
    func writeHead(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(0..<Self.entriesMember, to: &w)
        w.key("entries")
        w.beginArray()
    }

    /// Everything after the last entry: closes `entries` and the log object.
    func writeTail(to w: inout JSONWriter) {
        w.endArray()
        writeMembers((Self.entriesMember + 1)..<Self.schema.accesses.count, to: &w)
        w.fields(custom)
        w.endObject()
    }

    /// Where `entries` is in the log's member table: the streaming writers split there.
    private static let entriesMember = schema.members.firstIndex { $0.name == "entries" }!
}
