/// A conformance kit for third-party ``FailedMutationList`` implementations: the failed list beside a
/// ``MutationQueue``, filled by recording ``MutationOutcome/givenUp(reason:)``.
///
/// Give it a factory that makes a fresh, empty store; it checks the list's contract one rule at a time, each
/// on its own store: given-up mutations listed oldest first with their reason and attempts, read in bounded
/// pages (``FailedMutationList/failed(after:limit:)``, an empty page for a limit of zero or less), requeueing to the
/// end of the queue with attempts reset, discarding, keys kept unique while listed, no-ops on identifiers not
/// on the list, and `removeAllPending` sparing the list. It works with any test framework:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await FailedMutationListConformance { try MyStore(path: temporaryPath()) }.check()
/// }
/// ```
public struct FailedMutationListConformance: ConformanceKit {
    /// Makes a fresh, empty store for each rule.
    public let makeStore: @Sendable () throws -> any MutationQueue & FailedMutationList
    /// Called with each store when its rule is done (close it, delete its file).
    public let disposeStore: @Sendable (any MutationQueue & FailedMutationList) -> Void

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - disposeStore: Called with each store when its case is done.
    ///   - makeStore: Makes a fresh, empty store for each case.
    public init(
        disposeStore: @escaping @Sendable (any MutationQueue & FailedMutationList) -> Void = { _ in },
        makeStore: @escaping @Sendable () throws -> any MutationQueue & FailedMutationList
    ) {
        self.makeStore = makeStore
        self.disposeStore = disposeStore
    }

    /// `"FailedMutationList"`.
    public var subject: String { "FailedMutationList" }

    /// Runs every rule, one case each, on a fresh store.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check(Self.rules, makeStore: makeStore, disposeStore: disposeStore)
        return run.report(subject)
    }

    private static func draft(_ entity: String, key: String? = nil) -> MutationDraft {
        MutationConformanceSupport.draft(entity, key: key)
    }

    private static let rules: [StoreRule<any MutationQueue & FailedMutationList>] = [
        (
            "given-up-listed",
            { store in
                let a = try store.enqueue(draft("a"))
                _ = try store.enqueue(draft("b"))
                let c = try store.enqueue(draft("c"))
                try store.record(.attemptFailed(error: "timeout"), for: a.id)
                try store.record(.attemptFailed(error: "reset"), for: a.id)
                try store.record(.givenUp(reason: "late"), for: c.id)
                try store.record(.givenUp(reason: "gave up"), for: a.id)
                let failed = try store.failed()
                guard failed.map(\.id) == [a.id, c.id] else {
                    return "failed() lists \(failed.map(\.id)), not [\(a.id), \(c.id)] oldest first"
                }
                guard failed[0].lastError == "gave up", failed[0].attempts == 2 else {
                    return "a given-up mutation lost its reason or its attempts: \(failed[0])"
                }
                return try store.pendingCount() == 1 ? nil : "a given-up mutation is still pending"
            }
        ),
        (
            "failed-paged",
            { store in
                let stored = try store.enqueue(batch: (0..<6).map { draft("e\($0)") })
                let given = [0, 1, 3, 4, 5].map { stored[$0].id }
                for id in given { try store.record(.givenUp(reason: "review"), for: id) }
                var pages: [[Int64]] = []
                var cursor: Int64 = 0
                while pages.count < 4 {
                    let page = try store.failed(after: cursor, limit: 2).map(\.id)
                    pages.append(page)
                    guard let last = page.last else { break }
                    cursor = last
                }
                let expected = [[given[0], given[1]], [given[2], given[3]], [given[4]], []]
                guard pages == expected else {
                    return
                        "pages of 2 from the start were \(pages), not \(expected) (oldest first, bounded, no pending)"
                }
                let afterPending = try store.failed(after: stored[2].id, limit: 10).map(\.id)
                guard afterPending == Array(given[2...]) else {
                    return "failed(after: a pending id) listed \(afterPending), not \(Array(given[2...]))"
                }
                guard try store.failed(after: 0, limit: 0).isEmpty, try store.failed(after: 0, limit: -1).isEmpty
                else { return "a limit of zero or less gave a non-empty page" }
                let whole = try store.failed().map(\.id)
                return whole == given ? nil : "failed() listed \(whole), not every page in order \(given)"
            }
        ),
        (
            "requeue-to-end",
            { store in
                let a = try store.enqueue(draft("a"))
                let b = try store.enqueue(draft("b"))
                try store.record(.attemptFailed(error: "timeout"), for: a.id)
                try store.record(.givenUp(reason: "review"), for: a.id)
                try store.requeueFailed(a.id)
                let pending = try store.pending(limit: 10)
                guard pending.count == 2, let requeued = pending.last, requeued.idempotencyKey == a.idempotencyKey,
                    requeued.attempts == 0, requeued.id > b.id
                else { return "requeueFailed did not move it to the end with a new id and attempts reset" }
                return try store.failed().isEmpty ? nil : "requeueFailed left it on the failed list"
            }
        ),
        (
            "discard",
            { store in
                let a = try store.enqueue(draft("a"))
                try store.record(.givenUp(reason: "review"), for: a.id)
                try store.discardFailed(a.id)
                guard try store.failed().isEmpty else { return "discardFailed kept it" }
                return try store.pendingCount() == 0 ? nil : "discardFailed put it back in the queue"
            }
        ),
        (
            "keys-stay-unique",
            { store in
                let a = try store.enqueue(draft("a", key: "listed"))
                try store.record(.givenUp(reason: "review"), for: a.id)
                let accepted = !MutationConformanceSupport.isConstraintViolation {
                    _ = try store.enqueue(draft("b", key: "listed"))
                }
                return accepted ? "the key of a listed mutation was accepted again" : nil
            }
        ),
        (
            "unknown-ids-are-no-ops",
            { store in
                let pending = try store.enqueue(draft("pending"))
                try store.requeueFailed(pending.id)
                try store.discardFailed(pending.id)
                try store.requeueFailed(pending.id + 1000)
                try store.discardFailed(pending.id + 1000)
                guard try store.pending(limit: 10).map(\.id) == [pending.id] else {
                    return "requeueing or discarding an id not on the list changed the queue"
                }
                return try store.failed().isEmpty ? nil : "requeueing or discarding an unknown id filled the list"
            }
        ),
        (
            "remove-all-pending-spares-the-list",
            { store in
                let stored = try store.enqueue(batch: (0..<3).map { draft("e\($0)") })
                try store.record(.givenUp(reason: "review"), for: stored[0].id)
                _ = try store.removeAllPending()
                let failed = try store.failed().map(\.id)
                return failed == [stored[0].id] ? nil : "removeAllPending touched the failed list: \(failed)"
            }
        ),
    ]
}
