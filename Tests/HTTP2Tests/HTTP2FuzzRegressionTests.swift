import Foundation
import HTTP1
@testable import HTTP2
import XCTest

/// Inputs the http2 fuzz target found, replayed: the same frames fed whole or in pieces give the
/// same events.
final class HTTP2FuzzRegressionTests: XCTestCase {
    private let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Events per stream (0: the connection's), bodies as byte counts.
    private func events(_ frames: [UInt8], chunk: Int, answer: Bool) throws -> [Int32: [String]] {
        let server = try HTTP2Connection(role: .server)
        var out: [Int32: [String]] = [:]
        var data: [Int32: Int] = [:]
        func drain(sending: Bool = true) {
            guard sending else { return drainEvents() }
            repeat {
                drainEvents()
                _ = server.takeOutput()
            } while server.hasEvents
        }
        func drainEvents() {
            while let event = server.nextEvent() {
                if case .data(let id, let bytes) = event {
                    data[id, default: 0] += bytes.count
                    continue
                }
                switch event {
                case .headers(let id, _, _), .trailers(let id, _), .endStream(let id), .reset(let id, _), .closed(let id, _):
                    out[id, default: []].append("\(event)")
                default:
                    out[0, default: []].append("\(event)")
                }
                if answer, case .headers(let id, _, let end) = event {
                    try? server.sendResponse([HTTPField(name: ":status", value: "200")], on: id, endStream: false)
                    server.sendData(Array("ok".utf8), on: id, end: end)
                }
            }
        }
        let bytes = preface + frames
        var start = 0
        while start < bytes.count {
            do {
                try Array(bytes[start..<min(bytes.count, start + chunk)]).withUnsafeBytes { try server.receive($0) }
            } catch {
                drain()
                out[0, default: []].append("failed")
                break
            }
            drain(sending: answer)
            start += chunk
        }
        drain()
        for (id, count) in data { out[id, default: []].append("data \(count)") }
        return out
    }

    private func assertSameWholeOrSplit(_ base64: String, answer: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        let frames = Array(Data(base64Encoded: base64)!.dropFirst())
        let whole = try events(frames, chunk: frames.count + preface.count, answer: answer)
        for chunk in [1, 2, 3, 5, 9] {
            XCTAssertEqual(try events(frames, chunk: chunk, answer: answer), whole, "chunk \(chunk)", file: file, line: line)
        }
    }

    /// A request and the client's GOAWAY in one read: the answer's END_STREAM closes the stream
    /// while sending, so that event only shows after `takeOutput` (the harness now drains
    /// again), and whether it comes before or after the GOAWAY depends on the split (so the
    /// order is compared per stream).
    func testFinding1() throws {
        try assertSameWholeOrSplit("kgAAKgQAAAAAAAABAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAACwEFAAAAAYKHQYYdZl0lQn+EAAAIBwAAAAAAAAAAAAAAAAA=",
                                   answer: false)
        _ = try events(Array(Data(base64Encoded: "kgAAKgQAAAAAAAABAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAACwEFAAAAAYKHQYYdZl0lQn+EAAAIBwAAAAAAAAAAAAAAAAA=")!), chunk: 3, answer: true)
    }

    /// Four requests and a RST_STREAM for one of them: answered between reads, the stream may
    /// close before the reset arrives (split) or be reset first (whole). Both are right, so the
    /// target compares whole and split only when it does not answer; answering must not crash.
    func testFinding2() throws {
        try assertSameWholeOrSplit("mwAAKgQAAAAAAAABAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAAEQEFAAAAAYKHQYYdZl0lQn9EhWDJLSwHAAAKAQUAAAADgoe/RIVgyS0sMwAACgEFAAAABYKHwESFYMktLDcAAAoBBQAAAAeCh8FEhWDJLSw7AAAEAwAAAAADAAAACAAACAYAAAAAADEyMzQ1Njc4AAAECAAAAAAAAAD//w==", answer: false)
        for chunk in [1, 3, 64] { _ = try events(Array(Data(base64Encoded: "mwAAKgQAAAAAAAABAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAAEQEFAAAAAYKHQYYdZl0lQn9EhWDJLSwHAAAKAQUAAAADgoe/RIVgyS0sMwAACgEFAAAABYKHwESFYMktLDcAAAoBBQAAAAeCh8FEhWDJLSw7AAAEAwAAAAADAAAACAAACAYAAAAAADEyMzQ1Njc4AAAECAAAAAAAAAD//w==")!.dropFirst()), chunk: chunk, answer: true) }
    }

    /// A stream error's RST_STREAM went out (closing the stream) between pieces, but not when a
    /// later frame in the same read ended the connection: without answers the target now sends
    /// nothing until the input ends.
    func testFinding3() throws {
        try assertSameWholeOrSplit("dwAAKgQAAAAAAAABAAAQAAALAQQAAAABgodBhh1mXSVCf4QAADEACAAAAAEKYWJjAAAAZAAGAAEAAAAAEQEFAAAAAYKHQYYdZl3//39EhWDJLSwHAAAKAQUAAAADgoe/RIVgyS0sMwAACgEFAAAABYKHwESFYMktLDcAAAoBBQAAAAeCh8FEhWDJLSw7AAAEAwAAAAADAAAACAAACAYAAAAAAAAAAABSAAAAAAABAAAAAQ==", answer: false)
    }

    /// Two RST_STREAMs for one stream: whether the second is reported depended on sends between
    /// pieces.
    func testFinding4() throws {
        try assertSameWholeOrSplit("ZgAAKgQAAAAAAAAAAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAAEQEFAAAAAYKHQYYdZl3//39EhWDJLSwHAAAKAQUAAAADgoe/RIVgyS0sMwAACgEFAAAABYKHwESFYMktLDcAAAoBBQAAAAeCh8FEhWDJLSw7AAAEAwAAAAADAAAAAQAAKgQAAAAAAAAAAAAQAAACAAAAAQAEAAD//wAFAABAAAAIAAAAAAADAAAAZAAGAAEAAAAAEQEFAAAAAYKHQYYdZl3//39EhWDJLSwHAAAKAQUAAAADgoe/RIVgyS0sMwAACgEFAAAABYKHwESFYMktLDcAAAoBBQAAAAeCh8FEhWDJLSw7AAAEAwAAAAADAAAAAQAAAAAAAJ4DADEyMzQ1Njc3AAAECAAAAAAAAAAAAAAAAJ4DADEyMzQ1Njc3AAAECAAAAAAAAAD//g==", answer: false)
    }

    /// A request after the client's GOAWAY with an error code: nghttp2 dropped it when it came in
    /// the same read as the GOAWAY and delivered it in a later read. A peer that failed the
    /// connection now gets no new streams delivered either way.
    func testFinding5() throws {
        try assertSameWholeOrSplit("dgAAKgQAAAAAAAAAAgAQAP/+//8AASsEAAD//wAFAP///////wBWAABYAAAAAAAAhgEAAAAAEQcAAAAAAAAAxYYdZl0AAABkAAYAAQAAAAALAQQAAAABgodBhh1mXSVCf4QaDgAAAAAAAAEKrQCampqampqa/w==", answer: false)
    }

    /// A flood of CONTINUATION frames: nghttp2 counts them per read, so fed a byte at a time the
    /// connection fails ("Too many CONTINUATION frames") and fed whole it does not. The target
    /// now accepts a failure in one feeding when the events before it agree.
    func testFinding6() throws {
        let frames = Array(Data(base64Encoded: "AAAAKgQAAAAAAAABAAAQAAACAAAAAQAEAAD//wAFAABAAAADAAAAiKioqKioqKgQPQAAAgAAAAEABB1mXU9wdGlvJUJ/fUB4eIF4eHh4hXh4eCs=")!.dropFirst())
        let whole = try events(frames, chunk: frames.count + preface.count, answer: false)
        let bytewise = try events(frames, chunk: 1, answer: false)
        XCTAssertEqual(whole[0], nil, "fed whole: no events, no failure")
        XCTAssertEqual(bytewise[0], ["failed"], "fed a byte at a time: the CONTINUATION limit ends the connection")
        XCTAssertEqual(whole.filter { $0.key != 0 }, bytewise.filter { $0.key != 0 }, "no stream saw anything either way")
    }

    /// The same with a graceful GOAWAY (NO_ERROR): no stream opened after any GOAWAY is delivered.
    func testFinding7() throws {
        try assertSameWholeOrSplit("KwAAKgQAAAAAAAAAAgAQAP/+//8AASsEAAD//wAFAP///////wBWAABYAACAAAAAhgEAAAAAEQcAAAAAAAAAAQAAAAAAAABkAAYAAQAAAAALAQQAAAABgodBhh1mXSVCf4QBEcPDw8OAAAA=", answer: false)
    }

    /// Two GOAWAYs: nghttp2 reported the second only when it came in a later read. Only the
    /// first GOAWAY of a connection is reported now.
    func testFinding8() throws {
        try assertSameWholeOrSplit("IQAAKgQAAAAAAAABAIQQgimVh79EhWAtMwAsyQAAAAAAAAAAAQBSYW5nZUGGHWZdJUJ/ugAACAcAAAAAAAEAhBCCKZWHAAAqBAAAAAAAAAEAhBCCKZWHv0SFYC0zACzJAAAAAAAAAAABAFJhbmdlQYYdZl0lQn+6AAAIBwAAAAAAAQCEEIIplYcAAAAAAAAAAAA=", answer: false)
    }
}
