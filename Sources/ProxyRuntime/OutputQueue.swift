/// Bytes waiting to be written to one socket, kept as the chunks they were queued as.
///
/// Queuing takes the caller's array as it is (no copy), and a flush hands up to
/// `maximumRegions` chunks to one `sendmsg` as an iovec list, so a response head and its body
/// leave in one system call without first being copied into one buffer. Small chunks are
/// merged on the way in, so a stream of tiny writes (WebSocket frames) does not become a long
/// iovec list.
struct OutputQueue {
    /// Chunks per gathered write. Sixteen covers a head, a body and chunk framing many times
    /// over; the kernel's own limit (IOV_MAX) is 1024.
    static let maximumRegions = 16
    /// A chunk smaller than this is appended to the previous small chunk instead of queued on
    /// its own. Copying a few KiB is cheaper than one more iovec per write.
    static let mergeLimit = 4 * 1024

    private var chunks: [[UInt8]] = []
    /// Index of the first chunk not yet completely written.
    private var first = 0
    /// Bytes of `chunks[first]` already written.
    private var offset = 0
    /// Bytes queued and not yet written.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    /// Chunk slots held, written ones included until the list is compacted (for tests).
    var storedChunkCount: Int { chunks.count }

    /// Queues `bytes` after everything already queued.
    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        count += bytes.count
        let last = chunks.count - 1
        if last >= first, bytes.count < Self.mergeLimit, chunks[last].count < Self.mergeLimit {
            chunks[last].append(contentsOf: bytes)
        } else {
            chunks.append(bytes)
        }
    }

    /// Calls `body` with the unwritten bytes of up to `maximumRegions` chunks, in order. The
    /// buffers are valid only inside `body`.
    func withUnwrittenRegions<Result>(_ body: ([UnsafeRawBufferPointer]) -> Result) -> Result {
        var regions: [UnsafeRawBufferPointer] = []
        regions.reserveCapacity(Self.maximumRegions)
        return gather(from: first, into: &regions, body)
    }

    /// Pins one chunk per level of recursion, so every pointer handed to `body` stays inside
    /// the `withUnsafeBytes` call that made it.
    private func gather<Result>(from index: Int, into regions: inout [UnsafeRawBufferPointer],
                                _ body: ([UnsafeRawBufferPointer]) -> Result) -> Result {
        if index == chunks.count || regions.count == Self.maximumRegions { return body(regions) }
        return chunks[index].withUnsafeBytes { raw in
            regions.append(UnsafeRawBufferPointer(rebasing: raw[(index == first ? offset : 0)...]))
            return gather(from: index + 1, into: &regions, body)
        }
    }

    /// Drops the first `written` unwritten bytes (a write took them). A chunk written in full is
    /// released at once.
    mutating func consume(_ written: Int) {
        precondition(written >= 0 && written <= count, "consumed more than was queued")
        count -= written
        var left = written
        while left > 0 {
            let available = chunks[first].count - offset
            if left < available {
                offset += left
                return
            }
            left -= available
            chunks[first] = []
            first += 1
            offset = 0
        }
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.capacity <= 64)
            first = 0
        } else if first >= 64 {
            chunks.removeFirst(first)
            first = 0
        }
    }

    /// Forgets everything queued (the peer is gone).
    mutating func removeAll() {
        chunks = []
        first = 0
        offset = 0
        count = 0
    }
}
