import Foundation
import ResilienceCore

/// An ``HTTPCacheStore`` in memory, bounded by a byte budget with least-recently-used eviction.
///
/// Every operation is a few dictionary lookups under a lock, whatever the number of entries: the variants are
/// kept in order of use, so eviction takes the oldest without a scan.
public final class InMemoryHTTPCacheStore: HTTPCacheStore {
    /// One stored variant: a key and its variant key.
    private struct VariantID: Hashable, Sendable {
        var key: String
        var variantKey: String
    }

    private struct Stored: Sendable {
        var entry: HTTPCacheEntry
        var byteCount: Int
        /// When it was last stored or read, on ``State/useClock``: orders a key's few variants among themselves.
        var lastUse: UInt64
    }

    private struct State {
        /// Every stored variant, least recently used first.
        var variants = RecencyTable<VariantID, Stored>()
        /// Each key's variant keys, in the order they were stored.
        var variantKeys: [String: [String]] = [:]
        var byteCount = 0
        var useClock: UInt64 = 0

        /// When `id` was last stored or read (0 when it is not stored).
        func lastUse(_ id: VariantID) -> UInt64 { variants[id]?.lastUse ?? 0 }

        /// Removes one variant, keeping the key's others; returns whether it was stored.
        @discardableResult
        mutating func remove(_ id: VariantID) -> Bool {
            guard let stored = variants.removeValue(for: id) else { return false }
            byteCount -= stored.byteCount
            variantKeys[id.key]?.removeAll { $0 == id.variantKey }
            if variantKeys[id.key]?.isEmpty == true { variantKeys[id.key] = nil }
            return true
        }
    }

    /// The most bytes kept, as ``HTTPCacheEntry/byteCount`` counts them (bodies, header fields, keys and a fixed
    /// ``HTTPCacheEntry/bookkeepingByteCount`` per entry).
    public let byteBudget: Int
    /// The most variants kept under one key; storing another removes the key's least recently used variant
    /// first, so a response that varies on a value that keeps changing (`Vary: Cookie`) cannot fill the
    /// budget with variants nobody selects again.
    public let maximumVariantsPerKey: Int
    private let state = LockedState(initialState: State())

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - byteBudget: The most bytes kept; entries larger than it are not stored. Default: 16 MiB.
    ///   - maximumVariantsPerKey: The most variants kept under one key (at least 1). Default: 16.
    public init(byteBudget: Int = 16 << 20, maximumVariantsPerKey: Int = 16) {
        self.byteBudget = max(0, byteBudget)
        self.maximumVariantsPerKey = max(1, maximumVariantsPerKey)
    }

    /// The bytes currently stored.
    public var byteCount: Int { state.withLock { $0.byteCount } }

    /// The number of stored variants.
    public var count: Int { state.withLock { $0.variants.count } }

    /// The variants stored under `key`, most recently used first.
    public func entries(forKey key: String) -> [HTTPCacheEntry] {
        state.withLock { state in
            // All used now: in the order they were stored, so the earliest stored is the first evicted of them.
            state.useClock &+= 1
            let stored = (state.variantKeys[key] ?? []).compactMap { variantKey -> HTTPCacheEntry? in
                let id = VariantID(key: key, variantKey: variantKey)
                guard var variant = state.variants[id] else { return nil }
                variant.lastUse = state.useClock
                state.variants.setNewest(variant, for: id)
                return variant.entry
            }
            return stored.reversed()
        }
    }

    /// Stores `entry`, replacing its variant (or, with ``maximumVariantsPerKey`` variants under its key
    /// already, the key's least recently used one), then evicts the least recently used entries to the budget.
    public func store(_ entry: HTTPCacheEntry) {
        let size = entry.byteCount
        let budget = byteBudget
        let maximumVariants = maximumVariantsPerKey
        let id = VariantID(key: entry.key, variantKey: entry.variantKey)
        state.withLock { state in
            state.remove(id)
            while let stored = state.variantKeys[entry.key], stored.count >= maximumVariants {
                // The first of the key's least recently used: the earliest stored of those read together.
                let ids = stored.map { VariantID(key: entry.key, variantKey: $0) }
                guard let oldest = ids.min(by: { state.lastUse($0) < state.lastUse($1) }) else { break }
                state.remove(oldest)
            }
            guard size <= budget else { return }
            state.useClock &+= 1
            state.variants.setNewest(Stored(entry: entry, byteCount: size, lastUse: state.useClock), for: id)
            state.variantKeys[entry.key, default: []].append(entry.variantKey)
            state.byteCount += size
            while state.byteCount > budget, let oldest = state.variants.oldest?.key { state.remove(oldest) }
        }
    }

    /// Removes every variant under `key`.
    public func removeEntries(forKey key: String) {
        state.withLock { state in
            for variantKey in state.variantKeys[key] ?? [] { state.remove(VariantID(key: key, variantKey: variantKey)) }
        }
    }

    /// Removes the variant of `key` stored for `variantKey`, keeping the key's other variants.
    public func removeEntry(forKey key: String, variantKey: String) {
        state.withLock { _ = $0.remove(VariantID(key: key, variantKey: variantKey)) }
    }
}
