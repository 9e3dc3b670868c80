import HTTP1
import Synchronization

/// One header field as it crossed the wire, in wire order: the HTTP/1 parser's own type, so there
/// is one field type from the wire to the journal. `HARHeader` stays separate on purpose: it is the
/// file format's type (with HAR's `comment` and `_custom` members) and the HAR module depends on
/// nothing.
public typealias RecordedField = HTTPField

/// A body as recorded: the payload bytes after transfer decoding (de-chunked) but before content
/// decoding, so gzip stays gzip until export. The recorded copy may be capped; the proxied body never is.
public struct RecordedBody: Sendable, Equatable {
    /// The recorded bytes, at most the recording cap; while the exchange is in flight, only the
    /// bytes since the last part went to the journal (`takePart`).
    public var bytes: [UInt8] = []
    /// Payload bytes that crossed the wire, including any not kept because of the cap.
    public var wireSize: Int = 0
    /// Bytes already handed to the journal as parts while the exchange was in flight: they come
    /// before `bytes`, and a flow read back from the journal has them in `bytes` again.
    public var streamed = 0
    /// True when fewer bytes were recorded than crossed the wire (the cap).
    public var isTruncated: Bool { streamed + bytes.count < wireSize }
    /// True when `bytes` is the whole recorded body (none of it went ahead as parts).
    public var isWhole: Bool { streamed == 0 }

    /// Kept bytes past this go to the journal as a part (`takePart`) while the exchange is in
    /// flight, so a body of any size holds at most this much memory per exchange.
    public static let partBytes = 1 << 20

    /// The kept bytes, to journal now as the next part, once they reach `size`.
    public mutating func takePart(size: Int = partBytes) -> [UInt8]? {
        guard bytes.count >= max(1, size) else { return nil }
        defer {
            streamed += bytes.count
            bytes = []
        }
        return bytes
    }

    public init(bytes: [UInt8] = [], wireSize: Int = 0) {
        self.bytes = bytes
        self.wireSize = wireSize
    }

    /// The most `reserve(expected:cap:)` sets aside up front. A declared length is only a claim:
    /// beyond this, storage grows as bytes actually arrive.
    public static let maximumReservation = 1 << 20

    /// Sets aside room for a body of `expected` bytes (a Content-Length), so a body that arrives
    /// in many reads is not moved on each doubling.
    public mutating func reserve(expected: UInt64, cap: Int) {
        let room = min(expected, UInt64(max(0, min(cap, Self.maximumReservation))))
        if room > 0 { bytes.reserveCapacity(Int(room)) }
    }

    /// Appends payload bytes, keeping at most `cap` of them.
    public mutating func append(_ chunk: UnsafeRawBufferPointer, cap: Int) {
        wireSize += chunk.count
        let room = cap - streamed - bytes.count
        if room > 0 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk.prefix(room)))
        }
    }

    public mutating func append(_ chunk: [UInt8], cap: Int) {
        chunk.withUnsafeBytes { append($0, cap: cap) }
    }
}

/// The request side of a recorded exchange.
public struct RecordedRequest: Sendable, Equatable {
    public var method: String
    /// Absolute URL without fragment, e.g. `http://127.0.0.1:9000/api?id=7`.
    public var url: String
    public var httpVersion: String
    public var fields: [RecordedField]
    /// Exact bytes of the request line, the field lines and the final CRLF as received.
    public var headSize: Int
    public var body: RecordedBody
    public var trailers: [RecordedField]

    public init(method: String, url: String, httpVersion: String, fields: [RecordedField],
                headSize: Int, body: RecordedBody = RecordedBody(), trailers: [RecordedField] = []) {
        self.method = method
        self.url = url
        self.httpVersion = httpVersion
        self.fields = fields
        self.headSize = headSize
        self.body = body
        self.trailers = trailers
    }
}

/// The response side of a recorded exchange (the final, non-1xx response).
public struct RecordedResponse: Sendable, Equatable {
    public var status: Int
    public var reason: String
    public var httpVersion: String
    public var fields: [RecordedField]
    public var headSize: Int
    public var body: RecordedBody
    public var trailers: [RecordedField]

    public init(status: Int, reason: String, httpVersion: String, fields: [RecordedField],
                headSize: Int, body: RecordedBody = RecordedBody(), trailers: [RecordedField] = []) {
        self.status = status
        self.reason = reason
        self.httpVersion = httpVersion
        self.fields = fields
        self.headSize = headSize
        self.body = body
        self.trailers = trailers
    }
}

