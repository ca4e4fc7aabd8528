/// How an ``Aggregator`` fans out and when it is done.
public struct AggregatorConfiguration: Hashable, Sendable {
    /// The most sources fetched at the same time.
    public var maximumConcurrentSources: Int = 6
    /// Each source's deadline (from its start), unless its registration overrides it; `nil` for none.
    public var sourceTimeout: Duration? = .seconds(15)
    /// When the fetch counts as a success.
    public var completion: CompletionPolicy = .bestEffort
    /// What the items are called in messages (`"jobs"`).
    public var itemNoun: String = "items"
    /// The operation name in contexts and events.
    public var operation: String = "fetch"

    /// Creates a configuration.
    public init(
        maximumConcurrentSources: Int = 6, sourceTimeout: Duration? = .seconds(15),
        completion: CompletionPolicy = .bestEffort, itemNoun: String = "items", operation: String = "fetch"
    ) {
        self.maximumConcurrentSources = max(1, maximumConcurrentSources)
        self.sourceTimeout = sourceTimeout
        self.completion = completion
        self.itemNoun = itemNoun
        self.operation = operation
    }

    /// Six at a time, 15 s per source, best effort.
    public static let standard = AggregatorConfiguration()
    /// For a screen someone is waiting on: eight at a time, 8 s per source, best effort.
    public static let interactive = AggregatorConfiguration(maximumConcurrentSources: 8, sourceTimeout: .seconds(8))
    /// For background refresh: two at a time, 60 s per source, at least half the sources.
    public static let background = AggregatorConfiguration(
        maximumConcurrentSources: 2, sourceTimeout: .seconds(60), completion: .ratio(0.5))
}
