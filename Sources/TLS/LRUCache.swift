/// A bounded least-recently-used cache: O(1) lookup, insert and eviction, with the recency list
/// kept as indices into one array (no per-node allocation). Not thread-safe; wrap it in a Mutex.
struct LRUCache<Key: Hashable, Value> {
    private struct Node {
        var key: Key
        var value: Value
        var previous: Int  // towards most recent; -1 at the head
        var next: Int      // towards least recent; -1 at the tail
    }

    let capacity: Int
    private var nodes: [Node] = []
    private var index: [Key: Int] = [:]
    private var head = -1  // most recently used
    private var tail = -1  // least recently used

    /// - Parameter capacity: maximum number of entries, at least 1.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { index.count }

    /// Keys from most to least recently used (for tests and diagnostics).
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var cursor = head
        while cursor >= 0 {
            keys.append(nodes[cursor].key)
            cursor = nodes[cursor].next
        }
        return keys
    }

    /// Returns the value and marks it most recently used.
    mutating func value(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return nodes[slot].value
    }

    /// Inserts or replaces a value, marking it most recently used; evicts the least recently
    /// used entry when full. Returns the evicted key, if any.
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key) -> Key? {
        if let slot = index[key] {
            nodes[slot].value = value
            moveToFront(slot)
            return nil
        }
        if nodes.count < capacity {
            nodes.append(Node(key: key, value: value, previous: -1, next: -1))
            let slot = nodes.count - 1
            index[key] = slot
            linkAtFront(slot)
            return nil
        }
        // Reuse the tail's slot.
        let slot = tail
        let evicted = nodes[slot].key
        unlink(slot)
        index[evicted] = nil
        nodes[slot] = Node(key: key, value: value, previous: -1, next: -1)
        index[key] = slot
        linkAtFront(slot)
        return evicted
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        linkAtFront(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let previous = nodes[slot].previous
        let next = nodes[slot].next
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
        nodes[slot].previous = -1
        nodes[slot].next = -1
    }

    private mutating func linkAtFront(_ slot: Int) {
        nodes[slot].previous = -1
        nodes[slot].next = head
        if head >= 0 { nodes[head].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}
