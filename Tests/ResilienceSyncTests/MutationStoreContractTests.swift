import Foundation
import ResilienceSync
import ResilienceTesting
import Testing

/// The contracts of ``MutationQueue``, ``FailedMutationList`` and ``MutationMetadataStore``, run against the
/// SQLite store and the in-memory store alike.
@Suite("MutationStore contract")
struct MutationStoreContractTests {
    static func draft(
        _ entity: String, _ operation: MutationOperation = .create, key: String? = nil
    )
        -> MutationDraft
    {
        MutationDraft(
            entityType: "event", entityID: entity, operation: operation, payload: Data("{\"id\":\"\(entity)\"}".utf8),
            idempotencyKey: key ?? UUID().uuidString)
    }

    @Test("Enqueue assigns increasing ids and pending returns FIFO order", arguments: StoreKind.allCases)
    func fifo(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let first = try store.enqueue(Self.draft("a"))
        let second = try store.enqueue(Self.draft("b"))
        let third = try store.enqueue(Self.draft("a", .update))
        #expect(first.id < second.id && second.id < third.id)
        #expect(try store.pending(limit: 10).map(\.id) == [first.id, second.id, third.id])
        #expect(try store.pending(limit: 2).map(\.id) == [first.id, second.id])
        #expect(try store.pending(after: first.id, limit: 10).map(\.id) == [second.id, third.id])
        #expect(try store.pendingCount() == 3)
        let stored = try #require(try store.pending(limit: 1).first)
        #expect(stored.entityID == "a" && stored.operation == .create && stored.attempts == 0)
        #expect(stored.payload == Data("{\"id\":\"a\"}".utf8))
        #expect(stored.idempotencyKey == first.idempotencyKey)
    }

    @Test("Text fields come back exactly as enqueued, embedded NUL characters too", arguments: StoreKind.allCases)
    func textFieldsRoundTrip(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let drafts = [
            MutationDraft(
                entityType: "évé\u{0}nt", entityID: "id\u{0}1", operation: MutationOperation(rawValue: "up\u{0}sert"),
                idempotencyKey: "ключ-one"),
            MutationDraft(entityType: "🗓️", entityID: "id\u{0}2", operation: .create, idempotencyKey: "ключ-two"),
        ]
        let stored = try store.enqueue(batch: drafts)
        #expect(stored.map(\.idempotencyKey) == ["ключ-one", "ключ-two"])
        let pending = try store.pending(limit: 10)
        #expect(pending.map(\.idempotencyKey) == ["ключ-one", "ключ-two"])
        #expect(pending.map(\.entityID) == ["id\u{0}1", "id\u{0}2"])
        #expect(pending.map(\.entityType) == ["évé\u{0}nt", "🗓️"])
        #expect(pending.first?.operation.rawValue == "up\u{0}sert")
        try store.record(.attemptFailed(error: "bad\u{0}reply"), for: stored[0].id)
        #expect(try store.pending(limit: 1).first?.lastError == "bad\u{0}reply")
    }

