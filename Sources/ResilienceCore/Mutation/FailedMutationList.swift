/// The failed list beside a ``MutationQueue``: the mutations a sender gave up on
/// (``MutationOutcome/givenUp(reason:)``), kept until the user reviews them.
///
/// ## Contract
/// - ``failed()`` lists them oldest first (increasing ``Mutation/id``), each with its attempts and the reason it
///   was given up as its ``Mutation/lastError``.
/// - A failed mutation keeps its idempotency key: enqueuing the same key again throws `DB_003`.
/// - ``requeueFailed(_:)`` and ``discardFailed(_:)`` on an identifier that is not on the list do nothing.
/// - ``MutationQueue/removeAllPending()`` never touches the list.
/// - Safe to call from any task.
public protocol FailedMutationList: Sendable {
    /// The failed mutations, oldest first.
    func failed() throws -> [Mutation]
    /// Moves a failed mutation back to the end of the pending queue (a new identifier) with its attempts reset.
    func requeueFailed(_ id: Int64) throws
    /// Deletes a failed mutation for good (the user reviewed it).
    func discardFailed(_ id: Int64) throws
}
