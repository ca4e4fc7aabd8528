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
    /// Follows the closed breaker's waiting calls when silence opens it too (`nil`: only outcomes count).
    var unanswered: UnansweredWindow?
    /// Whether the breaker last opened because the dependency hung (its calls went unanswered, or the call
    /// that tripped it timed out): then half-open lets one probe wait at a time, whatever its probe limit.
    var dependencyHung = false

    init(
        rule: Rule, openDuration: BreakerBackoff, generator: PseudoRandomGenerator, cycle: BreakerCycle,
        countsAsFailure: BreakerFailurePredicate, unanswered: UnansweredWindow? = nil
    ) {
        self.rule = rule
        self.openDuration = openDuration
        self.generator = generator
        self.cycle = cycle
        self.failurePredicate = countsAsFailure
        self.unanswered = unanswered
    }

    /// Admits or rejects one call. With an ``UnansweredWindow``, the closed breaker first asks whether its
    /// waiting calls have gone a whole window without a success; if so it opens, and the call that found the
    /// silence is handed back with the transition and a permit of the closed generation, which the stage
    /// rejects after reporting the transition (the permit's outcome, if it runs anyway, counts for nothing).
    mutating func admit(now: ResilienceInstant) -> BreakerAdmission {
        if dependencyHung, cycle.probeOutstanding(now: now), let rules = cycle.halfOpen {
            // A probe of a hung dependency waits out its whole timeout in the server's queue, and every probe
            // beside it adds to the work the server must do before it can answer anyone.
            let reclaimAt = cycle.lastProbeAt.advanced(by: rules.probeTimeout)
            return .rejected(retryAfter: now.duration(to: reclaimAt), state: .halfOpen)
        }
        guard cycle.state == .closed, unanswered != nil else { return cycle.admit(now: now) }
        if unanswered?.isSilent(now: now) == true {
            let stale = BreakerPermit(generation: cycle.generation, isProbe: false, admittedAt: now)
            return .admitted(stale, transition: trip(now: now, cause: nil))
        }
        unanswered?.admitted(now: now)
        return cycle.admit(now: now)
    }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    ) -> BreakerTransition? {
        if unanswered != nil, cycle.state == .closed, !permit.isProbe, cycle.isCurrent(permit) {
            unanswered?.finished(admittedAt: permit.admittedAt, succeeded: outcome == .success, now: now)
        }
        if dependencyHung, outcome == .success, !cycle.isCurrent(permit), cycle.isOpenOrHalfOpen {
            // A call the hung dependency queued before the breaker opened has been answered: the dependency
            // answers again. Waiting for a probe instead would refuse calls while the probe waits behind the
            // same queue, and the queue's answers would go unheard.
            guard let transition = cycle.closeOnLateSuccess(now: now) else { return nil }
            consecutiveFailures = 0
            consecutiveSuccesses = 1
            closed(byCallAdmittedAt: permit.admittedAt, now: now)
            return transition
        }
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
            if transition != nil { closed(byCallAdmittedAt: permit.admittedAt, now: now) }
            return transition
        }
        guard cycle.state == .closed else { return nil }
        if failed, cycle.immediateHint(outcome, counted: true) != nil { return trip(now: now, cause: outcome) }
        guard rule.shouldOpen(afterCallFailed: failed, admittedAt: permit.admittedAt, now: now) else { return nil }
        return trip(now: now, cause: outcome)
    }

    /// Starts the closed state after a success (a probe's, or a hung dependency's late answer) of a call
    /// admitted at `admittedAt`. That success is the first call the fresh count holds: a rule that judges by
    /// the calls of a recent window sees the dependency answered, and does not reopen on the next few failures
    /// alone; the silence window stretches to that call's wait.
    private mutating func closed(byCallAdmittedAt admittedAt: ResilienceInstant, now: ResilienceInstant) {
        rule.clear()
        _ = rule.shouldOpen(afterCallFailed: false, admittedAt: admittedAt, now: now)
        unanswered?.closed(bySuccessAdmittedAt: admittedAt, now: now)
        dependencyHung = false
    }

    /// A stage inside the breaker holds one of its calls: while held, the call was not sent, so the dependency
    /// cannot have left it unanswered.
    mutating func hold(now: ResilienceInstant) -> CallHold {
        let counted = cycle.state == .closed && unanswered?.held() == true
        return CallHold(generation: cycle.generation, counted: counted)
    }

    /// The held call goes on (or fails unsent): it waits again, as if admitted now, unless the breaker changed
    /// state since the hold began.
    mutating func release(_ hold: CallHold, now: ResilienceInstant) {
        guard hold.counted, cycle.state == .closed, hold.generation == cycle.generation else { return }
        unanswered?.admitted(now: now)
    }

    /// Opens the breaker; `cause` is the counted failure that tripped it (`nil`: the waiting calls' silence).
    mutating func trip(now: ResilienceInstant, cause: BreakerOutcome?) -> BreakerTransition? {
        let duration = openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
        rule.clear()
        unanswered?.clear()
        dependencyHung = unanswered != nil && Self.isHang(cause)
        consecutiveSuccesses = 0
        return cycle.trip(now: now, duration: duration, cause: cause)
    }

    /// Whether `cause` says the dependency hung: silence (`nil`), or a call that timed out.
    static func isHang(_ cause: BreakerOutcome?) -> Bool {
        guard let cause else { return true }
        guard case .failure(let classification) = cause else { return false }
        return classification.category == .timeout
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        rule.clear()
        unanswered?.clear()
        dependencyHung = false
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        cycle.snapshot(now: now, adding: [:])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        rule.clear()
        unanswered?.clear()
        dependencyHung = false
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        return cycle.restore(snapshot, now: now, tripLimit: 64)
    }
}
