/// A durable queue of pending mutations: what a sync engine needs to enqueue writes, read them in order and
/// record what became of each.
///
/// ## Contract
/// - **Durable on return.** When ``enqueue(batch:)`` returns, the mutations survive a crash or power loss.
/// - **FIFO per entity.** ``pending(after:limit:)`` returns mutations in enqueue order (increasing ``Mutation/id``,
///   never reused); two mutations of one entity are never reordered.
/// - **Atomic batches.** ``enqueue(batch:)`` stores every draft or none, and returns one mutation per draft in
///   the drafts' order.
/// - **Unique idempotency keys.** Enqueuing a key that is already stored (pending, or kept after
///   ``MutationOutcome/givenUp(reason:)``) throws ``MutationStoreError`` with code `DB_003` (constraint
///   violation) and stores nothing.
/// - **Coalescing is optional** and store-specific: a store configured to coalesce drops the *pending updates*
///   of an entity when a delete of that entity is enqueued (the delete makes them pointless). Nothing else is
///   ever merged.
/// - **Nothing is lost silently.** Every failure throws a ``MutationStoreError``; a mutation leaves the queue
///   only through ``record(_:for:)`` with ``MutationOutcome/applied`` (the server applied it) or
///   ``MutationOutcome/givenUp(reason:)`` (kept for review, see ``FailedMutationList``), through
///   ``removeAllPending()``, or through coalescing.
/// - ``record(_:for:)`` on an identifier that is no longer pending does nothing (the mutation was coalesced or
///   cleared meanwhile).
/// - Safe to call from any task.
///
/// A complete store adopts ``FailedMutationList`` and ``MutationMetadataStore`` too (``MutationStore``).
public protocol MutationQueue: Sendable {
    /// Appends mutations in one transaction (all or none) and returns them with their identifiers, in order.
    func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation]
    /// Up to `limit` pending mutations whose identifier is greater than `id`, oldest first.
    func pending(after id: Int64, limit: Int) throws -> [Mutation]
    /// How many mutations are pending.
    func pendingCount() throws -> Int
    /// Records what became of the pending mutation `id`: applied (it leaves the queue), a failed attempt (it
    /// stays, its attempts counted) or given up (it moves to the failed list).
    func record(_ outcome: MutationOutcome, for id: Int64) throws
    /// Deletes every pending mutation and returns how many there were.
    func removeAllPending() throws -> Int
}

extension MutationQueue {
    /// Appends one mutation and returns it with its identifier; durable when this returns.
    ///
    /// - Throws: ``MutationStoreError``: what ``enqueue(batch:)`` throws, or `DB_003` when the store answers the
    ///   one draft with a number of mutations other than one.
    public func enqueue(_ draft: MutationDraft) throws -> Mutation {
        let stored = try enqueue(batch: [draft])
        guard stored.count == 1, let mutation = stored.first else {
            throw MutationStoreError(
                .constraintViolation, message: "the store answered one draft with \(stored.count) mutations")
        }
        return mutation
    }

    /// The oldest `limit` pending mutations, in order.
    public func pending(limit: Int) throws -> [Mutation] {
        try pending(after: 0, limit: limit)
    }
}
