import Foundation

/// A durable queue of pending mutations.
///
/// ## Contract
/// - **Durable on return.** When ``enqueue(_:)`` returns, the mutation survives a crash or power loss.
/// - **FIFO per entity.** ``pending(after:limit:)`` returns mutations in enqueue order (increasing ``Mutation/id``,
///   never reused); two mutations of one entity are never reordered.
/// - **Unique idempotency keys.** Enqueuing a key that is already stored (pending or failed) throws
///   ``MutationStoreError`` with code `DB_003` (constraint violation) and stores nothing.
/// - **Coalescing is optional** and store-specific: a store configured to coalesce drops the *pending updates*
///   of an entity when a delete of that entity is enqueued (the delete makes them pointless). Nothing else is
///   ever merged.
/// - **Nothing is lost silently.** Every failure throws a ``MutationStoreError``; a mutation leaves the queue
///   only through ``remove(_:)`` (applied), ``moveToFailed(_:reason:)`` (kept for review),
///   ``removeAllPending()`` or coalescing.
/// - ``remove(_:)``, ``recordFailure(_:error:)`` and ``moveToFailed(_:reason:)`` on an identifier that is no
///   longer pending do nothing (the mutation was coalesced or cleared meanwhile).
/// - A small key/value table (``metadata(forKey:)``) persists the sync engine's own state (a rate-limit
///   cooldown) with the same durability.
/// - Safe to call from any task.
public protocol MutationStore: Sendable {
    /// Appends a mutation and returns it with its identifier.
    func enqueue(_ draft: MutationDraft) throws -> Mutation
    /// Appends several mutations in one transaction (all or none).
    func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation]
    /// Up to `limit` pending mutations whose identifier is greater than `id`, oldest first.
    func pending(after id: Int64, limit: Int) throws -> [Mutation]
    /// How many mutations are pending.
    func pendingCount() throws -> Int
    /// Removes an applied mutation.
    func remove(_ id: Int64) throws
    /// Counts a failed attempt and records its error.
    func recordFailure(_ id: Int64, error: String) throws
    /// Moves a mutation to the failed list for the user's review.
    func moveToFailed(_ id: Int64, reason: String) throws
    /// The failed mutations, oldest first.
    func failed() throws -> [Mutation]
    /// Moves a failed mutation back to the end of the pending queue with its attempts reset.
    func requeueFailed(_ id: Int64) throws
    /// Deletes a failed mutation for good (the user reviewed it).
    func discardFailed(_ id: Int64) throws
    /// Deletes every pending mutation and returns how many there were.
    func removeAllPending() throws -> Int
    /// The value stored under `key` in the metadata table, if any.
    func metadata(forKey key: String) throws -> Data?
    /// Stores `value` under `key` (or deletes the key when `value` is `nil`).
    func setMetadata(_ value: Data?, forKey key: String) throws
}

extension MutationStore {
    /// The oldest `limit` pending mutations, in order.
    public func pending(limit: Int) throws -> [Mutation] {
        try pending(after: 0, limit: limit)
    }
}
