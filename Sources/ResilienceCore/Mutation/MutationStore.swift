/// A durable queue of pending mutations.
///
/// ## Contract
/// - **Durable on return.** When ``enqueue(_:)`` returns, the mutation survives a crash or power loss.
/// - **FIFO per entity.** ``pending(limit:)`` returns mutations in enqueue order; two mutations of one
///   entity are never reordered.
/// - **Nothing is lost silently.** Every failure throws a ``MutationStoreError``; a mutation leaves the queue
///   only through ``remove(_:)`` (applied) or ``moveToFailed(_:reason:)`` (kept for review).
/// - Safe to call from any task.
public protocol MutationStore: Sendable {
    /// Appends a mutation and returns it with its identifier.
    func enqueue(_ draft: MutationDraft) throws -> Mutation
    /// Appends several mutations in one transaction (all or none).
    func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation]
    /// The oldest pending mutations, in order.
    func pending(limit: Int) throws -> [Mutation]
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
    /// Deletes every pending mutation and returns how many there were.
    func removeAllPending() throws -> Int
}
