import Foundation

/// The bounds of a ``MutationMetadataStore``'s table, which every store enforces in
/// ``MutationMetadataStore/setMetadata(_:forKey:)``, so that no caller, buggy or hostile, can grow the store's file
/// without bound through it.
///
/// The table holds a sync engine's own small state: its persisted breaker is a JSON object of a few hundred bytes
/// (a state, a remaining open time, a handful of policy numbers), and a cursor or a token is of the same order. A
/// value of 64 KiB leaves room for a hundred times that; what is larger is data, and belongs in the queue, whose
/// payloads have their own limit (``MutationDraft/defaultMaximumPayloadBytes``). A key is a name, bounded like a
/// draft's fields: 1,024 bytes of UTF-8.
public enum MutationMetadataLimits {
    /// The largest value stored: 64 KiB.
    public static let maximumValueBytes = 64 << 10

    /// The longest key a value is stored under: 1,024 bytes of UTF-8.
    public static let maximumKeyBytes = 1_024

    /// Checks a value before it is stored under `key`: at most ``maximumValueBytes`` bytes, under a key of at most
    /// ``maximumKeyBytes`` bytes.
    ///
    /// - Throws: ``MutationStoreError`` with code `DB_003` (constraint violation) saying which bound was passed.
    public static func validate(_ value: Data, forKey key: String) throws {
        if key.utf8.count > maximumKeyBytes {
            throw MutationStoreError(
                .constraintViolation,
                message: "the metadata key has \(key.utf8.count) bytes; the limit is \(maximumKeyBytes)")
        }
        if value.count > maximumValueBytes {
            throw MutationStoreError(
                .constraintViolation,
                message:
                    "the metadata value under \"\(key)\" has \(value.count) bytes; the limit is \(maximumValueBytes)")
        }
    }
}
