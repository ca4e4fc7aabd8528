import ResilienceCore

/// One alternative in a ``FallbackSource``: a name for reports and a way to fetch.
public struct FallbackAlternative<Item: Sendable>: Sendable {
    /// The name reports and `fallback-used` events show (`"rss"`, `"backup"`, `"cache"`).
    public var name: String
    /// Fetches the items.
    public var fetch: @Sendable (SourceQuery, ResilienceContext) async throws -> SourceFetchResult<Item>

    /// Creates an alternative from a closure.
    public init(
        name: String,
        fetch: @escaping @Sendable (SourceQuery, ResilienceContext) async throws -> SourceFetchResult<Item>
    ) {
        self.name = name
        self.fetch = fetch
    }

    /// Another source (primary → backup, API → RSS).
    public static func source(_ source: some Source<Item>, name: String? = nil) -> Self {
        FallbackAlternative(name: name ?? source.id.rawValue) { query, context in
            SourceFetchResult(items: try await source.fetch(query, context: context))
        }
    }

    /// The same or another source with a simplified query (full query → simplified query). When `simplify`
    /// returns `nil` or the same query, the alternative is not applicable and fails with the primary's error.
    public static func simplifiedQuery(
        _ source: some Source<Item>, name: String = "simplified-query",
        simplify: @escaping @Sendable (SourceQuery) -> SourceQuery?
    ) -> Self {
        FallbackAlternative(name: name) { query, context in
            guard let simpler = simplify(query), simpler != query else { throw FallbackNotApplicable() }
            return SourceFetchResult(items: try await source.fetch(simpler, context: context))
        }
    }

    /// The last good items of `id` in `cache` (live → cache), marked with their age. Not applicable on a miss.
    public static func cache(_ cache: SourceCache<Item>, for id: SourceID, name: String = "cache") -> Self {
        FallbackAlternative(name: name) { query, _ in
            guard let entry = cache.entry(for: id, query: query) else { throw FallbackNotApplicable() }
            return SourceFetchResult(items: entry.items, cacheAge: entry.age, isStale: entry.isStale)
        }
    }

    /// A simplified query: drops the filters and keeps the text and limit.
    public static func droppingFilters(_ query: SourceQuery) -> SourceQuery? {
        query.filters.isEmpty ? nil : SourceQuery(text: query.text, limit: query.limit)
    }
}

/// Thrown by an alternative that does not apply (a cache miss, nothing to simplify); never reported itself.
struct FallbackNotApplicable: Error {}
