/// Counts calls, failures and slow calls over a count- or time-based sliding window.
///
/// Storage is allocated once, at creation; recording never allocates.
struct OutcomeWindow: Sendable {
    struct Totals: Hashable, Sendable {
        var calls = 0
        var failures = 0
        var slow = 0
    }

    private struct Bucket: Sendable {
        var epoch: Int64 = .min
        var totals = Totals()
    }

    private static let failureFlag: UInt8 = 1
    private static let slowFlag: UInt8 = 2

    /// The nanoseconds one time slice covers; `nil` for a count window.
    private let sliceWidth: Int64?
    /// A count window's last calls, one flag byte each, in a ring (empty for a time window).
    private var flags: [UInt8]
    /// Where the ring writes next, and how many of its entries hold a call.
    private var next = 0
    private var filled = 0
    /// A count window's totals over the ring.
    private var ringTotals = Totals()
    /// A time window's slices, each stamped with the slice (epoch) it counts (empty for a count window).
    private var buckets: [Bucket]

    init(_ window: FailureRatioBreaker.Window) {
        switch window {
        case .count(let calls):
            sliceWidth = nil
            flags = Array(repeating: 0, count: min(max(1, calls), FailureRatioBreaker.Window.maximumCalls))
            buckets = []
        case .time(let duration, let slices):
            let count = max(1, min(slices, 1000))
            sliceWidth = max(1, DurationArithmetic.nanoseconds(duration) / Int64(count))
            flags = []
            buckets = Array(repeating: Bucket(), count: count)
        }
    }

    /// Counts one call. The arrays are stored properties, changed in place: recording neither copies nor
    /// retains them.
    mutating func record(failure: Bool, slow: Bool, now: ResilienceInstant) {
        let entry = (failure ? Self.failureFlag : 0) | (slow ? Self.slowFlag : 0)
        guard let sliceWidth else {
            if filled == flags.count {
                let old = flags[next]
                ringTotals.calls -= 1
                if old & Self.failureFlag != 0 { ringTotals.failures -= 1 }
                if old & Self.slowFlag != 0 { ringTotals.slow -= 1 }
            } else {
                filled += 1
            }
            flags[next] = entry
            ringTotals.add(entry)
            next = (next + 1) % flags.count
            return
        }
        let epoch = Self.epoch(of: now, width: sliceWidth)
        let slot = Int(((epoch % Int64(buckets.count)) + Int64(buckets.count)) % Int64(buckets.count))
        if buckets[slot].epoch != epoch { buckets[slot] = Bucket(epoch: epoch, totals: Totals()) }
        buckets[slot].totals.add(entry)
    }

    func totals(now: ResilienceInstant) -> Totals {
        guard let sliceWidth else { return ringTotals }
        let epoch = Self.epoch(of: now, width: sliceWidth)
        var sum = Totals()
        for bucket in buckets where bucket.epoch > epoch &- Int64(buckets.count) && bucket.epoch <= epoch {
            sum.calls += bucket.totals.calls
            sum.failures += bucket.totals.failures
            sum.slow += bucket.totals.slow
        }
        return sum
    }

    mutating func clear() {
        for index in flags.indices { flags[index] = 0 }
        next = 0
        filled = 0
        ringTotals = Totals()
        for index in buckets.indices { buckets[index] = Bucket() }
    }

    private static func epoch(of now: ResilienceInstant, width: Int64) -> Int64 {
        DurationArithmetic.floorDivide(DurationArithmetic.nanoseconds(now.offset), width)
    }
}

extension OutcomeWindow.Totals {
    /// Adds one call with its failure and slow flags.
    fileprivate mutating func add(_ entry: UInt8) {
        calls += 1
        if entry & OutcomeWindow.failureFlag != 0 { failures += 1 }
        if entry & OutcomeWindow.slowFlag != 0 { slow += 1 }
    }
}
