/// When a closed breaker opens: the one decision a custom breaker makes.
///
/// The state machine (``CircuitBreaker`` locally, ``SharedBreaker`` across replicas) does everything else:
/// admission, half-open probes, stale permits, isolation, the server's `Retry-After`, metrics and
/// persistence. It hands the rule the outcome of every call the *closed* breaker admitted, already sorted by
/// the breaker's ``BreakerFailurePredicate`` (cancelled calls never reach the rule), and asks whether to open
/// now. How long the breaker stays open comes from its ``BreakerBackoff``.
///
/// A rule is a value type that takes `now`; it runs inside the breaker's lock, so keep it cheap.
///
/// ```swift
/// /// Opens after `limit` counted failures within `window`.
/// struct FailuresWithin: BreakerTripRule {
///     var limit = 3
///     var window: Duration = .seconds(10)
///     var failures: [ResilienceInstant] = []
///
///     mutating func shouldOpen(
///         afterCallFailed failed: Bool, admittedAt: ResilienceInstant, now: ResilienceInstant
///     ) -> Bool {
///         failures.removeAll { $0.duration(to: now) > window }
///         if failed { failures.append(now) }
///         return failures.count >= limit
///     }
///
///     mutating func clear() { failures.removeAll() }
/// }
///
/// let breaker = CircuitBreaker(FailuresWithin(), openDuration: .constant(.seconds(30)), name: "failures-within")
/// ```
public protocol BreakerTripRule: Sendable {
    /// Counts the outcome of a call the closed breaker admitted at `admittedAt` and that finished at `now`;
    /// returns `true` when the breaker must open now. The successful probe that closes a half-open breaker is
    /// counted too, as the first call after ``clear()`` (what the rule returns for it is ignored).
    ///
    /// - Parameters:
    ///   - failed: Whether the breaker's predicate counts the outcome as a failure (`false`: a success, or a
    ///     failure that proves the dependency answered).
    ///   - admittedAt: When the call was admitted (for slow-call rules).
    ///   - now: When the call finished.
    mutating func shouldOpen(
        afterCallFailed failed: Bool, admittedAt: ResilienceInstant, now: ResilienceInstant
    )
        -> Bool

    /// Forgets everything counted; the state machine calls it when the breaker opens, closes or is reset.
    mutating func clear()
}

/// Opens after a number of counted failures in a row: the rule of ``SharedBreaker``, and the simplest rule a
/// ``CircuitBreaker`` can run.
public struct ConsecutiveFailuresRule: BreakerTripRule, Hashable {
    /// Counted failures in a row that open the breaker (at least 1).
    public var threshold: Int
    /// Counted failures since the last success.
    public private(set) var failures = 0

    /// Creates the rule.
    ///
    /// - Parameter threshold: Counted failures in a row that open the breaker; values below 1 mean 1.
    public init(threshold: Int) {
        self.threshold = max(1, threshold)
    }

    /// Counts a failure or resets the count on anything else; true once `threshold` failures came in a row.
    public mutating func shouldOpen(
        afterCallFailed failed: Bool, admittedAt: ResilienceInstant, now: ResilienceInstant
    ) -> Bool {
        guard failed else {
            failures = 0
            return false
        }
        failures += 1
        return failures >= threshold
    }

    /// Forgets the failures counted.
    public mutating func clear() { failures = 0 }
}

/// A circuit breaker made of the module's one state machine and your ``BreakerTripRule``: the way to write a
/// breaker of your own in a few lines.
///
/// The state machine is the one every built-in breaker runs: closed → open (for the period
/// `openDuration` gives the trip, growing over trips in a row, at least the server's `Retry-After`) →
/// half-open (limited probes; enough successes close it, a counted failure reopens it) → closed. It
/// ignores outcomes of calls admitted before a state change, releases cancelled probes, reclaims lost ones,
/// and adopts every optional breaker protocol: reset, isolation, persistence and metrics.
///
/// ```swift
/// let breaker = CircuitBreaker(
///     ConsecutiveFailuresRule(threshold: 3), openDuration: BreakerBackoff(base: .seconds(10), growthFactor: 2,
///     maximumMultiplier: 6, maximum: .seconds(60)), name: "three-strikes")
/// let stage = CircuitBreakerStrategy(breaker: breaker)
/// ```
public final class CircuitBreaker<Rule: BreakerTripRule>: StateMachineBreaker, @unchecked Sendable {
    /// The name ``policyDescription`` reports.
    public let name: String
    /// How long the breaker stays open on each trip in a row.
    public let openDuration: BreakerBackoff

