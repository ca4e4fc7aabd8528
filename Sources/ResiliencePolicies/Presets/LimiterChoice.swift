/// Which rate limiter or bulkhead a ``PipelinePreset`` builds: a recipe, so every pipeline gets its own.
///
/// ```swift
/// preset.limiter = .concurrency(.limit(4, queued: 8))
/// ```
public typealias LimiterChoice = PresetChoice<any RateLimiter>

extension PresetChoice where Component == any RateLimiter {
    /// A ``TokenBucketLimiter``.
    ///
    /// - Parameter configuration: The burst size, the refill rate, the longest wait and the backoff after exhaustion.
    public static func tokenBucket(_ configuration: TokenBucketLimiter.Configuration) -> LimiterChoice {
        custom("token-bucket") { TokenBucketLimiter(configuration, random: $0) }
    }

    /// A ``ConcurrencyLimiter`` (bulkhead).
    ///
    /// - Parameter configuration: How many calls may run at once and how many may wait.
    public static func concurrency(_ configuration: ConcurrencyLimiter.Configuration) -> LimiterChoice {
        custom("concurrency") { _ in ConcurrencyLimiter(configuration) }
    }

    /// An ``AdaptiveThrottle``.
    ///
    /// - Parameter configuration: How far requests may exceed accepted ones before it rejects client-side (the
    ///   multiplier), and the window it counts over.
    public static func adaptiveThrottle(_ configuration: AdaptiveThrottle.Configuration) -> LimiterChoice {
        custom("adaptive-throttle") { AdaptiveThrottle(configuration, random: $0) }
    }

    /// An ``AdaptiveConcurrencyLimiter``: a concurrency limit learned from the backend's round trips.
    ///
    /// - Parameter configuration: The algorithm, the limit's start and bounds, the waiters allowed and the
    ///   priorities' shares.
    public static func adaptiveConcurrency(_ configuration: AdaptiveConcurrencyLimiter.Configuration) -> LimiterChoice {
        custom("adaptive-concurrency") { _ in AdaptiveConcurrencyLimiter(configuration) }
    }

    /// Builds a new limiter.
    public func makeLimiter(random: SharedRandomSource) -> any RateLimiter {
        make(random: random)
    }
}
