extension TokenBucketLimiter {
    /// Settings of a ``TokenBucketLimiter`` (seed 000 §1.2's RateLimitManager).
    public struct Configuration: Sendable {
        /// The bucket's size: how many calls may burst at once.
        public var burst = 10
        /// Tokens added per second.
        public var refillPerSecond = 5.0
        /// The longest wait a caller is told to accept; beyond it the call is rejected outright.
        /// `nil` means any wait is offered (the stage still honours the deadline).
        public var maximumWait: Duration? = .seconds(30)
        /// Extra delay while the bucket stays exhausted, growing with each refusal in a row and reset by
        /// an accepted call; `nil` waits only for the next token.
        public var exhaustionBackoff: BreakerBackoff?

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 10 calls of burst, 5 per second, waits of up to 30 s.
        public static var standard: Configuration { Configuration() }

        /// Seed 000's RateLimitManager: the bucket plus exponential backoff on exhaustion
        /// (1 s doubling, ±10 % jitter, at most 300 s), reset on success.
        public static var backingOff: Configuration {
            var configuration = Configuration()
            configuration.maximumWait = nil
            configuration.exhaustionBackoff = BreakerBackoff(
                base: .seconds(1), growthFactor: 2, maximumMultiplier: 512, maximum: .seconds(300), jitter: 0.1)
            return configuration
        }

        /// A bucket of `burst` calls refilled at `perSecond`.
        public static func rate(_ perSecond: Double, burst: Int) -> Configuration {
            var configuration = Configuration()
            configuration.refillPerSecond = perSecond
            configuration.burst = burst
            return configuration
        }
    }
}
