/// A fixed-capacity ring of records, oldest first; appending to a full ring overwrites the oldest.
struct RecordRing: Sendable {
    private var storage: [StoredRecord]
    private var head = 0
    private(set) var count = 0
    let capacity: Int
    /// The largest ring allocated (72 MB of records), whatever capacity is asked for.
    static let maximumCapacity = 1_000_000

    init(capacity: Int) {
        self.capacity = min(max(capacity, 1), Self.maximumCapacity)
        storage = Array(repeating: RecordRing.placeholder, count: self.capacity)
    }

    /// Appends `record`; returns true when an older record was overwritten.
    mutating func append(_ record: StoredRecord) -> Bool {
        if count == capacity {
            storage[head] = record
            head = (head + 1) % capacity
            return true
        }
        storage[(head + count) % capacity] = record
        count += 1
        return false
    }

    /// Drops records older than `cutoff` from the front; returns how many.
    mutating func removeOlder(thanNanoseconds cutoff: Int64) -> Int {
        var removed = 0
        while count > 0 && storage[head].timeNanoseconds < cutoff {
            storage[head] = RecordRing.placeholder
            head = (head + 1) % capacity
            count -= 1
            removed += 1
        }
        return removed
    }

    mutating func removeAll() {
        for index in storage.indices { storage[index] = RecordRing.placeholder }
        head = 0
        count = 0
    }

    /// The records, oldest first.
    func forEach(_ body: (StoredRecord) -> Void) {
        for offset in 0..<count { body(storage[(head + offset) % capacity]) }
    }

    /// Bytes held by the ring: its inline storage plus the heap storage of every detail string.
    var footprintBytes: Int {
        var bytes = storage.capacity * MemoryLayout<StoredRecord>.stride
        forEach { bytes += StoredRecord.heapBytes(of: $0.detail) }
        return bytes
    }

    static let placeholder = StoredRecord(
        timeNanoseconds: 0, durationNanoseconds: StoredRecord.noneDuration,
        openForNanoseconds: StoredRecord.noneDuration, detail: nil, attempt: 0, count: StoredRecord.none32,
        total: StoredRecord.none32, kind: 0, key: 0, operation: 0, category: 0, code: 0, httpStatus: 0,
        fromState: StoredRecord.noState, toState: StoredRecord.noState)
}