    @Test("Batch enqueue is all or none", arguments: StoreKind.allCases)
    func batchAtomic(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        _ = try store.enqueue(Self.draft("x", key: "taken"))
        let batch = [Self.draft("a"), Self.draft("b"), Self.draft("c", key: "taken")]
        #expect {
            try store.enqueue(batch: batch)
        } throws: { ($0 as? MutationStoreError)?.code == .constraintViolation }
        #expect(try store.pendingCount() == 1)
        let stored = try store.enqueue(batch: [Self.draft("a"), Self.draft("b")])
        #expect(stored.count == 2)
        #expect(try store.pending(limit: 10).map(\.entityID) == ["x", "a", "b"])
        #expect(try store.enqueue(batch: []).isEmpty)
    }

    @Test("A duplicate idempotency key is a constraint violation, pending or failed", arguments: StoreKind.allCases)
    func uniqueKeys(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let mutation = try store.enqueue(Self.draft("a", key: "k1"))
        #expect(throws: MutationStoreError.self) { try store.enqueue(Self.draft("b", key: "k1")) }
        try store.record(.givenUp(reason: "gave up"), for: mutation.id)
        #expect {
            try store.enqueue(Self.draft("b", key: "k1"))
        } throws: { ($0 as? MutationStoreError)?.code == .constraintViolation }
        #expect(try store.pendingCount() == 0)
    }

    @Test("Bad drafts are rejected with a typed error", arguments: StoreKind.allCases)
    func validation(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let bad = [
            MutationDraft(entityType: "", entityID: "1", operation: .create),
            MutationDraft(entityType: "event", entityID: "", operation: .create),
            MutationDraft(entityType: "event", entityID: "1", operation: .create, idempotencyKey: ""),
            MutationDraft(
                entityType: "event", entityID: "1", operation: .create,
                payload: Data(count: MutationDraft.defaultMaximumPayloadBytes + 1)),
            MutationDraft(entityType: String(repeating: "e", count: 2000), entityID: "1", operation: .create),
        ]
        for draft in bad {
            #expect {
                try store.enqueue(draft)
            } throws: { ($0 as? MutationStoreError)?.code == .constraintViolation }
        }
        #expect(try store.pendingCount() == 0)
    }

    @Test("An idempotency key a header cannot carry (a control character) is rejected", arguments: StoreKind.allCases)
    func keyHeaderCannotCarry(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        for key in ["abc\r\nX-Injected: yes", "line\nbreak", "nul\u{0}", "bell\u{7}", "del\u{7F}"] {
            #expect("\(key.debugDescription)") {
                try store.enqueue(
                    MutationDraft(entityType: "event", entityID: "1", operation: .create, idempotencyKey: key))
            } throws: { ($0 as? MutationStoreError)?.code == .constraintViolation }
        }
        #expect(try store.pendingCount() == 0)
        _ = try store.enqueue(
            MutationDraft(entityType: "event", entityID: "1", operation: .create, idempotencyKey: "ключ é"))
    }

    @Test("Failures count attempts; moving to failed keeps the mutation for review", arguments: StoreKind.allCases)
    func failuresAndFailedList(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let a = try store.enqueue(Self.draft("a"))
        let b = try store.enqueue(Self.draft("b"))
        try store.record(.attemptFailed(error: "timeout"), for: a.id)
        try store.record(.attemptFailed(error: "reset"), for: a.id)
        let stored = try #require(try store.pending(limit: 1).first)
        #expect(stored.attempts == 2)
        #expect(stored.lastError == "reset")
        try store.record(.givenUp(reason: "too many attempts"), for: a.id)
        #expect(try store.pending(limit: 10).map(\.id) == [b.id])
        let failed = try store.failed()
        #expect(failed.map(\.id) == [a.id])
        #expect(failed.first?.lastError == "too many attempts")
        #expect(failed.first?.attempts == 2)
        try store.requeueFailed(a.id)
        #expect(try store.failed().isEmpty)
        let requeued = try store.pending(limit: 10)
        #expect(requeued.map(\.entityID) == ["b", "a"])
        #expect(requeued.last?.attempts == 0)
        #expect(requeued.last!.id > b.id)
        #expect(requeued.last?.idempotencyKey == a.idempotencyKey)
        try store.record(.givenUp(reason: "again"), for: requeued.last!.id)
        try store.discardFailed(requeued.last!.id)
        #expect(try store.failed().isEmpty)
    }

    @Test(
        "The failed list reads in bounded pages, oldest first, while the user discards", arguments: StoreKind.allCases)
    func failedPages(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let stored = try store.enqueue(batch: (0..<250).map { Self.draft("e\($0)") })
        for mutation in stored where mutation.id % 5 != 0 {
            try store.record(.givenUp(reason: "review"), for: mutation.id)
        }
        let expected = try store.failed().map(\.id)
        #expect(expected.count == 200)
        var read: [Int64] = []
        var pageSizes: [Int] = []
        var cursor: Int64 = 0
        while pageSizes.count <= 10 {
            let page = try store.failed(after: cursor, limit: 64)
            pageSizes.append(page.count)
            guard let last = page.last else { break }
            read += page.map(\.id)
            try store.discardFailed(last.id)
            cursor = last.id
        }
        #expect(pageSizes == [64, 64, 64, 8, 0])
        #expect(read == expected)
        #expect(try store.failed().count == 196)
        #expect(try store.failed(after: 0, limit: 0).isEmpty)
        #expect(try store.failed(after: 0, limit: -5).isEmpty)
        #expect(try store.failed(after: .max, limit: 10).isEmpty)
    }

    @Test("Operations on ids that are no longer pending do nothing", arguments: StoreKind.allCases)
    func staleIDs(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let a = try store.enqueue(Self.draft("a"))
        try store.record(.applied, for: a.id)
        try store.record(.applied, for: a.id)
        try store.record(.attemptFailed(error: "late"), for: a.id)
        try store.record(.givenUp(reason: "late"), for: a.id)
        try store.requeueFailed(a.id)
        #expect(try store.pendingCount() == 0)
        #expect(try store.failed().isEmpty)
        let b = try store.enqueue(Self.draft("b"))
        #expect(b.id > a.id, "ids are never reused")
    }

    @Test("removeAllPending returns the count and spares the failed list", arguments: StoreKind.allCases)
    func removeAll(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let stored = try store.enqueue(batch: (0..<5).map { Self.draft("e\($0)") })
        try store.record(.givenUp(reason: "x"), for: stored[0].id)
        #expect(try store.removeAllPending() == 4)
        #expect(try store.pendingCount() == 0)
        #expect(try store.failed().count == 1)
        #expect(try store.removeAllPending() == 0)
    }

    @Test("Coalescing drops pending updates when a delete arrives", arguments: StoreKind.allCases)
    func coalescing(kind: StoreKind) throws {
        let (store, dispose) = try kind.make(coalescing: true)
        defer { dispose() }
        _ = try store.enqueue(Self.draft("a", .create))
        _ = try store.enqueue(Self.draft("a", .update))
        _ = try store.enqueue(Self.draft("b", .update))
        _ = try store.enqueue(Self.draft("a", .update))
        _ = try store.enqueue(Self.draft("a", .delete))
        let pending = try store.pending(limit: 10)
        #expect(pending.map { "\($0.entityID):\($0.operation)" } == ["a:create", "b:update", "a:delete"])
    }

    @Test("Without coalescing every mutation is kept", arguments: StoreKind.allCases)
    func noCoalescing(kind: StoreKind) throws {
        let (store, dispose) = try kind.make(coalescing: false)
        defer { dispose() }
        _ = try store.enqueue(Self.draft("a", .update))
        _ = try store.enqueue(Self.draft("a", .delete))
        #expect(try store.pendingCount() == 2)
    }

    @Test("Metadata round-trips, overwrites and deletes", arguments: StoreKind.allCases)
    func metadata(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        #expect(try store.metadata(forKey: "breaker") == nil)
        try store.setMetadata(Data("one".utf8), forKey: "breaker")
        try store.setMetadata(Data("two".utf8), forKey: "breaker")
        #expect(try store.metadata(forKey: "breaker") == Data("two".utf8))
        try store.setMetadata(nil, forKey: "breaker")
        #expect(try store.metadata(forKey: "breaker") == nil)
    }

    @Test(
        "Metadata holds a bounded number of keys: a new key past it throws DB_003, old keys still change",
        arguments: StoreKind.allCases)
    func metadataKeyCountBounded(kind: StoreKind) throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        let limit = MutationMetadataLimits.defaultMaximumKeyCount
        #expect(limit == 256)
        for index in 0..<limit { try store.setMetadata(Data([1]), forKey: "cursor-\(index)") }
        #expect { try store.setMetadata(Data([1]), forKey: "one-too-many") } throws: { error in
            (error as? MutationStoreError)?.code == .constraintViolation
        }
        #expect(try store.metadata(forKey: "one-too-many") == nil)
        try store.setMetadata(Data([2]), forKey: "cursor-0")
        #expect(try store.metadata(forKey: "cursor-0") == Data([2]))
        try store.setMetadata(nil, forKey: "cursor-1")
        try store.setMetadata(Data([3]), forKey: "after-a-delete")
        #expect(try store.metadata(forKey: "after-a-delete") == Data([3]))
    }

    @Test("Concurrent enqueues from many tasks lose nothing", arguments: StoreKind.allCases)
    func concurrentEnqueue(kind: StoreKind) async throws {
        let (store, dispose) = try kind.make()
        defer { dispose() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<25 { _ = try store.enqueue(Self.draft("t\(task)-\(index)")) }
                }
            }
            try await group.waitForAll()
        }
        let pending = try store.pending(limit: 1000)
        #expect(pending.count == 200)
        #expect(Set(pending.map(\.id)).count == 200)
        #expect(pending.map(\.id) == pending.map(\.id).sorted())
    }
}