/// Instants of one exchange in seconds since the Unix epoch; nil where a phase did not happen.
/// HAR timings are derived from these at export, so the sum rule holds by construction.
public struct FlowInstants: Sendable, Equatable {
    /// The request head was complete at the proxy.
    public var requestStart: Double
    public var dnsStart: Double?
    public var dnsEnd: Double?
    public var connectStart: Double?
    public var connectEnd: Double?
    public var tlsStart: Double?
    public var tlsEnd: Double?
    /// The request head was handed to the upstream connection.
    public var sendStart: Double?
    /// The last request byte was handed to the upstream connection.
    public var sendEnd: Double?
    /// The first byte of the final response head arrived.
    public var responseStart: Double?
    /// The last response byte arrived.
    public var responseEnd: Double?
    /// The exchange ended for any reason (complete, failed, aborted).
    public var end: Double?

    public init(requestStart: Double) {
        self.requestStart = requestStart
    }
}

/// One WebSocket message (or control frame) as seen by the proxy.
public struct RecordedWebSocketMessage: Sendable, Equatable {
    /// `send` is client to server, `receive` server to client (Chrome's HAR terms).
    public enum Direction: String, Sendable { case send, receive }

    public var direction: Direction
    /// Seconds since the Unix epoch when the message was complete.
    public var time: Double
    /// 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    public var opcode: UInt8
    /// The payload (inflated); for close frames, "code reason" as UTF-8.
    public var data: [UInt8]
    /// For text: whether `data` is valid UTF-8.
    public var textValid: Bool
    /// The recorded copy was capped.
    public var truncated: Bool
    /// Why the message is incomplete or suspect (e.g. an inflate failure).
    public var note: String?

    public init(direction: Direction, time: Double, opcode: UInt8, data: [UInt8], textValid: Bool = true,
                truncated: Bool = false, note: String? = nil) {
        self.direction = direction
        self.time = time
        self.opcode = opcode
        self.data = data
        self.textValid = textValid
        self.truncated = truncated
        self.note = note
    }
}

/// The conversation after a 101 to websocket.
public struct RecordedWebSocket: Sendable, Equatable {
    public var messages: [RecordedWebSocketMessage] = []
    /// Still open when the HAR was written (harrec stopped first).
    public var isOpen = false
    /// Protocol violations seen in either direction (relaying went on regardless).
    public var problems: [String] = []

    public init() {}
}

/// One recorded exchange: what the proxy saw for a request and its response, or why it failed.
public struct Flow: Sendable, Equatable {
    /// Monotonic id in order of arrival; ties in start time are broken by it.
    public var id: UInt64
    public var clientAddress: String
    public var request: RecordedRequest
    public var response: RecordedResponse?
    public var instants: FlowInstants
    public var serverIPAddress: String?
    /// Shared by every exchange carried over one upstream connection.
    public var connectionID: String?
    /// Why the exchange failed, when it did. Free of control characters.
    public var error: String?
    /// Set for an upgrade to websocket: the messages that followed the 101.
    public var webSocket: RecordedWebSocket?
    /// harrec answered this request itself, or could not open the tunnel it asked for: the
    /// response (if any) is what harrec sent, and `error` says why (HAR `_refused: true`).
    public var refused = false

    public init(id: UInt64, clientAddress: String, request: RecordedRequest, instants: FlowInstants) {
        self.id = id
        self.clientAddress = clientAddress
        self.request = request
        self.instants = instants
    }
}

/// Receives finished flows. The proxy core hands every exchange to a sink exactly once.
/// A scenario marker: from `time` on, new requests belong to the HAR page named `name`
/// (`harrec mark NAME`, or a request to `http://harrec/mark?name=NAME` through the proxy).
public struct PageMark: Sendable, Equatable {
    public var name: String
    public var time: Double

    public init(name: String, time: Double) {
        self.name = name
        self.time = time
    }
}

/// A choice made while recording about what the HAR holds (the live view's "leave out"): flow
/// `flowID` is left out of the export, or put back. The last decision about a flow counts.
public struct ExportDecision: Sendable, Equatable {
    public var flowID: UInt64
    public var excluded: Bool

    public init(flowID: UInt64, excluded: Bool) {
        self.flowID = flowID
        self.excluded = excluded
    }
}

/// A flow moved to another page than its start time puts it in (the live view's "move to the
/// previous or next page"): `page` counts scenario marks in time order from 0, and -1 is before
/// the first mark (no page). The last move of a flow counts.
public struct PageMove: Sendable, Equatable {
    public var flowID: UInt64
    public var page: Int

    public init(flowID: UInt64, page: Int) {
        self.flowID = flowID
        self.page = page
    }
}

