import TestSupport
import XCTest
@testable import Redaction

/// `FileNumbering` numbers on every core, one shard per core; its numbers must be exactly those of
/// one table fed the same values in the same order.
final class NumberingTests: XCTestCase {
    private func randomGroups(seed: UInt64, groupCount: Int) -> [FileNumbering.Group] {
        var rng = SplitMix64(seed: seed)
        let kinds = ValueKind.allCases
        var groups: [FileNumbering.Group] = []
        for g in 0..<groupCount {
            var values: [(kind: ValueKind, value: String)] = []
            for _ in 0..<Int(rng.next() % 40) {
                let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
                // A small pool, so values repeat within and across groups; mixed case for the
                // kinds compared without case.
                let n = rng.next() % 300
                let value: String
                switch kind {
                case .email: value = (n % 2 == 0 ? "User\(n)" : "user\(n)") + "@mail.test"
                case .card: value = n % 2 == 0 ? "4111 1111 1111 \(1000 + n)" : "411111111111\(1000 + n)"
                case .host: value = "db\(n).corp"
                default: value = "value-\(n)"
                }
                values.append((kind, value))
            }
            // Pass 1 hashes most groups; chased values come without.
            let hashed = g % 3 != 0
            let hashes = hashed ? values.map { PlaceholderTable.hash($0.kind, key: PlaceholderTable.key($0.kind, $0.value)) } : []
            groups.append((values, hashes))
        }
        return groups
    }

    func testShardedNumbersEqualOneTableInOrder() {
        for seed in 1...20 as ClosedRange<UInt64> {
            let groups = randomGroups(seed: seed, groupCount: Int(seed) * 7)
            let reserved: [(ValueKind, Int)] = seed % 2 == 0 ? [(.secret, 41), (.email, 3), (.secret, 7)] : []
            let (numbering, ids, chasedBare) = FileNumbering.number(groups, reserved: reserved)
            var table = PlaceholderTable()
            for (kind, number) in reserved { table.reserve(kind, number) }
            var expectedBare: [String] = []
            for group in groups {
                for (kind, value) in group.values {
                    let before = table.count
                    table.assign(kind, value)
                    if table.count > before, FileNumbering.isChasedBare(kind) { expectedBare.append(value) }
                }
            }
            XCTAssertEqual(ids.count, groups.count)
            for (g, group) in groups.enumerated() {
                XCTAssertEqual(ids[g].count, group.values.count)
                for (k, (kind, value)) in group.values.enumerated() {
                    XCTAssertEqual(numbering.placeholder(ids[g][k]), table.lookup(kind, value), "seed \(seed) \(kind) \(value)")
                    // Pass 2 copies the same bytes from the numbering's compact store.
                    XCTAssertEqual(numbering.withPlaceholderBytes(ids[g][k]) { String(decoding: $0, as: UTF8.self) },
                                   table.lookup(kind, value))
                    XCTAssertEqual(numbering.lookup(kind, value), table.lookup(kind, value))
                    XCTAssertEqual(numbering.id(kind, value), ids[g][k])
                }
            }
            XCTAssertEqual(chasedBare.map(numbering.value), expectedBare, "seed \(seed)")
            XCTAssertNil(numbering.lookup(.secret, "never-seen-value"))
        }
    }

    func testNothingToNumber() {
        let (numbering, ids, chasedBare) = FileNumbering.number([], reserved: [(.secret, 5)])
        XCTAssertTrue(ids.isEmpty)
        XCTAssertTrue(chasedBare.isEmpty)
        XCTAssertNil(numbering.lookup(.secret, "x"))
    }
}
