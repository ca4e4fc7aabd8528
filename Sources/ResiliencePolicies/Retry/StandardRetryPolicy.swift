/// A configurable retry policy: maximum attempts, one backoff with jitter, the categories it retries, and
/// the server's retry hint.
///
/// Applies the module's guard first: never retries cancellation, circuit-open or non-transient failures,
/// and retries a non-idempotent request only with an idempotency key or when the request was not sent.
///
/// ```swift
/// var policy = StandardRetryPolicy.standard
/// policy.maxAttempts = 5
/// ```
public struct StandardRetryPolicy: RetryPolicy, Hashable {
    /// The most attempts in total, the first included (3 = one try and two retries).
    public var maxAttempts: Int = 3
    /// The delay curve.
    public var backoff: Backoff = .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(30))
    /// The randomness added to each backoff delay: full jitter, `uniform(0, delay)`, by default.
    public var jitter: Jitter = .full
    /// The categories retried; `nil` retries every transient category.
    public var retriedCategories: Set<FailureCategory>? = nil
    /// How the server's retry hint is treated.
    public var retryAfter: RetryAfterRule = .standard
    /// Stop once this much time has passed since the first attempt started, if set.
    public var maxElapsed: Duration? = nil

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maxAttempts: The most attempts in total, the first included (3 = one try and two retries). Default: `3`.
    ///   - backoff: The delay curve. Default: exponential from 1 s, doubling, capped at 30 s.
    ///   - jitter: The randomness added to each backoff delay. Default: `.full` (`uniform(0, delay)`).
    ///   - retriedCategories: The categories retried; `nil` retries every transient category.
    ///   - retryAfter: How the server's retry hint is treated. Default: `.standard`.
    ///   - maxElapsed: Stop once this much time has passed since the first attempt started, if set.
    public init(
        maxAttempts: Int = 3,
        backoff: Backoff = .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(30)),
        jitter: Jitter = .full,
        retriedCategories: Set<FailureCategory>? = nil,
        retryAfter: RetryAfterRule = .standard,
        maxElapsed: Duration? = nil
    ) {
        self.maxAttempts = maxAttempts
        self.backoff = backoff
        self.jitter = jitter
        self.retriedCategories = retriedCategories
        self.retryAfter = retryAfter
        self.maxElapsed = maxElapsed
    }

    /// 3 attempts, exponential 1 s ×2 capped at 30 s, full jitter (AWS's and gRPC's: many clients that failed
    /// together spread their retries over the whole delay, not ±20 % of it).
    public static let standard = StandardRetryPolicy()

    /// For a person waiting at the screen: 2 attempts, 250 ms ×2 capped at 2 s, equal jitter, hints up to 5 s.
    public static let interactive = StandardRetryPolicy(
        maxAttempts: 2, backoff: .exponential(base: .milliseconds(250), multiplier: 2, cap: .seconds(2)),
        jitter: .equal, retryAfter: RetryAfterRule(maximum: .seconds(5)))

    /// For background refresh: 6 attempts, 1 s ×2 capped at 300 s, full jitter, hints up to 300 s.
    public static let background = StandardRetryPolicy(
        maxAttempts: 6, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300)),
        jitter: .full)

    /// An API client: 3 attempts, 1 s doubling, plus 0–500 ms additive jitter; honours `Retry-After`.
    public static let apiClient = StandardRetryPolicy(
        maxAttempts: 3, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300)),
        jitter: .additive(maximum: .milliseconds(500)))

    /// A long background schedule: 1, 2, 4 … 256 s, capped at 300 s, 10 attempts, ±10 % jitter.
    public static let rateLimitManager = StandardRetryPolicy(
        maxAttempts: 10, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300)),
        jitter: .proportional(0.1))

    /// Retry, or stop, after `attempt` failed.
    public func decide<Random: RandomNumberGenerator>(
        _ attempt: RetryAttempt, using random: inout Random
    )
        -> RetryDecision
    {
        if let reason = RetryGuard.stopReason(for: attempt) { return .stop(reason) }
        if let retriedCategories, !retriedCategories.contains(attempt.failure.category) {
            return .stop(.notRetryable)
        }
        if attempt.number >= maxAttempts { return .stop(.attemptsExhausted) }
        if let maxElapsed, attempt.elapsed >= maxElapsed { return .stop(.timeExhausted) }
        if let hinted = retryAfter.decision(for: attempt.failure) { return hinted }
        let delay = backoff.delay(forRetry: attempt.number, previous: attempt.previousDelay, using: &random)
        return .retry(after: jitter.apply(to: delay, using: &random), unjitteredDelay: delay)
    }

    /// `standard(maxAttempts: 3, exponential(…), jitter: full)`.
    public var policyDescription: String {
        "standard(maxAttempts: \(maxAttempts), \(backoff), jitter: \(jitter), retry-after: \(retryAfter))"
    }
}
