import Foundation
import TestSupport
import XCTest
@testable import WebSocket

let webSocketFixtureDirectory = PackagePaths.fixtures("websocket").path

func loadFixtureJSON(_ name: String) throws -> [String: Any] {
    let data = try Data(contentsOf: URL(fileURLWithPath: webSocketFixtureDirectory + "/" + name))
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw NSError(domain: "fixture", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(name): not a JSON object"])
    }
    return object
}

func hexBytes(_ text: String) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count / 2)
    var high: UInt8?
    for c in text.utf8 {
        let v: UInt8
        switch c {
        case 0x30...0x39: v = c - 0x30
        case 0x61...0x66: v = c - 0x61 + 10
        case 0x41...0x46: v = c - 0x41 + 10
        default: continue
        }
        if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
    }
    return out
}

func base64Bytes(_ text: String) -> [UInt8] { Array(Data(base64Encoded: text) ?? Data()) }

// MARK: - Event shorthands

func text(_ s: String, compressed: Bool = false) -> WebSocketEvent {
    .message(opcode: 1, data: Array(s.utf8), compressed: compressed, textValid: true, truncated: false, note: nil)
}

func binary(_ b: [UInt8], compressed: Bool = false) -> WebSocketEvent {
    .message(opcode: 2, data: b, compressed: compressed, textValid: true, truncated: false, note: nil)
}

/// Short rendering of an event for failure messages (payloads are summarised).
func describe(_ e: WebSocketEvent?) -> String {
    guard let e else { return "nil" }
    func summary(_ d: [UInt8]) -> String {
        var h: UInt64 = 1469598103934665603
        for b in d { h = (h ^ UInt64(b)) &* 1099511628211 }
        let head = printable(d.prefix(24))
        return "\(d.count)B \"\(head)\" #\(String(h, radix: 16))"
    }
    switch e {
    case let .message(op, data, c, valid, trunc, note):
        return "message(op \(op), \(summary(data)), compressed \(c), textValid \(valid), truncated \(trunc), note \(note ?? "nil"))"
    case let .close(code, reason): return "close(\(code.map(String.init) ?? "nil"), \"\(reason)\")"
    case let .ping(p): return "ping(\(summary(p)))"
    case let .pong(p): return "pong(\(summary(p)))"
    case let .protocolError(r): return "protocolError(\(r))"
    }
}

func describe(_ events: [WebSocketEvent]) -> String {
    events.enumerated().map { "  [\($0.offset)] \(describe($0.element))" }.joined(separator: "\n")
}

// MARK: - Frame shorthands

/// A deterministic, varied masking key for frame `i`.
func key(_ i: Int) -> UInt32 { UInt32(truncatingIfNeeded: 0x37FA_213D &+ i &* 0x9E37_79B1) }

/// A whole message as sent by `direction` (masked for the client).
func wire(_ direction: WebSocketDirection, opcode: UInt8, _ payload: [UInt8], deflater: WebSocketDeflater? = nil,
          fragmentSize: Int? = nil, seed: Int = 0) -> [UInt8] {
    WebSocketFrameEncoder.message(opcode: opcode, payload: payload, deflater: deflater, fragmentSize: fragmentSize,
                                  maskKey: { direction == .clientToServer ? key(seed &+ $0) : nil })
}

func controlFrame(_ direction: WebSocketDirection, opcode: UInt8, _ payload: [UInt8], seed: Int = 99) -> [UInt8] {
    WebSocketFrameEncoder.frame(opcode: opcode, payload: payload, maskKey: direction == .clientToServer ? key(seed) : nil)
}

// MARK: - Verifier

/// The outcome of one run of a parser over some input.
struct ParseRun: Equatable {
    var events: [WebSocketEvent]
    var finish: WebSocketEvent?
}

