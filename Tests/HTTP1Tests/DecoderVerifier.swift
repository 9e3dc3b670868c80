import HTTP1
import TestSupport
import XCTest

/// One decoder kind, seen through a common interface so that the verifier, the corpus runner
/// and the fuzzer can drive request and response decoders alike.
protocol VerifiableDecoder {
    init(limits: HTTP1Limits)
    mutating func feed(_ bytes: [UInt8])
    mutating func finish()
    /// Next event rendered as corpus lines (a head renders as several lines).
    mutating func nextObserved() throws(HTTP1ParseError) -> Observed?
    var bufferedByteCount: Int { get }
    var isAtCleanEOF: Bool { get }
    var hasStopped: Bool { get }
    mutating func takeBufferedBytes() -> [UInt8]
    /// Prepares for responses to `methods` (no-op for requests).
    mutating func expect(methods: [String])
}

/// A decoder event in comparable form. Adjacent `.body` values are merged before comparing.
enum Observed: Equatable {
    case head([String])
    case body([UInt8])
    case end([String])
}

/// How the tests see one role's events (the decoders are one generic type, so they conform
/// once, through their role).
protocol ObservedRole: HTTP1DecoderRole {
    static func observed(_ event: Event) -> Observed
    static func expect(_ methods: [String], in decoder: inout HTTP1Decoder<Self>)
}

extension HTTP1Decoder: VerifiableDecoder where Role: ObservedRole {
    mutating func nextObserved() throws(HTTP1ParseError) -> Observed? {
        try next().map(Role.observed)
    }

    mutating func expect(methods: [String]) { Role.expect(methods, in: &self) }
}

extension HTTP1RequestRole: ObservedRole {
    static func observed(_ event: HTTP1RequestEvent) -> Observed {
        switch event {
        case .head(let head, let framing):
            return observedHead("head \(head.method) \(head.target) \(head.version)", framing, head.keepAlive, head.fields)
        case .body(let bytes):
            return .body(bytes)
        case .end(let trailers):
            return .end(renderEnd(trailers))
        }
    }

    static func expect(_ methods: [String], in decoder: inout HTTP1Decoder<Self>) {}
}

extension HTTP1ResponseRole: ObservedRole {
    static func observed(_ event: HTTP1ResponseEvent) -> Observed {
        switch event {
        case .head(let head, let framing):
            return observedHead("head \(head.version) \(head.status) \"\(renderText(head.reason))\"", framing, head.keepAlive, head.fields)
        case .body(let bytes):
            return .body(bytes)
        case .end(let trailers):
            return .end(renderEnd(trailers))
        }
    }

    static func expect(_ methods: [String], in decoder: inout HTTP1Decoder<Self>) {
        for m in methods { decoder.expectResponse(toMethod: m) }
    }
}

/// A head as corpus lines: the start line with its framing (and "close"), then one line a field.
func observedHead(_ start: String, _ framing: HTTPBodyFraming, _ keepAlive: Bool, _ fields: HTTPFields) -> Observed {
    .head(["\(start) framing=\(render(framing))" + (keepAlive ? "" : " close")] + fields.fields.map { "field " + render($0) })
}

func render(_ framing: HTTPBodyFraming) -> String {
    switch framing {
    case .none: return "none"
    case .contentLength(let n): return "length(\(n))"
    case .chunked: return "chunked"
    case .untilClose: return "until-close"
    }
}

func render(_ field: HTTPField) -> String {
    if field.valueIsLatin1 {
        let bytes = field.value.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        return "\(field.name): \(renderBytes(bytes, escapeQuote: false)) [latin1]"
    }
    return field.value.isEmpty ? "\(field.name):" : "\(field.name): \(renderBytes(Array(field.value.utf8), keepUTF8: true, escapeQuote: false))"
}

func renderEnd(_ trailers: HTTPFields) -> [String] {
    if trailers.isEmpty { return ["end"] }
    return ["end trailers=\(trailers.count)"] + trailers.fields.map { "trailer " + render($0) }
}

func renderText(_ s: String) -> String {
    renderBytes(Array(s.utf8), keepUTF8: true)
}

