
/// A HAR read entry by entry: the document is scanned once for the byte range of each element of
/// `log.entries` (fast: strings and brackets only), everything else is parsed at once, and each
/// entry is parsed when asked for, so entries can be parsed on many threads and a large file is
/// never held as a whole tree.
///
/// The result is the same as `HARLog.parse`: when the document has a shape the scanner does not
/// handle (duplicate `log` or `entries` members, escapes in those names, no entries array) it
/// falls back to parsing the whole document.
public final class HARLazyDocument: @unchecked Sendable {
    /// The log without its entries.
    public let head: HARLog
    /// How many entries there are.
    public let entryCount: Int

    private enum Storage {
        /// `ranges` index `source` after `bom` bytes (a leading BOM, 3 or 0); `head` is the
        /// document with an empty entries array, as parsed.
        case lazy(source: ByteSource, bom: Int, ranges: [Range<Int>], head: JSONValue)
        case parsed(UnsafeMutablePointer<HAREntry?>)
    }
    private var storage: Storage

    /// Reads `bytes` (a leading BOM is ignored). Throws when the document outside the entries is
    /// not valid JSON or not a HAR; errors inside an entry surface from `entry(_:)`.
    public convenience init(_ input: [UInt8]) throws(HARReadError) {
        try self.init(source: ByteSource(copying: input))
    }

    /// Reads the file at `path` through a read-only mapping of it: no copy, and no fresh memory
    /// to fault in (reading a 100 MB HAR into a buffer took 55-90 ms of a redaction's
    /// single-threaded start, mapping it under 15). A file that cannot be mapped whole (an
    /// address-space limit below its size) is read a window at a time instead: each entry is
    /// read when it is parsed. Nil when it is no regular file with bytes in it: the caller reads
    /// it instead and reports errors.
    public convenience init?(mappingFile path: String) throws(HARReadError) {
        guard let source = ByteSource(file: path) else { return nil }
        try self.init(source: source)
    }

    /// Reads the file open as `fd` as `init(mappingFile:)` does; the caller keeps `fd`, so what
    /// it reads through it later is the same file.
    public convenience init?(mappingDescriptor fd: Int32) throws(HARReadError) {
        guard let source = ByteSource(descriptor: fd) else { return nil }
        try self.init(source: source)
    }

    /// Reads the bytes `reader` reads, a window at a time, as a file that cannot be mapped is
    /// read (tests give it an array).
    convenience init(reading reader: PositionalReader) throws(HARReadError) {
        try self.init(source: ByteSource(reader: reader))
    }

    private init(source: ByteSource) throws(HARReadError) {
        let bom = try source.withBytes(0..<min(3, source.count)) { (p) throws(HARReadError) -> Int in
            p.count == 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0
        }
        if let layout = try Self.scan(source, from: bom) {
            // The document without its entries: `{"log": {..., "entries": [], ...}}`.
            var headBytes = try source.withBytes(bom..<(bom + layout.arrayStart + 1)) { Array($0) }
            headBytes += try source.withBytes((bom + layout.arrayEnd - 1)..<source.count) { Array($0) }
            let head: HARLog
            let headDocument: JSONValue
            do {
                headDocument = try JSONParser.parse(headBytes)
                head = try HARLog(document: headDocument)
            } catch let error as JSONParseError {
                // An error after the entries comes after any inside them, as a whole parse meets
                // them.
                if error.offset > layout.arrayStart {
                    for range in layout.entries { _ = try Self.parseEntry(source, bom: bom, range: range) }
                }
                // Report the position in the real file, not in the shortened copy.
                throw .json(source.makeError(from: bom, ScanFailure(
                    offset: error.offset <= layout.arrayStart ? error.offset
                        : error.offset + (layout.arrayEnd - 1 - (layout.arrayStart + 1)),
                    reason: error.reason)))
            } catch let error as HARReadError {
                throw error
            } catch {
                throw .notHAR("\(error)")
            }
            self.head = head
            entryCount = layout.entries.count
            storage = .lazy(source: source, bom: bom, ranges: layout.entries, head: headDocument)
            // The scan read every page of a large file: they go until an entry is parsed.
            if source.count > populatedMappingBytes { source.dropResidentPages() }
        } else {
            // The input as given: `parse` strips a BOM itself (stripping twice would accept a
            // document with two BOMs that `HARLog.parse` rejects).
            var log = try HARLog.parse(try source.withBytes(0..<source.count) { Array($0) })
            let entries = log.entries
            log.entries = []
            head = log
            entryCount = entries.count
            let slots = UnsafeMutablePointer<HAREntry?>.allocate(capacity: max(1, entries.count))
            slots.initialize(repeating: nil, count: entries.count)
            for (i, entry) in entries.enumerated() { slots[i] = entry }
            storage = .parsed(slots)
        }
    }

