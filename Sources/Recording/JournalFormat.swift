import CCompressionShims

/// The journal's on-disk format: append-only, self-delimiting records, each with a checksum.
///
///     offset  size  field
///     0       4     magic 0x9E 'h' 'r' 'j'
///     4       1     kind (JournalRecordKind; unknown kinds are skipped)
///     5       8     payload length, little endian
///     13      4     CRC-32 (ISO-HDLC, as gzip) of the kind, the length and the payload
///     17      n     payload
///
/// A record is whole when all its bytes are there and the checksum matches. A crash leaves at most
/// a torn tail: bytes that start a record but never finished it. The decoder drops it, and skips
/// any damaged stretch in the middle by searching for the next magic that begins a whole record,
/// so one bad sector loses the records it touches, not the ones after it.
public enum JournalFrame {
    public static let magic: [UInt8] = [0x9E, 0x68, 0x72, 0x6A]
    public static let headerSize = 17
    /// The largest payload a header may claim: two bodies at the recording cap (1 GiB each) plus
    /// their heads. A larger claim is damage, so a flipped length bit cannot make the decoder wait
    /// for (and buffer) terabytes.
    public static let maximumPayloadBytes: UInt64 = 2 << 30 + 64 << 20
    /// The payload layout this build writes (in the session record).
    /// 2: large bodies come in parts (`bodyPart` records) before their flow; a harrec that
    /// knows only 1 would read such a body short, so it refuses the journal instead.
    public static let layoutVersion: UInt8 = 2

