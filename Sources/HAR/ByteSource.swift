#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes a `HARLazyDocument` reads: a copy it owns, a read-only private mapping of a file,
/// or a file read a range at a time, when it cannot be mapped whole (an address-space limit, as
/// `ulimit -v` sets, below four times its size). Released when the document lets go of it.
final class ByteSource: @unchecked Sendable {
    /// Every byte, in memory (a copy or a mapping); nil for a file read a range at a time.
    let whole: UnsafeBufferPointer<UInt8>?
    let count: Int
    private enum Owner {
        case copy
        case mapping
        case reader(PositionalReader)
    }
    private let owner: Owner

    /// How much a sequential read of a source read by ranges takes at a time.
    static let window = 4 << 20

    convenience init(copying array: [UInt8]) {
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, array.count))
        _ = buffer.initialize(from: array)
        self.init(whole: UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer)[..<array.count]), count: array.count, owner: .copy)
    }

    /// The file at `path`, mapped, or read by ranges when it cannot be mapped; nil when it is not
    /// a regular file with bytes in it.
    convenience init?(file path: String) {
        guard let fd = openForReading(path) else { return nil }
        defer { closeDescriptor(fd) }
        self.init(descriptor: fd)
    }

    /// The same for the file open as `fd`, which the caller keeps (a source read by ranges reads
    /// through a duplicate of it: the same open file).
    convenience init?(descriptor fd: Int32) {
        guard let size = regularFileSize(fd), size > 0 else { return nil }
        // Under an address-space limit a mapping takes what the work needs: a file of more than
        // a quarter of it is read by ranges.
        if size <= addressSpaceLimit() / 4, let (base, count) = mapFileReadOnly(descriptor: fd) {
            self.init(whole: UnsafeBufferPointer(start: base, count: count), count: count, owner: .mapping)
        } else if let own = duplicateDescriptor(fd) {
            self.init(reader: .file(own, count: size))
        } else {
            return nil
        }
    }

    /// Bytes read by ranges through `reader`, which the source then owns.
    convenience init(reader: PositionalReader) {
        self.init(whole: nil, count: reader.count, owner: .reader(reader))
    }

    private init(whole: UnsafeBufferPointer<UInt8>?, count: Int, owner: Owner) {
        self.whole = whole
        self.count = count
        self.owner = owner
    }

    deinit {
        switch owner {
        case .copy: UnsafeMutablePointer(mutating: whole!.baseAddress!).deallocate()
        case .mapping: unmapFile(whole!.baseAddress!, whole!.count)
        case .reader(let reader): reader.close()
        }
    }

    /// Calls `body` with the bytes in `range`: in place when they are in memory, else read into a
    /// buffer that lives as long as the call. Throws `.unreadable` when they cannot be read (the
    /// file is shorter now, or there is no memory for them).
    func withBytes<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws(HARReadError) -> R) throws(HARReadError) -> R {
        if let whole { return try body(UnsafeBufferPointer(rebasing: whole[range])) }
        let buffer = try read(range)
        defer { free(buffer.baseAddress) }
        return try body(UnsafeBufferPointer(buffer))
    }

    /// Calls `body` with the bytes in `range` a piece of at most `step` bytes at a time, in order.
    func forEachPiece(_ range: Range<Int>, step: Int = ByteSource.window, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        var k = range.lowerBound
        while k < range.upperBound {
            let end = min(range.upperBound, k + step)
            if let whole {
                try body(UnsafeBufferPointer(rebasing: whole[k..<end]))
                // Read once (a body streamed to the output): a mapped file's pages go again.
                dropResidentPages(k..<end)
            } else {
                let buffer = try read(k..<end)
                defer { free(buffer.baseAddress) }
                try body(UnsafeBufferPointer(buffer))
            }
            k = end
        }
    }

    /// The bytes in `range` of a source read by ranges, in a buffer the caller deallocates.
    private func read(_ range: Range<Int>) throws(HARReadError) -> UnsafeMutableBufferPointer<UInt8> {
        guard case .reader(let reader) = owner else { preconditionFailure("a source holds bytes or reads them") }
        // Not `allocate`, which ends the process when there is no memory: this is the case of a
        // process with too little address space for its input.
        guard let raw = malloc(max(1, range.count)) else {
            throw .unreadable("\(range.count) bytes at offset \(range.lowerBound) do not fit in memory")
        }
        let buffer = UnsafeMutableBufferPointer(start: raw.bindMemory(to: UInt8.self, capacity: range.count), count: range.count)
        let n = reader.read(range.lowerBound, UnsafeMutableRawBufferPointer(buffer))
        guard n == range.count else {
            free(raw)
            throw .unreadable(n < 0 ? "a read at offset \(range.lowerBound) failed"
                                    : "the file changed: \(range.count) bytes expected at offset \(range.lowerBound), \(n) there")
        }
        return buffer
    }

    /// A JSON error at `offset` of the bytes from `start` on, with its line and column.
    func makeError(from start: Int, _ failure: ScanFailure) -> JSONParseError {
        if let whole { return JSONParser.makeError(UnsafeBufferPointer(rebasing: whole[start...]), failure) }
        let offset = min(max(failure.offset, 0), count - start)
        var lines = LineCounter()
        try? forEachPiece(start..<(start + offset)) { lines.count($0) }
        return lines.error(at: offset, failure.reason)
    }

    /// A mapped file's pages in `range` (all of them by default) leave memory until read again;
    /// other sources stay as they are.
    func dropResidentPages(_ range: Range<Int>? = nil) {
        guard case .mapping = owner, let whole else { return }
        let range = range ?? 0..<count
        HAR.dropResidentPages(whole.baseAddress! + range.lowerBound, range.count)
    }
}
