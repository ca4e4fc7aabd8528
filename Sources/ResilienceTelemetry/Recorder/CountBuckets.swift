/// Counters over a bounded span of recent time, in fixed time buckets: `slotCount` slots of `fields` counters
/// each, the slot of bucket `index` (time ÷ bucket width, rounded down) being `index` modulo `slotCount`.
///
/// It remembers the newest bucket counted (`newest`); every slot holds the bucket in the `slotCount` ending there
/// that maps to it. Counting a newer bucket first clears the slots of the buckets skipped on the way (at most
/// `slotCount`, each once); a time older than the buckets held is dropped. So adding is O(1) (amortised: a
/// bucket is cleared once) and memory is fixed whatever the event rate.
struct CountBuckets: Sendable {
    /// Buckets per span, plus one for the bucket in progress, so a whole span ending now is always held.
    static let slotCount = 61

    let fields: Int
    /// The newest bucket counted, or `Int64.min` before any.
    private(set) var newest = Int64.min
    /// `slotCount × fields` counters, slot-major. (A bucket is at most a minute, so 32 bits never wrap.)
    private(set) var values: [UInt32]

    init(fields: Int) {
        self.fields = fields
        values = Array(repeating: 0, count: Self.slotCount * fields)
    }

    /// The slot for bucket `index`: consecutive indexes use distinct slots.
    static func slot(_ index: Int64) -> Int {
        let remainder = Int(index % Int64(slotCount))
        return remainder < 0 ? remainder + slotCount : remainder
    }

    /// The bucket index of `nanoseconds` for buckets `width` nanoseconds wide (rounded down).
    static func index(_ nanoseconds: Int64, width: Int64) -> Int64 {
        let quotient = nanoseconds / width
        return nanoseconds % width < 0 ? quotient - 1 : quotient
    }

    /// Whether bucket `index` is one of those held: the `slotCount` ending at `newest`.
    func holds(_ index: Int64) -> Bool {
        guard index <= newest, newest != Int64.min else { return false }
        let (age, overflow) = newest.subtractingReportingOverflow(index)
        return !overflow && age < Int64(Self.slotCount)
    }

    /// The position of bucket `index`'s first counter, after clearing the slots of the buckets between `newest`
    /// and it when it is newer; `nil` when it is older than the buckets held.
    @inline(__always)
    private mutating func base(for index: Int64) -> Int? {
        if index > newest {
            let (gap, overflow) = index.subtractingReportingOverflow(newest)
            if newest == Int64.min || overflow || gap >= Int64(Self.slotCount) {
                for position in values.indices { values[position] = 0 }
            } else {
                var skipped = newest
                while skipped < index {
                    skipped += 1
                    let base = Self.slot(skipped) * fields
                    for field in 0..<fields { values[base + field] = 0 }
                }
            }
            newest = index
        } else if !holds(index) {
            return nil
        }
        return Self.slot(index) * fields
    }

    /// Adds one to `field` of bucket `index`.
    @inline(__always)
    mutating func increment(_ field: Int, at index: Int64) {
        if let base = base(for: index) { values[base + field] &+= 1 }
    }

    /// Adds one to `field` and, when `also` is true, to `otherField` of bucket `index`.
    @inline(__always)
    mutating func increment(_ field: Int, and otherField: Int, if also: Bool, at index: Int64) {
        guard let base = base(for: index) else { return }
        values[base + field] &+= 1
        if also { values[base + otherField] &+= 1 }
    }

    /// The counter `field` of bucket `index`, or zero when that bucket is not held.
    func value(_ field: Int, at index: Int64) -> UInt64 {
        holds(index) ? UInt64(values[Self.slot(index) * fields + field]) : 0
    }

    /// The sum of counter `field` over buckets `range` (only the held ones count).
    func sum(_ field: Int, over range: ClosedRange<Int64>) -> UInt64 {
        var total: UInt64 = 0
        for index in range { total &+= value(field, at: index) }
        return total
    }

    /// Forgets every count.
    mutating func removeAll() {
        newest = Int64.min
        for position in values.indices { values[position] = 0 }
    }
}
