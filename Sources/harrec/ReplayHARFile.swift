import CLI
import Dispatch
import Files
import HAR
import HARScenarios
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A HAR opened for `harrec replay`: its entries (`load`), with every response body larger than
/// `keptBodyBytes` left in the file, and a reader that reads such a body again when it is served.
/// The queue then holds what matching needs and the small bodies, so a recording of large
/// downloads replays in memory bounded by the bodies being served, not by the file.
///
/// The file is mapped only while loading, through the descriptor a body is read again from with
/// pread(2) when served: a HAR replaced while the replay runs (harrec writes HARs by renaming) is
/// still the one loaded, and one truncated in place gives a 502 that says so instead of a crash.
final class ReplayHARFile: @unchecked Sendable {
    /// Response bodies (their text in the HAR, base64 or not) larger than this are read when
    /// served.
    static let keptBodyBytes = 1 << 20

    /// Entries in the HAR are parsed in batches of this many on every core.
    private static let batch = 64

    private enum Source {
        /// The file, and where each left-out body's entry is in it.
        case file(fd: Int32, ranges: [Int: Range<Int>])
        /// A HAR that cannot be mapped (a pipe): its bytes, read once, stay in memory.
        case document(HARLazyDocument)
        /// No body was left out.
        case none
    }
    private let source: Source

    /// Reads `path`: its entries (a left-out body's entry has `HARReplayEntries.deferredBodyMember`)
    /// and the reader of the bodies left out. The entries are the caller's to drop once the queue
    /// is made: the reader keeps none. Throws a `UsageError` naming the file when it cannot be
    /// read or is not a HAR.
    static func load(path: String) throws -> (log: HARLog, bodies: ReplayHARFile) {
        // Mapped through the descriptor the bodies are read from later: the same file, even if
        // the path is replaced meanwhile.
        var fd = open(path, O_RDONLY | O_CLOEXEC)
        var keepDescriptor = false
        defer { if !keepDescriptor && fd >= 0 { close(fd) } }
        let document: HARLazyDocument
        do {
            if fd >= 0, let file = try HARLazyDocument(mappingDescriptor: fd) {
                document = file
            } else {
                if fd >= 0 { close(fd) }
                fd = -1
                document = try HARLazyDocument(try readFileOrUsageError(path))
            }
        } catch let error as HARReadError {
            throw UsageError("\(path) is not a HAR file: \(error)")
        }
        var entries = [HAREntry?](repeating: nil, count: document.entryCount)
        let failures = Mutex<HARReadError?>(nil)
        let batches = (document.entryCount + Self.batch - 1) / Self.batch
        entries.withUnsafeMutableBufferPointer { slots in
            let out = UnsafeSendable(slots)
            DispatchQueue.concurrentPerform(iterations: batches) { b in
                let range = (b * Self.batch)..<min(document.entryCount, (b + 1) * Self.batch)
                for i in range {
                    do throws(HARReadError) {
                        out.value[i] = Self.leavingLargeBodyOut(try document.entry(i), index: i)
                    } catch {
                        failures.withLock { if $0 == nil { $0 = error } }
                    }
                }
                // Parsed: these pages of the file may leave memory.
                document.dropResidentBytes(ofEntries: range)
            }
        }
        if let failure = failures.withLock({ $0 }) { throw UsageError("\(path) is not a HAR file: \(failure)") }
        var log = document.head
        log.entries = entries.map { $0! }
        let leftOut = log.entries.indices.filter { HARReplayEntries.deferredBody(of: log.entries[$0]) != nil }
        var ranges: [Int: Range<Int>] = [:]
        for i in leftOut { ranges[i] = document.sourceRange(ofEntry: i) }
        if leftOut.isEmpty {
            return (log, ReplayHARFile(.none))
        } else if fd >= 0, ranges.count == leftOut.count {
            keepDescriptor = true
            return (log, ReplayHARFile(.file(fd: fd, ranges: ranges)))
        } else {
            return (log, ReplayHARFile(.document(document)))
        }
    }

    private init(_ source: Source) { self.source = source }

    deinit {
        if case .file(let fd, _) = source { close(fd) }
    }

    /// `entry` with its response body left in the file when it is larger than `keptBodyBytes`,
    /// marked with its index; a HAR's own member of that name is dropped (it is harrec's).
    static func leavingLargeBodyOut(_ entry: HAREntry, index: Int) -> HAREntry {
        var entry = entry
        entry.custom.removeAll { $0.0 == HARReplayEntries.deferredBodyMember }
        if let text = entry.response.content.text, text.utf8.count > keptBodyBytes {
            entry.response.content.text = ""
            entry.custom.append((HARReplayEntries.deferredBodyMember, .integer(index)))
        }
        return entry
    }

    /// The response body of entry `index`, read again; nil when the file no longer holds it as
    /// it did (truncated, or rewritten in place).
    func body(ofEntry index: Int) -> ResponseBody? {
        let entry: HAREntry
        switch source {
        case .none:
            return nil
        case .document(let document):
            guard let parsed = try? document.entry(index) else { return nil }
            entry = parsed
        case .file(let fd, let ranges):
            guard let range = ranges[index], let bytes = Self.read(fd, range),
                  let parsed = try? HARLazyDocument.entry(parsing: bytes) else { return nil }
            entry = parsed
        }
        return HARScenarioBuilder.responseBody(entry.response.content)
    }

    /// Bytes `range` of `fd`, or nil when the file is shorter now.
    private static func read(_ fd: Int32, _ range: Range<Int>) -> [UInt8]? {
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

/// A buffer written by `concurrentPerform`'s iterations, each to its own slots.
private struct UnsafeSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

private func readFileOrUsageError(_ path: String) throws -> [UInt8] {
    do {
        return try readFile(path)
    } catch {
        throw UsageError("cannot read \(path): \(error)")
    }
}
