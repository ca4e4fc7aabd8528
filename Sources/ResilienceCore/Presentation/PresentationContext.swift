/// What a presenter needs to know besides the failure itself: what else was tried and what is on screen.
public struct PresentationContext: Hashable, Sendable {
    /// One source's part in a multi-source fetch.
    public struct SourceStatus: Hashable, Sendable {
        /// The source.
        public var id: SourceID
        /// Its name for people.
        public var displayName: String
        /// Its failure, or `nil` when it succeeded (possibly from cache or a fallback).
        public var failure: FailureClassification?
        /// True when its results came from a cache.
        public var servedFromCache: Bool

        /// Creates a status.
        public init(
            id: SourceID, displayName: String, failure: FailureClassification? = nil, servedFromCache: Bool = false
        ) {
            self.id = id
            self.displayName = displayName
            self.failure = failure
            self.servedFromCache = servedFromCache
        }
    }

    /// What the items are called in messages (`"jobs"`, `"items"`).
    public var itemNoun: String
    /// The sources involved, if this was a multi-source fetch; empty for a single operation.
    public var sources: [SourceStatus]
    /// How many items are on screen despite the failure.
    public var itemsShown: Int

    /// Creates a context.
    public init(itemNoun: String = "items", sources: [SourceStatus] = [], itemsShown: Int = 0) {
        self.itemNoun = itemNoun
        self.sources = sources
        self.itemsShown = itemsShown
    }

    /// How many sources were tried.
    public var sourcesAttempted: Int { sources.count }
    /// How many sources succeeded.
    public var sourcesSucceeded: Int { sources.filter { $0.failure == nil }.count }
    /// True when some results are shown although something failed.
    public var isPartial: Bool { itemsShown > 0 || (sourcesSucceeded > 0 && sourcesSucceeded < sourcesAttempted) }
}
