#if canImport(Glibc)
import Glibc
private let streamType = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private let streamType = SOCK_STREAM
#endif
import XCTest
@testable import ProxyRuntime

final class OutputQueueTests: XCTestCase {
    /// Everything the queue would hand to one write, concatenated.
    private func unwritten(_ queue: OutputQueue) -> [UInt8] {
        queue.withUnwrittenRegions { regions in regions.flatMap { Array($0) } }
    }

    private func regionCount(_ queue: OutputQueue) -> Int {
        queue.withUnwrittenRegions { $0.count }
    }

    func testSmallChunksMergeAndLargeOnesStayApart() {
        var queue = OutputQueue()
        queue.append(Array("HTTP/1.1 200 OK\r\n".utf8))
        queue.append(Array("Content-Length: 5\r\n\r\n".utf8))
        XCTAssertEqual(regionCount(queue), 1, "two small chunks become one region")
        let body = [UInt8](repeating: 7, count: OutputQueue.mergeLimit)
        queue.append(body)
        queue.append([])
        XCTAssertEqual(regionCount(queue), 2, "a chunk at the merge limit is queued as it is; an empty one is ignored")
        XCTAssertEqual(queue.count, 17 + 21 + body.count)
        XCTAssertEqual(unwritten(queue), Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8) + body)
    }

    func testConsumeWalksAcrossChunksInAnySteps() {
        var queue = OutputQueue()
        var expected: [UInt8] = []
        for i in 0..<5 {
            let chunk = [UInt8](repeating: UInt8(i), count: OutputQueue.mergeLimit + i * 1000)
            queue.append(chunk)
            expected += chunk
        }
        var written: [UInt8] = []
        var step = 1
        while !queue.isEmpty {
            let regions = unwritten(queue)
            XCTAssertEqual(regions, Array(expected[written.count...]), "after \(written.count) bytes")
            let n = min(step, queue.count)
            written += regions.prefix(n)
            queue.consume(n)
            step = step * 3 + 1
        }
        XCTAssertEqual(written, expected)
        XCTAssertEqual(regionCount(queue), 0)
        queue.append([1, 2, 3])
        XCTAssertEqual(unwritten(queue), [1, 2, 3], "the queue is reusable after draining")
    }

    func testOneWriteTakesAtMostMaximumRegions() {
        var queue = OutputQueue()
        let chunk = [UInt8](repeating: 1, count: OutputQueue.mergeLimit)
        for _ in 0..<(OutputQueue.maximumRegions + 5) { queue.append(chunk) }
        XCTAssertEqual(regionCount(queue), OutputQueue.maximumRegions)
        queue.consume(chunk.count * OutputQueue.maximumRegions)
        XCTAssertEqual(regionCount(queue), 5)
        queue.removeAll()
        XCTAssertTrue(queue.isEmpty)
        XCTAssertEqual(regionCount(queue), 0)
    }

    func testManyChunksStayBounded() {
        // A long-lived connection queues and writes chunk after chunk; consumed chunks must not pile up.
        var queue = OutputQueue()
        let chunk = [UInt8](repeating: 9, count: OutputQueue.mergeLimit)
        queue.append(chunk)
        for _ in 0..<1000 {
            queue.append(chunk)
            queue.append(chunk)
            queue.consume(chunk.count + 10)
            queue.consume(chunk.count - 10)
            XCTAssertLessThanOrEqual(queue.storedChunkCount, 66, "written chunks are dropped from the list")
        }
        XCTAssertEqual(queue.count, chunk.count)
    }

    /// A real gathered write through a socket pair: the peer reads the regions in order.
    func testGatherSendWritesRegionsInOrder() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, streamType, 0, &fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        var queue = OutputQueue()
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 6000\r\n\r\n".utf8)
        let body = (0..<6000).map { UInt8($0 % 251) }
        queue.append(head)
        queue.append(body)
        let written = queue.withUnwrittenRegions { gatherSend(fds[0], $0) }
        XCTAssertEqual(written, head.count + body.count)
        queue.consume(written)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < written {
            let n = buffer.withUnsafeMutableBytes { read(fds[1], $0.baseAddress, $0.count) }
            XCTAssertGreaterThan(n, 0)
            received += buffer.prefix(n)
        }
        XCTAssertEqual(received, head + body)
        XCTAssertTrue(queue.isEmpty)
    }
}
