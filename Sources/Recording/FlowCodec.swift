/// The binary form of flows and WebSocket messages inside journal records: fixed field order,
/// LEB128 integers, doubles as their bit patterns, length-prefixed bytes and a presence byte
/// before each optional. Nothing here is self-describing; the journal's version byte says which
/// layout a file has.
///
/// Every read is bounds-checked: a payload that passed its checksum but does not decode (a bug, or
/// a journal from another version) throws `FlowDecodeError`, never traps.
public struct FlowDecodeError: Error, Equatable, CustomStringConvertible {
    public var description: String
}

/// Appends the binary form of values to a byte array.
struct FlowEncoder {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func uint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Signed integers: zigzag, so -1 (HAR's "unknown") stays one byte.
    mutating func int(_ value: Int) {
        let v = Int64(value)
        uint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
    }

    mutating func double(_ value: Double) {
        var bits = value.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { bytes.append(contentsOf: $0) }
    }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func raw(_ value: [UInt8]) {
        uint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        var copy = value
        copy.withUTF8 { utf8 in
            uint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    mutating func optionalDouble(_ value: Double?) {
        bool(value != nil)
        if let value { double(value) }
    }

    mutating func fields(_ fields: [RecordedField]) {
        uint(UInt64(fields.count))
        for field in fields {
            string(field.name)
            string(field.value)
        }
    }

    mutating func body(_ body: RecordedBody) {
        raw(body.bytes)
        uint(UInt64(body.wireSize))
    }
}

/// Reads what `FlowEncoder` wrote.
struct FlowDecoder {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    func failure(_ what: String) -> FlowDecodeError {
        FlowDecodeError(description: "\(what) at byte \(offset) of a \(bytes.count)-byte record")
    }

    mutating func u8() throws(FlowDecodeError) -> UInt8 {
        guard offset < bytes.count else { throw failure("record ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint() throws(FlowDecodeError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try u8()
            guard shift < 64, shift < 63 || b <= 1 else { throw failure("integer too long") }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    mutating func int() throws(FlowDecodeError) -> Int {
        let v = try uint()
        return Int(Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))))
    }

    /// A count or length that must fit in what is left of the record.
    mutating func length() throws(FlowDecodeError) -> Int {
        let v = try uint()
        guard v <= UInt64(bytes.count - offset) else { throw failure("length \(v) runs past the record") }
        return Int(v)
    }

    mutating func double() throws(FlowDecodeError) -> Double {
        guard bytes.count - offset >= 8 else { throw failure("record ends early") }
        var bits: UInt64 = 0
        withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8])) }
        offset += 8
        return Double(bitPattern: UInt64(littleEndian: bits))
    }

    mutating func bool() throws(FlowDecodeError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw failure("bad flag")
        }
    }

    mutating func raw() throws(FlowDecodeError) -> [UInt8] {
        let count = try length()
        defer { offset += count }
        return [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    }

    mutating func string() throws(FlowDecodeError) -> String {
        let count = try length()
        defer { offset += count }
        // Strings were valid when written (they came from Swift Strings); decoding repairs
        // anything else instead of trusting it.
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
    }

    mutating func optionalString() throws(FlowDecodeError) -> String? {
        try bool() ? try string() : nil
    }

    mutating func optionalDouble() throws(FlowDecodeError) -> Double? {
        try bool() ? try double() : nil
    }

    mutating func fields() throws(FlowDecodeError) -> [RecordedField] {
        // Each field takes at least two bytes, so the count is bounded by what is left.
        let count = try uint()
        guard count <= UInt64(bytes.count - offset) / 2 else { throw failure("field count \(count) runs past the record") }
        var fields: [RecordedField] = []
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            let name = try string()
            fields.append(RecordedField(name: name, value: try string()))
        }
        return fields
    }

    mutating func body() throws(FlowDecodeError) -> RecordedBody {
        let bytes = try raw()
        let wireSize = try uint()
        guard wireSize >= UInt64(bytes.count), wireSize <= UInt64(Int.max) else { throw failure("bad body size") }
        return RecordedBody(bytes: bytes, wireSize: Int(wireSize))
    }
}

extension Flow {
    /// The flow's binary form. The id and request start come first, so an index can be built
    /// from a record's first bytes (`sortKey(of:)`). `prefix` comes first (room for a journal
    /// record's header, so the bodies are copied once).
    func encoded(after prefix: [UInt8] = []) -> [UInt8] {
        var bytes = prefix
        encode(appendingTo: &bytes)
        return bytes
    }