    /// Creates a breaker that opens when `rule` says so.
    ///
    /// - Parameters:
    ///   - rule: Decides when the closed breaker opens.
    ///   - openDuration: How long it stays open on each trip in a row.
    ///   - halfOpen: The half-open rules; `nil` closes the breaker directly when the open period ends.
    ///     Default: one probe at a time, one success closes it.
    ///   - countsAsFailure: Which failures count. Default: ``BreakerFailurePredicate/standard``.
    ///   - retryAfter: How the server's `Retry-After` on a counted failure lengthens or starts an open period.
    ///     Default: ``BreakerRetryAfter/standard``.
    ///   - random: Feeds the open duration's jitter (seed it in tests). Default: a fresh source.
    ///   - name: What ``policyDescription`` reports.
    public init(
        _ rule: Rule, openDuration: BreakerBackoff, halfOpen: BreakerHalfOpenRules? = BreakerHalfOpenRules(),
        countsAsFailure: BreakerFailurePredicate = .standard, retryAfter: BreakerRetryAfter = .standard,
        random: SharedRandomSource = SharedRandomSource(), name: String
    ) {
        self.name = name
        self.openDuration = openDuration
        super.init(
            RuleMachine(
                rule: rule, openDuration: openDuration, generator: random.makeGenerator(),
                cycle: BreakerCycle(
                    halfOpen: halfOpen, isolatedRetryAfter: openDuration.maximum, retryAfter: retryAfter),
                countsAsFailure: countsAsFailure))
    }

    /// Reads the rule's current state (its counters), under the breaker's lock.
    public func withRule<Result>(_ body: (Rule) -> Result) -> Result? {
        inspect(RuleMachine<Rule>.self) { body($0.rule) }
    }

    /// `<name>(open: <openDuration>)`.
    public override var policyDescription: String {
        "\(name)(open: \(openDuration.base) × \(openDuration.growthFactor)^n ≤ \(openDuration.maximum))"
    }
}

/// The machine behind ``CircuitBreaker``: the cycle, the rule, and the open duration's schedule.
struct RuleMachine<Rule: BreakerTripRule>: BreakerMachine {
    var rule: Rule
    let openDuration: BreakerBackoff
    var generator: PseudoRandomGenerator
    var cycle: BreakerCycle
    let failurePredicate: BreakerFailurePredicate
    var consecutiveFailures = 0
    var consecutiveSuccesses = 0

    init(
        rule: Rule, openDuration: BreakerBackoff, generator: PseudoRandomGenerator, cycle: BreakerCycle,
        countsAsFailure: BreakerFailurePredicate
    ) {
        self.rule = rule
        self.openDuration = openDuration
        self.generator = generator
        self.cycle = cycle
        self.failurePredicate = countsAsFailure
    }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    ) -> BreakerTransition? {
        guard let failed = cycle.countsAsFailure(outcome, for: permit, predicate: failurePredicate) else {
            return nil
        }
        if failed {
            consecutiveFailures += 1
            consecutiveSuccesses = 0
        } else {
            consecutiveFailures = 0
            consecutiveSuccesses += 1
        }
        if cycle.releaseProbe(permit) {
            if failed { return trip(now: now, cause: outcome) }
            let transition = cycle.probeSucceeded(now: now)
            if transition != nil {
                // The probe's success is the first call the fresh count holds: a rule that judges by the
                // calls of a recent window sees the dependency answered, and does not reopen on the next few
                // failures alone.
                rule.clear()
                _ = rule.shouldOpen(afterCallFailed: false, admittedAt: permit.admittedAt, now: now)
            }
            return transition
        }
        guard cycle.state == .closed else { return nil }
        if failed, cycle.immediateHint(outcome, counted: true) != nil { return trip(now: now, cause: outcome) }
        guard rule.shouldOpen(afterCallFailed: failed, admittedAt: permit.admittedAt, now: now) else { return nil }
        return trip(now: now, cause: outcome)
    }

    mutating func trip(now: ResilienceInstant, cause: BreakerOutcome) -> BreakerTransition? {
        let duration = openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
        rule.clear()
        consecutiveSuccesses = 0
        return cycle.trip(now: now, duration: duration, cause: cause)
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        rule.clear()
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
                "consecutiveTrips": Double(cycle.consecutiveTrips),
                "totalOpens": Double(cycle.totalOpens),
            ])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        rule.clear()
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        let state = cycle.halfOpen == nil && snapshot.state == .halfOpen ? BreakerState.closed : snapshot.state
        let transition = cycle.restore(
            state: state, remainingOpen: snapshot.remainingOpen,
            totalOpens: SnapshotValues.count(snapshot, "totalOpens"), now: now)
        cycle.consecutiveTrips = SnapshotValues.count(snapshot, "consecutiveTrips", limit: 64)
        return transition
    }
}
