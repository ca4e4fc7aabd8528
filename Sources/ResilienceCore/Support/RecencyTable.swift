/// A dictionary that also keeps its keys in order, oldest first: O(1) lookup, insertion as the newest, removal
/// of any key and removal of the oldest.
///
/// The order is a doubly linked list threaded through an array of links, so no operation scans; the slots of
/// removed keys are reused, so the array never holds more links than the table ever held keys at once. The
/// bounded tables of the library (least recently used first) keep their entries in one.
package struct RecencyTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Slot: Sendable {
        var value: Value
        var index: Int
    }

    private struct Link: Sendable {
        var key: Key
        var older: Int
        var newer: Int
    }

    private var slots: [Key: Slot] = [:]
    private var links: [Link] = []
    private var freeIndices: [Int] = []
    private var oldestIndex = -1
    private var newestIndex = -1

    /// Creates an empty table.
    package init() {}

    /// How many keys the table holds.
    package var count: Int { slots.count }

    /// The keys the table holds, in no particular order.
    package var keys: [Key] { Array(slots.keys) }

    /// The value stored for `key`, if any.
    package subscript(key: Key) -> Value? { slots[key]?.value }

    /// Replaces the value of a key the table holds, leaving its place in the order; does nothing otherwise.
    package mutating func update(_ value: Value, for key: Key) {
        slots[key]?.value = value
    }

    /// Stores `value` for `key` as the newest entry, moving the key there if the table held it.
    package mutating func setNewest(_ value: Value, for key: Key) {
        if let slot = slots[key] {
            unlink(slot.index)
            link(slot.index)
            slots[key] = Slot(value: value, index: slot.index)
            return
        }
        let index: Int
        if let free = freeIndices.popLast() {
            index = free
            links[index].key = key
        } else {
            index = links.count
            links.append(Link(key: key, older: -1, newer: -1))
        }
        link(index)
        slots[key] = Slot(value: value, index: index)
    }

    /// Removes `key` and returns its value, or `nil` when the table did not hold it.
    @discardableResult
    package mutating func removeValue(for key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        unlink(slot.index)
        freeIndices.append(slot.index)
        return slot.value
    }

    /// Removes the oldest entry and returns it, or `nil` when the table is empty.
    @discardableResult
    package mutating func removeOldest() -> (key: Key, value: Value)? {
        guard oldestIndex >= 0 else { return nil }
        let key = links[oldestIndex].key
        guard let value = removeValue(for: key) else { return nil }
        return (key, value)
    }

    /// The oldest key and its value, or `nil` when the table is empty.
    package var oldest: (key: Key, value: Value)? {
        guard oldestIndex >= 0 else { return nil }
        let key = links[oldestIndex].key
        return slots[key].map { (key, $0.value) }
    }

    /// Removes every key for which `shouldRemove` is true (a scan of the whole table); the rest keep their order.
    package mutating func removeAll(where shouldRemove: (Key) -> Bool) {
        for key in slots.keys where shouldRemove(key) { removeValue(for: key) }
    }

    /// Removes every key.
    package mutating func removeAll() {
        self = RecencyTable()
    }

    private mutating func unlink(_ index: Int) {
        let older = links[index].older
        let newer = links[index].newer
        if older >= 0 { links[older].newer = newer } else { oldestIndex = newer }
        if newer >= 0 { links[newer].older = older } else { newestIndex = older }
    }

    private mutating func link(_ index: Int) {
        links[index].older = newestIndex
        links[index].newer = -1
        if newestIndex >= 0 { links[newestIndex].newer = index } else { oldestIndex = index }
        newestIndex = index
    }
}
