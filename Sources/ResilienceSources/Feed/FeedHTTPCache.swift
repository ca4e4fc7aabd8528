import Foundation
import ResilienceCore

/// What a ``FeedSource`` remembers between fetches to make them conditional, as feed readers do: the
/// validators (`ETag`, `Last-Modified`) and the items of the last full response of each feed URL, its
/// `Cache-Control` freshness and the feed's own polling hint.
///
/// A `304 Not Modified` answer is served from here as fresh items. Bounded: beyond ``capacity`` URLs the
/// least recently stored one is forgotten. Safe to share across tasks.
public final class FeedHTTPCache: Sendable {
    /// One feed URL's last full response.
    public struct Entry: Hashable, Sendable {
        /// The `ETag` to send as `If-None-Match`.
        public var entityTag: String?
        /// The `Last-Modified` to send as `If-Modified-Since`.
        public var lastModified: String?
        /// The items of the last full response.
        public var items: [FeedItem]
        /// Its `Cache-Control` freshness, if it had one.
        public var freshness: CacheFreshness?
        /// The feed's polling hint (`ttl`, `sy:updatePeriod`).
        public var pollingInterval: Duration?
    }

    private struct Storage {
        var entries: [String: (entry: Entry, order: UInt64)] = [:]
        var counter: UInt64 = 0
    }

    /// The most feed URLs remembered.
    public let capacity: Int
    private let storage = LockedState(initialState: Storage())

    /// Creates an empty cache.
    /// - Parameter capacity: The most feed URLs remembered (at least 1).
    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// What is remembered for `url`.
    public func entry(for url: URL) -> Entry? {
        storage.withLock { $0.entries[url.absoluteString]?.entry }
    }

    /// Remembers `entry` for `url`.
    public func store(_ entry: Entry, for url: URL) {
        let capacity = capacity
        storage.withLock { storage in
            storage.counter &+= 1
            storage.entries[url.absoluteString] = (entry, storage.counter)
            if storage.entries.count > capacity,
                let oldest = storage.entries.min(by: { $0.value.order < $1.value.order })?.key
            {
                storage.entries[oldest] = nil
            }
        }
    }

    /// Forgets everything.
    public func removeAll() { storage.withLock { $0.entries.removeAll() } }
}
