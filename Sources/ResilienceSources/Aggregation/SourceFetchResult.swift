/// What one source delivered, and where it came from: the live source, a fallback alternative, or a cache.
public struct SourceFetchResult<Item: Sendable>: Sendable {
    /// The items.
    public var items: [Item]
    /// The name of the fallback alternative that served, or `nil` when the primary did.
    public var servedBy: String?
    /// The age of the cached items when they came from a cache, or `nil` when they are live.
    public var cacheAge: Duration?
    /// True when cached items were older than the cache's freshness window.
    public var isStale: Bool
    /// How long a cache may keep and serve these items (from the response's `Cache-Control`), if the
    /// source knows.
    public var freshness: CacheFreshness?

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - items: The items.
    ///   - servedBy: The name of the fallback alternative that served, or `nil` when the primary did.
    ///   - cacheAge: The age of the cached items when they came from a cache, or `nil` when they are live.
    ///   - isStale: True when cached items were older than the cache's freshness window. Default: `false`.
    ///   - freshness: How long a cache may keep and serve these items (from the response's `Cache-Control`), if the
    ///     source knows.
    public init(
        items: [Item], servedBy: String? = nil, cacheAge: Duration? = nil, isStale: Bool = false,
        freshness: CacheFreshness? = nil
    ) {
        self.items = items
        self.freshness = freshness
        self.servedBy = servedBy
        self.cacheAge = cacheAge
        self.isStale = isStale
    }
}
