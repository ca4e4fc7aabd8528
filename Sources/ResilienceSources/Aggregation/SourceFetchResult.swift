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
    /// How old the items already were when they arrived, when the source knows (a response's `Age`: the time
    /// it spent in HTTP caches since the publisher produced or confirmed it); `nil` counts them as new. A
    /// ``SourceCache`` storing them counts their age, and their ``freshness``, from then, so saved items never
    /// read younger than they are.
    public var age: Duration?

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - items: The items.
    ///   - servedBy: The name of the fallback alternative that served, or `nil` when the primary did.
    ///   - cacheAge: The age of the cached items when they came from a cache, or `nil` when they are live.
    ///   - isStale: True when cached items were older than the cache's freshness window. Default: `false`.
    ///   - freshness: How long a cache may keep and serve these items (from the response's `Cache-Control`), if the
    ///     source knows.
    ///   - age: How old the items already were when they arrived (a response's `Age`), if the source knows.
    ///     Default: `nil`.
    public init(
        items: [Item], servedBy: String? = nil, cacheAge: Duration? = nil, isStale: Bool = false,
        freshness: CacheFreshness? = nil, age: Duration? = nil
    ) {
        self.items = items
        self.freshness = freshness
        self.age = age
        self.servedBy = servedBy
        self.cacheAge = cacheAge
        self.isStale = isStale
    }
}

extension SourceFetchResult {
    /// These results with each item transformed (`nil` drops it) and everything said about them (provenance,
    /// cache age, staleness, freshness, age) kept.
    ///
    /// - Parameter transform: Maps one item; `nil` drops it.
    public func mapItems<Mapped: Sendable>(
        _ transform: (Item) throws -> Mapped?
    ) rethrows -> SourceFetchResult<Mapped> {
        SourceFetchResult<Mapped>(
            items: try items.compactMap(transform), servedBy: servedBy, cacheAge: cacheAge, isStale: isStale,
            freshness: freshness, age: age)
    }
}
