import ResilienceCore

/// One way of calling the server: a retry policy plus the optional budget, breaker, limiter and hedging.
///
/// The factories receive a seed so that each client gets its own deterministic instance (its own breaker,
/// its own budget), exactly as separate processes would.
public struct ClientStrategy: Sendable {
    /// A short, unique name for tables and charts.
    public var name: String
    /// The retry policy; `nil` never retries.
    public var retryPolicy: (any RetryPolicy)?
    /// The attempts the policy allows at most (1 = no retry), for the theoretical bounds.
    public var maxAttempts: Int
    /// Creates one client's retry budget.
    public var makeRetryBudget: (@Sendable (UInt64) -> any RetryBudgeting)?
    /// Creates one client's circuit breaker.
    public var makeBreaker: (@Sendable (UInt64) -> any BreakerPolicy)?
    /// Creates one client's rate limiter (adaptive throttle, token bucket).
    public var makeLimiter: (@Sendable (UInt64) -> any RateLimiter)?
    /// Launch a second attempt when the first has not answered after this delay (hedging).
    public var hedgeDelay: Duration?

    /// Creates a strategy.
    public init(
        name: String,
        retryPolicy: (any RetryPolicy)?,
        maxAttempts: Int,
        makeRetryBudget: (@Sendable (UInt64) -> any RetryBudgeting)? = nil,
        makeBreaker: (@Sendable (UInt64) -> any BreakerPolicy)? = nil,
        makeLimiter: (@Sendable (UInt64) -> any RateLimiter)? = nil,
        hedgeDelay: Duration? = nil
    ) {
        self.name = name
        self.retryPolicy = retryPolicy
        self.maxAttempts = maxAttempts
        self.makeRetryBudget = makeRetryBudget
        self.makeBreaker = makeBreaker
        self.makeLimiter = makeLimiter
        self.hedgeDelay = hedgeDelay
    }

    /// The same strategy with hedging after `delay`, renamed.
    public func hedged(after delay: Duration, name: String) -> ClientStrategy {
        var copy = self
        copy.hedgeDelay = delay
        copy.name = name
        return copy
    }
}
