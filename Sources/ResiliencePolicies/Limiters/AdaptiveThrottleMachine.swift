/// The state machine behind ``AdaptiveThrottle``: sliding request/accept counts and a generator.
struct AdaptiveThrottleMachine: Sendable {
    private struct Bucket: Sendable {
        var epoch: Int64 = .min
        var requests = 0
        var accepts = 0
    }

    let multiplier: Double
    private let width: Int64
    private var buckets: [Bucket]
    var generator: PseudoRandomGenerator

    init(configuration: AdaptiveThrottle.Configuration, generator: PseudoRandomGenerator) {
        let slices = max(1, min(configuration.buckets, 1000))
        multiplier = configuration.acceptsMultiplier.isFinite ? max(0, configuration.acceptsMultiplier) : 2
        width = max(1, DurationArithmetic.nanoseconds(configuration.window) / Int64(slices))
        buckets = Array(repeating: Bucket(), count: slices)
        self.generator = generator
    }

    private func epoch(_ instant: ResilienceInstant) -> Int64 {
        DurationArithmetic.floorDivide(DurationArithmetic.nanoseconds(instant.offset), width)
    }

    private mutating func slot(for instant: ResilienceInstant, current: Int64) -> Int? {
        let target = epoch(instant)
        guard target <= current, target > current &- Int64(buckets.count) else { return nil }
        let count = Int64(buckets.count)
        let index = Int(((target % count) + count) % count)
        if buckets[index].epoch != target { buckets[index] = Bucket(epoch: target) }
        return index
    }

    /// Requests and accepts in the window at `now`.
    func totals(now: ResilienceInstant) -> (requests: Int, accepts: Int) {
        let current = epoch(now)
        var requests = 0
        var accepts = 0
        for bucket in buckets where bucket.epoch <= current && bucket.epoch > current &- Int64(buckets.count) {
            requests += bucket.requests
            accepts += bucket.accepts
        }
        return (requests, accepts)
    }

    /// max(0, (requests − K·accepts) / (requests + 1)).
    func rejectionProbability(now: ResilienceInstant) -> Double {
        let counts = totals(now: now)
        let requests = Double(counts.requests)
        return max(0, (requests - multiplier * Double(counts.accepts)) / (requests + 1))
    }

    mutating func acquire(now: ResilienceInstant) -> RateLimitDecision {
        let probability = rejectionProbability(now: now)
        if let index = slot(for: now, current: epoch(now)) { buckets[index].requests += 1 }
        if probability > 0 && Double.random(in: 0..<1, using: &generator) < probability {
            return .rejected(.throttled, retryAfter: nil)
        }
        return .admitted(RateLimitPermit(token: 0, admittedAt: now))
    }

    mutating func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        let current = epoch(now)
        switch outcome {
        case .accepted:
            if let index = slot(for: now, current: current) { buckets[index].accepts += 1 }
        case .rejectedByBackend:
            break
        case .abandoned:
            // The backend never judged the call: take back the request it was counted as.
            if let index = slot(for: permit.admittedAt, current: current), buckets[index].requests > 0 {
                buckets[index].requests -= 1
            }
        }
    }
}
