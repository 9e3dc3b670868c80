/// `EntriesScanner` as a state machine fed the document a piece at a time, for a file that is
/// read in windows rather than held or mapped whole (an address-space limit below its size).
///
/// It finds the same layout as `EntriesScanner.scan` on the same bytes, however they are cut:
/// the same lax walk of the skeleton (`{"log": {"entries": [...]}}`), the same values skipped by
/// their strings and brackets only, and nil for the same unusual shapes (a second `log` or
/// `entries`, an escape in a name on the way, anything but spaces after the document). Positions
/// count from the first byte fed.
struct EntriesStream {
    /// The object or array being walked.
    enum Frame: Equatable {
        /// The document's object: its `log` member is walked.
        case root
        /// `log`: its `entries` member is walked.
        case log
    }

    /// How a member's name compares with the one its frame looks for (`log`, `entries`).
    enum Name: Equatable {
        /// The bytes so far are a prefix of the wanted name; `count` of them.
        case matching(count: Int)
        /// Not the wanted name.
        case other
    }

    /// A value being skipped (what `EntriesScanner.Cursor.skipValue` does).
    enum Skip: Equatable {
        /// A string; `escaped` when the last byte was a backslash.
        case string(escaped: Bool)
        /// An object or array, by its bracket depth; `inString` and `escaped` as for a string.
        case nested(depth: Int, inString: Bool, escaped: Bool)
        /// A number or literal: bytes up to a delimiter (not consumed).
        case scalar
    }

    /// Where a skipped value is: what comes after it.
    enum SkipOwner: Equatable {
        /// A member of `frame`.
        case member(Frame)
        /// An element of `entries` that started at `start`.
        case entry(start: Int)
    }

    enum State: Equatable {
        /// Spaces, then the document's `{`.
        case beforeDocument
        /// After `{`: spaces, then `}` or a name.
        case firstMember(Frame)
        /// After `,`: spaces, then a name.
        case nextMember(Frame)
        /// Inside a member's name.
        case name(Frame, Name)
        /// After a name: spaces, then `:`.
        case colon(Frame, wanted: Bool)
        /// After `:`: spaces, then the value.
        case value(Frame, wanted: Bool)
        /// Skipping a value.
        case skipping(Skip, SkipOwner)
        /// After a member's value: spaces, then `,` or `}`.
        case afterMember(Frame)
        /// After `entries`' `[`: spaces, then `]` or the first element.
        case firstEntry
        /// After `,` in `entries`: spaces, then an element.
        case nextEntry
        /// After an element: spaces, then `,` or `]`.
        case afterEntry
        /// After the document: spaces only.
        case afterDocument
        /// Not a shape the scan handles (final).
        case failed
    }

    private(set) var state: State = .beforeDocument
    /// Bytes fed so far: the position of the next one.
    private(set) var position = 0
    private var logs = 0
    private var entriesSeen = 0
    private var arrayStart = 0
    private var arrayEnd = 0
    private var entries: [Range<Int>] = []

