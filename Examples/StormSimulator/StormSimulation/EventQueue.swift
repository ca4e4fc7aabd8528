/// A binary min-heap of timed events; ties are broken by insertion order, so a run is deterministic.
struct EventQueue<Payload> {
    private struct Entry {
        var time: Nanoseconds
        var sequence: UInt64
        var payload: Payload

        func precedes(_ other: Entry) -> Bool {
            time < other.time || (time == other.time && sequence < other.sequence)
        }
    }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    /// The number of pending events.
    var count: Int { heap.count }

    /// True when no event is pending.
    var isEmpty: Bool { heap.isEmpty }

    /// Schedules `payload` at `time`.
    mutating func schedule(_ payload: Payload, at time: Nanoseconds) {
        heap.append(Entry(time: time, sequence: nextSequence, payload: payload))
        nextSequence &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest event.
    mutating func popFirst() -> (time: Nanoseconds, payload: Payload)? {
        guard !heap.isEmpty else { return nil }
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.time, first.payload)
    }
}
