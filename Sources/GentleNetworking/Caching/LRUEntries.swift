/// Values by key in least-recently-used order, with a running total of their sizes: the
/// bookkeeping of ``InMemoryETagStore`` (entries) and ``DiskETagStore`` (file names and sizes)
/// as a plain value, without locks, I/O or limits of its own.
///
/// Every operation costs O(1) whatever the number of entries: a dictionary maps each key to a
/// slot of one array, and the slots form a doubly linked list from the most to the least recently
/// used (indices, not references, so there is nothing to retain and no cycle). A removed entry's
/// slot is reused by the next insertion. The stores scanned every entry for the least recently
/// used one on each eviction before: O(n) per insertion once full, which a caller raising
/// `maxEntries` to 100,000 would have paid on every new URL.
struct LRUEntries<Value> {
    private struct Slot {
        var key: String
        /// `nil` while the slot is free, so a removed entry's value is released at once.
        var value: Value?
        var size: Int
        /// The slot used just more recently (towards ``newest``); `-1` at the newest.
        var newer: Int
        /// The slot used just less recently (towards ``oldest``); `-1` at the oldest.
        var older: Int
    }

    private var indexByKey: [String: Int] = [:]
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var newest = -1
    private var oldest = -1

    /// The sum of the sizes of the entries held.
    private(set) var totalSize = 0

    /// How many entries are held.
    var count: Int { indexByKey.count }

    /// The value for `key`, marking it the most recently used.
    mutating func value(for key: String) -> Value? {
        guard let index = indexByKey[key] else { return nil }
        moveToNewest(index)
        return slots[index].value
    }

    /// Stores `value` (counted as `size`) under `key` as the most recently used entry, replacing
    /// any entry already there. Evicts nothing: the owner applies its limits with
    /// ``removeOldest()``.
    mutating func set(_ value: Value, size: Int, for key: String) {
        if let index = indexByKey[key] {
            totalSize = Self.saturating(totalSize - slots[index].size, plus: size)
            slots[index].value = value
            slots[index].size = size
            moveToNewest(index)
            return
        }
        let slot = Slot(key: key, value: value, size: size, newer: -1, older: newest)
        let index: Int
        if let free = freeSlots.popLast() {
            index = free
            slots[index] = slot
        } else {
            index = slots.count
            slots.append(slot)
        }
        if newest >= 0 { slots[newest].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
        indexByKey[key] = index
        totalSize = Self.saturating(totalSize, plus: size)
    }

    /// `total + size`, or `Int.max` where that overflows: sizes come from files on disk, where
    /// two sparse files of 5 EiB add up to more than an `Int` holds (a trap before).
    private static func saturating(_ total: Int, plus size: Int) -> Int {
        let (sum, overflow) = total.addingReportingOverflow(size)
        return overflow ? Int.max : sum
    }

    /// Removes the entry for `key`, if any.
    mutating func removeValue(for key: String) {
        guard let index = indexByKey.removeValue(forKey: key) else { return }
        release(index)
    }

    /// Removes the least recently used entry and returns its key; `nil` when there is none.
    @discardableResult
    mutating func removeOldest() -> String? {
        guard oldest >= 0 else { return nil }
        let index = oldest
        let key = slots[index].key
        indexByKey[key] = nil
        release(index)
        return key
    }

    /// Removes every entry, keeping nothing allocated for them.
    mutating func removeAll() {
        self = LRUEntries()
    }

    /// The keys from the most to the least recently used (a broken list would end the walk after
    /// as many steps as there are slots rather than loop).
    var keysByRecency: [String] {
        var keys: [String] = []
        var index = newest
        while index >= 0, keys.count <= slots.count {
            keys.append(slots[index].key)
            index = slots[index].older
        }
        return keys
    }

    /// Takes the slot at `index` out of the list (its key is already out of the dictionary),
    /// drops its value and keeps the slot for reuse.
    private mutating func release(_ index: Int) {
        unlink(index)
        // Never below zero, even after a saturated sum.
        totalSize = max(0, totalSize &- slots[index].size)
        slots[index] = Slot(key: "", value: nil, size: 0, newer: -1, older: -1)
        if indexByKey.isEmpty {
            // Nothing left to link to: start over rather than keep a list of free slots.
            slots.removeAll(keepingCapacity: false)
            freeSlots.removeAll(keepingCapacity: false)
        } else {
            freeSlots.append(index)
        }
    }

    private mutating func moveToNewest(_ index: Int) {
        guard index != newest else { return }
        unlink(index)
        slots[index].older = newest
        slots[index].newer = -1
        if newest >= 0 { slots[newest].newer = index }
        newest = index
        if oldest < 0 { oldest = index }
    }

    private mutating func unlink(_ index: Int) {
        let (newer, older) = (slots[index].newer, slots[index].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[index].newer = -1
        slots[index].older = -1
    }
}