public protocol FlowSink: AnyObject, Sendable {
    func record(_ flow: Flow)
    /// A scenario marker; the export turns marks into HAR pages.
    func recordPageMark(_ mark: PageMark)
    /// A flow left out of the HAR, or put back. A sink that wraps another passes it on.
    func recordExportDecision(_ decision: ExportDecision)
    /// A flow moved to another page. A sink that wraps another passes it on.
    func recordPageMove(_ move: PageMove)
    /// True when the sink takes WebSocket messages one by one as they complete: it then hears
    /// `recordWebSocketStart` at the upgrade and `recordWebSocketMessage` per message, and the flow
    /// recorded when the conversation ends carries no messages. A journal needs this, so that a
    /// long conversation is neither held in memory nor lost in a crash.
    var streamsWebSocketMessages: Bool { get }
    /// A WebSocket conversation began (its flow has `webSocket` set and no messages yet).
    func recordWebSocketStart(_ flow: Flow)
    /// One message of the conversation of flow `flowID`.
    func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64)
    /// True when the sink takes large bodies a part at a time as they cross (`recordBodyPart`),
    /// before their flow: a journal needs this, so that an exchange in flight holds at most
    /// `RecordedBody.partBytes` of its body in memory, whatever its size.
    var streamsBodies: Bool { get }
    /// The next part of a body of flow `part.flowID`, still in flight.
    func recordBodyPart(_ part: RecordedBodyPart)
}

extension FlowSink {
    public func recordPageMark(_ mark: PageMark) {}
    public func recordExportDecision(_ decision: ExportDecision) {}
    public func recordPageMove(_ move: PageMove) {}
    public var streamsWebSocketMessages: Bool { false }
    public func recordWebSocketStart(_ flow: Flow) {}
    public func recordWebSocketMessage(_ message: RecordedWebSocketMessage, flowID: UInt64) {}
    public var streamsBodies: Bool { false }
    public func recordBodyPart(_ part: RecordedBodyPart) {}
}

/// The in-memory log of finished flows. Appending is cheap and safe from any thread; readers take
/// a snapshot. Observers (a future journal to disk) see every completed flow once, in append order.
///
/// Flows are kept in fixed-size chunks rather than one array, so an append never copies the log:
/// one growing array of a million flows would move hundreds of megabytes on a doubling, inside the
/// lock and inside an event-loop iteration (a visible stall for every connection on that loop).
public final class FlowLog: FlowSink, @unchecked Sendable {
    /// Flows per chunk: a chunk's buffer is about 1 MB, reserved once and never reallocated.
    static let chunkCapacity = 2048

    private struct Storage {
        var full: [[Flow]] = []
        var current: [Flow] = []
        var count: Int { full.count * FlowLog.chunkCapacity + current.count }

        /// Every flow in order, leaving this storage empty. A chunk this storage holds the only
        /// reference to is freed as soon as it is copied.
        mutating func drain() -> [Flow] {
            var flows: [Flow] = []
            flows.reserveCapacity(count)
            full.reverse()
            while let chunk = full.popLast() { flows.append(contentsOf: chunk) }
            flows.append(contentsOf: current)
            current = []
            return flows
        }
    }

    private let storage = Mutex(Storage())
    private let observers = Mutex<[@Sendable (Flow) -> Void]>([])
    private let marks = Mutex<[PageMark]>([])
    private let excludedIDs = Mutex<Set<UInt64>>([])
    private let moves = Mutex<[UInt64: Int]>([:])

    public init() {}

    public func recordPageMark(_ mark: PageMark) {
        marks.withLock { $0.append(mark) }
    }

    public func recordExportDecision(_ decision: ExportDecision) {
        excludedIDs.withLock { ids in
            if decision.excluded { ids.insert(decision.flowID) } else { ids.remove(decision.flowID) }
        }
    }

    /// The flows left out of the export so far.
    public var excluded: Set<UInt64> { excludedIDs.withLock { $0 } }

    public func recordPageMove(_ move: PageMove) {
        moves.withLock { $0[move.flowID] = move.page }
    }

    /// Flows moved to another page, by id.
    public var pageOverrides: [UInt64: Int] { moves.withLock { $0 } }

    /// The scenario markers recorded so far, in the order they came.
    public var pageMarks: [PageMark] { marks.withLock { $0 } }

    public func record(_ flow: Flow) {
        storage.withLock { storage in
            if storage.current.count == Self.chunkCapacity {
                storage.full.append(storage.current)
                storage.current = []
            }
            if storage.current.isEmpty { storage.current.reserveCapacity(Self.chunkCapacity) }
            storage.current.append(flow)
        }
        let current = observers.withLock { $0 }
        for observer in current { observer(flow) }
    }

    /// Registers a callback for every flow recorded from now on.
    public func observe(_ observer: @escaping @Sendable (Flow) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// A copy of every flow recorded so far, in append order.
    public func snapshot() -> [Flow] {
        // Draining a copy leaves the log's chunks alone: they are shared, not copied.
        var copy = storage.withLock { $0 }
        return copy.drain()
    }

    /// Every flow recorded so far, in append order, leaving the log empty. Each chunk is freed as
    /// soon as it is copied, so the export at exit holds one copy of the log, not two.
    public func takeAll() -> [Flow] {
        var taken = storage.withLock { storage in
            defer { storage = Storage() }
            return storage
        }
        return taken.drain()
    }

    public var count: Int { storage.withLock { $0.count } }
}
