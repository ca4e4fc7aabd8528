/// One key's circuit breaker: admits or rejects calls and learns from their outcomes.
///
/// ## Contract
/// - **Synchronous and lock-protected.** `admit` and `record` are called on every call's hot path; they
///   take `now` and return at once, never suspending, never allocating on the success path.
/// - **Every admitted call is recorded exactly once**, with the permit it got, including cancelled calls
///   (``BreakerOutcome/cancelled`` releases a half-open probe without counting). Outcomes carrying a permit
///   from an older generation must not change the state.
/// - **Half-open cannot get stuck**: a probe's permit is released by any outcome.
/// - **State changes are returned**, not performed: the caller emits telemetry after the lock is released.
/// - ``isolate(now:)`` forces the breaker open until ``reset(now:)``; ``reset(now:)`` closes it and clears
///   its counters.
/// - ``exportState(now:)`` / ``restoreState(_:now:)`` round-trip the state, so an app can persist a
///   rate-limit cooldown across restarts.
///
/// ResilienceTesting's `BreakerPolicyConformance` checks these rules against your implementation.
public protocol BreakerPolicy: AnyObject, Sendable {
    /// Asks to run one call at `now`.
    func admit(now: ResilienceInstant) -> BreakerAdmission

    /// Records the outcome of a call admitted with `permit`; returns the state change it caused, if any.
    @discardableResult
    func record(_ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant) -> BreakerTransition?

    /// Forces the breaker open until ``reset(now:)``.
    @discardableResult
    func isolate(now: ResilienceInstant) -> BreakerTransition?

    /// Closes the breaker and clears its counters (and any growing cooldown).
    @discardableResult
    func reset(now: ResilienceInstant) -> BreakerTransition?

    /// The breaker's counters at `now`.
    func metrics(now: ResilienceInstant) -> BreakerMetrics

    /// The breaker's state as a portable snapshot (times relative to `now`).
    func exportState(now: ResilienceInstant) -> BreakerSnapshot

    /// Restores a snapshot taken by ``exportState(now:)`` (possibly in an earlier process).
    @discardableResult
    func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition?

    /// A short description of the breaker and its settings.
    var policyDescription: String { get }
}
