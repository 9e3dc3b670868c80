import Codecs

// Sans-IO WebSocket parser for one direction of a connection (RFC 6455 §5, RFC 7692 §6-7).
//
// The proxy relays the wire bytes untouched and feeds a copy here. The parser never writes,
// never fails the connection, and never holds more than one partial frame header or control
// frame: data payloads are unmasked, inflated and recorded as they arrive.

/// Parses one direction of a WebSocket connection into messages and control frames.
///
/// Use: `feed` bytes as they are relayed, call ``next()`` until it returns nil, and at end of
/// stream call ``finish()`` once (after draining ``next()``). After a `.protocolError` the parser
/// ignores everything (the bytes are still relayed by the proxy, just not recorded).
///
/// Validation (RFC 6455 §5.2-5.5): RSV2/RSV3 set, reserved opcodes, a client frame without a
/// mask or a server frame with one, a fragmented or oversized (> 125) control frame, RSV1 on a
/// control or continuation frame or without permessage-deflate, a continuation with no message
/// open, a new data frame while one is open, a 1-byte close payload, bytes after the close frame,
/// and a 64-bit length with the top bit set are protocol errors.
///
/// Leniencies (named): non-minimal length encodings are accepted; invalid UTF-8 in a text
/// message is reported (`textValid: false`) rather than fatal; close codes are reported as
/// sent, even the ones RFC 6455 §7.4 forbids on the wire (1005, 1006, 1015, < 1000), and an
/// invalid UTF-8 close reason is decoded lossily.
///
/// permessage-deflate: each direction inflates with its own raw DEFLATE stream, appending
/// `00 00 FF FF` to each message (RFC 7692 §7.2.2), resetting between messages when the
/// sender's no_context_takeover was agreed, with the sender's max_window_bits. A message whose
/// inflated size passes ``WebSocketLimits/maxInflatedMessageBytes`` is reported with the note
/// `inflated size exceeds N bytes` (data truncated); a corrupt one with `inflate failed: ...`.
/// Either way the rest of that message is skipped and the inflater reset.
///
/// Lost context (context takeover in use and a message failed): later messages may refer back
/// into the history the parser no longer has. The parser still tries each of them with the reset
/// inflater: zlib rejects any reference reaching before what it has seen ("invalid distance too
/// far back"), so a message that inflates is exact, and one that does not gets the note
/// `cannot inflate: earlier message failed (...)`. Once a message inflates at least a full window
/// of bytes the history matches the sender's again and notes go back to `inflate failed: ...`.
///
/// A parser holds a zlib stream by reference: do not copy a parser and feed both copies.
public struct WebSocketParser {
    /// The direction this parser reads.
    public let direction: WebSocketDirection
    /// The agreed permessage-deflate parameters, nil if not negotiated.
    public let deflate: PerMessageDeflate?
    /// The limits in force.
    public let limits: WebSocketLimits

    private enum State {
        /// Waiting for (the rest of) a frame header.
        case frameHeader
        /// Inside a data frame's payload.
        case dataPayload(remaining: UInt64, maskKey: UInt32?, maskOffset: Int, fin: Bool)
        /// Waiting for a whole control frame payload (at most `maxControlPayload` bytes).
        case controlPayload(opcode: UInt8, length: Int, maskKey: UInt32?)
        /// After a protocol error or finish(): nothing more is parsed.
        case stopped
    }

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var state: State = .frameHeader
    private var assembler: MessageAssembler
    private var closeSeen = false
    private var finished = false

    /// Creates a parser for `direction`. `deflate` comes from
    /// ``PerMessageDeflate/init(extensionHeader:)`` on the 101 response.
    public init(direction: WebSocketDirection, deflate: PerMessageDeflate?, limits: WebSocketLimits = .default) {
        self.direction = direction
        self.deflate = deflate
        self.limits = limits
        assembler = MessageAssembler(direction: direction, deflate: deflate, limits: limits)
    }

    /// Bytes fed but not yet parsed. After ``next()`` returns nil this is at most one partial
    /// frame header plus one partial control frame payload.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// True after a protocol error or ``finish()``.
    public var isStopped: Bool {
        if case .stopped = state { return true }
        return false
    }

    /// True while a fragmented data message has started and not ended.
    public var isInsideMessage: Bool { assembler.message != nil }

