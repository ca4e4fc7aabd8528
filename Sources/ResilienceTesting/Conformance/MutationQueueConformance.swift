/// A conformance kit for third-party ``MutationQueue`` implementations (a Core Data or GRDB queue, say).
///
/// Give it a factory that makes a fresh, empty queue; it checks the protocol's contract one rule at a time,
/// each on its own queue: FIFO order and paging, fields kept, unique idempotency keys (also after a mutation
/// is given up), atomic batches, attempts counted and outcomes recorded, no-ops on stale identifiers,
/// identifiers never reused, and `removeAllPending`. Durability across a crash cannot be checked in-process;
/// ResilienceSync's crash-safety test shows how. The failed list and the metadata table have kits of their
/// own (``FailedMutationListConformance``, ``MutationMetadataStoreConformance``). It works with any test
/// framework:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await MutationQueueConformance { try MyStore(path: temporaryPath()) }.check()
/// }
/// ```
public struct MutationQueueConformance: ConformanceKit {
    /// Makes a fresh, empty queue for each rule.
    public let makeStore: @Sendable () throws -> any MutationQueue
    /// Called with each queue when its rule is done (close it, delete its file).
    public let disposeStore: @Sendable (any MutationQueue) -> Void

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - disposeStore: Called with each queue when its case is done.
    ///   - makeStore: Makes a fresh, empty queue for each case.
    public init(
        disposeStore: @escaping @Sendable (any MutationQueue) -> Void = { _ in },
        makeStore: @escaping @Sendable () throws -> any MutationQueue
    ) {
        self.makeStore = makeStore
        self.disposeStore = disposeStore
    }

    /// `"MutationQueue"`.
    public var subject: String { "MutationQueue" }

    /// Runs every rule, one case each, on a fresh queue.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check(Self.rules, makeStore: makeStore, disposeStore: disposeStore)
        return run.report(subject)
    }

    private static func draft(
        _ entity: String, _ operation: MutationOperation = .create, key: String? = nil
    )
        -> MutationDraft
    {
        MutationConformanceSupport.draft(entity, operation, key: key)
    }

    private static func isConstraintViolation(_ body: () throws -> Void) -> Bool {
        MutationConformanceSupport.isConstraintViolation(body)
    }

    private static let rules: [StoreRule<any MutationQueue>] = [
        (
            "fifo-order",
            { store in
                let ids = try (0..<5).map { try store.enqueue(draft("e\($0)")).id }
                guard ids == ids.sorted(), Set(ids).count == ids.count else { return "ids not increasing: \(ids)" }
                let pending = try store.pending(limit: 10).map(\.id)
                guard pending == ids else { return "pending \(pending) != enqueue order \(ids)" }
                let page = try store.pending(after: ids[1], limit: 2).map(\.id)
                guard page == [ids[2], ids[3]] else { return "pending(after:limit:) returned \(page)" }
                let count = try store.pendingCount()
                return count == 5 ? nil : "pendingCount \(count) != 5"
            }
        ),
        (
            "fields-kept",
            { store in
                let draft = draft("kept", .update)
                let returned = try store.enqueue(draft)
                guard let stored = try store.pending(limit: 1).first else { return "nothing pending" }
                let same =
                    stored.id == returned.id && stored.entityType == draft.entityType
                    && stored.entityID == draft.entityID
                    && stored.operation == draft.operation && stored.payload == draft.payload
                    && stored.idempotencyKey == draft.idempotencyKey && stored.attempts == 0 && stored.lastError == nil
                return same ? nil : "stored \(stored) differs from \(draft)"
            }
        ),
        (
            "unique-keys",
            { store in
                let first = try store.enqueue(draft("a", key: "same"))
                guard isConstraintViolation({ _ = try store.enqueue(draft("b", key: "same")) }) else {
                    return "a duplicate pending key was not a DB_003 constraint violation"
                }
                try store.record(.givenUp(reason: "review"), for: first.id)
                guard isConstraintViolation({ _ = try store.enqueue(draft("c", key: "same")) }) else {
                    return "the key of a given-up mutation was accepted again"
                }
                return try store.pendingCount() == 0 ? nil : "a rejected mutation was stored"
            }
        ),
        (
            "batch-atomic",
            { store in
                _ = try store.enqueue(draft("x", key: "taken"))
                guard isConstraintViolation({ _ = try store.enqueue(batch: [draft("a"), draft("b", key: "taken")]) })
                else {
                    return "a batch with a duplicate key did not fail with DB_003"
                }
                let count = try store.pendingCount()
                guard count == 1 else { return "a failed batch left \(count - 1) mutations behind" }
                let drafts = [draft("p"), draft("q"), draft("r")]
                let stored = try store.enqueue(batch: drafts)
                guard stored.map(\.idempotencyKey) == drafts.map(\.idempotencyKey) else {
                    return "a batch returned \(stored.count) mutations, not one per draft in order"
                }
                return try store.enqueue(batch: []).isEmpty ? nil : "an empty batch stored something"
            }
        ),
        (
            "outcomes-recorded",
            { store in
                let a = try store.enqueue(draft("a"))
                let b = try store.enqueue(draft("b"))
                let c = try store.enqueue(draft("c"))
                try store.record(.attemptFailed(error: "first"), for: a.id)
                try store.record(.attemptFailed(error: "second"), for: a.id)
                guard let counted = try store.pending(limit: 1).first, counted.attempts == 2,
                    counted.lastError == "second"
                else { return "a failed attempt was not counted with its error kept" }
                try store.record(.givenUp(reason: "gave up"), for: a.id)
                try store.record(.applied, for: c.id)
                let left = try store.pending(limit: 10).map(\.id)
                return left == [b.id] ? nil : "after giving up one and applying one, pending is \(left), not [\(b.id)]"
            }
        ),
        (
            "stale-ids-are-no-ops",
            { store in
                let a = try store.enqueue(draft("a", key: "stale"))
                try store.record(.applied, for: a.id)
                try store.record(.applied, for: a.id)
                try store.record(.attemptFailed(error: "late"), for: a.id)
                try store.record(.givenUp(reason: "late"), for: a.id)
                guard try store.pendingCount() == 0 else { return "an outcome for a removed id changed the queue" }
                guard !isConstraintViolation({ _ = try store.enqueue(draft("a", key: "stale")) }) else {
                    return "giving up a removed id kept it aside (its key is still taken)"
                }
                let b = try store.enqueue(draft("b"))
                return b.id > a.id ? nil : "id \(a.id) was reused"
            }
        ),
        (
            "remove-all-pending",
            { store in
                let stored = try store.enqueue(batch: (0..<4).map { draft("e\($0)") })
                try store.record(.givenUp(reason: "review"), for: stored[0].id)
                let removed = try store.removeAllPending()
                guard removed == 3 else { return "removeAllPending returned \(removed), expected 3" }
                guard try store.pendingCount() == 0, try store.removeAllPending() == 0 else {
                    return "removeAllPending left mutations pending"
                }
                let keptKey = stored[0].idempotencyKey
                return isConstraintViolation({ _ = try store.enqueue(draft("again", key: keptKey)) })
                    ? nil : "removeAllPending deleted a given-up mutation"
            }
        ),
    ]
}
