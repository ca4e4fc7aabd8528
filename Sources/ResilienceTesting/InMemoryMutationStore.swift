import Foundation

/// A ``MutationStore`` in memory with the same semantics as the SQLite store (FIFO, unique idempotency keys,
/// optional coalescing, failed list, metadata), for tests and previews. Not durable, by design.
///
/// ``failNextWrite(with:)`` injects a storage failure (disk full, busy) so tests can check how callers cope.
public final class InMemoryMutationStore: MutationStore {
    private struct State {
        var nextID: Int64 = 1
        var pending: [Mutation] = []
        var failed: [Mutation] = []
        var metadata: [String: Data] = [:]
        var injectedFailure: MutationStoreError?
    }

    private let state = LockedState(initialState: State())
    private let coalescesUpdatesBeforeDelete: Bool
    private let maximumPayloadBytes: Int
    private let maximumMetadataKeyCount: Int
    private let currentDate: @Sendable () -> Date

    /// Creates an empty store; `currentDate` stamps ``Mutation/createdAt`` (a fixed date by default, so tests
    /// are reproducible).
    ///
    /// - Parameters:
    ///   - coalescesUpdatesBeforeDelete: Whether enqueuing a delete drops the entity's pending updates, as the SQLite
    ///     store's `coalescesUpdatesBeforeDelete` setting does. Default: `false`.
    ///   - maximumPayloadBytes: The largest payload accepted; larger ones are rejected with `DB_003`. Default: 1 MiB
    ///     (``MutationDraft/defaultMaximumPayloadBytes``).
    ///   - maximumMetadataKeyCount: The most keys the metadata table holds (at least 1), as the SQLite store's
    ///     `maximumMetadataKeyCount` setting: a value under a new key when it is full throws `DB_003`. Default: 256
    ///     (``MutationMetadataLimits/defaultMaximumKeyCount``).
    ///   - currentDate: Stamps ``Mutation/createdAt``. Default: a fixed date (14 November 2023), so tests are
    ///     reproducible.
    public init(
        coalescesUpdatesBeforeDelete: Bool = false,
        maximumPayloadBytes: Int = MutationDraft.defaultMaximumPayloadBytes,
        maximumMetadataKeyCount: Int = MutationMetadataLimits.defaultMaximumKeyCount,
        currentDate: @escaping @Sendable () -> Date = { Date(timeIntervalSince1970: 1_700_000_000) }
    ) {
        self.coalescesUpdatesBeforeDelete = coalescesUpdatesBeforeDelete
        self.maximumPayloadBytes = maximumPayloadBytes
        self.maximumMetadataKeyCount = maximumMetadataKeyCount
        self.currentDate = currentDate
    }

    /// Makes the next write (enqueue, record, requeue, discard, remove all, metadata) throw `error` and change
    /// nothing.
    public func failNextWrite(with error: MutationStoreError) {
        state.withLock { $0.injectedFailure = error }
    }

    private func write<Result>(_ body: (inout State) throws -> Result) throws -> Result {
        try state.withLock { state in
            if let failure = state.injectedFailure {
                state.injectedFailure = nil
                throw failure
            }
            return try body(&state)
        }
    }

    /// Appends several mutations atomically.
    public func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation] {
        for draft in drafts { try draft.validate(maximumPayloadBytes: maximumPayloadBytes) }
        let createdAt = currentDate()
        return try write { state in
            var copy = state
            var stored: [Mutation] = []
            for draft in drafts {
                let key = draft.idempotencyKey
                if copy.pending.contains(where: { $0.idempotencyKey == key })
                    || copy.failed.contains(where: { $0.idempotencyKey == key })
                {
                    throw MutationStoreError(
                        .constraintViolation, message: "UNIQUE constraint failed: mutations.idempotency_key")
                }
                if coalescesUpdatesBeforeDelete && draft.operation == .delete {
                    copy.pending.removeAll {
                        $0.entityType == draft.entityType && $0.entityID == draft.entityID && $0.operation == .update
                    }
                }
                let mutation = Mutation(
                    id: copy.nextID, entityType: draft.entityType, entityID: draft.entityID,
                    operation: draft.operation, payload: draft.payload, idempotencyKey: key, createdAt: createdAt)
                copy.nextID += 1
                copy.pending.append(mutation)
                stored.append(mutation)
            }
            state = copy
            return stored
        }
    }

    /// Up to `limit` pending mutations after `id`, oldest first.
    public func pending(after id: Int64, limit: Int) throws -> [Mutation] {
        guard limit > 0 else { return [] }
        return state.withLock { Array($0.pending.lazy.filter { $0.id > id }.prefix(limit)) }
    }

    /// How many mutations are pending.
    public func pendingCount() throws -> Int { state.withLock { $0.pending.count } }

    /// Records what became of a pending mutation (no-op if it is no longer pending): applied removes it, a
    /// failed attempt counts it and keeps its error, given up moves it to the failed list with its reason.
    public func record(_ outcome: MutationOutcome, for id: Int64) throws {
        try write { state in
            guard let index = state.pending.firstIndex(where: { $0.id == id }) else { return }
            switch outcome {
            case .applied:
                state.pending.remove(at: index)
            case .attemptFailed(let error):
                state.pending[index].attempts += 1
                state.pending[index].lastError = error
            case .givenUp(let reason):
                var mutation = state.pending.remove(at: index)
                mutation.lastError = reason
                let position = state.failed.firstIndex { $0.id > mutation.id } ?? state.failed.endIndex
                state.failed.insert(mutation, at: position)
            }
        }
    }

    /// Up to `limit` failed mutations after `id`, oldest first; none when `limit` is zero or less.
    public func failed(after id: Int64, limit: Int) throws -> [Mutation] {
        guard limit > 0 else { return [] }
        return state.withLock { state in
            // The list is kept in identifier order: find the page's start by bisection, not by a scan.
            var (low, high) = (0, state.failed.count)
            while low < high {
                let middle = (low + high) / 2
                if state.failed[middle].id > id { high = middle } else { low = middle + 1 }
            }
            return Array(state.failed[low...].prefix(limit))
        }
    }

    /// Moves a failed mutation to the end of the queue with a new identifier and no attempts.
    public func requeueFailed(_ id: Int64) throws {
        try write { state in
            guard let index = state.failed.firstIndex(where: { $0.id == id }) else { return }
            var mutation = state.failed.remove(at: index)
            mutation.id = state.nextID
            mutation.attempts = 0
            mutation.lastError = nil
            state.nextID += 1
            state.pending.append(mutation)
        }
    }

    /// Deletes a failed mutation.
    public func discardFailed(_ id: Int64) throws {
        try write { $0.failed.removeAll { $0.id == id } }
    }

    /// Deletes every pending mutation.
    public func removeAllPending() throws -> Int {
        try write { state in
            defer { state.pending.removeAll() }
            return state.pending.count
        }
    }

    /// The value under `key`.
    public func metadata(forKey key: String) throws -> Data? { state.withLock { $0.metadata[key] } }

    /// Stores or deletes the value under `key`; a value or key past ``MutationMetadataLimits``, or a new key when the
    /// table holds its most keys, throws `DB_003`.
    public func setMetadata(_ value: Data?, forKey key: String) throws {
        if let value { try MutationMetadataLimits.validate(value, forKey: key) }
        let maximumKeyCount = maximumMetadataKeyCount
        try write { state in
            if value != nil, state.metadata[key] == nil {
                try MutationMetadataLimits.validateNewKey(
                    key, keyCount: state.metadata.count, maximumKeyCount: maximumKeyCount)
            }
            state.metadata[key] = value
        }
    }
}
