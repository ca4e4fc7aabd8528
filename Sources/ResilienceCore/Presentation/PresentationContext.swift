/// What a presenter needs to know besides the failure itself: what else was tried and what is on screen.
///
/// For a multi-source fetch this is the whole outcome, one ``SourceStatus`` per source, from which an
/// ``ErrorPresenter`` decides alone which failure to explain (``ErrorPresenter/present(_:)``).
public struct PresentationContext: Hashable, Sendable {
    /// One source's part in a multi-source fetch.
    public struct SourceStatus: Hashable, Sendable {
        /// The source.
        public var id: SourceID
        /// Its name for people.
        public var displayName: String
        /// Its kind, when known.
        public var kind: SourceKind?
        /// Its failure, or `nil` when it delivered (live, from a cache or from a fallback).
        public var failure: FailureClassification?
        /// The last failure it saw, even when it delivered (from a cache, a fallback, or after retries);
        /// `nil` when none was recorded.
        public var classification: FailureClassification?
        /// True when its results came from a cache.
        public var servedFromCache: Bool
        /// True when the cached results it served were older than the cache's freshness window.
        public var isStale: Bool
        /// How old the cached results it served were, when it was served from a cache and the age is known.
        public var cacheAge: Duration?

        /// Creates a status whose last failure is `failure`.
        ///
        /// - Parameters:
        ///   - id: The source.
        ///   - displayName: Its name for people.
        ///   - failure: Its failure, or `nil` when it delivered.
        ///   - servedFromCache: True when its results came from a cache.
        public init(
            id: SourceID, displayName: String, failure: FailureClassification? = nil, servedFromCache: Bool = false
        ) {
            self.init(
                id: id, displayName: displayName, failure: failure, classification: failure,
                servedFromCache: servedFromCache)
        }

        /// Creates a status.
        ///
        /// - Parameters:
        ///   - id: The source.
        ///   - displayName: Its name for people.
        ///   - kind: Its kind, when known.
        ///   - failure: Its failure, or `nil` when it delivered (live, from a cache or from a fallback).
        ///   - classification: The last failure it saw, even when it delivered; `nil` when none was recorded.
        ///   - servedFromCache: True when its results came from a cache.
        ///   - isStale: True when those cached results were older than the cache's freshness window.
        ///   - cacheAge: How old those cached results were, when known. Default: `nil`.
        public init(
            id: SourceID, displayName: String, kind: SourceKind? = nil, failure: FailureClassification?,
            classification: FailureClassification?, servedFromCache: Bool = false, isStale: Bool = false,
            cacheAge: Duration? = nil
        ) {
            self.id = id
            self.displayName = displayName
            self.kind = kind
            self.failure = failure
            self.classification = classification
            self.servedFromCache = servedFromCache
            self.isStale = isStale
            self.cacheAge = cacheAge
        }

        /// True when the source contributed items (live, from a cache or from a fallback).
        public var delivered: Bool { failure == nil }
    }

    /// What the items are called in messages (`"jobs"`, `"items"`).
    public var itemNoun: String
    /// The sources involved, if this was a multi-source fetch; empty for a single operation.
    public var sources: [SourceStatus]
    /// How many items are on screen despite the failure.
    public var itemsShown: Int
    /// False when the fetch failed as a whole (its completion policy was not met): something must be said.
    public var metPolicy: Bool
    /// True when the device has no usable network path now (a ``ConnectivityMonitor`` says so): the message
    /// is then about being offline, whatever else failed.
    public var isOffline: Bool
    /// True when a ``ConnectivityMonitor`` says the device has a usable network path now: a failure classified
    /// network-unreachable (a host that cannot be found) is then the server's or the route's problem, not the
    /// device being offline. False when nothing is known about the path (or it is offline).
    public var isOnline: Bool
    /// Changes waiting in the offline queue, sent once the network is back.
    public var queuedMutations: Int
    /// How old the data on screen is (since it was fetched), when known.
    public var dataAge: Duration?

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - itemNoun: What the items are called in messages.
    ///   - sources: One status per source tried; empty for a single operation.
    ///   - itemsShown: How many items are on screen despite the failure.
    ///   - metPolicy: False when the fetch failed as a whole.
    ///   - isOffline: True when the device has no usable network path now. Default: `false`.
    ///   - isOnline: True when a monitor says the device has a usable network path now (ignored when
    ///     `isOffline`). Default: `false`.
    ///   - queuedMutations: Changes waiting in the offline queue. Default: 0.
    ///   - dataAge: How old the data on screen is, when known. Default: `nil`.
    public init(
        itemNoun: String = "items", sources: [SourceStatus] = [], itemsShown: Int = 0, metPolicy: Bool = true,
        isOffline: Bool = false, isOnline: Bool = false, queuedMutations: Int = 0, dataAge: Duration? = nil
    ) {
        self.itemNoun = itemNoun
        self.sources = sources
        self.itemsShown = itemsShown
        self.metPolicy = metPolicy
        self.isOffline = isOffline
        self.isOnline = isOnline && !isOffline
        self.queuedMutations = max(0, queuedMutations)
        self.dataAge = dataAge
    }

    /// How many sources were tried.
    public var sourcesAttempted: Int { sources.count }
    /// How many sources succeeded.
    public var sourcesSucceeded: Int { sources.filter { $0.failure == nil }.count }
    /// How many sources were served from a cache.
    public var sourcesServedFromCache: Int { sources.filter(\.servedFromCache).count }
    /// The sources that delivered nothing, cancellations left out: the ones a message names as unavailable.
    public var unavailableSources: [SourceStatus] {
        sources.filter { source in source.failure.map { $0.category != .cancelled } ?? false }
    }
    /// True when some results are shown although something failed: items are on screen, or some but not all
    /// sources delivered in a fetch that met its policy (one that missed it shows nothing of what was delivered).
    public var isPartial: Bool {
        itemsShown > 0 || (metPolicy && sourcesSucceeded > 0 && sourcesSucceeded < sourcesAttempted)
    }
}