/// Escapes bytes the way the corpus writes them: `\r \n \t \0 \\ \"`, other control and
/// non-ASCII bytes as `\xNN` (unless `keepUTF8`).
func renderBytes(_ bytes: [UInt8], keepUTF8: Bool = false, escapeQuote: Bool = true) -> String {
    var out = [UInt8]()
    for b in bytes {
        switch b {
        case 0x0D: out += Array("\\r".utf8)
        case 0x0A: out += Array("\\n".utf8)
        case 0x09: out += Array("\\t".utf8)
        case 0x00: out += Array("\\0".utf8)
        case 0x5C: out += Array("\\\\".utf8)
        case 0x22 where escapeQuote: out += Array("\\\"".utf8)
        case 0x20..<0x7F: out.append(b)
        case 0x80... where keepUTF8: out.append(b)
        default:
            let hex = Array("0123456789abcdef".utf8)
            out += [0x5C, 0x78, hex[Int(b >> 4)], hex[Int(b & 15)]]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// Feeds inputs to a decoder in several ways and checks that the event sequence is the same,
/// in the spirit of SwiftNIO's ByteToMessageDecoderVerifier: whole, one byte at a time, at
/// seeded random split points, and (for complete messages) several copies in one buffer.
enum DecoderVerifier {
    struct Options {
        var methods: [String] = []
        var eof = true
        var limits = HTTP1Limits.default
    }

    /// Runs `input` cut at `cuts` (sorted offsets) and returns the rendered transcript.
    static func transcript<D: VerifiableDecoder>(
        _ type: D.Type, _ input: [UInt8], cuts: [Int], options: Options
    ) -> [String] {
        var decoder = D(limits: options.limits)
        decoder.expect(methods: options.methods)
        var events: [Observed] = []
        var lines: [String] = []
        var budget = input.count * 3 + 100  // next() calls; more means no progress
        var failed = false

        func drain() -> Bool {
            while true {
                budget -= 1
                if budget < 0 {
                    lines.append("FAIL: decoder made no progress")
                    return false
                }
                do {
                    guard let event = try decoder.nextObserved() else { return true }
                    if case .body(let b) = event, b.isEmpty { lines.append("FAIL: empty body event") }
                    events.append(event)
                } catch {
                    flush()
                    lines.append("error \(error.kind)")
                    checkSticky(error)
                    return false
                }
            }
        }
        func checkSticky(_ first: HTTP1ParseError) {
            do {
                _ = try decoder.nextObserved()
                lines.append("FAIL: error not sticky (next() returned)")
            } catch {
                if error != first { lines.append("FAIL: different error on retry") }
            }
            if first.message.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                lines.append("FAIL: control character in error message")
            }
        }
        func flush() {
            var merged: [Observed] = []
            for e in events {
                if case .body(let b) = e, case .body(let a)? = merged.last {
                    merged[merged.count - 1] = .body(a + b)
                } else {
                    merged.append(e)
                }
            }
            for e in merged {
                switch e {
                case .head(let l), .end(let l): lines += l
                case .body(let b): lines.append("body \"\(renderBytes(b))\"")
                }
            }
            events = []
        }

        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            if cut > start { decoder.feed(Array(input[start..<cut])) }
            start = cut
            if !drain() { failed = true; break }
        }
        if !failed {
            if options.eof {
                decoder.finish()
                failed = !drain()
            }
        }
        if !failed {
            flush()
            if decoder.hasStopped { lines.append("stopped") }
            if decoder.bufferedByteCount > 0 {
                lines.append("leftover \"\(renderBytes(decoder.takeBufferedBytes()))\"")
            } else if options.eof && !decoder.hasStopped && !decoder.isAtCleanEOF {
                lines.append("FAIL: not at clean EOF")
            }
        }
        return lines
    }

    /// Checks every feeding strategy against `expected` and returns failure descriptions.
    static func verify<D: VerifiableDecoder>(
        _ type: D.Type, name: String, input: [UInt8], expected: [String], options: Options,
        seed: UInt64, randomRounds: Int = 6
    ) -> [String] {
        var failures: [String] = []
        func check(_ mode: String, _ cuts: [Int]) {
            let got = transcript(type, input, cuts: cuts, options: options)
            if got != expected {
                failures.append(
                    "\(name) [\(mode)]\n  expected:\n    " + expected.joined(separator: "\n    ")
                        + "\n  got:\n    " + got.joined(separator: "\n    "))
            }
        }
        check("whole", [])
        if input.count > 1 { check("byte by byte", Array(1..<input.count)) }
        var rng = SplitMix64(seed: seed)
        for round in 0..<randomRounds where input.count > 2 {
            let n = Int.random(in: 1...min(8, input.count - 1), using: &rng)
            let cuts = (0..<n).map { _ in Int.random(in: 1..<input.count, using: &rng) }.sorted()
            check("random split \(round) at \(cuts)", cuts)
        }
        return failures
    }
}
