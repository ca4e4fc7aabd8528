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
    /// The idempotency key; a new UUID when not given. Sent as the `Idempotency-Key` header, so it has no control
    /// characters (``validate(maximumPayloadBytes:)``).
    public var idempotencyKey: String

    /// Creates a draft.
    ///
    /// - Parameters:
    ///   - entityType: The entity's type.
    ///   - entityID: The entity's identifier.
    ///   - operation: What to do.
    ///   - payload: The payload. Default: `Data()`.
    ///   - idempotencyKey: The idempotency key; a new UUID when not given. Default: `UUID().uuidString`.
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

    /// The largest payload a store accepts by default (1 MiB): a queue of hostile giants must not fill memory.
    public static let defaultMaximumPayloadBytes = 1 << 20

    /// Checks the draft before it is stored: non-empty entity type, entity id and idempotency key (each at
    /// most 1,024 bytes), an idempotency key without control characters (it is sent as the `Idempotency-Key`
    /// header, which cannot carry them) and a payload of at most `maximumPayloadBytes`.
    ///
    /// - Throws: ``MutationStoreError`` with code `DB_003` (constraint violation) naming the bad field.
    public func validate(maximumPayloadBytes: Int = MutationDraft.defaultMaximumPayloadBytes) throws {
        for (name, value) in [
            ("entity type", entityType), ("entity id", entityID), ("idempotency key", idempotencyKey),
        ] {
            if value.isEmpty {
                throw MutationStoreError(.constraintViolation, message: "the \(name) is empty")
            }
            if value.utf8.count > 1024 {
                throw MutationStoreError(.constraintViolation, message: "the \(name) is longer than 1024 bytes")
            }
        }
        if idempotencyKey.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw MutationStoreError(
                .constraintViolation,
                message: "the idempotency key has a control character, which an HTTP header cannot carry")
        }
        if payload.count > maximumPayloadBytes {
            throw MutationStoreError(
                .constraintViolation,
                message: "the payload has \(payload.count) bytes; the limit is \(maximumPayloadBytes)")
        }
    }
}