    /// Adds relayed bytes. Ignored once stopped.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if isStopped || bytes.isEmpty { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds relayed bytes. Ignored once stopped.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The next event, or nil when more bytes are needed (or the parser has stopped).
    public mutating func next() -> WebSocketEvent? {
        while true {
            switch state {
            case .stopped:
                return nil

            case .frameHeader:
                let available = buffer.count - readIndex
                guard available > 0 else { return nil }
                if closeSeen { return fail("data after the close frame") }
                let parsed: WebSocketFrameHeader.ParseResult? = buffer.withUnsafeBytes { raw in
                    let rest = UnsafeRawBufferPointer(rebasing: raw[readIndex...])
                    // The first two bytes are checked as soon as they arrive, so the error is the
                    // same however the input is split.
                    if rest.count >= 2, firstBytesError(rest[0], rest[1]) != nil { return nil }
                    return WebSocketFrameHeader.parse(rest)
                }
                guard let parsed else {
                    let b0 = buffer[readIndex], b1 = buffer[readIndex + 1]
                    return fail(firstBytesError(b0, b1) ?? "invalid frame header")
                }
                switch parsed {
                case .needMore:
                    return nil
                case .invalidLength:
                    return fail("64-bit payload length with the most significant bit set")
                case .header(let header, let size):
                    readIndex += size
                    if let event = startFrame(header) { return event }
                }

            case .dataPayload(let remaining, let maskKey, let maskOffset, let fin):
                let available = buffer.count - readIndex
                if remaining > 0 {
                    guard available > 0 else { return nil }
                    let n = Int(min(UInt64(available), remaining))
                    let start = readIndex
                    buffer.withUnsafeMutableBytes { raw in
                        let chunk = UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + n)])
                        if let maskKey { unmask(chunk, key: maskKey, offset: maskOffset) }
                        assembler.consume(UnsafeRawBufferPointer(chunk))
                    }
                    readIndex += n
                    let left = remaining - UInt64(n)
                    if left > 0 {
                        state = .dataPayload(remaining: left, maskKey: maskKey, maskOffset: (maskOffset + n) & 3, fin: fin)
                        return nil
                    }
                }
                state = .frameHeader
                if fin { return assembler.complete() }

