import Foundation
import HTTP1
@testable import HTTP2
import XCTest

/// HTTP2Connection against an implementation that is not nghttp2: python's `h2` client
/// (Peers/h2_client.py), frames passed through pipes. Three streams: a GET, a POST with a body in
/// two DATA frames, and a gRPC-style POST with request trailers, answered with bodies and
/// response trailers.
final class HTTP2PeerTests: XCTestCase {
    func testPythonH2Client() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/h2_client.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let toPeer = Pipe(), fromPeer = Pipe()
        process.standardInput = toPeer
        process.standardOutput = fromPeer
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var reader = LineReader(handle: fromPeer.fileHandleForReading)

        let server = try HTTP2Connection(role: .server)
        var heads: [Int32: [HTTPField]] = [:], bodies: [Int32: [UInt8]] = [:], trailers: [Int32: [HTTPField]] = [:]
        var ended: Set<Int32> = []
        var result: String?
        for _ in 0..<50 {
            guard let line = reader.next() else { break }
            if line.hasPrefix("RESULT ") { result = String(line.dropFirst(7)); break }
            let bytes = try XCTUnwrap(hexBytes(line))
            try bytes.withUnsafeBytes { try server.receive($0) }
            while let event = server.nextEvent() {
                switch event {
                case .headers(let id, let fields, _): heads[id] = fields
                case .data(let id, let chunk):
                    bodies[id, default: []] += chunk
                    server.consumed(chunk.count, on: id)
                case .trailers(let id, let fields): trailers[id] = fields
                case .endStream(let id):
                    ended.insert(id)
                    try server.sendResponse([HTTPField(name: ":status", value: "200"), HTTPField(name: "content-type", value: "text/plain")],
                                            on: id, endStream: false)
                    server.sendData(Array("stream \(id): ".utf8) + (bodies[id] ?? []), on: id, end: true,
                                    trailers: id == 5 ? [HTTPField(name: "grpc-status", value: "0")] : nil)
                default: break
                }
            }
            let out = server.takeOutput()
            toPeer.fileHandleForWriting.write(Data((out.map { String(format: "%02x", $0) }.joined() + "\n").utf8))
        }
        XCTAssertEqual(heads[1]?.map(\.name), [":method", ":scheme", ":authority", ":path", "accept"])
        XCTAssertEqual(heads[1]?.first { $0.name == ":path" }?.value, "/a?x=1")
        XCTAssertEqual(bodies[3], Array(#"{"items": [1, 2, 3]}"#.utf8))
        XCTAssertEqual(bodies[5], [0, 0, 0, 0, 2] + Array("hi".utf8))
        XCTAssertEqual(trailers[5], [HTTPField(name: "grpc-timeout", value: "1S")])
        XCTAssertEqual(ended, [1, 3, 5])

        let json = try XCTUnwrap(result, "the peer printed no result")
        let got = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: [String: Any]])
        for id in [1, 3, 5] {
            let stream = try XCTUnwrap(got["\(id)"], "stream \(id) got no response")
            XCTAssertEqual((stream["headers"] as? [[String]])?.first, [":status", "200"])
            XCTAssertEqual(stream["ended"] as? Bool, true)
            let body = try XCTUnwrap(hexBytes(stream["body"] as? String ?? ""))
            XCTAssertEqual(body, Array("stream \(id): ".utf8) + (bodies[Int32(id)] ?? []))
        }
        XCTAssertEqual(got["5"]?["trailers"] as? [[String]], [["grpc-status", "0"]])
        XCTAssertNil(got["1"]?["trailers"])
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    private func hexBytes(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let byte = UInt8(String(decoding: chars[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
            i += 2
        }
        return out
    }
}

/// Lines from a pipe.
private struct LineReader {
    let handle: FileHandle
    var buffer: [UInt8] = []

    init(handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer += chunk
        }
    }
}
