import HAR
import Synchronization

/// Entries kept between the passes of a two-pass export, each put and taken once, from any
/// thread, within a byte budget.
final class KeptEntries: @unchecked Sendable {
    private let slots: EntrySlots
    private let budget: Int
    private let used = Mutex<Int>(0)

    init(count: Int, budget: Int) {
        slots = EntrySlots(count: count)
        self.budget = budget
    }

    /// Keeps `entry` when it and `heldBytes` (held for it elsewhere) fit in what is left of the
    /// budget; whether it did.
    @discardableResult
    func keep(_ entry: HAREntry, at i: Int, heldBytes: Int = 0) -> Bool {
        let size = Self.approximateBytes(entry) + heldBytes
        let fits = used.withLock { used -> Bool in
            guard used + size <= budget else { return false }
            used += size
            return true
        }
        if fits { slots.put(entry, at: i) }
        return fits
    }

    func take(_ i: Int) -> HAREntry? { slots.take(i) }

    /// Bodies, form parameters and WebSocket messages, plus a little for everything else.
    static func approximateBytes(_ entry: HAREntry) -> Int {
        var n = 2048 + (entry.request.postData?.text?.utf8.count ?? 0) + (entry.response.content.text?.utf8.count ?? 0)
        for param in entry.request.postData?.params ?? [] { n += 64 + param.name.utf8.count + (param.value?.utf8.count ?? 0) }
        for field in entry.custom {
            if case .array(let messages) = field.value {
                for m in messages { n += 64 + (m["data"]?.stringValue?.utf8.count ?? 0) }
            }
        }
        return n
    }
}
