extension FailureRatioBreaker {
    /// The window a ``FailureRatioBreaker`` measures over.
    public enum Window: Hashable, Sendable {
        /// The last `calls` recorded calls (resilience4j's COUNT_BASED).
        case count(Int)
        /// The calls of the last `duration`, kept in `buckets` slices (resilience4j's TIME_BASED, Polly's
        /// sampling duration).
        case time(Duration, buckets: Int = 10)
    }

    /// Settings of a ``FailureRatioBreaker`` (resilience4j / Polly semantics).
    public struct Configuration: Sendable {
        /// The measuring window.
        public var window: Window = .time(.seconds(30))
        /// Calls the window must hold before the ratio is judged at all.
        public var minimumThroughput = 20
        /// The failure ratio (0...1) that opens the breaker when reached.
        public var failureRatio = 0.5
        /// A call taking at least this long is slow; `nil` turns slow-call detection off.
        public var slowCallThreshold: Duration?
        /// The slow-call ratio (0...1) that opens the breaker when reached.
        public var slowCallRatio = 1.0
        /// Successful half-open probes needed to close it.
        public var successesToClose = 3
        /// How many probes may run at once in half-open.
        public var halfOpenProbeLimit = 3
        /// After this long without an answer from the probes in flight, half-open admits new probes.
        public var probeTimeout: Duration = .seconds(30)
        /// How long it stays open (constant 30 s by default).
        public var openDuration: BreakerBackoff = .constant(.seconds(30))
        /// Which failures count.
        public var countsAsFailure: BreakerFailurePredicate = .standard

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 50 % failures over 30 s (10 buckets), at least 20 calls, open 30 s, 3 probes.
        public static var standard: Configuration { Configuration() }

        /// resilience4j's defaults: the last 100 calls, at least 100, 50 %, open 60 s, 10 probes.
        public static var countBased: Configuration {
            var configuration = Configuration()
            configuration.window = .count(100)
            configuration.minimumThroughput = 100
            configuration.openDuration = .constant(.seconds(60))
            configuration.successesToClose = 10
            configuration.halfOpenProbeLimit = 10
            return configuration
        }

        /// Polly's defaults: 10 % failures over 30 s, at least 100 calls, open 5 s, one probe.
        public static var sensitive: Configuration {
            var configuration = Configuration()
            configuration.failureRatio = 0.1
            configuration.minimumThroughput = 100
            configuration.openDuration = .constant(.seconds(5))
            configuration.successesToClose = 1
            configuration.halfOpenProbeLimit = 1
            return configuration
        }
    }
}
