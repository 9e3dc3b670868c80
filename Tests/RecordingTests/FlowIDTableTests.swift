import XCTest
@testable import Recording

final class FlowIDTableTests: XCTestCase {
    /// Ids as a recording makes them (dense, finishing out of order), replay's ids far above,
    /// and removal: every lookup agrees with a dictionary given the same operations.
    func testAgreesWithADictionary() {
        var table = FlowIDTable()
        var reference: [UInt64: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        var row = 0
        func set(_ id: UInt64, _ value: Int?) {
            table[id] = value
            reference[id] = value
        }
        for id in (UInt64(1)...5000).shuffled(using: &generator) where id % 7 != 0 {
            set(id, row); row += 1
        }
        for k in 0..<100 { set((1 << 62) + UInt64(k), row); row += 1 }
        set(UInt64(6000) + FlowIDTable.slack * 3, row); row += 1  // far ahead: sparse
        set(UInt64.max, row); row += 1
        for id in stride(from: UInt64(3), to: 5000, by: 11) { set(id, nil) }
        set((1 << 62) + 5, nil)
        set(4, 123_456)
        let probes = Array(reference.keys) + [0, 7, 14, 4999, 5001, 70_000, (1 << 62) + 100, UInt64.max - 1]
        for id in probes {
            XCTAssertEqual(table[id], reference[id], "id \(id)")
        }
    }

    /// An id stored while far ahead, then again once the flat array reached it, is found at its
    /// newest row, and removing it leaves no stale row behind.
    func testAnIdStoredSparselyThenDenselyKeepsOneRow() {
        var table = FlowIDTable()
        let far = FlowIDTable.slack + 10
        table[far] = 1
        for id in UInt64(1)...far - 1 { table[id] = Int(id) + 10 }
        table[far] = 2
        XCTAssertEqual(table[far], 2)
        table[far] = nil
        XCTAssertNil(table[far])
        XCTAssertEqual(table[5], 15)
    }
}
