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
///
/// The number of keys is bounded too, by each store's setting, ``defaultMaximumKeyCount`` (256) unless it says
/// otherwise: bounded values under unboundedly many keys (a key per request, per item, per day) still grow the file
/// without end. Storing a value under a new key when the table is full throws `DB_003`
/// (``validateNewKey(_:keyCount:maximumKeyCount:)``); a key already stored takes a new value, and a key is deleted,
/// however many keys there are.
public enum MutationMetadataLimits {
    /// The largest value stored: 64 KiB.
    public static let maximumValueBytes = 64 << 10

    /// The longest key a value is stored under: 1,024 bytes of UTF-8.
    public static let maximumKeyBytes = 1_024

    /// How many keys a store's table holds unless the store is configured otherwise: 256.
    ///
    /// A sync engine keeps one key (its breaker's state); an app adds a cursor or a token for each collection it
    /// syncs, a handful in most apps and some dozens in a large one. 256 leaves room for several times that, while a
    /// caller that writes a new key per request, per item or per day is refused with `DB_003` within its first few
    /// hundred writes instead of growing the file for as long as the app runs. With every value at
    /// ``maximumValueBytes`` under a key of ``maximumKeyBytes``, the table then holds at most about 16.3 MiB.
    public static let defaultMaximumKeyCount = 256

    /// Checks that a value may be stored under `key`, a key the table does not hold yet, while the table holds
    /// `keyCount` keys: fewer than `maximumKeyCount` (taken as at least 1).
    ///
    /// - Parameters:
    ///   - key: The new key, named in the error.
    ///   - keyCount: How many keys the table holds now.
    ///   - maximumKeyCount: The most keys the table holds (the store's setting; ``defaultMaximumKeyCount`` unless
    ///     configured otherwise).
    /// - Throws: ``MutationStoreError`` with code `DB_003` (constraint violation) when the table is full.
    public static func validateNewKey(_ key: String, keyCount: Int, maximumKeyCount: Int) throws {
        let maximum = max(1, maximumKeyCount)
        guard keyCount >= maximum else { return }
        throw MutationStoreError(
            .constraintViolation,
            message:
                "the metadata table holds \(keyCount) keys, its limit; \"\(key)\" is not stored (overwrite or "
                + "delete a key instead)")
    }

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
