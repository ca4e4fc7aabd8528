import Foundation

/// A small key/value table beside a ``MutationQueue``, where a sync engine persists its own state (a
/// rate-limit cooldown) with the queue's durability.
///
/// ## Contract
/// - ``setMetadata(_:forKey:)`` is durable on return; a later value under the same key replaces the earlier one,
///   and `nil` deletes the key.
/// - ``setMetadata(_:forKey:)`` stores no value larger than ``MutationMetadataLimits/maximumValueBytes`` (64 KiB)
///   and none under a key longer than ``MutationMetadataLimits/maximumKeyBytes`` (1,024 bytes): it throws `DB_003`
///   (``MutationMetadataLimits/validate(_:forKey:)``) and keeps what was stored. Deleting (`nil`) takes any key.
/// - The table holds a bounded number of keys, set per store (``MutationMetadataLimits/defaultMaximumKeyCount``,
///   256, unless configured otherwise): a value under a new key when it is full throws `DB_003`
///   (``MutationMetadataLimits/validateNewKey(_:keyCount:maximumKeyCount:)``) and stores nothing; a key already
///   stored still takes a new value, and any key can be deleted, which makes room for a new one. With values and
///   keys bounded too, no caller can grow the store's file without bound through the table.
/// - ``metadata(forKey:)`` returns the last value stored under the key, or `nil` when there is none.
/// - Every failure throws a ``MutationStoreError``. Safe to call from any task.
public protocol MutationMetadataStore: Sendable {
    /// The value stored under `key`, if any.
    func metadata(forKey key: String) throws -> Data?
    /// Stores `value` under `key` (or deletes the key when `value` is `nil`); a value or key past
    /// ``MutationMetadataLimits``, or a new key when the table holds its most keys, throws `DB_003`.
    func setMetadata(_ value: Data?, forKey key: String) throws
}