/// ResilienceTesting's conformance kits (one per protocol) pass for both stores, and catch a store that breaks
/// the contract.
@Suite("Mutation store conformance kits")
struct MutationStoreConformanceTests {
    @Test("Both stores pass the queue, failed-list and metadata kits", arguments: StoreKind.allCases)
    func storesConform(kind: StoreKind) async throws {
        let disposals = LockedBox<[@Sendable () -> Void]>([])
        defer { disposals.value.forEach { $0() } }
        let makeStore: @Sendable () throws -> any MutationStore = {
            let (store, dispose) = try kind.make()
            disposals.mutate { $0.append(dispose) }
            return store
        }
        try await MutationQueueConformance { try makeStore() }.check()
        try await FailedMutationListConformance { try makeStore() }.check()
        try await MutationMetadataStoreConformance { try makeStore() }.check()
    }

    /// A store that reverses the queue and forgets the mutations it is told to give up.
    final class BrokenStore: ForwardingMutationStore, @unchecked Sendable {
        override func pending(after id: Int64, limit: Int) throws -> [Mutation] {
            try inner.pending(after: id, limit: limit).reversed()
        }
        override func record(_ outcome: MutationOutcome, for id: Int64) throws {
            if case .givenUp = outcome {
                try inner.record(.applied, for: id)
            } else {
                try inner.record(outcome, for: id)
            }
        }
    }

