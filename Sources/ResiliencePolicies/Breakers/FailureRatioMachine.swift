/// The state machine behind ``FailureRatioBreaker``: a value type that takes `now`.
struct FailureRatioMachine: Sendable {
    let configuration: FailureRatioBreaker.Configuration
    var cycle: BreakerCycle
    var window: OutcomeWindow
    var consecutiveFailures = 0
    var consecutiveSuccesses = 0
    var generator: PseudoRandomGenerator

    init(configuration: FailureRatioBreaker.Configuration, generator: PseudoRandomGenerator) {
        self.configuration = configuration
        self.generator = generator
        window = OutcomeWindow(configuration.window)
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
        guard let failed = cycle.countsAsFailure(outcome, for: permit, predicate: configuration.countsAsFailure)
        else { return nil }
        if failed {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
        } else {
            consecutiveFailures = 0
            consecutiveSuccesses += 1
        }
        if cycle.releaseProbe(permit) {
            if failed { return trip(now: now) }
            let transition = cycle.probeSucceeded(now: now)
            if transition != nil { window.clear() }
            return transition
        }
        guard cycle.state == .closed else { return nil }
        let slow = configuration.slowCallThreshold.map { permit.admittedAt.duration(to: now) >= $0 } ?? false
        window.record(failure: failed, slow: slow, now: now)
        let totals = window.totals(now: now)
        guard totals.calls >= max(1, configuration.minimumThroughput) else { return nil }
        let calls = Double(totals.calls)
        let failureRatioReached = Double(totals.failures) / calls >= configuration.failureRatio
        let slowRatioReached =
            configuration.slowCallThreshold != nil && Double(totals.slow) / calls >= configuration.slowCallRatio
        guard failureRatioReached || slowRatioReached else { return nil }
        return trip(now: now)
    }

    mutating func trip(now: ResilienceInstant) -> BreakerTransition? {
        let duration = configuration.openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
        window.clear()
        consecutiveSuccesses = 0
        return cycle.trip(now: now, duration: duration)
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        window.clear()
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        cycle.metrics(now: now, consecutiveFailures: consecutiveFailures, consecutiveSuccesses: consecutiveSuccesses)
    }

    func windowTotals(now: ResilienceInstant) -> OutcomeWindow.Totals {
        window.totals(now: now)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        BreakerSnapshot(
            state: cycle.state, remainingOpen: cycle.remainingOpen(now: now),
            values: [
                "consecutiveTrips": Double(cycle.consecutiveTrips),
                "totalOpens": Double(cycle.totalOpens),
            ])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        window.clear()
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        let transition = cycle.restore(
            state: snapshot.state, remainingOpen: snapshot.remainingOpen,
            totalOpens: SnapshotValues.count(snapshot, "totalOpens"), now: now)
        cycle.consecutiveTrips = SnapshotValues.count(snapshot, "consecutiveTrips", limit: 64)
        return transition
    }
}
