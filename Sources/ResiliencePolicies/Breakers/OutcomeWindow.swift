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

    private enum Storage: Sendable {
        case count(flags: [UInt8], next: Int, filled: Int, totals: Totals)
        case time(buckets: [Bucket], width: Int64)
    }

    private static let failureFlag: UInt8 = 1
    private static let slowFlag: UInt8 = 2

    private var storage: Storage

    init(_ window: FailureRatioBreaker.Window) {
        switch window {
        case .count(let calls):
            storage = .count(flags: Array(repeating: 0, count: max(1, calls)), next: 0, filled: 0, totals: Totals())
        case .time(let duration, let buckets):
            let slices = max(1, min(buckets, 1000))
            let width = max(1, DurationArithmetic.nanoseconds(duration) / Int64(slices))
            storage = .time(buckets: Array(repeating: Bucket(), count: slices), width: width)
        }
    }

    mutating func record(failure: Bool, slow: Bool, now: ResilienceInstant) {
        switch storage {
        case .count(var flags, var next, var filled, var totals):
            storage = .count(flags: [], next: 0, filled: 0, totals: Totals())
            if filled == flags.count {
                let old = flags[next]
                totals.calls -= 1
                if old & Self.failureFlag != 0 { totals.failures -= 1 }
                if old & Self.slowFlag != 0 { totals.slow -= 1 }
            } else {
                filled += 1
            }
            flags[next] = (failure ? Self.failureFlag : 0) | (slow ? Self.slowFlag : 0)
            totals.calls += 1
            if failure { totals.failures += 1 }
            if slow { totals.slow += 1 }
            next = (next + 1) % flags.count
            storage = .count(flags: flags, next: next, filled: filled, totals: totals)
        case .time(var buckets, let width):
            storage = .time(buckets: [], width: width)
            let epoch = DurationArithmetic.floorDivide(DurationArithmetic.nanoseconds(now.offset), width)
            let slot = Int(((epoch % Int64(buckets.count)) + Int64(buckets.count)) % Int64(buckets.count))
            if buckets[slot].epoch != epoch { buckets[slot] = Bucket(epoch: epoch, totals: Totals()) }
            buckets[slot].totals.calls += 1
            if failure { buckets[slot].totals.failures += 1 }
            if slow { buckets[slot].totals.slow += 1 }
            storage = .time(buckets: buckets, width: width)
        }
    }

    func totals(now: ResilienceInstant) -> Totals {
        switch storage {
        case .count(_, _, _, let totals):
            return totals
        case .time(let buckets, let width):
            let epoch = DurationArithmetic.floorDivide(DurationArithmetic.nanoseconds(now.offset), width)
            var sum = Totals()
            for bucket in buckets where bucket.epoch > epoch &- Int64(buckets.count) && bucket.epoch <= epoch {
                sum.calls += bucket.totals.calls
                sum.failures += bucket.totals.failures
                sum.slow += bucket.totals.slow
            }
            return sum
        }
    }

    mutating func clear() {
        switch storage {
        case .count(var flags, _, _, _):
            storage = .count(flags: [], next: 0, filled: 0, totals: Totals())
            for index in flags.indices { flags[index] = 0 }
            storage = .count(flags: flags, next: 0, filled: 0, totals: Totals())
        case .time(var buckets, let width):
            storage = .time(buckets: [], width: width)
            for index in buckets.indices { buckets[index] = Bucket() }
            storage = .time(buckets: buckets, width: width)
        }
    }
}