            case .controlPayload(let opcode, let length, let maskKey):
                guard buffer.count - readIndex >= length else { return nil }
                var payload = Array(buffer[readIndex..<(readIndex + length)])
                readIndex += length
                state = .frameHeader
                if let maskKey { payload.withUnsafeMutableBytes { unmask($0, key: maskKey, offset: 0) } }
                switch opcode {
                case WebSocketOpcode.ping: return .ping(payload)
                case WebSocketOpcode.pong: return .pong(payload)
                default:
                    closeSeen = true
                    if payload.isEmpty { return .close(code: nil, reason: "") }
                    guard payload.count >= 2 else { return fail("close frame with a 1-byte payload (a status code needs 2)") }
                    let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
                    return .close(code: code, reason: String(decoding: payload[2...], as: UTF8.self))
                }
            }
        }
    }

    /// End of stream. Call after draining ``next()``. Returns
    /// `.protocolError("connection closed mid-frame")` if a frame was cut short, or
    /// `.protocolError("connection closed inside a fragmented message")` if a message was left
    /// open between frames; nil otherwise, and nil on any later call.
    public mutating func finish() -> WebSocketEvent? {
        guard !finished else { return nil }
        finished = true
        let midFrame: Bool
        switch state {
        case .stopped: return nil
        case .frameHeader: midFrame = buffer.count > readIndex && !closeSeen
        case .dataPayload, .controlPayload: midFrame = true
        }
        let open = assembler.message != nil
        stop()
        if midFrame { return .protocolError("connection closed mid-frame") }
        if open { return .protocolError("connection closed inside a fragmented message") }
        return nil
    }

    // MARK: - Frames

    /// Errors visible in the first two header bytes.
    private func firstBytesError(_ b0: UInt8, _ b1: UInt8) -> String? {
        let opcode = b0 & 0x0F
        if b0 & 0x30 != 0 {
            return "reserved bit \(b0 & 0x20 != 0 ? "RSV2" : "RSV3") set (no extension negotiated uses it)"
        }
        guard WebSocketOpcode.isKnown(opcode) else { return "reserved opcode \(opcode)" }
        let masked = b1 & 0x80 != 0
        switch direction {
        case .clientToServer where !masked: return "unmasked client-to-server frame (RFC 6455 §5.1)"
        case .serverToClient where masked: return "masked server-to-client frame (RFC 6455 §5.1)"
        default: break
        }
        let fin = b0 & 0x80 != 0, rsv1 = b0 & 0x40 != 0
        if WebSocketOpcode.isControl(opcode) {
            if !fin { return "fragmented control frame (opcode \(opcode))" }
            if rsv1 { return "RSV1 set on a control frame (opcode \(opcode))" }
        } else if opcode == WebSocketOpcode.continuation {
            if assembler.message == nil { return "continuation frame without a message in progress" }
            if rsv1 { return "RSV1 set on a continuation frame" }
        } else {
            if assembler.message != nil { return "new data frame (opcode \(opcode)) while a fragmented message is open" }
            if rsv1 && deflate == nil { return "RSV1 set but permessage-deflate was not negotiated" }
        }
        return nil
    }

    /// Sets up the state for a frame whose header passed `firstBytesError`; returns an event if
    /// the frame is already complete or invalid.
    private mutating func startFrame(_ header: WebSocketFrameHeader) -> WebSocketEvent? {
        if WebSocketOpcode.isControl(header.opcode) {
            guard header.payloadLength <= UInt64(limits.maxControlPayload) else {
                return fail("control frame payload of \(header.payloadLength) bytes exceeds \(limits.maxControlPayload)")
            }
            state = .controlPayload(opcode: header.opcode, length: Int(header.payloadLength), maskKey: header.maskKey)
            return nil
        }
        if header.opcode != WebSocketOpcode.continuation {
            assembler.begin(opcode: header.opcode, compressed: header.rsv1)
        }
        state = .dataPayload(remaining: header.payloadLength, maskKey: header.maskKey, maskOffset: 0, fin: header.fin)
        return nil
    }

    private mutating func fail(_ reason: String) -> WebSocketEvent {
        stop()
        return .protocolError(reason)
    }

    private mutating func stop() {
        state = .stopped
        buffer = []
        readIndex = 0
        assembler.abandon()
    }

    /// Drops consumed bytes before appending more.
    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            // Give back a large buffer left by a big feed; keep a small one for reuse.
            if buffer.capacity > 1 << 20 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
        } else {
            buffer.removeSubrange(0..<readIndex)
        }
        readIndex = 0
    }
}

/// XORs `bytes` with the masking key (RFC 6455 §5.3); `offset` is the position of `bytes[0]`
/// within the frame payload.
func unmask(_ bytes: UnsafeMutableRawBufferPointer, key: UInt32, offset: Int) {
    let k: (UInt8, UInt8, UInt8, UInt8) = (UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF))
    func keyByte(_ i: Int) -> UInt8 {
        switch i & 3 {
        case 0: return k.0
        case 1: return k.1
        case 2: return k.2
        default: return k.3
        }
    }
    var pattern: UInt64 = 0
    for j in 0..<8 { pattern |= UInt64(keyByte(offset + j)) << (8 * j) }
    pattern = UInt64(littleEndian: pattern)
    let n = bytes.count
    var i = 0
    while i + 8 <= n {
        let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ pattern
        bytes.storeBytes(of: word, toByteOffset: i, as: UInt64.self)
        i += 8
    }
    while i < n {
        bytes[i] ^= keyByte(offset + i)
        i += 1
    }
}

/// Collects one data message: records up to the cap, validates text, inflates.
struct MessageAssembler {
    struct Open {
        var opcode: UInt8
        var compressed: Bool
        var data: [UInt8] = []
        var truncated = false
        var utf8 = UTF8Validator()
        /// Bytes inflated so far (compressed messages).
        var inflated = 0
        /// Set when inflation gave up; the rest of the message is skipped.
        var inflateNote: String?
        /// A final DEFLATE block ended the stream inside the message.
        var streamEnded = false
        /// Payload bytes after the end of the DEFLATE stream (ignored).
        var bytesAfterStreamEnd = 0
    }

    let direction: WebSocketDirection
    let deflate: PerMessageDeflate?
    let limits: WebSocketLimits
    private(set) var message: Open?
    private var inflater: ZlibInflater?
    /// See "Lost context" on ``WebSocketParser``.
    private var contextLost = false

