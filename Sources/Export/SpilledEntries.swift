#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HAR
import Synchronization

/// Entries a two-pass export could not keep in memory between its passes, written to a private
/// file (0600, unlinked at once, so nothing is left behind even after a crash) instead of being
/// built and transformed again: reading one back costs a JSON parse, not a second pass 1.
///
/// Each record is the entry's compact JSON and the bytes its transform held outside it (a body
/// rewritten into bytes). What is written is pass 1's output: values a rule replaced are markers
/// by then, but anything no rule caught is as recorded, hence the mode.
final class SpilledEntries: @unchecked Sendable {
    private let fd: Int32
    private let end = Atomic<Int>(0)
    /// Per entry: where its record is, or nil.
    private let places: Mutex<[Int: (offset: Int, entryBytes: Int, heldBytes: Int)]>

    /// A spill file in `directory`, or nil when one cannot be made there.
    init?(directory: String) {
        var template = Array((directory.isEmpty ? "." : directory).utf8CString.dropLast())
        template += Array("/.harrec-spill-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        // mkstemp makes it 0600; unlinked now, it lives only as long as this descriptor.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
        places = Mutex([:])
    }

    deinit { close(fd) }

    /// Writes entry `i` and its held bytes; false when the write failed (the caller then builds
    /// the entry again instead).
    func put(_ entry: HAREntry, held: [UInt8]?, at i: Int) -> Bool {
        // A deferred body would be read whole into the spill file: such an entry is built
        // again instead (its body stays where it is).
        guard entry.response.content.deferred == nil, entry.request.postData?.deferred == nil else { return false }
        var writer = JSONWriter(pretty: false, reservingCapacity: 4096)
        entry.write(to: &writer)
        let json = writer.takeBytes()
        let record = json + (held ?? [])
        let offset = end.add(record.count, ordering: .relaxed).oldValue
        guard Self.writeAll(fd, record, at: offset) else { return false }
        places.withLock { $0[i] = (offset, json.count, held?.count ?? -1) }
        return true
    }

    /// Entry `i` and its held bytes, read back once; nil when it was not spilled (or cannot be
    /// read back).
    func take(_ i: Int) -> (entry: HAREntry, held: [UInt8]?)? {
        guard let place = places.withLock({ $0.removeValue(forKey: i) }) else { return nil }
        var record = [UInt8](repeating: 0, count: place.entryBytes + max(0, place.heldBytes))
        let complete = record.withUnsafeMutableBytes { raw -> Bool in
            var done = 0
            while done < raw.count {
                let n = pread(fd, raw.baseAddress! + done, raw.count - done, off_t(place.offset + done))
                if n <= 0 { return false }
                done += n
            }
            return true
        }
        guard complete, let json = try? JSONParser.parse(Array(record[..<place.entryBytes])) else { return nil }
        return (HAREntry(lenient: json), place.heldBytes < 0 ? nil : Array(record[place.entryBytes...]))
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBytes { raw -> Bool in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
    }
}