    private static let logName: [UInt8] = Array("log".utf8)
    private static let entriesName: [UInt8] = Array("entries".utf8)

    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }

    /// Feeds the next bytes; false once the document is not a shape the scan handles (feeding
    /// more changes nothing).
    @discardableResult
    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return state != .failed }
        let n = bytes.count
        var i = 0
        while i < n {
            if case .skipping(let skip, let owner) = state {
                // The bulk of a HAR: strings and nested values, skipped in tight loops.
                i = skipBytes(base, n, from: i, skip, owner)
                continue
            }
            step(base[i], at: position + i)
            i += 1
            if state == .failed { break }
        }
        position += n
        return state != .failed
    }

    /// The layout, once every byte has been fed; nil for a shape the scan does not handle.
    mutating func finish() -> EntriesScanner.Layout? {
        // A scalar ends at the end of the input, as `skipValue` ends it there.
        if case .skipping(.scalar, let owner) = state { finishValue(owner, end: position) }
        guard state == .afterDocument, logs == 1, entriesSeen == 1 else { return nil }
        return EntriesScanner.Layout(arrayStart: arrayStart, arrayEnd: arrayEnd, entries: entries)
    }

    /// One byte in any state but `skipping`.
    private mutating func step(_ b: UInt8, at offset: Int) {
        switch state {
        case .beforeDocument:
            if Self.isSpace(b) { return }
            state = b == 0x7B ? .firstMember(.root) : .failed
        case .firstMember(let frame):
            if Self.isSpace(b) { return }
            if b == 0x7D { return close(frame) }
            state = b == 0x22 ? .name(frame, .matching(count: 0)) : .failed
        case .nextMember(let frame):
            if Self.isSpace(b) { return }
            state = b == 0x22 ? .name(frame, .matching(count: 0)) : .failed
        case .name(let frame, let name):
            let wanted = frame == .root ? Self.logName : Self.entriesName
            switch (b, name) {
            case (0x5C, _):
                state = .failed  // an escape in a name on the way: the whole parse reads it
            case (0x22, .matching(let count)):
                state = .colon(frame, wanted: count == wanted.count)
            case (0x22, .other):
                state = .colon(frame, wanted: false)
            case (_, .matching(let count)):
                state = .name(frame, count < wanted.count && wanted[count] == b ? .matching(count: count + 1) : .other)
            case (_, .other):
                break
            }
        case .colon(let frame, let wanted):
            if Self.isSpace(b) { return }
            state = b == 0x3A ? .value(frame, wanted: wanted) : .failed
        case .value(let frame, let wanted):
            if Self.isSpace(b) { return }
            guard wanted else { return startSkip(b, owner: .member(frame), at: offset) }
            switch frame {
            case .root:
                logs += 1
                state = logs == 1 && b == 0x7B ? .firstMember(.log) : .failed
            case .log:
                entriesSeen += 1
                guard entriesSeen == 1, b == 0x5B else { state = .failed; return }
                arrayStart = offset
                state = .firstEntry
            }
        case .afterMember(let frame):
            if Self.isSpace(b) { return }
            if b == 0x2C { state = .nextMember(frame); return }
            if b == 0x7D { return close(frame) }
            state = .failed
        case .firstEntry:
            if Self.isSpace(b) { return }
            if b == 0x5D { arrayEnd = offset + 1; state = .afterMember(.log); return }
            startSkip(b, owner: .entry(start: offset), at: offset)
        case .nextEntry:
            if Self.isSpace(b) { return }
            startSkip(b, owner: .entry(start: offset), at: offset)
        case .afterEntry:
            if Self.isSpace(b) { return }
            if b == 0x2C { state = .nextEntry; return }
            if b == 0x5D { arrayEnd = offset + 1; state = .afterMember(.log); return }
            state = .failed
        case .afterDocument:
            if !Self.isSpace(b) { state = .failed }
        case .skipping, .failed:
            break
        }
    }

    /// A frame's closing `}`: `log` ends inside the document, the document ends.
    private mutating func close(_ frame: Frame) {
        switch frame {
        case .root: state = .afterDocument
        case .log: state = entriesSeen == 1 ? .afterMember(.root) : .failed
        }
    }

    /// A value starting with `b` at `offset`, to skip.
    private mutating func startSkip(_ b: UInt8, owner: SkipOwner, at offset: Int) {
        switch b {
        case 0x22: state = .skipping(.string(escaped: false), owner)
        case 0x7B, 0x5B: state = .skipping(.nested(depth: 1, inString: false, escaped: false), owner)
        // An empty scalar: `skipValue` fails on it.
        case 0x2C, 0x7D, 0x5D: state = .failed
        default: state = .skipping(.scalar, owner)
        }
    }

    /// A skipped value ended just before `end`.
    private mutating func finishValue(_ owner: SkipOwner, end: Int) {
        switch owner {
        case .member(let frame):
            state = .afterMember(frame)
        case .entry(let start):
            entries.append(start..<end)
            state = .afterEntry
        }
    }

    /// Skips bytes of a value from `i`; returns where it stopped (the end of the piece, or just
    /// after the value, or at a scalar's delimiter, which the next state reads).
    private mutating func skipBytes(_ p: UnsafePointer<UInt8>, _ n: Int, from start: Int, _ skip: Skip, _ owner: SkipOwner) -> Int {
        var i = start
        switch skip {
        case .string(var escaped):
            while i < n {
                if escaped { escaped = false; i += 1; continue }
                i = Self.nextQuoteOrBackslash(p, n, from: i)
                guard i < n else { break }
                if p[i] == 0x5C { escaped = true; i += 1; continue }
                finishValue(owner, end: position + i + 1)
                return i + 1
            }
            state = .skipping(.string(escaped: escaped), owner)
        case .nested(var depth, var inString, var escaped):
            while i < n {
                if inString {
                    if escaped { escaped = false; i += 1; continue }
                    i = Self.nextQuoteOrBackslash(p, n, from: i)
                    guard i < n else { break }
                    if p[i] == 0x5C { escaped = true } else { inString = false }
                    i += 1
                    continue
                }
                switch p[i] {
                case 0x22: inString = true
                case 0x7B, 0x5B: depth += 1
                case 0x7D, 0x5D:
                    depth -= 1
                    if depth == 0 {
                        finishValue(owner, end: position + i + 1)
                        return i + 1
                    }
                default: break
                }
                i += 1
            }
            state = .skipping(.nested(depth: depth, inString: inString, escaped: escaped), owner)
        case .scalar:
            while i < n {
                let c = p[i]
                if c == 0x2C || c == 0x7D || c == 0x5D || Self.isSpace(c) {
                    finishValue(owner, end: position + i)
                    return i
                }
                i += 1
            }
        }
        return n
    }

    /// The first quote or backslash at or after `i`, or `n`; eight bytes at a time.
    private static func nextQuoteOrBackslash(_ p: UnsafePointer<UInt8>, _ n: Int, from start: Int) -> Int {
        var i = start
        let raw = UnsafeRawPointer(p)
        while i + 8 <= n {
            let m = quoteOrBackslashMask(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            if m != 0 { return i + m.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < n, p[i] != 0x22, p[i] != 0x5C { i += 1 }
        return i
    }
}
