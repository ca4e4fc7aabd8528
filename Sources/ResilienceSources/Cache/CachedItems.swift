import ResilienceCore

/// Items a ``SourceCache`` returned, with their age.
public struct CachedItems<Item: Sendable>: Sendable {
    /// The items as last stored.
    public var items: [Item]
    /// When they were stored, on the cache's clock.
    public var storedAt: ResilienceInstant
    /// How old they are now.
    public var age: Duration
    /// True when older than the cache's freshness window (still served on failure, but marked stale).
    public var isStale: Bool

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - items: The items as last stored.
    ///   - storedAt: When they were stored, on the cache's clock.
    ///   - age: How old they are now.
    ///   - isStale: True when older than the cache's freshness window (still served on failure, but marked stale).
    public init(items: [Item], storedAt: ResilienceInstant, age: Duration, isStale: Bool) {
        self.items = items
        self.storedAt = storedAt
        self.age = age
        self.isStale = isStale
    }
}
