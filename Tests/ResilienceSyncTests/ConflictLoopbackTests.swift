import Foundation
import ResiliencePolicies
import ResilienceSync
import ResilienceTesting
import ResilienceTransport
import Testing

/// The 409 rules against a real FaultServer on 127.0.0.1, through the URLSession transport: only a 409 that
/// confirms the entity exists deletes local data; a 409 "key still in progress" keeps the mutation queued and
/// is retried with the same key.
@Suite("Sync 409 rules over loopback", .serialized)
struct ConflictLoopbackTests {
    struct Builder: SyncRequestBuilder {
        var url: URL
        func request(for mutation: Mutation) throws -> HTTPRequest {
            HTTPRequest(method: .post, url: url, headers: ["Content-Type": "application/json"], body: mutation.payload)
        }
    }

    struct Setup {
        let server: FaultServer
        let store = InMemoryMutationStore()
        let delegate = RecordingSyncDelegate()
        let engine: SyncEngine

        init(script: [Fault], conflicts: ConflictRules = ConflictRules()) throws {
            server = try FaultServer()
            server.script("/events", script)
            let breaker = RateLimitBreaker()
            var configuration = SyncEngine.Configuration()
            configuration.conflicts = conflicts
            engine = SyncEngine(
                store: store, transport: URLSessionTransport(), requestBuilder: Builder(url: server.url("/events")),
                classifier: TransportErrorClassifier.standard,
                pipeline: Pipeline {
                    CircuitBreakerStrategy(breaker: breaker)
                    TimeoutStrategy(.seconds(20))
                }, breaker: breaker, delegate: delegate, configuration: configuration)
            _ = try store.enqueue(
                MutationDraft(
                    entityType: "event", entityID: "e1", operation: .create, payload: Data(#"{"n":1}"#.utf8),
                    idempotencyKey: "key-e1"))
        }
    }

    @Test("409 'Idempotency-Key in progress' keeps the mutation queued, then the same key applies it")
    func inProgressThenCreated() async throws {
        let setup = try Setup(script: [.idempotencyKeyInUse, .mutationSink()])
        defer { setup.server.stop() }
        let first = await setup.engine.performSync()
        #expect(first.synced == 0 && first.duplicates == 0)
        #expect(first.inProgressConflicts == 1)
        #expect(setup.delegate.deletedDuplicates.value.isEmpty, "an in-progress 409 must not delete local data")
        let queued = try setup.store.pending(limit: 10)
        #expect(queued.map(\.entityID) == ["e1"], "the mutation stays queued")
        #expect(queued.first?.attempts == 0, "an in-progress 409 is not a failed attempt")

        let second = await setup.engine.performSync()
        #expect(second.synced == 1 && second.duplicates == 0)
        #expect(setup.delegate.applied.value == ["e1"])
        #expect(try setup.store.pendingCount() == 0)
        let keys = setup.server.requests(to: "/events").map { $0.headers["Idempotency-Key"] }
        #expect(keys == ["key-e1", "key-e1"], "retried with the same key")
    }

    @Test("A 409 confirming the entity exists counts as synced and deletes the local duplicate")
    func confirmedDuplicate() async throws {
        let setup = try Setup(script: [.alreadyExists])
        defer { setup.server.stop() }
        let report = await setup.engine.performSync()
        #expect(report.synced == 1 && report.duplicates == 1)
        #expect(setup.delegate.deletedDuplicates.value == ["e1"])
        #expect(try setup.store.pendingCount() == 0)
    }

    @Test("An ambiguous 409 never deletes local data; it is a failed attempt, kept queued")
    func ambiguousConflict() async throws {
        let setup = try Setup(script: [.status(409, body: "Conflict")])
        defer { setup.server.stop() }
        let report = await setup.engine.performSync()
        #expect(report.synced == 0 && report.duplicates == 0 && report.failedAttempts == 1)
        #expect(setup.delegate.deletedDuplicates.value.isEmpty)
        #expect(try setup.store.pending(limit: 10).first?.attempts == 1)
    }

    @Test("The API's own predicate can confirm a 409 as a duplicate")
    func predicateConfirms() async throws {
        let setup = try Setup(
            script: [.status(409, headers: ["X-Existing-ID": "42"], body: "exists")],
            conflicts: ConflictRules(confirmsExisting: { response, _ in response.headers["X-Existing-ID"] != nil }))
        defer { setup.server.stop() }
        let report = await setup.engine.performSync()
        #expect(report.duplicates == 1)
        #expect(setup.delegate.deletedDuplicates.value == ["e1"])
    }
}
