import Dispatch
import Synchronization

/// Finds `log.entries` and its elements' byte ranges without building values. It checks only
/// what it needs to find boundaries; the parser validates each piece afterwards.
///
/// A large file is scanned from both ends of its middle at once: a helper guesses where an entry
/// starts after the middle and scans the entries from there, while the caller scans from the
/// start. The helper's work is used only when the caller's own scan reaches an entry starting
/// exactly at the guess: from the same position in the same state the scan is the same, so the
/// layout is always the one a single scan finds (a wrong guess costs the helper's time only).
enum EntriesScanner {
    struct Layout {
        /// Index of the entries array's '['.
        var arrayStart: Int
        /// Index just after its ']'.
        var arrayEnd: Int
        var entries: [Range<Int>]
    }

    /// Below this, one thread scans (the helper's start-up would cost more than it saves).
    static let parallelMinimum = 8 << 20

    static func scan(_ bytes: [UInt8]) -> Layout? {
        bytes.withUnsafeBufferPointer { scan($0) }
    }

    /// How many bytes of entries a scan reads before it hands them to `release`.
    static let releaseStep = 64 << 20

    /// The layout of `p`. `release` is handed the ranges of entries read, `releaseStep` bytes
    /// or more at a time, in no particular order (a mapped file's pages may then leave memory:
    /// the scan of a large file would otherwise leave all of it resident).
    static func scan(_ p: UnsafeBufferPointer<UInt8>, parallel: Bool? = nil,
                     release: (@Sendable (Range<Int>) -> Void)? = nil) -> Layout? {
        let helper = (parallel ?? (p.count >= parallelMinimum && System.coreCount > 1)) ? SecondHalf(p, from: p.count / 2, release: release) : nil
        // The helper reads `p` until it finishes: never return before.
        defer { _ = helper?.finish() }
        var c = Cursor(p: p)
        var layout: Layout?
        var logs = 0
        c.skipSpace()
        let ok = c.members { c, key in
            guard c.isKey(key, "log") else { return c.skipValue() }
            logs += 1
            var entriesSeen = 0
            let inner = c.members { c, key in
                guard c.isKey(key, "entries") else { return c.skipValue() }
                entriesSeen += 1
                guard c.i < p.count, p[c.i] == 0x5B else { return false }
                let arrayStart = c.i
                c.i += 1
                var ranges: [Range<Int>] = []
                c.skipSpace()
                if c.i < p.count, p[c.i] == 0x5D {
                    c.i += 1
                    layout = Layout(arrayStart: arrayStart, arrayEnd: c.i, entries: [])
                    return true
                }
                var helper = entriesSeen == 1 ? helper : nil
                var released = c.i
                while true {
                    c.skipSpace()
                    let start = c.i
                    if let h = helper, let guess = h.guess, start >= guess {
                        helper = nil
                        if start == guess, let rest = h.finish() {
                            ranges += rest.ranges
                            c.i = rest.end
                            break
                        }
                        h.cancel()
                    }
                    guard c.skipValue() else { return false }
                    ranges.append(start..<c.i)
                    if let release, c.i - released >= releaseStep {
                        release(released..<c.i)
                        released = c.i
                    }
                    c.skipSpace()
                    guard c.i < p.count else { return false }
                    if p[c.i] == 0x2C { c.i += 1; continue }
                    if p[c.i] == 0x5D { c.i += 1; break }
                    return false
                }
                helper?.cancel()
                layout = Layout(arrayStart: arrayStart, arrayEnd: c.i, entries: ranges)
                return true
            }
            return inner && entriesSeen == 1
        }
        c.skipSpace()
        guard ok, logs == 1, c.i == p.count else { return nil }
        return layout
    }

    /// A position in the input and the few JSON steps the scan needs.
    struct Cursor {
        let p: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipSpace() {
            while i < p.count, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 }
        }

