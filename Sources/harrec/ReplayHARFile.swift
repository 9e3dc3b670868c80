import CLI
import HAR
import HARScenarios
import ProxyCore
import TextEncodings
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A HAR opened for `harrec replay`: its entries (`load`), with every response body larger than
/// `keptBodyBytes` left in the file, and a reader that streams such a body from the file when it
/// is served (`stream(ofEntry:)`, a piece at a time as the client takes it). The queue then holds
/// what matching needs and the small bodies, so a recording of large downloads replays in memory
/// bounded by the pieces in flight, not by the bodies or the file.
///
/// The file is mapped only while loading, through the descriptor a body is read again from with
/// pread(2) when served: a HAR replaced while the replay runs (harrec writes HARs by renaming) is
/// still the one loaded, and one truncated in place gives a 502 that says so instead of a crash.
final class ReplayHARFile: @unchecked Sendable {
    /// Response bodies (their text in the HAR, base64 or not) larger than this are read when
    /// served.
    static let keptBodyBytes = 1 << 20

    /// Responses kept in memory, counted in bytes of their entries in the file: past this, a
    /// response's headers and body are read from the file when served, so a HAR of many small
    /// entries replays in memory bounded by its requests, not by its responses. A sixteenth of
    /// the address space under a limit.
    static let keptResponseBytes = min(64 << 20, addressSpaceLimit() / 16)

    /// Entries in the HAR are parsed in batches of this many on every core.
    static let batch = 64

    enum Source {
        /// The file, where each left-out body's entry is in it, and where its text is (for a
        /// body left out before it was parsed: one read whole, the unusual shapes, has none).
        case file(fd: Int32, ranges: [Int: Range<Int>], locations: [Int: LeftOutText])
        /// A HAR that cannot be mapped (a pipe): its bytes, read once, stay in memory.
        case document(HARLazyDocument)
        /// No body was left out.
        case none
    }
    private let source: Source

    init(_ source: Source) { self.source = source }

    /// What a read of `path` that failed with `error` tells the user: a file that could not be
    /// read (too large for the memory left, changed) is not called "not a HAR".
    static func readError(_ path: String, _ error: HARReadError) -> UsageError {
        if case .unreadable = error { return UsageError("\(path): \(error)") }
        return UsageError("\(path) is not a HAR file: \(error)")
    }

    deinit {
        if case .file(let fd, _, _) = source { close(fd) }
    }

    /// `entry` with its response body left in the file when it is larger than `keptBodyBytes`,
    /// marked with its index; a HAR's own member of that name is dropped (it is harrec's).
    static func leavingLargeBodyOut(_ entry: HAREntry, index: Int) -> HAREntry {
        guard let text = entry.response.content.text, text.utf8.count > keptBodyBytes else {
            var entry = entry
            entry.custom.removeAll { $0.0 == HARReplayEntries.deferredBodyMember }
            return entry
        }
        var entry = entry
        entry.response.content.text = ""
        return markedLeftOut(entry, index: index)
    }

    /// Whether `entry` is an ordinary answer, served from its status, headers and body alone:
    /// not a recorded failure (its body may be harrec's own answer, which names the failure), a
    /// WebSocket upgrade or a refused request.
    static func isPlainAnswer(_ entry: HAREntry) -> Bool {
        entry.response.status > 0 && entry.response.status != 101 && HARScenarioBuilder.recordedError(entry) == nil
            && !entry.custom.contains { $0.key == "_webSocketMessages" || $0.key == "_refused" }
    }

    /// `entry` with its response's headers, cookies and body left in the file (read again when
    /// served), marked with its index.
    static func leavingResponseOut(_ entry: HAREntry, index: Int) -> HAREntry {
        var entry = entry
        entry.response.headers = []
        entry.response.cookies = []
        entry.response.content.text = nil
        return markedLeftOut(entry, index: index)
    }

