extension ConsecutiveFailureBreaker {
    /// Settings of a ``ConsecutiveFailureBreaker`` (seed 000 §4.3).
    public struct Configuration: Sendable {
        /// Counted failures in a row that open the breaker.
        public var failureThreshold = 5
        /// Successful half-open probes needed to close it.
        public var successesToClose = 2
        /// How many probes may run at once in half-open.
        public var halfOpenProbeLimit = 1
        /// After this long without an answer from the probes in flight, half-open admits new probes (so a
        /// lost probe can never wedge the breaker).
        public var probeTimeout: Duration = .seconds(30)
        /// How long it stays open: 60 s ±30 %, doubling on each trip in a row, at most 10 min.
        public var openDuration = BreakerBackoff(
            base: .seconds(60), growthFactor: 2, maximumMultiplier: 10, maximum: .seconds(600), jitter: 0.3)
        /// Which failures count.
        public var countsAsFailure: BreakerFailurePredicate = .standard

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// Seed 000 §4.3: 5 failures, 2 successes, 60 s ±30 % growing up to 10 min, one probe at a time.
        public static var standard: Configuration { Configuration() }

        /// For user-facing calls: trips after 3 failures, opens 15 s ±30 % (at most 2 min).
        public static var interactive: Configuration {
            var configuration = Configuration()
            configuration.failureThreshold = 3
            configuration.openDuration = BreakerBackoff(
                base: .seconds(15), growthFactor: 2, maximumMultiplier: 8, maximum: .seconds(120), jitter: 0.3)
            configuration.probeTimeout = .seconds(10)
            return configuration
        }

        /// For background work: tolerates 10 failures, opens 2 min ±30 % (at most 30 min).
        public static var background: Configuration {
            var configuration = Configuration()
            configuration.failureThreshold = 10
            configuration.openDuration = BreakerBackoff(
                base: .seconds(120), growthFactor: 2, maximumMultiplier: 15, maximum: .seconds(1800), jitter: 0.3)
            configuration.probeTimeout = .seconds(60)
            return configuration
        }
    }
}
