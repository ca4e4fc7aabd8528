/// What became of a pending mutation, as a sync engine records it with ``MutationQueue/record(_:for:)``.
public enum MutationOutcome: Hashable, Sendable {
    /// The server applied it (or confirmed it already had it): the mutation leaves the queue.
    case applied
    /// An attempt failed: the mutation stays pending, its ``Mutation/attempts`` grows by one and `error` becomes
    /// its ``Mutation/lastError``.
    case attemptFailed(error: String)
    /// The sender gave up on it: the mutation leaves the pending queue for the failed list
    /// (``FailedMutationList``), with `reason` as its ``Mutation/lastError`` and its attempts kept.
    case givenUp(reason: String)
}
