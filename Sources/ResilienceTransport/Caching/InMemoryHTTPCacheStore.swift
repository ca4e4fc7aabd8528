import Foundation
import ResilienceCore

/// An ``HTTPCacheStore`` in memory, bounded by a byte budget with least-recently-used eviction.
///
/// A read is one dictionary lookup under a lock; eviction scans the entries once per evicted entry, which
/// stays cheap for the few thousand entries a budget of megabytes holds.
public final class InMemoryHTTPCacheStore: HTTPCacheStore {
    private struct Stored {
        var entry: HTTPCacheEntry
        var byteCount: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: [Stored]] = [:]
        var byteCount = 0
        var clock: UInt64 = 0
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
    public var count: Int { state.withLock { $0.entries.values.reduce(0) { $0 + $1.count } } }

    /// The variants stored under `key`, most recently used first.
    public func entries(forKey key: String) -> [HTTPCacheEntry] {
        state.withLock { state in
            guard var variants = state.entries[key] else { return [] }
            state.clock &+= 1
            for index in variants.indices { variants[index].lastUse = state.clock }
            state.entries[key] = variants
            return variants.reversed().map(\.entry)
        }
    }

    /// Stores `entry`, replacing its variant (or, with ``maximumVariantsPerKey`` variants under its key
    /// already, the key's least recently used one), then evicts the least recently used entries to the budget.
    public func store(_ entry: HTTPCacheEntry) {
        let size = entry.byteCount
        let budget = byteBudget
        let maximumVariants = maximumVariantsPerKey
        state.withLock { state in
            var variants = state.entries[entry.key] ?? []
            if let index = variants.firstIndex(where: { $0.entry.variantKey == entry.variantKey }) {
                state.byteCount -= variants[index].byteCount
                variants.remove(at: index)
            }
            while variants.count >= maximumVariants {
                // The first of the least recently used: the earliest stored of those read together.
                guard let oldest = variants.indices.min(by: { variants[$0].lastUse < variants[$1].lastUse }) else {
                    break
                }
                state.byteCount -= variants[oldest].byteCount
                variants.remove(at: oldest)
            }
            state.entries[entry.key] = variants.isEmpty ? nil : variants
            guard size <= budget else { return }
            state.clock &+= 1
            variants.append(Stored(entry: entry, byteCount: size, lastUse: state.clock))
            state.entries[entry.key] = variants
            state.byteCount += size
            while state.byteCount > budget { Self.evictLeastRecentlyUsed(&state) }
        }
    }

    /// Removes every variant under `key`.
    public func removeEntries(forKey key: String) {
        state.withLock { state in
            guard let variants = state.entries.removeValue(forKey: key) else { return }
            state.byteCount -= variants.reduce(0) { $0 + $1.byteCount }
        }
    }

    /// Removes the variant of `key` stored for `variantKey`, keeping the key's other variants.
    public func removeEntry(forKey key: String, variantKey: String) {
        state.withLock { state in
            guard var variants = state.entries[key],
                let index = variants.firstIndex(where: { $0.entry.variantKey == variantKey })
            else { return }
            state.byteCount -= variants[index].byteCount
            variants.remove(at: index)
            state.entries[key] = variants.isEmpty ? nil : variants
        }
    }

    private static func evictLeastRecentlyUsed(_ state: inout State) {
        var oldest: (key: String, index: Int, lastUse: UInt64)?
        for (key, variants) in state.entries {
            for (index, stored) in variants.enumerated() where stored.lastUse < (oldest?.lastUse ?? .max) {
                oldest = (key, index, stored.lastUse)
            }
        }
        guard let oldest, var variants = state.entries[oldest.key] else {
            state.byteCount = 0
            return
        }
        state.byteCount -= variants[oldest.index].byteCount
        variants.remove(at: oldest.index)
        state.entries[oldest.key] = variants.isEmpty ? nil : variants
    }
}