    /// An empty record buffer with room for the header; append the payload, then `seal` it.
    public static func open(capacity: Int = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: headerSize)
        if capacity > 0 { bytes.reserveCapacity(headerSize + capacity) }
        return bytes
    }

    /// Writes the header of a record opened with `open` around the payload after it.
    public static func seal(_ record: inout [UInt8], kind: JournalRecordKind) {
        seal(&record, from: 0, kind: kind)
    }

    /// Writes the header of the record that starts at `start` (opened with `open`) and runs to
    /// the end of `buffer`.
    static func seal(_ buffer: inout [UInt8], from start: Int, kind: JournalRecordKind) {
        let length = UInt64(buffer.count - start - headerSize)
        buffer.withUnsafeMutableBufferPointer { whole in
            let p = UnsafeMutableBufferPointer(rebasing: whole[start...])
            for (i, b) in magic.enumerated() { p[i] = b }
            p[4] = kind.rawValue
            for i in 0..<8 { p[5 + i] = UInt8(truncatingIfNeeded: length >> (8 * UInt64(i))) }
            let raw = UnsafeMutableRawBufferPointer(p)
            let crc = checksum(UnsafeRawBufferPointer(rebasing: raw[4..<13]), UnsafeRawBufferPointer(rebasing: raw[headerSize...]))
            for i in 0..<4 { p[13 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        }
    }

    /// A whole record of `kind` around `payload`.
    public static func record(_ kind: JournalRecordKind, _ payload: [UInt8]) -> [UInt8] {
        var bytes = open(capacity: payload.count)
        bytes.append(contentsOf: payload)
        seal(&bytes, kind: kind)
        return bytes
    }

    /// What a record's header states.
    struct Header {
        var kind: UInt8
        var length: UInt64
        var crc: UInt32
    }

    /// The header in the first `headerSize` bytes of `bytes`; nil when the magic is wrong or the
    /// length is more than any record holds.
    static func header(_ bytes: UnsafeRawBufferPointer) -> Header? {
        guard bytes.count >= headerSize, bytes.prefix(4).elementsEqual(magic) else { return nil }
        var length: UInt64 = 0
        for i in 0..<8 { length |= UInt64(bytes[5 + i]) << (8 * UInt64(i)) }
        guard length <= maximumPayloadBytes else { return nil }
        var crc: UInt32 = 0
        for i in 0..<4 { crc |= UInt32(bytes[13 + i]) << (8 * UInt32(i)) }
        return Header(kind: bytes[4], length: length, crc: crc)
    }

    /// Whether `payload` is the one the header in `headerBytes` (parsed as `header`) vouches for.
    static func isIntact(_ header: Header, headerBytes: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) -> Bool {
        checksum(UnsafeRawBufferPointer(rebasing: headerBytes[4..<13]), payload) == header.crc
    }

    static func checksum(_ head: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> UInt32 {
        var crc = libdeflate_crc32(0, head.baseAddress, head.count)
        if payload.count > 0 { crc = libdeflate_crc32(crc, payload.baseAddress, payload.count) }
        return crc
    }
}

/// What a journal record holds.
public enum JournalRecordKind: UInt8, Sendable {
    /// First in every journal: the layout version and who wrote it (`JournalSession`).
    case session = 1
    /// A finished exchange (`Flow`, whole).
    case flow = 2
    /// A WebSocket upgrade: its flow, without messages.
    case webSocketStart = 3
    /// One WebSocket message: the flow id, then the message.
    case webSocketMessage = 4
    /// The end of a WebSocket conversation: its flow (problems, open flag, end), without messages.
    case webSocketEnd = 5
    /// A scenario marker (`PageMark`): its time, then its name.
    case pageMark = 6
    /// A choice about the export (`ExportDecision`): a flow left out of the HAR, or put back.
    case exportDecision = 7
    /// A flow moved to another page (`PageMove`).
    case pageMove = 8
    /// A part of a body still in flight (`RecordedBodyPart`), before its flow's record.
    case bodyPart = 9
    /// A flow as it stood when its first body part of a side went out (heads, timings, the
    /// other side's body so far): what `recover` builds the exchange from when the recording
    /// stopped (kill -9, a crash) before the flow's own record. A harrec that does not know it
    /// skips it, as it skipped such an exchange before.
    case flowInFlight = 10
}

/// Decodes a journal from bytes fed in pieces of any size (sans-IO): whole records out, damaged
/// stretches and a torn tail reported with their offsets, never misread.
public struct JournalDecoder {
    public enum Event: Equatable, Sendable {
        /// A whole record (kind may be one this build does not know) starting at `offset`.
        case record(kind: UInt8, offset: UInt64, payload: [UInt8])
        /// Bytes between whole records that are not a whole record.
        case damaged(offset: UInt64, length: UInt64)
        /// Bytes at the end that are not a whole record (a write cut short by a crash).
        case torn(offset: UInt64, length: UInt64)
    }

    private enum State {
        /// `position` is where a record should begin.
        case aligned
        /// Looking for the next magic from `position`; the skipped bytes began at `damageStart`.
        case searching(damageStart: UInt64)
        /// `finish()` was called.
        case finished
    }

    private var state = State.aligned
    private var buffer: [UInt8] = []
    /// The file offset of `buffer[0]`.
    private var bufferOffset: UInt64 = 0
    /// Index in `buffer` of the next byte to look at.
    private var position = 0
    private var ready: [Event] = []
    private var readyIndex = 0
    /// The journal's size when it is known (a file being recovered): a header claiming more
    /// bytes than are left is damage at once, so a forged length cannot make the decoder buffer
    /// the rest of the file waiting for them.
    private let size: UInt64?

    /// `size`: the journal's total size, when it is known.
    public init(size: UInt64? = nil) {
        self.size = size
    }

    /// Bytes received so far (the offset the next fed byte has).
    public var offset: UInt64 { bufferOffset + UInt64(buffer.count) }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        precondition(!isFinished, "feed after finish")
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The next event, or nil when more bytes are needed (or, after `finish()`, when done).
    public mutating func next() -> Event? {
        if let event = takeReady() { return event }
        step(atEnd: isFinished)
        return takeReady()
    }

    /// No more bytes will come: what is left becomes records, damage, and a torn tail. Call
    /// `next()` until nil afterwards.
    public mutating func finish() {
        if isFinished { return }
        step(atEnd: true)
        state = .finished
    }

    private var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    private mutating func takeReady() -> Event? {
        guard readyIndex < ready.count else {
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            return nil
        }
        defer { readyIndex += 1 }
        return ready[readyIndex]
    }

    private enum Attempt {
        case record(kind: UInt8, length: Int)
        case needMore
        case invalid
    }

    /// Whether a whole record begins at `at`.
    private func attempt(at: Int) -> Attempt {
        let available = buffer.count - at
        let magic = JournalFrame.magic
        for i in 0..<min(4, available) where buffer[at + i] != magic[i] { return .invalid }
        guard available >= JournalFrame.headerSize else { return .needMore }
        return buffer.withUnsafeBytes { raw -> Attempt in
            let headerBytes = UnsafeRawBufferPointer(rebasing: raw[at..<(at + JournalFrame.headerSize)])
            guard let header = JournalFrame.header(headerBytes) else { return .invalid }
            if let size, absolute(at) + UInt64(JournalFrame.headerSize) + header.length > size { return .invalid }
            guard UInt64(available - JournalFrame.headerSize) >= header.length else { return .needMore }
            let start = at + JournalFrame.headerSize
            let payload = UnsafeRawBufferPointer(rebasing: raw[start..<(start + Int(header.length))])
            return JournalFrame.isIntact(header, headerBytes: headerBytes, payload: payload)
                ? .record(kind: header.kind, length: Int(header.length)) : .invalid
        }
    }

    /// Turns buffered bytes into events. At the end, a record that needs more is not one.
    private mutating func step(atEnd: Bool) {
        while true {
            switch state {
            case .finished:
                return
            case .aligned:
                guard position < buffer.count else { return }
                switch attempt(at: position) {
                case .record(let kind, let length):
                    emitRecord(kind: kind, length: length)
                case .needMore:
                    if !atEnd { return }
                    state = .searching(damageStart: absolute(position))
                    position += 1
                case .invalid:
                    state = .searching(damageStart: absolute(position))
                    position += 1
                }
            case .searching(let damageStart):
                guard let candidate = nextMagic(from: position) else {
                    if atEnd {
                        position = buffer.count
                        ready.append(.torn(offset: damageStart, length: absolute(position) - damageStart))
                        state = .aligned
                        return
                    }
                    // Keep a partial magic at the end for the next feed.
                    position = max(position, buffer.count - 3)
                    return
                }
                position = candidate
                switch attempt(at: candidate) {
                case .record(let kind, let length):
                    ready.append(.damaged(offset: damageStart, length: absolute(candidate) - damageStart))
                    state = .aligned
                    emitRecord(kind: kind, length: length)
                case .needMore:
                    if !atEnd { return }
                    position += 1
                case .invalid:
                    position += 1
                }
            }
        }
    }

    private mutating func emitRecord(kind: UInt8, length: Int) {
        let start = position + JournalFrame.headerSize
        ready.append(.record(kind: kind, offset: absolute(position), payload: Array(buffer[start..<start + length])))
        position = start + length
    }

    private func absolute(_ index: Int) -> UInt64 { bufferOffset + UInt64(index) }

    /// The index of the next byte at or after `from` that could start a magic.
    private func nextMagic(from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer[from...].firstIndex(of: JournalFrame.magic[0])
    }

    /// Drops consumed bytes once they are a large part of the buffer.
    private mutating func compact() {
        guard position > 0, position >= buffer.count / 2 || position >= 1 << 20 else { return }
        buffer.removeFirst(position)
        bufferOffset += UInt64(position)
        position = 0
    }
}
