/// Entries held between two passes over a log: one slot per entry, each put and taken once, from
/// any thread (distinct slots need no lock). An empty slot takes a pointer, not an entry's worth
/// of bytes: a million slots take 8 MB however few entries are kept, where entries in place
/// (about 800 bytes each) took 800 MB before any was kept.
public final class EntrySlots: @unchecked Sendable {
    /// An entry kept in a slot.
    private final class Kept {
        let entry: HAREntry
        init(_ entry: HAREntry) { self.entry = entry }
    }

    private let slots: UnsafeMutablePointer<Kept?>
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

    public func put(_ entry: HAREntry, at i: Int) { slots[i] = Kept(entry) }

    /// The entry put at `i`, if any; the slot is empty after.
    public func take(_ i: Int) -> HAREntry? {
        defer { slots[i] = nil }
        return slots[i]?.entry
    }
}
