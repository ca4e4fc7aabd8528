/// The state machine behind ``ConsecutiveFailureBreaker``: a value type that takes `now`.
struct ConsecutiveFailureMachine: Sendable {
    let configuration: ConsecutiveFailureBreaker.Configuration
    var cycle: BreakerCycle
    var consecutiveFailures = 0
    var consecutiveSuccesses = 0
    var generator: PseudoRandomGenerator

    init(configuration: ConsecutiveFailureBreaker.Configuration, generator: PseudoRandomGenerator) {
        self.configuration = configuration
        self.generator = generator
        cycle = BreakerCycle(
            halfOpen: .init(
                probeLimit: configuration.halfOpenProbeLimit, successesToClose: configuration.successesToClose,
                probeTimeout: configuration.probeTimeout),
            isolatedRetryAfter: configuration.openDuration.base)
    }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        guard let counted = cycle.countsAsFailure(outcome, for: permit, predicate: configuration.countsAsFailure)
        else { return nil }
        if cycle.releaseProbe(permit) {
            if counted { return trip(now: now) }
            consecutiveSuccesses += 1
            let transition = cycle.probeSucceeded(now: now)
            if transition != nil { consecutiveFailures = 0 }
            return transition
        }
        guard cycle.state == .closed else { return nil }
        if counted {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
            if consecutiveFailures >= max(1, configuration.failureThreshold) { return trip(now: now) }
        } else {
            consecutiveFailures = 0
            consecutiveSuccesses += 1
        }
        return nil
    }

    mutating func trip(now: ResilienceInstant) -> BreakerTransition? {
        let duration = configuration.openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
        consecutiveSuccesses = 0
        return cycle.trip(now: now, duration: duration)
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        cycle.metrics(now: now, consecutiveFailures: consecutiveFailures, consecutiveSuccesses: consecutiveSuccesses)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        BreakerSnapshot(
            state: cycle.state, remainingOpen: cycle.remainingOpen(now: now),
            values: [
                "consecutiveFailures": Double(consecutiveFailures),
                "consecutiveTrips": Double(cycle.consecutiveTrips),
                "totalOpens": Double(cycle.totalOpens),
            ])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        consecutiveFailures = SnapshotValues.count(snapshot, "consecutiveFailures")
        consecutiveSuccesses = 0
        let transition = cycle.restore(
            state: snapshot.state, remainingOpen: snapshot.remainingOpen,
            totalOpens: SnapshotValues.count(snapshot, "totalOpens"), now: now)
        cycle.consecutiveTrips = SnapshotValues.count(snapshot, "consecutiveTrips")
        return transition
    }
}
