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
