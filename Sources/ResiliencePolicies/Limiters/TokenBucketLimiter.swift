/// A token bucket: bursts up to `burst` calls, then admits `refillPerSecond` calls per second.
///
/// When the bucket is empty it answers ``RateLimitDecision/delayed(retryAfter:)`` with the time until the
/// next token (plus, when configured, seed 000's growing backoff while exhaustion lasts), or rejects when
/// that wait exceeds ``Configuration/maximumWait``. `RateLimiterStrategy` then waits within the deadline or
/// rejects. Create one per key.
///
/// ```swift
/// let limiter = TokenBucketLimiter(.rate(2, burst: 5))
/// ```
public final class TokenBucketLimiter: RateLimiter {
    private let machine: LockedState<TokenBucketMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a full bucket; `random` feeds the exhaustion backoff's jitter.
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: TokenBucketMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Takes a token, or says how long until one is available.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        machine.withLock { $0.acquire(now: now) }
    }

    /// Tokens are not returned; an accepted call resets the exhaustion backoff.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        machine.withLock { $0.release(outcome: outcome) }
    }

    /// Tokens in the bucket at `now` (fractional while refilling).
    public func availableTokens(now: ResilienceInstant) -> Double {
        machine.withLock { state in
            state.refill(now: now)
            return state.tokens
        }
    }

    /// `token-bucket(burst: 10, refill: 5.0/s)`.
    public var policyDescription: String {
        "token-bucket(burst: \(configuration.burst), refill: \(configuration.refillPerSecond)/s)"
    }
}