    /// `entry`, whose body text is left out, marked with its index (a HAR's own member of that
    /// name is dropped).
    static func markedLeftOut(_ entry: HAREntry, index: Int) -> HAREntry {
        var entry = entry
        entry.custom.removeAll { $0.0 == HARReplayEntries.deferredBodyMember }
        entry.custom.append((HARReplayEntries.deferredBodyMember, .integer(index)))
        return entry
    }

    /// The body of entry `index` as a source that reads it from the file a piece at a time;
    /// nil when it is not streamed, or the file is now shorter than where it lies.
    func stream(ofEntry index: Int) -> (any ReplayBodySource)? {
        guard case .file(let fd, _, let locations) = source, let location = locations[index] else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, Int(info.st_size) >= location.range.upperBound else { return nil }
        return HARBodyReader(file: self, fd: fd, location: location)
    }

    /// The response headers (less `dropping`, lowercased) and body of entry `index`, read again;
    /// nil when the file no longer holds them as it did (truncated, or rewritten in place).
    func response(ofEntry index: Int, dropping: Set<String>) -> StoredResponse? {
        let entry: HAREntry
        switch source {
        case .none:
            return nil
        case .document(let document):
            guard let parsed = try? document.entry(index) else { return nil }
            entry = parsed
        case .file(let fd, let ranges, _):
            guard let range = ranges[index], let bytes = Self.read(fd, range),
                  let parsed = try? HARLazyDocument.entry(parsing: bytes) else { return nil }
            entry = parsed
        }
        return StoredResponse(headers: HARScenarioBuilder.responseHeaders(entry.response, dropping: dropping),
                              body: HARScenarioBuilder.responseBody(entry.response.content))
    }

    /// Bytes `range` of `fd`, or nil when the file is shorter now.
    static func read(_ fd: Int32, _ range: Range<Int>) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: range.count)
        var done = 0
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            while done < range.count {
                let n = pread(fd, buffer.baseAddress! + done, range.count - done, off_t(range.lowerBound + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
        return complete ? bytes : nil
    }
}

/// One serve of a body left in the HAR file: its text read with pread(2) a piece at a time,
/// JSON-unescaped and, for base64, decoded as it goes, so only a piece is ever in memory.
final class HARBodyReader: ReplayBodySource {
    /// Raw bytes read from the file at a time.
    static let readPiece = 256 << 10

    /// Keeps the descriptor open while the body is served.
    private let file: ReplayHARFile
    private let fd: Int32
    private let location: LeftOutText
    private var position: Int
    private var text = JSONStringStream()
    private var base64 = Base64LenientStream()
    /// Decoded bytes, handed out from `taken` on.
    private var pending: [UInt8] = []
    private var taken = 0
    private var decoded: [UInt8] = []

    var count: Int { location.bodyCount }

    init(file: ReplayHARFile, fd: Int32, location: LeftOutText) {
        self.file = file
        self.fd = fd
        self.location = location
        position = location.range.lowerBound
    }

    func read(upTo maximum: Int) -> [UInt8]? {
        while pending.count - taken < maximum && position < location.range.upperBound {
            if taken > 0 {
                pending.removeFirst(taken)
                taken = 0
            }
            let end = min(location.range.upperBound, position + Self.readPiece)
            guard let raw = ReplayHARFile.read(fd, position..<end) else { return nil }
            position = end
            let isLast = end == location.range.upperBound
            let ok = raw.withUnsafeBufferPointer { raw -> Bool in
                guard location.base64 else { return text.decode(raw, isLast: isLast, into: &pending) }
                decoded.removeAll(keepingCapacity: true)
                guard text.decode(raw, isLast: isLast, into: &decoded),
                      decoded.withUnsafeBufferPointer({ base64.decode($0, into: &pending) }) else { return false }
                return !isLast || base64.finish(into: &pending)
            }
            guard ok else { return nil }
        }
        let count = min(maximum, pending.count - taken)
        let piece = Array(pending[taken..<(taken + count)])
        taken += count
        if taken == pending.count {
            pending.removeAll(keepingCapacity: true)
            taken = 0
        }
        return piece
    }
}
