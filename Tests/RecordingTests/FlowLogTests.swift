import Dispatch
@testable import Recording
import Synchronization
import XCTest

final class FlowLogTests: XCTestCase {
    private static func flow(_ id: UInt64) -> Flow {
        let request = RecordedRequest(method: "GET", url: "http://a.test/\(id)", httpVersion: "HTTP/1.1",
                                      fields: [], headSize: 20)
        return Flow(id: id, clientAddress: "127.0.0.1:1", request: request,
                    instants: FlowInstants(requestStart: Double(id)))
    }

    /// Across several chunk boundaries (and exactly on one), every flow comes back once, in order.
    func testAppendOrderAcrossChunks() {
        let chunk = FlowLog.chunkCapacity
        for total in [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk, 3 * chunk + 17] {
            let log = FlowLog()
            for id in 0..<UInt64(total) { log.record(Self.flow(id)) }
            XCTAssertEqual(log.count, total)
            XCTAssertEqual(log.snapshot().map(\.id), Array(0..<UInt64(total)), "snapshot of \(total)")
            // A snapshot leaves the log as it was.
            XCTAssertEqual(log.count, total)
            XCTAssertEqual(log.takeAll().map(\.id), Array(0..<UInt64(total)), "takeAll of \(total)")
            XCTAssertEqual(log.count, 0)
            XCTAssertTrue(log.takeAll().isEmpty)
        }
    }

    /// Recording goes on after takeAll, starting from an empty log.
    func testRecordingAfterTakeAll() {
        let log = FlowLog()
        for id in 0..<5 { log.record(Self.flow(UInt64(id))) }
        _ = log.takeAll()
        log.record(Self.flow(99))
        XCTAssertEqual(log.snapshot().map(\.id), [99])
    }

    /// Many threads append at once (as the event loops do): nothing is lost or doubled, each
    /// thread's flows keep their order, and observers see every flow once.
    func testConcurrentAppends() {
        let log = FlowLog()
        let observed = Mutex<[UInt64]>([])
        log.observe { flow in observed.withLock { $0.append(flow.id) } }
        let threads = 4
        let perThread = FlowLog.chunkCapacity + 500
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                log.record(Self.flow(UInt64(thread * 1_000_000 + index)))
            }
        }
        let ids = log.takeAll().map(\.id)
        XCTAssertEqual(ids.count, threads * perThread)
        XCTAssertEqual(Set(ids).count, ids.count)
        for thread in 0..<threads {
            let own = ids.filter { $0 / 1_000_000 == UInt64(thread) }
            XCTAssertEqual(own, (0..<perThread).map { UInt64(thread * 1_000_000 + $0) })
        }
        XCTAssertEqual(observed.withLock { $0 }.sorted(), ids.sorted())
    }
}
