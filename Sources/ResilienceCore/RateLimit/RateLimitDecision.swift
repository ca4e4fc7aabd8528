/// A limiter's answer to "may this call run now?".
public enum RateLimitDecision: Hashable, Sendable {
    /// Run the call now; release the permit when it ends.
    case admitted(RateLimitPermit)
    /// Not now; a permit is expected after `retryAfter`. The stage may wait (within the deadline) and ask
    /// again, or reject.
    case delayed(retryAfter: Duration)
    /// Rejected outright (queue full, throttled); `retryAfter` is a hint when known.
    case rejected(ResilienceError.Code, retryAfter: Duration?)
}
