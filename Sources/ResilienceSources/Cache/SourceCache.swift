import ResilienceCore

/// The last good items of each source and query, to serve (marked with their age) when a source fails.
///
/// Age-aware: ages are measured on the injected clock; entries older than
/// ``SourceCacheConfiguration/maximumAge`` are never served, and an entry stored with a ``CacheFreshness``
/// (from the response's `Cache-Control`) is fresh and servable only as long as that allows. Bounded: beyond
/// ``SourceCacheConfiguration/capacity`` entries the least recently used one is evicted. Safe to share
/// across tasks; every operation is a short critical section.
public final class SourceCache<Item: Sendable>: Sendable {
    /// How much to keep and for how long.
    public typealias Configuration = SourceCacheConfiguration

    /// What an entry is stored under: the source and the whole query, so two queries share an entry only when
    /// their text, filters and limit are all equal.
    public struct Key: Hashable, Sendable {
        /// The source.
        public var source: SourceID
        /// The query.
        public var query: SourceQuery

        /// Creates a key.
        ///
        /// - Parameters:
        ///   - source: The source whose items are cached.
        ///   - query: The query.
        public init(source: SourceID, query: SourceQuery) {
            self.source = source
            self.query = query
        }
    }

    private struct Entry: Sendable {
        var items: [Item]
        var storedAt: ResilienceInstant
        var freshness: CacheFreshness?
    }

    /// The configuration.
    public let configuration: Configuration
    private let clock: ResilienceClock
    /// The entries, least recently used first: storing or serving one makes it the newest.
    private let storage = LockedState(initialState: RecencyTable<Key, Entry>())

    /// Creates an empty cache measuring age on `clock`.
    ///
    /// - Parameters:
    ///   - configuration: Capacity, freshness window and maximum age. Default: `.standard`.
    ///   - clock: The clock entries' ages are measured on. Default: `.continuous`.
    public init(configuration: Configuration = .standard, clock: ResilienceClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
    }

    /// Stores `items` as the last good result of `source` for `query`.
    public func store(_ items: [Item], for source: SourceID, query: SourceQuery) {
        store(items, for: source, query: query, freshness: nil)
    }

    /// Stores `items` as the last good result of `source` for `query`, fresh and servable as `freshness`
    /// allows (`no-store` removes any entry instead), counting their age from `age` (what they already had when
    /// they arrived, such as a response's `Age`), so they never read younger than they are.
    /// - Parameters:
    ///   - items: The items.
    ///   - source: The source whose items are cached.
    ///   - query: The query.
    ///   - freshness: The response's caching rules, or `nil` for the cache's own.
    ///   - age: How old the items already are, or `nil` for new (negative counts as zero). Default: `nil`.
    public func store(
        _ items: [Item], for source: SourceID, query: SourceQuery, freshness: CacheFreshness?, age: Duration? = nil
    ) {
        let key = Key(source: source, query: query)
        if freshness?.noStore == true {
            storage.withLock { _ = $0.removeValue(for: key) }
            return
        }
        let storedAt = clock.now().advanced(by: .zero - max(.zero, age ?? .zero))
        let capacity = configuration.capacity
        storage.withLock { entries in
            entries.setNewest(Entry(items: items, storedAt: storedAt, freshness: freshness), for: key)
            if entries.count > capacity { entries.removeOldest() }
        }
    }

    /// The last good items of `source` for `query`, or `nil` when none are stored or they are older than
    /// ``SourceCacheConfiguration/maximumAge``.
    public func entry(for source: SourceID, query: SourceQuery) -> CachedItems<Item>? {
        let key = Key(source: source, query: query)
        let now = clock.now()
        let configuration = configuration
        return storage.withLock { entries -> CachedItems<Item>? in
            guard let entry = entries[key] else { return nil }
            let age = entry.storedAt.duration(to: now)
            let servableFor = [
                configuration.maximumAge, entry.freshness?.servableFor(cacheFreshFor: configuration.freshFor),
            ].compactMap { $0 }.min()
            if let servableFor, age > servableFor {
                entries.removeValue(for: key)
                return nil
            }
            let freshFor = entry.freshness?.maxAge ?? configuration.freshFor
            entries.setNewest(entry, for: key)
            return CachedItems(
                items: entry.items, storedAt: entry.storedAt, age: age, isStale: age > freshFor)
        }
    }

    /// Forgets everything stored for `source`.
    public func removeAll(for source: SourceID) {
        storage.withLock { $0.removeAll { $0.source == source } }
    }

    /// Forgets everything.
    public func removeAll() {
        storage.withLock { $0.removeAll() }
    }

    /// How many entries are stored.
    public var count: Int { storage.withLock { $0.count } }
}
