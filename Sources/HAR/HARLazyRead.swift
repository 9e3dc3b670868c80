
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
        /// `bytes` is the source without a leading BOM; `ranges` index it.
        case lazy(source: ByteSource, bytes: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>])
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
    /// single-threaded start, mapping it under 15). Nil when the file cannot be mapped (not a
    /// regular file, empty, or the call fails): the caller reads it instead and reports errors.
    public convenience init?(mappingFile path: String) throws(HARReadError) {
        guard let source = ByteSource(mappingFile: path) else { return nil }
        try self.init(source: source)
    }

    /// Reads the file open as `fd` through a read-only mapping of it, as `init(mappingFile:)`
    /// does; the caller keeps `fd`, so what it reads through it later is the same file.
    public convenience init?(mappingDescriptor fd: Int32) throws(HARReadError) {
        guard let source = ByteSource(mappingDescriptor: fd) else { return nil }
        try self.init(source: source)
    }

    private init(source: ByteSource) throws(HARReadError) {
        let all = source.bytes
        // A leading BOM is skipped (positions in errors do not count it, as in `HARLog.parse`).
        let bom = all.count >= 3 && all[0] == 0xEF && all[1] == 0xBB && all[2] == 0xBF ? 3 : 0
        let bytes = UnsafeBufferPointer(rebasing: all[bom...])
        if let layout = EntriesScanner.scan(bytes) {
            var headBytes = Array(bytes[..<(layout.arrayStart + 1)])
            headBytes.append(contentsOf: bytes[(layout.arrayEnd - 1)...])
            let head: HARLog
            do {
                head = try HARLog(document: try JSONParser.parse(headBytes))
            } catch let error as JSONParseError {
                // Report the position in the real file, not in the shortened copy.
                throw .json(JSONParser.makeError(bytes, ScanFailure(
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
            storage = .lazy(source: source, bytes: bytes, ranges: layout.entries)
            // The scan read every page of a large file: they go until an entry is parsed.
            if all.count > populatedMappingBytes { source.dropResidentPages() }
        } else {
            // The input as given: `parse` strips a BOM itself (stripping twice would accept a
            // document with two BOMs that `HARLog.parse` rejects).
            var log = try HARLog.parse(Array(all))
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
        guard case .lazy(let source, let bytes, let ranges) = storage, !indices.isEmpty, indices.upperBound <= ranges.count
        else { return }
        // Positions in `ranges` count from `bytes`, which starts after a BOM in the source.
        let offset = bytes.baseAddress! - source.bytes.baseAddress!
        source.dropResidentPages((ranges[indices.lowerBound].lowerBound + offset)..<(ranges[indices.upperBound - 1].upperBound + offset))
    }

    /// How many bytes entry `index` takes in the file (0 when the whole document was parsed).
    public func byteCount(ofEntry index: Int) -> Int {
        if case .lazy(_, _, let ranges) = storage, index < ranges.count { return ranges[index].count }
        return 0
    }

    /// Where entry `index` lies in the file or input it was read from (a leading BOM counted),
    /// for a caller that reads it again later without keeping the document (`entry(parsing:)`);
    /// nil when the whole document was parsed.
    public func sourceRange(ofEntry index: Int) -> Range<Int>? {
        guard case .lazy(let source, let bytes, let ranges) = storage, index < ranges.count else { return nil }
        let offset = bytes.baseAddress! - source.bytes.baseAddress!
        return (ranges[index].lowerBound + offset)..<(ranges[index].upperBound + offset)
    }

    /// The bytes entry `index` is read from, its range in them, and where they start in the
    /// source (after a BOM); nil when the whole document was parsed. Valid while `self` lives.
    func lazyBytes(ofEntry index: Int) -> (bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, offset: Int)? {
        guard case .lazy(let source, let bytes, let ranges) = storage, index < ranges.count else { return nil }
        return (bytes, ranges[index], bytes.baseAddress! - source.bytes.baseAddress!)
    }

    /// An entry read again from its bytes (`sourceRange`), parsed as `entry(_:)` parses it.
    public static func entry(parsing bytes: [UInt8]) throws(HARReadError) -> HAREntry {
        do throws(JSONParseError) {
            return HAREntry(lenient: try JSONParser.parse(bytes))
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
        case .lazy(let source, let bytes, let ranges):
            let range = ranges[index]
            // `source` owns `bytes`: kept alive to the end of the parse.
            return try withExtendedLifetime(source) { () throws(HARReadError) -> HAREntry in
                do throws(JSONParseError) {
                    return HAREntry(lenient: try JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[range])))
                } catch {
                    throw .json(JSONParser.makeError(bytes, ScanFailure(offset: range.lowerBound + error.offset,
                                                                        reason: error.reason)))
                }
            }
        }
    }
}

/// The bytes a `HARLazyDocument` reads: a copy it owns, or a read-only private mapping of a file,
/// unmapped when the document lets go of it.
final class ByteSource: @unchecked Sendable {
    let bytes: UnsafeBufferPointer<UInt8>
    private let mapped: Bool

    init(copying array: [UInt8]) {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, array.count))
        _ = buffer.initialize(from: array)
        bytes = UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer)[..<array.count])
        mapped = false
    }

    init?(mappingFile path: String) {
        guard let (base, count) = mapFileReadOnly(path) else { return nil }
        bytes = UnsafeBufferPointer(start: base, count: count)
        mapped = true
    }

    init?(mappingDescriptor fd: Int32) {
        guard let (base, count) = mapFileReadOnly(descriptor: fd) else { return nil }
        bytes = UnsafeBufferPointer(start: base, count: count)
        mapped = true
    }

    /// A mapped file's pages in `range` (all of them by default) leave memory until read again;
    /// a copy stays as it is.
    func dropResidentPages(_ range: Range<Int>? = nil) {
        guard mapped else { return }
        let range = range ?? 0..<bytes.count
        HAR.dropResidentPages(bytes.baseAddress! + range.lowerBound, range.count)
    }

    deinit {
        if mapped {
            unmapFile(bytes.baseAddress!, bytes.count)
        } else {
            UnsafeMutablePointer(mutating: bytes.baseAddress!).deallocate()
        }
    }
}