    /// The layout of the entries of the bytes of `source` after `start`: scanned in place when
    /// they are in memory (on two threads for a large file), else fed a window at a time.
    private static func scan(_ source: ByteSource, from start: Int) throws(HARReadError) -> EntriesScanner.Layout? {
        if let whole = source.whole {
            let bytes = UnsafeBufferPointer(rebasing: whole[start...])
            // A file mapped with its pages populated keeps them for the entries' parse.
            guard source.count > populatedMappingBytes else { return EntriesScanner.scan(bytes) }
            return EntriesScanner.scan(bytes) { range in
                source.dropResidentPages((range.lowerBound + start)..<(range.upperBound + start))
            }
        }
        var stream = EntriesStream()
        do {
            try source.forEachPiece(start..<source.count) { piece in
                if !stream.feed(piece) { throw ScanStopped() }
            }
        } catch is ScanStopped {
            return nil
        } catch let error as HARReadError {
            throw error
        } catch {
            throw .unreadable("\(error)")
        }
        return stream.finish()
    }

    private struct ScanStopped: Error {}

    deinit {
        if case .parsed(let slots) = storage {
            slots.deinitialize(count: entryCount)
            slots.deallocate()
        }
    }

    /// Lets the pages of a mapped file that hold entries `indices` leave memory (a batch a
    /// pipeline has parsed; they are read again from the file when an entry is parsed again); a
    /// document read into memory keeps its bytes. Thread-safe.
    public func dropResidentBytes(ofEntries indices: Range<Int>) {
        guard case .lazy(let source, let bom, let ranges, _) = storage, !indices.isEmpty, indices.upperBound <= ranges.count
        else { return }
        source.dropResidentPages((ranges[indices.lowerBound].lowerBound + bom)..<(ranges[indices.upperBound - 1].upperBound + bom))
    }

    /// How many bytes entry `index` takes in the file (0 when the whole document was parsed).
    public func byteCount(ofEntry index: Int) -> Int {
        if case .lazy(_, _, let ranges, _) = storage, index < ranges.count { return ranges[index].count }
        return 0
    }

    /// Where entry `index` lies in the file or input it was read from (a leading BOM counted),
    /// for a caller that reads it again later without keeping the document (`entry(parsing:)`);
    /// nil when the whole document was parsed.
    public func sourceRange(ofEntry index: Int) -> Range<Int>? {
        guard case .lazy(_, let bom, let ranges, _) = storage, index < ranges.count else { return nil }
        return (ranges[index].lowerBound + bom)..<(ranges[index].upperBound + bom)
    }

    /// Calls `body` with entry `index`'s bytes and where they start in the source (a BOM
    /// counted); nil when the whole document was parsed or the bytes cannot be read.
    func withEntryBytes<R>(_ index: Int, _ body: (_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int) -> R?) -> R? {
        guard let range = sourceRange(ofEntry: index), case .lazy(let source, _, _, _) = storage else { return nil }
        return try? source.withBytes(range) { bytes in body(bytes, range.lowerBound) }
    }

    /// Calls `body` with the bytes of `range` of the source (a BOM counted) a piece at a time.
    func forEachPiece(of range: Range<Int>, step: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        guard case .lazy(let source, _, _, _) = storage else { throw HARReadError.unreadable("the document was parsed whole") }
        try source.forEachPiece(range, step: step, body)
    }

    /// How deep an entry stands in the document (`{"log": {"entries": [`): an entry parsed alone
    /// meets the nesting limit where the whole document's parse meets it.
    static let entryDepth = 3

    /// An entry read again from its bytes (`sourceRange`), parsed as `entry(_:)` parses it.
    public static func entry(parsing bytes: [UInt8]) throws(HARReadError) -> HAREntry {
        do throws(JSONParseError) {
            return HAREntry(lenient: try bytes.withUnsafeBufferPointer { (p) throws(JSONParseError) in
                try JSONParser.parse(p, extent: .element(depth: Self.entryDepth))
            })
        } catch {
            throw .json(error)
        }
    }

    /// Entry `index`, parsed now, straight from the source's bytes, as often as asked and from
    /// any thread (a pipeline builds an entry again instead of keeping it between passes).
    public func entry(_ index: Int) throws(HARReadError) -> HAREntry {
        switch storage {
        case .parsed(let slots):
            return slots[index]!
        case .lazy(let source, let bom, let ranges, _):
            return HAREntry(lenient: try Self.parseEntry(source, bom: bom, range: ranges[index]))
        }
    }

    /// The document as parsed with an empty entries array, and the JSON of each entry, for a
    /// reader of the JSON itself (the validator); nil when the whole document was parsed.
    var entriesJSON: (head: JSONValue, count: Int, entry: (Int) throws(HARReadError) -> JSONValue)? {
        guard case .lazy(let source, let bom, let ranges, let head) = storage else { return nil }
        return (head, ranges.count, { (index) throws(HARReadError) in try Self.parseEntry(source, bom: bom, range: ranges[index]) })
    }

    /// The JSON of the entry at `range` (after `bom`) of `source`; errors point into the file.
    private static func parseEntry(_ source: ByteSource, bom: Int, range: Range<Int>) throws(HARReadError) -> JSONValue {
        // With the byte after the entry (`,`, `]` or a space): the parser meets the entry's end
        // as the whole document's parse does.
        let end = min(source.count, range.upperBound + bom + 1)
        return try source.withBytes((range.lowerBound + bom)..<end) { (bytes) throws(HARReadError) -> JSONValue in
            do throws(JSONParseError) {
                return try JSONParser.parse(bytes, extent: .element(depth: entryDepth))
            } catch {
                throw .json(source.makeError(from: bom, ScanFailure(offset: range.lowerBound + error.offset, reason: error.reason)))
            }
        }
    }
}