        /// A string at i (on the quote); returns its raw content range, or nil.
        mutating func string() -> Range<Int>? {
            guard i < p.count, p[i] == 0x22 else { return nil }
            i += 1
            let start = i
            let raw = UnsafeRawPointer(p.baseAddress!)
            while i < p.count {
                // Eight bytes at a time up to the next quote or backslash.
                if i + 8 <= p.count {
                    let m = quoteOrBackslashMask(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                    if m == 0 { i += 8; continue }
                    i += m.trailingZeroBitCount >> 3
                }
                let c = p[i]
                if c == 0x22 { i += 1; return start..<(i - 1) }
                if c == 0x5C { i += 2; continue }
                i += 1
            }
            return nil
        }

        /// Skips any value at i.
        mutating func skipValue() -> Bool {
            guard i < p.count else { return false }
            switch p[i] {
            case 0x22:
                return string() != nil
            case 0x7B, 0x5B:
                var depth = 0
                while i < p.count {
                    switch p[i] {
                    case 0x22:
                        guard string() != nil else { return false }
                        continue
                    case 0x7B, 0x5B: depth += 1
                    case 0x7D, 0x5D:
                        depth -= 1
                        if depth == 0 { i += 1; return true }
                    default: break
                    }
                    i += 1
                }
                return false
            default:
                let start = i
                while i < p.count {
                    let c = p[i]
                    if c == 0x2C || c == 0x7D || c == 0x5D || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { break }
                    i += 1
                }
                return i > start
            }
        }

        func isKey(_ range: Range<Int>, _ name: StaticString) -> Bool {
            range.count == name.utf8CodeUnitCount
                && (0..<range.count).allSatisfy { p[range.lowerBound + $0] == name.utf8Start[$0] }
        }

        func hasEscape(_ range: Range<Int>) -> Bool { p[range].contains(0x5C) }

        /// Walks an object's members at i, calling `member` with each key; `member` must
        /// consume the value. Returns false on anything unexpected.
        mutating func members(_ member: (inout Cursor, Range<Int>) -> Bool) -> Bool {
            guard i < p.count, p[i] == 0x7B else { return false }
            i += 1
            skipSpace()
            if i < p.count, p[i] == 0x7D { i += 1; return true }
            while true {
                skipSpace()
                guard let key = string(), !hasEscape(key) else { return false }
                skipSpace()
                guard i < p.count, p[i] == 0x3A else { return false }
                i += 1
                skipSpace()
                guard member(&self, key) else { return false }
                skipSpace()
                guard i < p.count else { return false }
                if p[i] == 0x2C { i += 1; continue }
                if p[i] == 0x7D { i += 1; return true }
                return false
            }
        }
    }

    /// The helper of a parallel scan: from a guessed entry start after `from`, the entries up to
    /// the array's end, on another thread.
    final class SecondHalf: @unchecked Sendable {
        private let p: UnsafeBufferPointer<UInt8>
        /// The guessed entry start (-1 until found; Int.max when there is none).
        private let published = Atomic<Int>(-1)
        private let cancelled = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)
        private var waited = false
        private var result: (ranges: [Range<Int>], end: Int)?
        private let release: (@Sendable (Range<Int>) -> Void)?

        /// Keys an entry object may start with: a `{` before one of them is an entry much more
        /// likely than a header, a cookie or a custom field's object.
        private static let entryKeys: [StaticString] = ["startedDateTime", "pageref", "time", "request", "response",
                                                        "cache", "timings", "serverIPAddress", "connection", "comment"]

        init(_ p: UnsafeBufferPointer<UInt8>, from start: Int, release: (@Sendable (Range<Int>) -> Void)? = nil) {
            self.p = p
            self.release = release
            DispatchQueue.global().async {
                self.result = self.run(from: start)
                self.done.signal()
            }
        }

        /// The guess, once the helper has one.
        var guess: Int? {
            let g = published.load(ordering: .acquiring)
            return g >= 0 && g != .max ? g : nil
        }

        func cancel() { cancelled.store(true, ordering: .relaxed) }

        /// Waits for the helper (once); its entries and the index after the array's ']', or nil.
        func finish() -> (ranges: [Range<Int>], end: Int)? {
            if !waited {
                done.wait()
                waited = true
            }
            return result
        }

        private func run(from start: Int) -> (ranges: [Range<Int>], end: Int)? {
            guard let guess = Self.guess(p, from: start) else {
                published.store(.max, ordering: .releasing)
                return nil
            }
            published.store(guess, ordering: .releasing)
            var c = Cursor(p: p, i: guess)
            var ranges: [Range<Int>] = []
            var released = guess
            while !cancelled.load(ordering: .relaxed) {
                let entryStart = c.i
                guard c.skipValue() else { return nil }
                ranges.append(entryStart..<c.i)
                if let release, c.i - released >= EntriesScanner.releaseStep {
                    release(released..<c.i)
                    released = c.i
                }
                c.skipSpace()
                guard c.i < p.count else { return nil }
                if p[c.i] == 0x2C { c.i += 1; c.skipSpace(); continue }
                if p[c.i] == 0x5D { return (ranges, c.i + 1) }
                return nil
            }
            return nil
        }

        /// The first `{` from `start` on that follows a `,` (spaces between) and opens an object
        /// whose first key is an entry's.
        static func guess(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
            var i = start
            while i < p.count {
                guard p[i] == 0x7B else { i += 1; continue }
                var before = i - 1
                while before >= 0, p[before] == 0x20 || p[before] == 0x0A || p[before] == 0x0D || p[before] == 0x09 { before -= 1 }
                var c = Cursor(p: p, i: i + 1)
                c.skipSpace()
                if before >= 0, p[before] == 0x2C, let key = c.string(),
                   entryKeys.contains(where: { c.isKey(key, $0) }) || (key.count > 1 && p[key.lowerBound] == 0x5F) {
                    return i
                }
                i += 1
            }
            return nil
        }
    }
}