    /// A store whose failed list answers every page with the whole list, whatever the cursor and the limit.
    final class UnpagedStore: ForwardingMutationStore, @unchecked Sendable {
        override func failed(after id: Int64, limit: Int) throws -> [Mutation] {
            try inner.failed(after: 0, limit: .max)
        }
    }

    @Test("A failed list that ignores the page's cursor and limit is reported by the paging rule alone")
    func unpagedStoreFails() async throws {
        let report = await FailedMutationListConformance { UnpagedStore() }.run()
        #expect(report.failedCases == ["failed-paged"], "\(report)")
    }

    @Test("A broken store is reported rule by rule, by the kit of the protocol it breaks")
    func brokenStoreFails() async throws {
        let queue = await MutationQueueConformance { BrokenStore() }.run()
        #expect(Set(queue.failedCases) == ["fifo-order", "unique-keys", "remove-all-pending"], "\(queue)")
        let failedList = await FailedMutationListConformance { BrokenStore() }.run()
        #expect(failedList.failedCases.contains("given-up-listed"), "\(failedList)")
        #expect(failedList.failedCases.contains("keys-stay-unique"), "\(failedList)")
        let metadata = await MutationMetadataStoreConformance { BrokenStore() }.run()
        #expect(metadata.conforms, "\(metadata)")
        await #expect(throws: ConformanceFailure.self) { try await MutationQueueConformance { BrokenStore() }.check() }
    }

    @Test("A store configured for another key count passes the kit told that count, and fails one told another")
    func configuredKeyCount() async throws {
        for kind in StoreKind.allCases {
            let disposals = LockedBox<[@Sendable () -> Void]>([])
            defer { disposals.value.forEach { $0() } }
            let makeStore: @Sendable () throws -> any MutationStore = {
                let (store, dispose) = try kind.make(metadataKeys: 3)
                disposals.mutate { $0.append(dispose) }
                return store
            }
            try await MutationMetadataStoreConformance(maximumKeyCount: 3) { try makeStore() }.check()
            let tooMany = await MutationMetadataStoreConformance(maximumKeyCount: 2) { try makeStore() }.run()
            #expect(tooMany.failedCases == ["keys-bounded"], "\(kind): \(tooMany)")
        }
    }

    /// A metadata table that bounds each value and key but not how many keys it holds.
    final class UncountedMetadataStore: MutationMetadataStore {
        private let table = LockedState<[String: Data]>(initialState: [:])
        func metadata(forKey key: String) throws -> Data? { table.withLock { $0[key] } }
        func setMetadata(_ value: Data?, forKey key: String) throws {
            if let value { try MutationMetadataLimits.validate(value, forKey: key) }
            table.withLock { $0[key] = value }
        }
    }

    @Test("A metadata table that takes any number of keys is reported by the key-count rule alone")
    func uncountedMetadataFails() async throws {
        let report = await MutationMetadataStoreConformance { UncountedMetadataStore() }.run()
        #expect(report.failedCases == ["keys-bounded"], "\(report)")
    }
}
