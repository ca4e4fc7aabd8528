/// Opens after a number of counted failures in a row; closes after enough successful half-open probes.
///
/// The classic breaker, made synchronous: 5 failures open it for 60 s ±30 % (jitter from an injected
/// random source, so a fleet does not probe in step), the open time doubles on each trip in a row up to a
/// cap, half-open admits a limited number of probes and closes after 2 successes.
///
/// ```swift
/// let breaker = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 42))
/// let stage = CircuitBreakerStrategy(breaker: breaker)
/// ```
public final class ConsecutiveFailureBreaker: StateMachineBreaker, @unchecked Sendable {
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker.
    ///
    /// - Parameters:
    ///   - configuration: Threshold, half-open rules and the growing open time.
    ///   - random: The source of the open time's jitter (seed it in tests).
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        super.init(ConsecutiveFailureMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// `consecutive-failures(threshold: 5, successes: 2, open: 60 s ±30%)`.
    public override var policyDescription: String {
        let open = configuration.openDuration
        return "consecutive-failures(threshold: \(configuration.failureThreshold), "
            + "successes: \(configuration.successesToClose), open: \(open.base) ±\(Int((open.appliedJitter * 100).rounded()))%)"
    }
}

extension ConsecutiveFailureBreaker {
    /// Settings of a ``ConsecutiveFailureBreaker``.
    public struct Configuration: Sendable {
        /// Counted failures in a row that open the breaker.
        public var failureThreshold = 5
        /// Successful half-open probes needed to close it.
        public var successesToClose = 2
        /// How many probes may run at once in half-open.
        public var halfOpenProbeLimit = 1
        /// After this long without an answer from the probes in flight, half-open admits new probes (so a
        /// lost probe can never wedge the breaker).
        public var probeTimeout: Duration = .seconds(30)
        /// How long it stays open: 60 s ±30 %, doubling on each trip in a row, at most 10 min.
        public var openDuration = BreakerBackoff(
            base: .seconds(60), growthFactor: 2, maximumMultiplier: 10, maximum: .seconds(600), jitter: 0.3)
        /// Which failures count.
        public var countsAsFailure: BreakerFailurePredicate = .standard
        /// How the server's `Retry-After` on a counted failure lengthens or starts an open period.
        public var retryAfter: BreakerRetryAfter = .standard

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 5 failures, 2 successes, 60 s ±30 % growing up to 10 min, one probe at a time.
        public static var standard: Configuration { Configuration() }

        /// For user-facing calls: trips after 3 failures, opens 15 s ±30 % (at most 2 min).
        public static var interactive: Configuration {
            preset(failureThreshold: 3, openFor: 15, atMost: 120, probeTimeout: .seconds(10))
        }

        /// For background work: tolerates 10 failures, opens 2 min ±30 % (at most 30 min).
        public static var background: Configuration {
            preset(failureThreshold: 10, openFor: 120, atMost: 1800, probeTimeout: .seconds(60))
        }

        /// A preset: opens for `seconds` ±30 %, doubling on each trip in a row up to `maximumSeconds`.
        private static func preset(
            failureThreshold: Int, openFor seconds: Int64, atMost maximumSeconds: Int64, probeTimeout: Duration
        ) -> Configuration {
            var configuration = Configuration()
            configuration.failureThreshold = failureThreshold
            configuration.openDuration = BreakerBackoff(
                base: .seconds(seconds), growthFactor: 2, maximumMultiplier: Double(maximumSeconds / seconds),
                maximum: .seconds(maximumSeconds), jitter: 0.3)
            configuration.probeTimeout = probeTimeout
            return configuration
        }
    }
}

/// The state machine behind ``ConsecutiveFailureBreaker``: a value type that takes `now`.
struct ConsecutiveFailureMachine: BreakerMachine {
    let configuration: ConsecutiveFailureBreaker.Configuration
    var cycle: BreakerCycle
    var consecutiveFailures = 0
    var consecutiveSuccesses = 0
    var generator: PseudoRandomGenerator

    init(configuration: ConsecutiveFailureBreaker.Configuration, generator: PseudoRandomGenerator) {
        self.configuration = configuration
        self.generator = generator
        cycle = BreakerCycle(
            halfOpen: BreakerHalfOpenRules(
                probeLimit: configuration.halfOpenProbeLimit, successesToClose: configuration.successesToClose,
                probeTimeout: configuration.probeTimeout),
            isolatedRetryAfter: configuration.openDuration.base, retryAfter: configuration.retryAfter)
    }

    var failurePredicate: BreakerFailurePredicate { configuration.countsAsFailure }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        guard let counted = cycle.countsAsFailure(outcome, for: permit, predicate: configuration.countsAsFailure)
        else { return nil }
        if cycle.releaseProbe(permit) {
            if counted { return trip(now: now, cause: outcome) }
            consecutiveSuccesses += 1
            let transition = cycle.probeSucceeded(now: now)
            if transition != nil { consecutiveFailures = 0 }
            return transition
        }
        guard cycle.state == .closed else { return nil }
        if counted {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
            if consecutiveFailures >= max(1, configuration.failureThreshold)
                || cycle.immediateHint(outcome, counted: true) != nil
            {
                return trip(now: now, cause: outcome)
            }
        } else {
            consecutiveFailures = 0
            consecutiveSuccesses += 1
        }
        return nil
    }

    mutating func trip(now: ResilienceInstant, cause: BreakerOutcome) -> BreakerTransition? {
        let duration = configuration.openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
        consecutiveSuccesses = 0
        return cycle.trip(now: now, duration: duration, cause: cause)
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        cycle.snapshot(now: now, adding: ["consecutiveFailures": Double(consecutiveFailures)])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        consecutiveFailures = SnapshotValues.count(snapshot, "consecutiveFailures")
        consecutiveSuccesses = 0
        return cycle.restore(snapshot, now: now)
    }
}
