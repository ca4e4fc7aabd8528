extension RateLimitBreaker {
    /// Settings of a ``RateLimitBreaker`` (seed 004).
    public struct Configuration: Sendable {
        /// Rate-limit answers in a row that trip the breaker.
        public var threshold = 3
        /// Cooldown `30 s × multiplier`; the multiplier doubles on each trip up to 10; at most 300 s:
        /// 30 / 60 / 120 / 240 / 300 s.
        public var cooldown = BreakerBackoff(
            base: .seconds(30), growthFactor: 2, maximumMultiplier: 10, maximum: .seconds(300))
        /// Which failures are rate-limit answers (default: category rate-limited or HTTP 429).
        public var countsAsRateLimit: BreakerFailurePredicate = .rateLimitedOnly

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// Seed 004: 3 × 429 trips; 30 / 60 / 120 / 240 / 300 s.
        public static var standard: Configuration { Configuration() }

        /// Trips on the first 429 and backs off 10 s doubling up to 120 s (for APIs with strict quotas).
        public static var strict: Configuration {
            var configuration = Configuration()
            configuration.threshold = 1
            configuration.cooldown = BreakerBackoff(
                base: .seconds(10), growthFactor: 2, maximumMultiplier: 12, maximum: .seconds(120))
            return configuration
        }
    }
}
