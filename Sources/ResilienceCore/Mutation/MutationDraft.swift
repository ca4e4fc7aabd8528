import Foundation

/// A mutation to enqueue; the store assigns its identifier and creation time.
public struct MutationDraft: Hashable, Sendable {
    /// The entity's type.
    public var entityType: String
    /// The entity's identifier.
    public var entityID: String
    /// What to do.
    public var operation: MutationOperation
    /// The payload.
    public var payload: Data
    /// The idempotency key; a new UUID when not given.
    public var idempotencyKey: String

    /// Creates a draft.
    public init(
        entityType: String, entityID: String, operation: MutationOperation, payload: Data = Data(),
        idempotencyKey: String = UUID().uuidString
    ) {
        self.entityType = entityType
        self.entityID = entityID
        self.operation = operation
        self.payload = payload
        self.idempotencyKey = idempotencyKey
    }
}
