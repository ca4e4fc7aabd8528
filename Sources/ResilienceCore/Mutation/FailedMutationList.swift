/// The failed list beside a ``MutationQueue``: the mutations a sender gave up on
/// (``MutationOutcome/givenUp(reason:)``), kept until the user reviews them.
///
/// ## Contract
/// - ``failed(after:limit:)`` pages through them oldest first (increasing ``Mutation/id``): up to `limit`
///   mutations whose identifier is greater than `id`, each with its attempts and the reason it was given up as
///   its ``Mutation/lastError``. A `limit` of zero or less gives an empty page. Memory is bounded by the page, so
///   a list of any length can be read a page at a time; ``failed()`` reads the whole list at once. Each page is
///   its own read: a mutation given up between two pages is listed by a later one only if its identifier is
///   past the cursor.
/// - A failed mutation keeps its idempotency key: enqueuing the same key again throws `DB_003`.
/// - ``requeueFailed(_:)`` and ``discardFailed(_:)`` on an identifier that is not on the list do nothing.
/// - ``MutationQueue/removeAllPending()`` never touches the list.
/// - Safe to call from any task.
public protocol FailedMutationList: Sendable {
    /// Up to `limit` failed mutations whose identifier is greater than `id`, oldest first; none when `limit` is
    /// zero or less. Pass the last identifier of a page to read the next one.
    func failed(after id: Int64, limit: Int) throws -> [Mutation]
    /// Moves a failed mutation back to the end of the pending queue (a new identifier) with its attempts reset.
    func requeueFailed(_ id: Int64) throws
    /// Deletes a failed mutation for good (the user reviewed it).
    func discardFailed(_ id: Int64) throws
}

extension FailedMutationList {
    /// The whole failed list, oldest first, in one read: memory grows with the list, so page through a list
    /// that can grow long with ``failed(after:limit:)``.
    public func failed() throws -> [Mutation] {
        try failed(after: 0, limit: .max)
    }
}
