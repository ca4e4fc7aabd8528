/// A stage that never looks at the operation's output, never produces one of its own, and calls the
/// operation at most once at a time: it only returns normally after a call of the operation did.
///
/// ``Pipeline`` runs a chain made only of such stages through a runner specialised when the pipeline is
/// built (see ``Pipeline``). Fallback (produces values of its own type) and hedging (calls the operation
/// concurrently) are not output-agnostic; neither is any stage this module does not know.
public protocol OutputAgnosticStrategy: ResilienceStrategy {}

extension TotalDeadlineStrategy: OutputAgnosticStrategy {}
extension TimeoutStrategy: OutputAgnosticStrategy {}
extension RetryStrategy: OutputAgnosticStrategy {}
extension CircuitBreakerStrategy: OutputAgnosticStrategy {}
extension RateLimiterStrategy: OutputAgnosticStrategy {}
extension EmptyStrategy: OutputAgnosticStrategy {}
extension ComposedStrategy: OutputAgnosticStrategy where Outer: OutputAgnosticStrategy, Inner: OutputAgnosticStrategy {}
extension EitherStrategy: OutputAgnosticStrategy where First: OutputAgnosticStrategy, Second: OutputAgnosticStrategy {}

/// Breakers and limiters of this module that can record a successful call without a fresh reading of the
/// clock, so their stages skip the read after the call.
///
/// A type conforms only where the instant passed to `record(.success, …)` or `release(_:outcome:now:)` with
/// `.accepted` cannot change the result: the stage then passes the instant the call was admitted at.
protocol SuccessTimeAware: AnyObject, Sendable {
    /// Whether a success may be recorded with the admission instant instead of the current one.
    var recordsSuccessWithoutTime: Bool { get }
}

/// Success only resets counters or closes a half-open breaker; neither uses `now`.
extension ConsecutiveFailureBreaker: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}

/// Success only resets the 429 counter and the multiplier; it never uses `now`.
extension RateLimitBreaker: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}

/// Tokens are not returned and an accepted release only resets the exhaustion backoff.
extension TokenBucketLimiter: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}