    /// Appends the binary form to `bytes` (in place: a large buffer is not copied).
    func encode(appendingTo bytes: inout [UInt8]) {
        var e = FlowEncoder()
        swap(&e.bytes, &bytes)
        defer { swap(&e.bytes, &bytes) }
        e.bytes.reserveCapacity(e.bytes.count + 256 + request.body.bytes.count + (response?.body.bytes.count ?? 0)
                                + (webSocket?.messages.reduce(0) { $0 + 32 + $1.data.count } ?? 0))
        e.uint(id)
        e.double(instants.requestStart)
        e.string(clientAddress)
        e.string(request.method)
        e.string(request.url)
        e.string(request.httpVersion)
        e.fields(request.fields)
        e.int(request.headSize)
        e.body(request.body)
        e.fields(request.trailers)
        e.bool(response != nil)
        if let response {
            e.int(response.status)
            e.string(response.reason)
            e.string(response.httpVersion)
            e.fields(response.fields)
            e.int(response.headSize)
            e.body(response.body)
            e.fields(response.trailers)
        }
        for instant in [instants.dnsStart, instants.dnsEnd, instants.connectStart, instants.connectEnd,
                        instants.tlsStart, instants.tlsEnd, instants.sendStart, instants.sendEnd,
                        instants.responseStart, instants.responseEnd, instants.end] {
            e.optionalDouble(instant)
        }
        e.optionalString(serverIPAddress)
        e.optionalString(connectionID)
        e.optionalString(error)
        e.bool(webSocket != nil)
        if let webSocket {
            e.bool(webSocket.isOpen)
            e.uint(UInt64(webSocket.problems.count))
            for problem in webSocket.problems { e.string(problem) }
            e.uint(UInt64(webSocket.messages.count))
            for message in webSocket.messages { message.encode(into: &e) }
        }
        // Last, and only when set: journals written before the field existed still decode.
        if refused { e.bool(true) }
    }

    /// Decodes what `encoded()` wrote; the whole payload must be used.
    init(decoding payload: UnsafeRawBufferPointer) throws(FlowDecodeError) {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        let start = try d.double()
        let client = try d.string()
        let method = try d.string()
        let url = try d.string()
        let version = try d.string()
        let fields = try d.fields()
        let headSize = try d.int()
        let body = try d.body()
        let trailers = try d.fields()
        self.init(id: id, clientAddress: client,
                  request: RecordedRequest(method: method, url: url, httpVersion: version, fields: fields,
                                           headSize: headSize, body: body, trailers: trailers),
                  instants: FlowInstants(requestStart: start))
        if try d.bool() {
            let status = try d.int()
            let reason = try d.string()
            let version = try d.string()
            let fields = try d.fields()
            let headSize = try d.int()
            let body = try d.body()
            response = RecordedResponse(status: status, reason: reason, httpVersion: version, fields: fields,
                                        headSize: headSize, body: body, trailers: try d.fields())
        }
        instants.dnsStart = try d.optionalDouble()
        instants.dnsEnd = try d.optionalDouble()
        instants.connectStart = try d.optionalDouble()
        instants.connectEnd = try d.optionalDouble()
        instants.tlsStart = try d.optionalDouble()
        instants.tlsEnd = try d.optionalDouble()
        instants.sendStart = try d.optionalDouble()
        instants.sendEnd = try d.optionalDouble()
        instants.responseStart = try d.optionalDouble()
        instants.responseEnd = try d.optionalDouble()
        instants.end = try d.optionalDouble()
        serverIPAddress = try d.optionalString()
        connectionID = try d.optionalString()
        error = try d.optionalString()
        if try d.bool() {
            var webSocket = RecordedWebSocket()
            webSocket.isOpen = try d.bool()
            let problems = try d.uint()
            guard problems <= UInt64(payload.count) else { throw d.failure("bad problem count") }
            for _ in 0..<problems { webSocket.problems.append(try d.string()) }
            let messages = try d.uint()
            guard messages <= UInt64(payload.count) else { throw d.failure("bad message count") }
            for _ in 0..<messages { webSocket.messages.append(try RecordedWebSocketMessage(decoding: &d)) }
            self.webSocket = webSocket
        }
        if !d.isAtEnd { refused = try d.bool() }
        guard d.isAtEnd else { throw d.failure("unexpected bytes after the flow") }
    }

    /// The id and request start of an encoded flow, read from its first bytes.
    static func sortKey(of payload: UnsafeRawBufferPointer) throws(FlowDecodeError) -> (id: UInt64, requestStart: Double) {
        var d = FlowDecoder(payload)
        let id = try d.uint()
        return (id, try d.double())
    }
}

extension RecordedWebSocketMessage {
    func encode(into e: inout FlowEncoder) {
        e.bool(direction == .receive)
        e.double(time)
        e.u8(opcode)
        e.raw(data)
        e.bool(textValid)
        e.bool(truncated)
        e.optionalString(note)
    }

    init(decoding d: inout FlowDecoder) throws(FlowDecodeError) {
        let direction: Direction = try d.bool() ? .receive : .send
        let time = try d.double()
        let opcode = try d.u8()
        let data = try d.raw()
        let textValid = try d.bool()
        let truncated = try d.bool()
        self.init(direction: direction, time: time, opcode: opcode, data: data, textValid: textValid,
                  truncated: truncated, note: try d.optionalString())
    }
}