/// Feeds `input` cut at `cuts` (ascending offsets), draining after every feed, then finishes.
/// Also checks invariants that hold however the input is cut: bounded buffering after a drain,
/// nothing after a protocol error, printable error messages, recorded data within the cap.
func parse(_ input: [UInt8], direction: WebSocketDirection, deflate: PerMessageDeflate? = nil,
           limits: WebSocketLimits = .default, cuts: [Int] = [], violations: inout [String]) -> ParseRun {
    var parser = WebSocketParser(direction: direction, deflate: deflate, limits: limits)
    var events: [WebSocketEvent] = []
    let bufferBound = 14 + limits.maxControlPayload
    func drain() {
        while let e = parser.next() {
            if case .protocolError? = events.last { violations.append("event after a protocol error: \(describe(e))") }
            check(e)
            events.append(e)
        }
        if parser.bufferedByteCount > bufferBound {
            violations.append("buffered \(parser.bufferedByteCount) bytes after a drain (bound \(bufferBound))")
        }
    }
    func check(_ e: WebSocketEvent) {
        switch e {
        case let .protocolError(reason), let .close(_, reason):
            if reason.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }), case .protocolError = e {
                violations.append("control character in protocol error: \(printable(Array(reason.utf8)))")
            }
        case let .message(_, data, _, _, _, note):
            if data.count > limits.maxRecordedMessageBytes { violations.append("recorded \(data.count) bytes, cap \(limits.maxRecordedMessageBytes)") }
            if let note, note.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                violations.append("control character in note")
            }
        case let .ping(p), let .pong(p):
            if p.count > limits.maxControlPayload { violations.append("control payload too large") }
        }
    }
    input.withUnsafeBytes { all in
        var start = 0
        for cut in cuts + [input.count] where cut >= start && cut <= input.count {
            if cut > start { parser.feed(UnsafeRawBufferPointer(rebasing: all[start..<cut])) }
            start = cut
            drain()
        }
    }
    let end = parser.finish()
    if let end { check(end) }
    if parser.finish() != nil { violations.append("finish() returned an event twice") }
    if parser.next() != nil { violations.append("next() returned an event after finish()") }
    return ParseRun(events: events, finish: end)
}

/// Runs `input` whole, one byte at a time, at seeded random split points and in small random
/// chunks, in the spirit of SwiftNIO's ByteToMessageDecoderVerifier, and checks that every run
/// gives `expected` then `finish`. With `repeatable`, also checks that `copies` of the input in
/// one buffer give the events `copies` times (the input must end between messages).
func verify(_ input: [UInt8], direction: WebSocketDirection, deflate: PerMessageDeflate? = nil,
            limits: WebSocketLimits = .default, expected: [WebSocketEvent], finish: WebSocketEvent? = nil,
            repeatable: Bool = true, copies: Int = 3, seed: UInt64 = 1,
            file: StaticString = #filePath, line: UInt = #line) {
    var rng = SplitMix64(seed: seed ^ UInt64(input.count))
    var plans: [(String, [Int])] = [("whole", [])]
    if input.count <= 2 << 20 { plans.append(("byte by byte", Array(0..<input.count))) }
    for round in 0..<4 {
        let n = input.isEmpty ? 0 : Int.random(in: 1...min(64, input.count), using: &rng)
        plans.append(("random split \(round)", (0..<n).map { _ in Int.random(in: 0...input.count, using: &rng) }.sorted()))
    }
    var small: [Int] = []
    var at = 0
    while at < input.count { at += Int.random(in: 1...17, using: &rng); small.append(min(at, input.count)) }
    plans.append(("small chunks", small))

    let want = ParseRun(events: expected, finish: finish)
    for (name, cuts) in plans {
        var violations: [String] = []
        let got = parse(input, direction: direction, deflate: deflate, limits: limits, cuts: cuts, violations: &violations)
        for v in violations { XCTFail("\(name): \(v)", file: file, line: line) }
        if got != want {
            XCTFail("\(name): events differ\nexpected:\n\(describe(want.events))\n  finish \(describe(want.finish))\ngot:\n\(describe(got.events))\n  finish \(describe(got.finish))",
                    file: file, line: line)
            return
        }
    }
    if repeatable && copies > 1 {
        var many: [UInt8] = []
        many.reserveCapacity(input.count * copies)
        for _ in 0..<copies { many += input }
        var violations: [String] = []
        let got = parse(many, direction: direction, deflate: deflate, limits: limits, violations: &violations)
        for v in violations { XCTFail("\(copies) copies: \(v)", file: file, line: line) }
        var wantMany: [WebSocketEvent] = []
        for _ in 0..<copies { wantMany += expected }
        if got != ParseRun(events: wantMany, finish: finish) {
            XCTFail("\(copies) copies in one buffer: events differ\ngot:\n\(describe(got.events))", file: file, line: line)
        }
    }
}
