extension AdaptiveThrottle {
    /// Settings of an ``AdaptiveThrottle`` (Google SRE book, "Handling Overload", client-side throttling).
    public struct Configuration: Hashable, Sendable {
        /// The multiplier K: the client allows `K × accepts` requests before it starts rejecting locally.
        /// 2 wastes some backend work for faster recovery; lower is more aggressive.
        public var acceptsMultiplier = 2.0
        /// How far back requests and accepts are counted.
        public var window: Duration = .seconds(120)
        /// Slices of the window (the window slides one slice at a time).
        public var buckets = 12

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// K = 2 over the last 2 minutes (the SRE book's numbers).
        public static var standard: Configuration { Configuration() }

        /// K = 1.5 over the last minute: throttles sooner.
        public static var aggressive: Configuration {
            var configuration = Configuration()
            configuration.acceptsMultiplier = 1.5
            configuration.window = .seconds(60)
            return configuration
        }
    }
}
