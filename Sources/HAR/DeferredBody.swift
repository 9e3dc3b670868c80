import TextEncodings

/// A body too large to hold whole: its decoded bytes stay where they are (a recording's journal)
/// and are read a piece at a time when the HAR is written, base64-encoded on the way, so an
/// export holds about a window of it at once whatever it weighs. It stands in for
/// `HARContent.text` (with `encoding: "base64"`).
///
/// Scans work on windows (`forEachWindow`) cut right after a byte of a class the caller names:
/// a control byte that no value can hold, so a scan of each window finds exactly what a scan of
/// the whole would, and no match spans two windows.
public final class HARDeferredBody: @unchecked Sendable {
    /// The decoded bytes' count.
    public let count: Int
    /// The first bytes (up to `prefixBytes`): enough to tell a JSON document from binary.
    public let prefix: [UInt8]
    private let readPieces: @Sendable (_ piece: ([UInt8]) throws -> Void) throws -> Void
    /// Set by a transform's second pass (redaction): applied to each window, with its offset,
    /// before it is encoded. It must keep the window's length.
    public var windowTransform: (@Sendable (inout [UInt8], Int) -> Void)?
    /// The cut bytes `windowTransform`'s windows end after (`forEachWindow`).
    public var transformCuts: [Bool] = HARDeferredBody.controlBytes
    /// The size windows are cut at (or after, at the next cut byte).
    public var windowBytes = HARDeferredBody.windowBytes
    /// What a transform's first pass keeps for its second (redaction's edits), by the transform.
    public var firstPassState: (any Sendable)?

    /// Bodies over this many decoded bytes are deferred by the sources that can.
    public static let threshold = 8 << 20
    /// The usual `windowBytes`.
    public static let windowBytes = 4 << 20
    static let prefixBytes = 64

    /// Bytes no value holds: ASCII controls but tab, line feed and carriage return, and DEL.
    public static let controlBytes: [Bool] = (0..<256).map { b in b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D || b == 0x7F }

    /// `read` hands every decoded byte over in order, in pieces of any size, each time it runs.
    public init(count: Int, prefix: [UInt8], read: @escaping @Sendable (_ piece: ([UInt8]) throws -> Void) throws -> Void) {
        self.count = count
        self.prefix = Array(prefix.prefix(Self.prefixBytes))
        self.readPieces = read
    }

    /// A deferred body over bytes in memory (tests).
    public convenience init(bytes: [UInt8], pieceSize: Int = 1 << 20) {
        self.init(count: bytes.count, prefix: Array(bytes.prefix(Self.prefixBytes))) { piece in
            var start = 0
            while start < bytes.count {
                try piece(Array(bytes[start..<min(bytes.count, start + pieceSize)]))
                start += pieceSize
            }
        }
    }

    /// The bytes in windows, in order, with each window's offset: a window ends right after a
    /// byte `cuts` marks once it holds `windowBytes`, or at the end. A stretch with no such
    /// byte stays in one window, however long. Throws when the source does not hand over
    /// `count` bytes (a journal changed under it).
    public func forEachWindow(cuts: [Bool] = controlBytes, _ body: (inout [UInt8], Int) throws -> Void) throws {
        let windowBytes = max(1, windowBytes)
        // Both buffers keep their storage from window to window: allocations of slightly
        // different sizes on several threads would fragment the heap (hundreds of MB for a
        // hundred large bodies), and element-wise copies cost seconds a GB in a debug build.
        var window: [UInt8] = []
        window.reserveCapacity(windowBytes + windowBytes / 2)
        var out: [UInt8] = []
        out.reserveCapacity(windowBytes + windowBytes / 2)
        var offset = 0, searchedTo = 0
        func emit(upTo end: Int) throws {
            out.removeAll(keepingCapacity: true)
            window.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<end])) }
            window.removeFirst(end)
            try body(&out, offset)
            offset += end
            searchedTo = 0
        }
        try readPieces { piece in
            piece.withUnsafeBufferPointer { window.append(contentsOf: $0) }
            while window.count >= windowBytes {
                // The first cut byte at or past the window's size, in what was not searched yet
                // (so a long stretch without one costs one pass).
                let k = window.withUnsafeBufferPointer { p in
                    cuts.withUnsafeBufferPointer { c in
                        var k = max(searchedTo, windowBytes - 1)
                        while k < p.count && !c[Int(p[k])] { k += 1 }
                        return k
                    }
                }
                guard k < window.count else {
                    searchedTo = window.count
                    return
                }
                try emit(upTo: k + 1)
            }
        }
        if !window.isEmpty { try emit(upTo: window.count) }
        guard offset == count else {
            throw HARDeferredBodyError(description: "a deferred body held \(offset) bytes where \(count) were recorded")
        }
    }

    /// The base64 of the bytes (through `windowTransform`, when set), handed to `sink` a
    /// window at a time.
    public func writeBase64(to sink: ([UInt8]) throws -> Void) throws {
        var carry: [UInt8] = []
        // Kept from window to window, as `forEachWindow`'s buffers are.
        var encoded: [UInt8] = []
        let transform = windowTransform
        try forEachWindow(cuts: transform == nil ? Self.controlBytes : transformCuts) { window, offset in
            if let transform { transform(&window, offset) }
            // Base64 encodes 3 bytes at a time: up to 2 wait for the next window.
            var start = 0
            if !carry.isEmpty {
                let take = min(3 - carry.count, window.count)
                carry.append(contentsOf: window[..<take])
                start = take
                guard carry.count == 3 else { return }
                try sink(carry.withUnsafeBufferPointer(Base64.encodedBytes))
                carry = []
            }
            let whole = start + (window.count - start) / 3 * 3
            encoded.removeAll(keepingCapacity: true)
            window.withUnsafeBufferPointer { p in
                carry = Array(UnsafeBufferPointer(rebasing: p[whole...]))
                Base64.append(UnsafeBufferPointer(rebasing: p[start..<whole]), to: &encoded)
            }
            try sink(encoded)
        }
        if !carry.isEmpty { try sink(carry.withUnsafeBufferPointer(Base64.encodedBytes)) }
    }

    /// Whether the bytes are valid UTF-8, read until the first byte that is not (a binary
    /// body that starts like a JSON document costs a window, not a read of all of it).
    public func isValidUTF8() throws -> Bool {
        var check = UTF8Check()
        do {
            try forEachWindow { window, _ in
                guard window.withUnsafeBufferPointer({ check.feed($0) }) else { throw NotUTF8() }
            }
        } catch is NotUTF8 {
            return false
        }
        return check.isComplete
    }

    private struct NotUTF8: Error {}

    /// The base64 text whole, for a reader that needs it in memory.
    public func base64Text() throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity((count + 2) / 3 * 4)
        try writeBase64 { out += $0 }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A deferred body's source failed.
public struct HARDeferredBodyError: Error, CustomStringConvertible {
    public let description: String
}
