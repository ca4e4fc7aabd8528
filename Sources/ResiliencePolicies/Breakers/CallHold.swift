/// Learns when a stage inside a breaker holds a call the breaker admitted before the call reaches the
/// dependency: a limiter waiting for a permit, or a server quota waiting for its reset.
///
/// A breaker that judges silence (``FailureRatioBreaker/Configuration/opensWhenUnanswered``) counts the calls it
/// admitted and that have not been answered yet. A call held by a stage inside it has not been sent, so the
/// dependency cannot have left it unanswered: while the call is held it does not count, and once released it
/// counts as if admitted then. Without this, a quota that holds a few calls for longer than the breaker's
/// silence (a per-minute quota) opens the breaker, which then refuses the calls that arrive. A held call that
/// succeeds still counts its hold in the breaker's slowest success (the breaker cannot tell it from a slow
/// answer), so after a long hold the breaker judges silence more leniently until it next opens or closes.
///
/// The built-in breakers adopt it (``StateMachineBreaker``); ``RateLimiterStrategy``, ``ServerQuotaStrategy``
/// and ``AdaptiveConcurrencyStage`` report the calls they hold to the breaker they are given, and the presets
/// give them theirs.
///
/// ```swift
/// let breaker = FailureRatioBreaker(.outageOnly)
/// let pipeline = Pipeline {
///     CircuitBreakerStrategy(breaker: breaker)
///     ServerQuotaStrategy(limiter: ServerQuotaLimiter(), reportsHoldsTo: breaker)
/// }
/// ```
public protocol CallHoldObserver: AnyObject, Sendable {
    /// A stage inside the breaker starts holding one call at `now`; returns the token to release it with.
    func callHeld(now: ResilienceInstant) -> CallHold

    /// The stage stops holding the call of `hold` at `now`: the call goes on to the dependency, or fails
    /// without being sent.
    func callReleased(_ hold: CallHold, now: ResilienceInstant)
}

/// One call held by a stage inside a breaker, from ``CallHoldObserver/callHeld(now:)`` to
/// ``CallHoldObserver/callReleased(_:now:)``: what the observer needs to undo the hold, and nothing else.
public struct CallHold: Hashable, Sendable {
    /// The observer's generation (its count of state changes) when the hold began: the built-in breakers ignore
    /// a release after they changed state, as they ignore the call's outcome then.
    public let generation: UInt64
    /// Whether the observer stopped counting the call as waiting when the hold began (a built-in breaker does
    /// when it judges silence and was closed); only such a hold is undone on release.
    public let counted: Bool

    /// Creates a hold token (an observer of your own returns one from ``CallHoldObserver/callHeld(now:)``).
    ///
    /// - Parameters:
    ///   - generation: The observer's count of state changes when the hold began.
    ///   - counted: Whether the observer stopped counting the call as waiting.
    public init(generation: UInt64, counted: Bool) {
        self.generation = generation
        self.counted = counted
    }
}

/// Runs `wait`, a stage holding its call before the call goes on, reported to `observer` (if any) as one held
/// call from the wait's start to its end, whether it ends with a permit or an error.
@usableFromInline
func reportingHold<Result>(
    to observer: (any CallHoldObserver)?, _ context: ResilienceContext, _ wait: () async throws -> Result
) async throws -> Result {
    guard let observer else { return try await wait() }
    let hold = observer.callHeld(now: context.clock.now())
    defer { observer.callReleased(hold, now: context.clock.now()) }
    return try await wait()
}
