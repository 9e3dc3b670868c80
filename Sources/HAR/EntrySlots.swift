/// Entries held between two passes over a log: one slot per entry, each put and taken once, from
/// any thread (distinct slots need no lock).
public final class EntrySlots: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<HAREntry?>
    private let count: Int

    public init(count: Int) {
        self.count = count
        slots = .allocate(capacity: max(1, count))
        slots.initialize(repeating: nil, count: max(1, count))
    }

    deinit {
        slots.deinitialize(count: max(1, count))
        slots.deallocate()
    }

    public func put(_ entry: HAREntry, at i: Int) { slots[i] = entry }

    /// The entry put at `i`, if any; the slot is empty after.
    public func take(_ i: Int) -> HAREntry? {
        defer { slots[i] = nil }
        return slots[i]
    }
}
