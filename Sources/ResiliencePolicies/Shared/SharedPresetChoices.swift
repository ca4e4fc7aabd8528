extension LimiterChoice {
    /// A rate limit shared with other replicas: every pipeline built from the preset uses `limiter`.
    ///
    /// ```swift
    /// preset.limiter = .shared(SharedRateLimiter(store: store, .init(key: "jobs-api", quota: quota)))
    /// ```
    public static func shared(_ limiter: SharedRateLimiter) -> LimiterChoice {
        custom("shared-rate") { _ in limiter }
    }
}

extension BreakerChoice {
    /// A breaker shared with other replicas: every pipeline built from the preset uses `breaker`.
    ///
    /// ```swift
    /// preset.breaker = .shared(SharedBreaker(store: store, .init(key: "jobs-api")))
    /// ```
    public static func shared(_ breaker: SharedBreaker) -> BreakerChoice {
        custom("shared-breaker") { _ in breaker }
    }
}
