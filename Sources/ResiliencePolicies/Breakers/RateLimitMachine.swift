/// The state machine behind ``RateLimitBreaker``: a value type that takes `now`.
struct RateLimitMachine: Sendable {
    let configuration: RateLimitBreaker.Configuration
    var cycle: BreakerCycle
    var consecutiveRateLimits = 0
    var consecutiveSuccesses = 0
    var generator: PseudoRandomGenerator

    init(configuration: RateLimitBreaker.Configuration, generator: PseudoRandomGenerator) {
        self.configuration = configuration
        self.generator = generator
        cycle = BreakerCycle(halfOpen: nil, isolatedRetryAfter: configuration.cooldown.maximum)
    }

    /// The multiplier the next trip will use (1, 2, 4, 8, 10 …).
    var multiplier: Double { configuration.cooldown.multiplier(tripIndex: cycle.consecutiveTrips) }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        guard cycle.isCurrent(permit), cycle.state == .closed else { return nil }
        switch outcome {
        case .cancelled:
            return nil
        case .success:
            consecutiveRateLimits = 0
            consecutiveSuccesses += 1
            cycle.consecutiveTrips = 0
            return nil
        case .failure(let classification):
            consecutiveSuccesses = 0
            guard configuration.countsAsRateLimit.counts(classification) else {
                consecutiveRateLimits = 0
                return nil
            }
            consecutiveRateLimits += 1
            guard consecutiveRateLimits >= max(1, configuration.threshold) else { return nil }
            consecutiveRateLimits = 0
            let duration = configuration.cooldown.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
            return cycle.trip(now: now, duration: duration)
        }
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        consecutiveRateLimits = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        cycle.metrics(now: now, consecutiveFailures: consecutiveRateLimits, consecutiveSuccesses: consecutiveSuccesses)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        BreakerSnapshot(
            state: cycle.state, remainingOpen: cycle.remainingOpen(now: now),
            values: [
                "multiplier": multiplier,
                "consecutiveTrips": Double(cycle.consecutiveTrips),
                "consecutiveRateLimits": Double(consecutiveRateLimits),
                "totalOpens": Double(cycle.totalOpens),
            ])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        consecutiveRateLimits = SnapshotValues.count(snapshot, "consecutiveRateLimits")
        consecutiveSuccesses = 0
        let state = snapshot.state == .halfOpen ? BreakerState.closed : snapshot.state
        let transition = cycle.restore(
            state: state, remainingOpen: snapshot.remainingOpen,
            totalOpens: SnapshotValues.count(snapshot, "totalOpens"), now: now)
        cycle.consecutiveTrips = SnapshotValues.count(snapshot, "consecutiveTrips", limit: 64)
        return transition
    }
}
