import Foundation

/// A conformance kit for third-party ``MutationStore`` implementations (a Core Data or GRDB queue, say).
///
/// Give it a factory that makes a fresh, empty store; it checks the protocol's contract one rule at a time,
/// each on its own store: FIFO order and paging, fields kept, unique idempotency keys, atomic batches,
/// attempts and the failed list, no-ops on stale identifiers, identifiers never reused, `removeAllPending`,
/// and the metadata table. Durability across a crash cannot be checked in-process; ResilienceSync's
/// crash-safety test shows how. It works with any test framework:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await MutationStoreConformance { try MyStore(path: temporaryPath()) }.check()
/// }
/// ```
public struct MutationStoreConformance: ConformanceKit {
    typealias Violation = ConformanceViolation

    /// Makes a fresh, empty store for each rule.
    public let makeStore: @Sendable () throws -> any MutationStore
    /// Called with each store when its rule is done (close it, delete its file).
    public let disposeStore: @Sendable (any MutationStore) -> Void

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - disposeStore: Called with each store when its case is done.
    ///   - makeStore: Makes a fresh, empty store for each case.
    public init(
        disposeStore: @escaping @Sendable (any MutationStore) -> Void = { _ in },
        makeStore: @escaping @Sendable () throws -> any MutationStore
    ) {
        self.makeStore = makeStore
        self.disposeStore = disposeStore
    }

    private typealias Rule = (name: String, body: @Sendable (any MutationStore) throws -> String?)

    /// `"MutationStore"`.
    public var subject: String { "MutationStore" }

    /// Runs every rule, one case each, on a fresh store.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        for rule in Self.rules {
            await run.check(rule.name) {
                let store: any MutationStore
                do {
                    store = try makeStore()
                } catch {
                    return "could not make a store: \(error)"
                }
                defer { disposeStore(store) }
                do {
                    return try rule.body(store)
                } catch {
                    return "unexpected error \(error)"
                }
            }
        }
        return run.report(subject)
    }

    private static func draft(
        _ entity: String, _ operation: MutationOperation = .create, key: String? = nil
    )
        -> MutationDraft
    {
        MutationDraft(
            entityType: "conformance", entityID: entity, operation: operation, payload: Data("{\"\(entity)\":1}".utf8),
            idempotencyKey: key ?? "key-\(entity)-\(operation)-\(UUID().uuidString)")
    }

    private static func isConstraintViolation(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return (error as? MutationStoreError)?.code == .constraintViolation
        }
    }

    private static let rules: [Rule] = [
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
                try store.moveToFailed(first.id, reason: "review")
                guard isConstraintViolation({ _ = try store.enqueue(draft("c", key: "same")) }) else {
                    return "a key on the failed list was accepted again"
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
                return count == 1 ? nil : "a failed batch left \(count - 1) mutations behind"
            }
        ),
        (
            "attempts-and-failed-list",
            { store in
                let a = try store.enqueue(draft("a"))
                let b = try store.enqueue(draft("b"))
                try store.recordFailure(a.id, error: "first")
                try store.recordFailure(a.id, error: "second")
                guard let counted = try store.pending(limit: 1).first, counted.attempts == 2,
                    counted.lastError == "second"
                else { return "recordFailure did not count attempts and keep the last error" }
                try store.moveToFailed(a.id, reason: "gave up")
                guard try store.pending(limit: 10).map(\.id) == [b.id] else { return "moveToFailed left it pending" }
                guard let failed = try store.failed().first, failed.id == a.id, failed.lastError == "gave up" else {
                    return "the failed list does not hold it with its reason"
                }
                try store.requeueFailed(a.id)
                let requeued = try store.pending(limit: 10)
                guard requeued.count == 2, requeued.last?.idempotencyKey == a.idempotencyKey,
                    requeued.last?.attempts == 0,
                    let newID = requeued.last?.id, newID > b.id, try store.failed().isEmpty
                else { return "requeueFailed did not move it to the end with attempts reset" }
                try store.moveToFailed(newID, reason: "again")
                try store.discardFailed(newID)
                return try store.failed().isEmpty ? nil : "discardFailed kept it"
            }
        ),
        (
            "stale-ids-are-no-ops",
            { store in
                let a = try store.enqueue(draft("a"))
                try store.remove(a.id)
                try store.remove(a.id)
                try store.recordFailure(a.id, error: "late")
                try store.moveToFailed(a.id, reason: "late")
                guard try store.failed().isEmpty, try store.pendingCount() == 0 else {
                    return "an operation on a removed id changed the store"
                }
                let b = try store.enqueue(draft("b"))
                return b.id > a.id ? nil : "id \(a.id) was reused"
            }
        ),
        (
            "remove-all-pending",
            { store in
                let stored = try store.enqueue(batch: (0..<4).map { draft("e\($0)") })
                try store.moveToFailed(stored[0].id, reason: "review")
                let removed = try store.removeAllPending()
                guard removed == 3 else { return "removeAllPending returned \(removed), expected 3" }
                return try store.failed().count == 1 ? nil : "removeAllPending touched the failed list"
            }
        ),
        (
            "metadata",
            { store in
                guard try store.metadata(forKey: "k") == nil else { return "an unknown key has a value" }
                try store.setMetadata(Data([1]), forKey: "k")
                try store.setMetadata(Data([2]), forKey: "k")
                guard try store.metadata(forKey: "k") == Data([2]) else { return "setMetadata did not overwrite" }
                try store.setMetadata(nil, forKey: "k")
                return try store.metadata(forKey: "k") == nil ? nil : "setMetadata(nil) did not delete"
            }
        ),
    ]
}
