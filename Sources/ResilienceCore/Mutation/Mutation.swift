import Foundation

/// One pending write, durable until the server has applied it.
public struct Mutation: Hashable, Sendable, Codable, Identifiable {
    /// The store's identifier; increases with enqueue order.
    public var id: Int64
    /// The entity's type (`"event"`).
    public var entityType: String
    /// The entity's identifier.
    public var entityID: String
    /// What to do.
    public var operation: MutationOperation
    /// The request body or any payload the sender needs.
    public var payload: Data
    /// Sent with every attempt so the server applies the mutation at most once.
    public var idempotencyKey: String
    /// Failed attempts so far (rate-limit responses do not count).
    public var attempts: Int
    /// The last failure's description, if any.
    public var lastError: String?
    /// When it was enqueued (wall-clock time from the store's injected date source).
    public var createdAt: Date

    /// Creates a mutation.
    ///
    /// - Parameters:
    ///   - id: The store's identifier; increases with enqueue order.
    ///   - entityType: The entity's type (`"event"`).
    ///   - entityID: The entity's identifier.
    ///   - operation: What to do.
    ///   - payload: The request body or any payload the sender needs.
    ///   - idempotencyKey: Sent with every attempt so the server applies the mutation at most once.
    ///   - attempts: Failed attempts so far (rate-limit responses do not count). Default: `0`.
    ///   - lastError: The last failure's description, if any.
    ///   - createdAt: When it was enqueued (wall-clock time from the store's injected date source).
    public init(
        id: Int64, entityType: String, entityID: String, operation: MutationOperation, payload: Data,
        idempotencyKey: String, attempts: Int = 0, lastError: String? = nil, createdAt: Date
    ) {
        self.id = id
        self.entityType = entityType
        self.entityID = entityID
        self.operation = operation
        self.payload = payload
        self.idempotencyKey = idempotencyKey
        self.attempts = attempts
        self.lastError = lastError
        self.createdAt = createdAt
    }
}
