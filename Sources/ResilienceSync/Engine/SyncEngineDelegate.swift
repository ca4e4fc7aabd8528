import ResilienceCore

/// What the integrator's local database does when the engine settles a mutation's fate.
///
/// The engine calls these from its own actor, one at a time, and waits for them. They must not call back into
/// the engine synchronously in a way that waits for the current pass to finish.
public protocol SyncEngineDelegate: Sendable {
    /// The mutation exceeded its retry limit (or was cleared): mark its entity failed (`syncStatus = .failed`)
    /// and keep it locally for the user's review. A mutation whose move to the failed list a storage failure or a
    /// crash interrupted is marked again on the next pass, so marking must be idempotent.
    func markEntityFailed(_ mutation: Mutation, reason: String) async

    /// The server already had the entity (409): delete the local duplicate.
    func deleteLocalDuplicate(_ mutation: Mutation) async

    /// The server applied the mutation; `response` is its answer (or the batch item's).
    func mutationApplied(_ mutation: Mutation, response: HTTPResponse) async
}

extension SyncEngineDelegate {
    /// Does nothing by default.
    public func mutationApplied(_ mutation: Mutation, response: HTTPResponse) async {}
}
