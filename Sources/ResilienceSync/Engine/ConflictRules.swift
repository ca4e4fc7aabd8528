import ResilienceCore

/// How a ``SyncEngine`` reads a `409 Conflict` answer to a mutation.
///
/// A 409 is synced (and the local duplicate deleted) only when it confirms the entity already exists:
/// ``IdempotencyConflict`` recognises an RFC 9457 problem `type` or an error code saying so, and
/// ``confirmsExisting`` can confirm it for an API with its own convention. A 409 saying a request with the same
/// `Idempotency-Key` is still in progress keeps the mutation queued (no attempt counted) for a later pass with
/// the same key. Any other 409 is ambiguous: a failed attempt that keeps local data, unless
/// ``ambiguousMeansDuplicate`` is set. A 409 answering a whole batch request cannot say which of its items
/// exists: an "already exists" in it is ambiguous for each item (``confirmsExisting`` is still asked per item).
///
/// ```swift
/// var configuration = SyncEngine.Configuration()
/// configuration.conflicts.confirmsExisting = { response, _ in response.headers["X-Duplicate-Of"] != nil }
/// ```
public struct ConflictRules: Sendable {
    /// The API's own sign that a 409 confirms the entity exists (asked before the standard recogniser);
    /// `nil` to rely on the problem type and error code alone.
    public var confirmsExisting: (@Sendable (HTTPResponse, Mutation) -> Bool)?
    /// Whether an ambiguous 409 counts as a confirmed duplicate (deleting the local copy). `false` by default:
    /// a 409 that does not say what it means never deletes local data.
    public var ambiguousMeansDuplicate: Bool

    /// Creates the rules.
    ///
    /// - Parameters:
    ///   - confirmsExisting: The API's own sign that a 409 confirms the entity exists.
    ///   - ambiguousMeansDuplicate: Whether an ambiguous 409 counts as a confirmed duplicate.
    public init(
        confirmsExisting: (@Sendable (HTTPResponse, Mutation) -> Bool)? = nil, ambiguousMeansDuplicate: Bool = false
    ) {
        self.confirmsExisting = confirmsExisting
        self.ambiguousMeansDuplicate = ambiguousMeansDuplicate
    }
}
