import ResilienceCore

/// A breaker that admits everything: for the crash test, where rate limiting is not under test.
public final class NeverTrippingBreaker: BreakerPolicy {
    /// Creates the breaker.
    public init() {}

    /// Always admits.
    public func admit(now: ResilienceInstant) -> BreakerAdmission {
        .admitted(BreakerPermit(generation: 0, isProbe: false, admittedAt: now), transition: nil)
    }

    /// Ignores outcomes.
    public func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    { nil }

    /// Never isolates.
    public func isolate(now: ResilienceInstant) -> BreakerTransition? { nil }

    /// Nothing to reset.
    public func reset(now: ResilienceInstant) -> BreakerTransition? { nil }

    /// Always closed.
    public func metrics(now: ResilienceInstant) -> BreakerMetrics { BreakerMetrics(state: .closed) }

    /// Always closed.
    public func exportState(now: ResilienceInstant) -> BreakerSnapshot { BreakerSnapshot(state: .closed) }

    /// Ignores the snapshot.
    public func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? { nil }

    /// `never trips`.
    public var policyDescription: String { "never trips" }
}
