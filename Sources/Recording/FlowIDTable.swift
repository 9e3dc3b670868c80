/// Flow id to a row number (an index into its owner's list). Flow ids come from one counter per
/// process, from 1, and flows finish roughly in that order, so almost every id lands in a flat
/// array indexed by id: a lookup or an insert on the recording path hashes nothing. An id far
/// beyond that array (a replay's answers, a journal read back from another process) goes to a
/// dictionary, so a stray large id never allocates a huge array.
public struct FlowIDTable: Sendable {
    /// Row + 1 per id; 0 for an id with no row (a flow not recorded, or not yet).
    private var dense: [Int32] = []
    private var sparse: [UInt64: Int32] = [:]
    /// The smallest id ever stored sparsely: ids below it are never looked for there.
    private var sparseFloor = UInt64.max

    /// How far past the flat array an id may land and still grow it: ids handed out but not yet
    /// recorded, for flows in flight.
    static let slack: UInt64 = 1 << 16

    public init() {}

    public subscript(id: UInt64) -> Int? {
        get {
            if id < UInt64(dense.count) {
                let stored = dense[Int(id)]
                if stored > 0 { return Int(stored) - 1 }
            }
            return id >= sparseFloor ? sparse[id].map(Int.init) : nil
        }
        set {
            if id < UInt64(dense.count) + Self.slack {
                if id >= UInt64(dense.count) {
                    if newValue == nil { return }
                    dense.append(contentsOf: repeatElement(0, count: Int(id) + 1 - dense.count))
                }
                dense[Int(id)] = newValue.map { Int32($0 + 1) } ?? 0
                // An id once stored sparsely (it was far ahead then) lives in one place only.
                if id >= sparseFloor { sparse[id] = nil }
            } else {
                sparseFloor = min(sparseFloor, id)
                sparse[id] = newValue.map { Int32($0) }
            }
        }
    }
}
