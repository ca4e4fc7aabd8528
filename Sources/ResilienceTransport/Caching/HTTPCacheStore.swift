import Foundation
import ResilienceCore

/// Where a ``CachingTransport`` keeps its responses.
///
/// Implementations are synchronous, bounded by a byte budget (least recently used entries go first) and safe
/// to share across tasks; the built-in ones also bound the variants kept under one key. A store that cannot read an entry back intact (a body whose length no longer
/// matches, an undecodable row) drops it and answers as if it were absent. The cache treats any thrown
/// ``HTTPCacheStoreError`` as a miss and sends the request on, reporting the failure as
/// ``ResilienceEventKind/cacheStoreFailed``.
public protocol HTTPCacheStore: Sendable {
    /// The variants stored under `key`, most recently used first; reading them counts as a use.
    func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry]
    /// Stores `entry`, replacing the one with the same key and variant, then evicts to the budget.
    func store(_ entry: HTTPCacheEntry) throws(HTTPCacheStoreError)
    /// Removes every variant under `key`.
    func removeEntries(forKey key: String) throws(HTTPCacheStoreError)
    /// Removes the variant of `key` stored for `variantKey`, keeping the key's other variants; nothing when
    /// there is none. The cache calls it when an update moves a stored response to another secondary key (a
    /// `304` that changes `Vary`) and when a response outdates the one stored response it selected (a `HEAD`'s
    /// `410`, a `304` that adds `no-store`).
    func removeEntry(forKey key: String, variantKey: String) throws(HTTPCacheStoreError)
}

extension HTTPCacheStore {
    /// Removes every variant under `key`, for a store that cannot remove one variant alone: a cache that
    /// forgets more than it was asked to only fetches again.
    public func removeEntry(forKey key: String, variantKey: String) throws(HTTPCacheStoreError) {
        try removeEntries(forKey: key)
    }
}

/// Why a cache store failed.
public struct HTTPCacheStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        /// The reason's stable name.
        public let rawValue: String
        /// Creates a reason.
        ///
        /// - Parameter rawValue: The reason's stable name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The database could not be opened or created, even after quarantining a corrupt file.
        public static let unavailable = Reason(rawValue: "unavailable")
        /// A statement failed.
        public static let storageFailed = Reason(rawValue: "storage-failed")
        /// The disk has no room for the write (no space left, a quota spent, a file size limit): what was stored
        /// before is kept, and the person can be told the device is full.
        public static let diskFull = Reason(rawValue: "disk-full")
    }

    /// What failed.
    public var reason: Reason
    /// The underlying message.
    public var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - reason: What failed.
    ///   - message: The underlying message.
    public init(_ reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }

    /// `HTTP cache store storage-failed: …`.
    public var description: String { "HTTP cache store \(reason.rawValue): \(message)" }
}