    init(direction: WebSocketDirection, deflate: PerMessageDeflate?, limits: WebSocketLimits) {
        self.direction = direction
        self.deflate = deflate
        self.limits = limits
    }

    mutating func begin(opcode: UInt8, compressed: Bool) {
        message = Open(opcode: opcode, compressed: compressed)
    }

    mutating func abandon() {
        message = nil
        inflater = nil
    }

    /// Unmasked payload bytes of the open message.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) {
        guard let compressed = message?.compressed else { return }
        if compressed { inflate(bytes, isTail: false) } else { record(bytes) }
    }

    private mutating func record(_ bytes: UnsafeRawBufferPointer) {
        let cap = limits.maxRecordedMessageBytes
        message?.record(bytes, cap: cap)
    }

    private mutating func inflate(_ bytes: UnsafeRawBufferPointer, isTail: Bool) {
        // Read fields one by one: a local copy of `message` would share `data` and make every
        // append below copy it.
        guard message != nil, message?.inflateNote == nil, let deflate else { return }
        if message?.streamEnded == true {
            if !isTail { message?.bytesAfterStreamEnd += bytes.count }
            return
        }
        let inflater: ZlibInflater
        if let existing = self.inflater {
            inflater = existing
        } else {
            // Always the largest window, whatever the sender agreed to: a larger decoder window
            // decodes every valid stream, and zlib checks distances against its window plus the
            // output of the current call, so with the agreed window a stream that reaches too far
            // back decoded when it came in one piece and failed when it came in several (a fuzz
            // finding). Recording accepts what the peer accepted.
            guard let made = ZlibInflater(windowBits: -15) else {
                message?.inflateNote = "inflate failed: \(ZlibFailure.setup)"
                return
            }
            inflater = made
            self.inflater = inflater
        }
        let cap = limits.maxRecordedMessageBytes
        let budget = max(0, limits.maxInflatedMessageBytes - (message?.inflated ?? 0))
        let outcome = inflater.inflate(bytes, budget: budget) { out in
            message?.inflated += out.count
            message?.record(out, cap: cap)
        }
        switch outcome {
        case .needsInput:
            break
        case .streamEnd(let consumed):
            message?.streamEnded = true
            if !isTail { message?.bytesAfterStreamEnd += bytes.count - consumed }
        case .budgetExceeded:
            message?.inflateNote = "inflated size exceeds \(limits.maxInflatedMessageBytes) bytes"
            message?.truncated = true
        case .failed(let reason):
            message?.inflateNote = contextLost ? "cannot inflate: earlier message failed (\(reason))" : "inflate failed: \(reason)"
        }
    }

    /// Ends the open message and returns its event.
    mutating func complete() -> WebSocketEvent? {
        guard message != nil else { return nil }
        if message?.compressed == true {
            deflateMessageTail.withUnsafeBytes { inflate($0, isTail: true) }
        }
        guard var m = message else { return nil }
        message = nil
        if m.compressed, let deflate {
            let takeover = !deflate.noContextTakeover(for: direction)
            if m.inflateNote != nil {
                inflater?.reset()
                if takeover { contextLost = true }
            } else {
                if m.streamEnded || !takeover { inflater?.reset() }
                // A full window of fresh output means the history matches the sender's again.
                if m.streamEnded || m.inflated >= 1 << deflate.inflateWindowBits(for: direction) { contextLost = false }
                if m.bytesAfterStreamEnd > 0 {
                    m.inflateNote = "\(m.bytesAfterStreamEnd) bytes after the end of the DEFLATE stream ignored"
                }
            }
        }
        let textValid: Bool
        if m.opcode == WebSocketOpcode.text {
            // A message cut short by a failed inflate is judged on the bytes seen.
            textValid = m.inflateNote != nil && !m.streamEnded ? m.utf8.isValidSoFar : m.utf8.isComplete
        } else {
            textValid = true
        }
        return .message(opcode: m.opcode, data: m.data, compressed: m.compressed, textValid: textValid,
                        truncated: m.truncated, note: m.inflateNote)
    }
}

extension MessageAssembler.Open {
    mutating func record(_ bytes: UnsafeRawBufferPointer, cap: Int) {
        if opcode == WebSocketOpcode.text { utf8.feed(bytes) }
        let room = cap - data.count
        if bytes.count <= room {
            data.append(contentsOf: bytes)
        } else {
            if room > 0 { data.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<room])) }
            truncated = true
        }
    }
}
