import Foundation
import ResilienceCore

/// How long a response's items may be served, as its HTTP `Cache-Control` says (RFC 9111, RFC 5861).
///
/// A ``SourceCache`` entry stored with a freshness counts as fresh for `max-age`; after that it may be
/// served when the source fails for `stale-if-error` more, and never when the response said `no-store`
/// or, past `max-age`, `no-cache` / `must-revalidate`. Without a `stale-if-error` the cache's own
/// ``SourceCacheConfiguration/maximumAge`` bounds it. The cache's `maximumAge` is always an upper bound.
public struct CacheFreshness: Hashable, Sendable {
    /// How long the items are fresh (`max-age`), or `nil` to use the cache's own window.
    public var maxAge: Duration?
    /// How long past `maxAge` they may still be served when the source fails (`stale-if-error`).
    public var staleIfError: Duration?
    /// True when stale items must never be served (`no-cache`, `must-revalidate`, `proxy-revalidate`).
    public var mustRevalidate: Bool
    /// True when the items must not be stored at all (`no-store`).
    public var noStore: Bool

    /// Creates a freshness.
    /// - Parameters:
    ///   - maxAge: How long the items are fresh.
    ///   - staleIfError: How long past that they may be served when the source fails.
    ///   - mustRevalidate: Whether stale items must never be served.
    ///   - noStore: Whether the items must not be stored.
    public init(
        maxAge: Duration? = nil, staleIfError: Duration? = nil, mustRevalidate: Bool = false, noStore: Bool = false
    ) {
        self.maxAge = maxAge
        self.staleIfError = staleIfError
        self.mustRevalidate = mustRevalidate
        self.noStore = noStore
    }

    /// The freshness a `Cache-Control` header value gives, or `nil` when it says nothing this type models.
    /// - Parameter cacheControl: The header's value (`max-age=600, stale-if-error=86400`).
    public init?(cacheControl: String) {
        guard let directives = try? CacheControl(parsing: cacheControl) else { return nil }
        var freshness = CacheFreshness()
        if let maxAge = directives.maxAge { freshness.maxAge = .seconds(maxAge) }
        if let staleIfError = directives.staleIfError { freshness.staleIfError = .seconds(staleIfError) }
        if directives.noCache || directives.mustRevalidate || directives.contains("proxy-revalidate") {
            freshness.mustRevalidate = true
        }
        if directives.noCache { freshness.maxAge = .zero }
        freshness.noStore = directives.noStore
        let understood =
            freshness.maxAge != nil || freshness.staleIfError != nil || freshness.mustRevalidate || freshness.noStore
        guard understood else { return nil }
        self = freshness
    }

    /// How long items may be served at all, or `nil` when only the cache's own limit applies; without a
    /// `maxAge` they are fresh for `cacheFreshFor`, the cache's own window, and `mustRevalidate` and
    /// `staleIfError` count from its end.
    func servableFor(cacheFreshFor: Duration) -> Duration? {
        if noStore { return .zero }
        let freshFor = maxAge ?? cacheFreshFor
        if mustRevalidate { return freshFor }
        return staleIfError.map { freshFor + $0 }
    }
}
