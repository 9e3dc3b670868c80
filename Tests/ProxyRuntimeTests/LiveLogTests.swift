import ProxyCore
@testable import ProxyRuntime
import Recording
import XCTest

/// The live log's wording, which users read and scripts grep: one line per event.
final class LiveLogTests: XCTestCase {
    private func flow(status: Int?, body: Int, seconds: Double) -> Flow {
        var flow = Flow(id: 1, clientAddress: "127.0.0.1:5000",
                        request: RecordedRequest(method: "GET", url: "http://a.test/x", httpVersion: "HTTP/1.1", fields: [], headSize: 0),
                        instants: FlowInstants(requestStart: 100))
        if let status {
            flow.response = RecordedResponse(status: status, reason: "OK", httpVersion: "HTTP/1.1", fields: [], headSize: 0)
            flow.response?.body = RecordedBody(bytes: [], wireSize: body)
        }
        flow.instants.end = 100 + seconds
        return flow
    }

    private func line(_ kind: LiveEvent.Kind) -> String { LiveLog.line(LiveEvent(client: "127.0.0.1:5000", kind)) }

    func testExchangesAndFailures() {
        XCTAssertEqual(line(.exchange(flow(status: 200, body: 2, seconds: 0.25))), "127.0.0.1:5000 GET http://a.test/x 200 2B 250.0ms")
        XCTAssertEqual(line(.exchange(flow(status: 200, body: 3 << 20, seconds: 2))), "127.0.0.1:5000 GET http://a.test/x 200 3.0MB 2.0s")
        XCTAssertEqual(line(.exchangeFailed(flow(status: 200, body: 1536, seconds: 1.5), status: 502, reason: "upstream closed the connection mid-body", cut: true)),
                       "127.0.0.1:5000 GET http://a.test/x 200 1.5kB 1.5s cut: upstream closed the connection mid-body")
        XCTAssertEqual(line(.exchangeFailed(flow(status: nil, body: 0, seconds: 1), status: 504, reason: "upstream sent nothing for 120 s", cut: false)),
                       "127.0.0.1:5000 GET http://a.test/x 504 error: upstream sent nothing for 120 s")
        XCTAssertEqual(line(.exchangeFailed(flow(status: nil, body: 0, seconds: 1), status: nil, reason: "client connection failed", cut: false)),
                       "127.0.0.1:5000 GET http://a.test/x - error: client connection failed")
    }

    private func encoded(_ coding: String, _ bytes: [UInt8], wireSize: Int? = nil) -> Flow {
        var flow = flow(status: 200, body: 0, seconds: 0.5)
        flow.response?.fields = [RecordedField(name: "Content-Encoding", value: coding)]
        flow.response?.body = RecordedBody(bytes: bytes, wireSize: wireSize ?? bytes.count)
        return flow
    }

    /// An encoded body shows its decoded size beside the wire size; identity, unknown codings,
    /// truncated and corrupt bodies show the wire size alone.
    func testDecodedSizeBesideTheWireSize() {
        let gzip: [UInt8] = [31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 75, 76, 28, 5, 163, 96, 20, 12, 119, 0, 0, 3, 218, 56, 154, 232, 3, 0, 0] // 1,000 x "a"
        let brotli: [UInt8] = [27, 207, 7, 248, 37, 196, 194, 177, 64, 32, 113] // 2,000 x "b"
        XCTAssertEqual(line(.exchange(encoded("gzip", gzip))), "127.0.0.1:5000 GET http://a.test/x 200 29B (1000B decoded) 500.0ms")
        XCTAssertEqual(line(.exchange(encoded("br", brotli))), "127.0.0.1:5000 GET http://a.test/x 200 11B (2.0kB decoded) 500.0ms")
        XCTAssertEqual(line(.exchange(encoded("identity", gzip))), "127.0.0.1:5000 GET http://a.test/x 200 29B 500.0ms")
        XCTAssertEqual(line(.exchange(encoded("compress", gzip))), "127.0.0.1:5000 GET http://a.test/x 200 29B 500.0ms")
        XCTAssertEqual(line(.exchange(encoded("gzip", Array(gzip.prefix(20))))), "127.0.0.1:5000 GET http://a.test/x 200 20B 500.0ms",
                       "a corrupt or cut body has no decoded size")
        XCTAssertEqual(line(.exchange(encoded("gzip", gzip, wireSize: 100))), "127.0.0.1:5000 GET http://a.test/x 200 100B 500.0ms",
                       "a truncated recording has no decoded size")
        // Past the decoding limit, gzip's trailer (ISIZE) gives the size without decoding.
        var big = [UInt8](repeating: 0, count: LiveLog.maximumDecodedForLog + 10)
        big[0] = 31; big[1] = 139
        let isize = 5 << 20
        for i in 0..<4 { big[big.count - 4 + i] = UInt8((isize >> (8 * i)) & 0xFF) }
        XCTAssertEqual(line(.exchange(encoded("gzip", big))), "127.0.0.1:5000 GET http://a.test/x 200 1.0MB (5.0MB decoded) 500.0ms")
        XCTAssertEqual(line(.exchange(encoded("br", big))), "127.0.0.1:5000 GET http://a.test/x 200 1.0MB 500.0ms",
                       "a large body of another coding is not decoded on the loop")
        // A body that went to the journal in parts: the flow keeps its end, where gzip's trailer is;
        // of another coding, nothing is learned (the end alone does not decode).
        var streamed = encoded("gzip", Array(big.suffix(1_000)), wireSize: 3 << 20)
        streamed.response?.body.streamed = (3 << 20) - 1_000
        XCTAssertEqual(line(.exchange(streamed)), "127.0.0.1:5000 GET http://a.test/x 200 3.0MB (5.0MB decoded) 500.0ms")
        var tail = encoded("gzip", Array(gzip.suffix(10)), wireSize: gzip.count)
        tail.response?.body.streamed = gzip.count - 10
        XCTAssertEqual(line(.exchange(tail)), "127.0.0.1:5000 GET http://a.test/x 200 29B (1000B decoded) 500.0ms",
                       "a small end is not decoded as a body")
    }

    func testConnectionEvents() {
        XCTAssertEqual(line(.tunnel(ProxyTarget(host: "a.test", port: 443))), "127.0.0.1:5000 tunnel a.test:443")
        XCTAssertEqual(line(.rejected(status: 408, reason: "the request head did not complete within 30 s")),
                       "127.0.0.1:5000 408 the request head did not complete within 30 s")
        XCTAssertEqual(line(.handshakeTimeout(seconds: 15)), "127.0.0.1:5000 closed: no complete proxy handshake within 15 s")
        XCTAssertEqual(line(.proxyAuthenticationRequired(method: "GET")), "127.0.0.1:5000 GET 407 proxy authentication required")
        XCTAssertTrue(line(.clientTLSFailed(host: "a.test", message: "alert 48", rejectedCertificate: true)).hasSuffix("install the CA: harrec ca show"))
    }
}
