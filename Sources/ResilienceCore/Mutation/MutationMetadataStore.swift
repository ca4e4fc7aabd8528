import Foundation

/// A small key/value table beside a ``MutationQueue``, where a sync engine persists its own state (a
/// rate-limit cooldown) with the queue's durability.
///
/// ## Contract
/// - ``setMetadata(_:forKey:)`` is durable on return; a later value under the same key replaces the earlier one,
///   and `nil` deletes the key.
/// - ``setMetadata(_:forKey:)`` stores no value larger than ``MutationMetadataLimits/maximumValueBytes`` (64 KiB)
///   and none under a key longer than ``MutationMetadataLimits/maximumKeyBytes`` (1,024 bytes): it throws `DB_003`
///   (``MutationMetadataLimits/validate(_:forKey:)``) and keeps what was stored, so the table cannot grow the
///   store's file without bound. Deleting (`nil`) takes any key.
/// - ``metadata(forKey:)`` returns the last value stored under the key, or `nil` when there is none.
/// - Every failure throws a ``MutationStoreError``. Safe to call from any task.
public protocol MutationMetadataStore: Sendable {
    /// The value stored under `key`, if any.
    func metadata(forKey key: String) throws -> Data?
    /// Stores `value` under `key` (or deletes the key when `value` is `nil`); a value or key past
    /// ``MutationMetadataLimits`` throws `DB_003`.
    func setMetadata(_ value: Data?, forKey key: String) throws
}
