extension ConcurrencyLimiter {
    /// Settings of a ``ConcurrencyLimiter`` (a bulkhead).
    public struct Configuration: Hashable, Sendable {
        /// Calls that may run at once.
        public var maximumConcurrent = 10
        /// Callers that may wait for a slot, first come first served; more are rejected at once.
        public var maximumQueued = 20

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 10 at once, 20 waiting.
        public static var standard: Configuration { Configuration() }

        /// `concurrent` at once, `queued` waiting.
        public static func limit(_ concurrent: Int, queued: Int = 0) -> Configuration {
            var configuration = Configuration()
            configuration.maximumConcurrent = concurrent
            configuration.maximumQueued = queued
            return configuration
        }
    }
}
