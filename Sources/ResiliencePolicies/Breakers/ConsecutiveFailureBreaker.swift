/// Opens after a number of counted failures in a row; closes after enough successful half-open probes.
///
/// Seed 000 §4.3's breaker, made synchronous: 5 failures open it for 60 s ±30 % (jitter from an injected
/// random source, so a fleet does not probe in step), the open time doubles on each trip in a row up to a
/// cap, half-open admits a limited number of probes and closes after 2 successes.
///
/// ```swift
/// let breaker = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 42))
/// let stage = CircuitBreakerStrategy(breaker: breaker)
/// ```
public final class ConsecutiveFailureBreaker: BreakerPolicy {
    private let machine: LockedState<ConsecutiveFailureMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker; jitter comes from `random` (seed it in tests).
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: ConsecutiveFailureMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Admits the call when closed, or as a probe when half-open; rejects it when open or isolated.
    public func admit(now: ResilienceInstant) -> BreakerAdmission {
        machine.withLock { $0.cycle.admit(now: now) }
    }

    /// Counts the outcome of a call admitted in the current generation.
    @discardableResult
    public func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        machine.withLock { $0.record(outcome, for: permit, now: now) }
    }

    /// Forces the breaker open until ``reset(now:)``.
    @discardableResult
    public func isolate(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.cycle.isolate(now: now) }
    }

    /// Closes the breaker, clears its counters and the growing open time.
    @discardableResult
    public func reset(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.reset(now: now) }
    }

    /// The breaker's counters at `now`.
    public func metrics(now: ResilienceInstant) -> BreakerMetrics {
        machine.withLock { $0.metrics(now: now) }
    }

    /// State, time left open, failures, trips in a row and total opens.
    public func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        machine.withLock { $0.export(now: now) }
    }

    /// Restores a snapshot from ``exportState(now:)``.
    @discardableResult
    public func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.restore(snapshot, now: now) }
    }

    /// `consecutive-failures(threshold: 5, successes: 2, open: 60 s ±30%)`.
    public var policyDescription: String {
        let open = configuration.openDuration
        return "consecutive-failures(threshold: \(configuration.failureThreshold), "
            + "successes: \(configuration.successesToClose), open: \(open.base) ±\(Int(open.jitter * 100))%)"
    }
}
