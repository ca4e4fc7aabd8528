import Foundation
import ResiliencePolicies
import ResilienceSync
import ResilienceTesting
import Synchronization
import Testing

/// Seed 004's behaviour of the sync engine, on a manual clock with a scripted server.
@Suite("SyncEngine")
struct SyncEngineTests {
    /// Seed 004's "Error Type Summary": what each outcome does to the 429 counter and to the attempts.
    struct ErrorRow: Sendable, CustomTestStringConvertible {
        var name: String
        var step: ScriptedSyncTransport.Step
        var counterAfter: Int
        var attemptsAfter: Int?  // nil: the mutation left the queue
        var testDescription: String { name }
    }

    static let errorTable: [ErrorRow] = [
        ErrorRow(name: "429 rate limit", step: .status(429), counterAfter: 2, attemptsAfter: 0),
        ErrorRow(
            name: "409 duplicate (confirmed)", step: .json(409, ConflictBodies.exists), counterAfter: 0,
            attemptsAfter: nil),
        ErrorRow(
            name: "409 key in progress", step: .json(409, ConflictBodies.inProgress), counterAfter: 0,
            attemptsAfter: 0),
        ErrorRow(name: "409 ambiguous", step: .json(409, ConflictBodies.ambiguous), counterAfter: 0, attemptsAfter: 1),
        ErrorRow(name: "network error", step: .fail(TestNetworkError.reset), counterAfter: 0, attemptsAfter: 1),
        ErrorRow(name: "timeout", step: .fail(TestNetworkError.timeout), counterAfter: 0, attemptsAfter: 1),
        ErrorRow(name: "other API error (500)", step: .status(500), counterAfter: 0, attemptsAfter: 1),
        ErrorRow(name: "other API error (400)", step: .status(400), counterAfter: 0, attemptsAfter: 1),
        ErrorRow(name: "success", step: .status(201), counterAfter: 0, attemptsAfter: nil),
    ]

    @Test("Error type summary (seed 004)", arguments: errorTable)
    func errorTypeSummary(row: ErrorRow) async throws {
        let harness = SyncHarness([.status(429), row.step])
        try harness.enqueue(["warm", "subject"])
        let report = await harness.engine.performSync()
        #expect(await harness.engine.consecutiveRateLimitErrors == row.counterAfter)
        let subject = try harness.store.pending(limit: 10).first { $0.entityID == "subject" }
        #expect(subject?.attempts == row.attemptsAfter)
        #expect(try harness.store.failed().isEmpty)
        #expect(report.requestsSent == 2)
        if row.name.hasPrefix("409 duplicate") {
            #expect(harness.delegate.deletedDuplicates.value == ["subject"])
            #expect(report.synced == 1 && report.duplicates == 1)
        } else {
            #expect(harness.delegate.deletedDuplicates.value.isEmpty, "only a confirmed 409 deletes local data")
        }
    }

    /// Seed 004's "Backoff Schedule": trip number → cooldown.
    static let schedule = [(1, 30), (2, 60), (3, 120), (4, 240), (5, 300), (6, 300)]

    @Test("Backoff schedule (seed 004)", arguments: BreakerKind.allCases, schedule)
    func backoffSchedule(breaker: BreakerKind, row: (trip: Int, expectedSeconds: Int)) async throws {
        let (trip, expectedSeconds) = row
        let harness = SyncHarness(fallback: .status(429), breaker: breaker.make())
        try harness.enqueue((0..<5).map { "e\($0)" })
        var lastCooldown: Duration = .zero
        for tripNumber in 1...trip {
            let start = harness.clock.now.offset
            let report = await harness.engine.performSync()
            guard case .rateLimited(let until, let pending) = report.finalState else {
                Issue.record("trip \(tripNumber) ended in \(report.finalState)")
                return
            }
            #expect(pending == 5)
            lastCooldown = until.offset - start
            harness.clock.advance(by: lastCooldown)
        }
        #expect(lastCooldown == .seconds(expectedSeconds))
        #expect(try harness.store.pending(limit: 10).allSatisfy { $0.attempts == 0 }, "429s never count")
    }

    @Test("Three consecutive 429s trip the breaker; while open nothing is sent", arguments: BreakerKind.allCases)
    func tripStopsSending(breaker: BreakerKind) async throws {
        let harness = SyncHarness(fallback: .status(429), breaker: breaker.make())
        try harness.enqueue(["a", "b", "c", "d"])
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 3)
        #expect(report.rateLimitResponses == 3)
        #expect(report.finalState == .rateLimited(until: .init(offset: .seconds(30)), pending: 4))
        #expect(await harness.engine.isCircuitBreakerTripped())
        #expect(await harness.engine.circuitBreakerBackoffRemaining() == .seconds(30))
        let again = await harness.engine.performSync()
        #expect(again.requestsSent == 0)
        harness.clock.advance(by: .seconds(29))
        #expect(await harness.engine.performSync().requestsSent == 0)
        harness.transport.append([.status(201), .status(201), .status(201), .status(201)])
        harness.clock.advance(by: .seconds(1))
        let recovered = await harness.engine.performSync()
        #expect(recovered.synced == 4)
        #expect(recovered.finalState == .idle)
        #expect(harness.multiplier == 1, "success resets the multiplier")
        #expect(await harness.engine.consecutiveRateLimitErrors == 0)
    }

    @Test("Fewer than three 429s keep the pass going; a non-429 in between resets the counter")
    func counterResets() async throws {
        let harness = SyncHarness([.status(429), .status(429), .status(500), .status(429), .status(429)])
        try harness.enqueue(["a", "b", "c", "d", "e"])
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 5)
        #expect(!(await harness.engine.isCircuitBreakerTripped()))
        #expect(await harness.engine.consecutiveRateLimitErrors == 2)
        #expect(report.finalState.name == "error")
    }

    @Test("Network errors count against attempts; after maxRetries the entity is marked failed")
    func retryLimit() async throws {
        let harness = SyncHarness(fallback: .fail(TestNetworkError.reset), maxRetries: 3)
        try harness.enqueue(["a"])
        for pass in 1...3 {
            let report = await harness.engine.performSync()
            #expect(report.finalState.name == "error", "pass \(pass)")
        }
        #expect(try harness.store.pendingCount() == 0)
        let failed = try harness.store.failed()
        #expect(failed.map(\.entityID) == ["a"])
        #expect(failed.first?.attempts == 3)
        #expect(failed.first?.lastError?.contains("gave up after 3 attempts") == true)
        #expect(harness.delegate.failedEntities.value == ["a"])
    }

    @Test("A failed mutation holds back later mutations of its entity, not other entities")
    func fifoPerEntity() async throws {
        let harness = SyncHarness([.status(503)])
        try harness.enqueue(["a"], .create)
        try harness.enqueue(["b"], .create)
        try harness.enqueue(["a"], .update)
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 2)
        #expect(harness.transport.requests.map(\.method) == [.post, .post])
        #expect(
            try harness.store.pending(limit: 10).map { "\($0.entityID):\($0.operation)" } == ["a:create", "a:update"])
        let next = await harness.engine.performSync()
        #expect(next.synced == 2)
        #expect(harness.delegate.applied.value == ["b", "a", "a"])
    }

    @Test("Every request carries the mutation's idempotency key, the same on every resend")
    func idempotencyKeys() async throws {
        let harness = SyncHarness([.fail(TestNetworkError.timeout), .status(201)])
        let mutation = try #require(try harness.enqueue(["a"]).first)
        await harness.engine.performSync()
        await harness.engine.performSync()
        let keys = harness.transport.requests.map { $0.headers["Idempotency-Key"] }
        #expect(keys == [mutation.idempotencyKey, mutation.idempotencyKey])
        #expect(harness.transport.requests.allSatisfy { $0.idempotency.key == mutation.idempotencyKey })
        #expect(harness.transport.applied == [mutation.idempotencyKey: 1])
    }

    @Test("Cancellation leaves the mutation queued without counting an attempt")
    func cancellation() async throws {
        let harness = SyncHarness([.cancelTask])
        try harness.enqueue(["a", "b"])
        let report = await Task { await harness.engine.performSync() }.value
        #expect(report.requestsSent == 1)
        #expect(try harness.store.pending(limit: 10).map(\.attempts) == [0, 0])
        #expect(report.finalState == .idle)
    }

    @Test("A transport that reports a cancellation the task did not ask for makes run() wait, not spin")
    func cancellationNotAskedForDoesNotSpin() async throws {
        let harness = SyncHarness(fallback: .fail(URLError(.cancelled)))
        try harness.enqueue(["a"])
        let runner = Task { await harness.engine.run() }
        defer { runner.cancel() }
        // A correct engine sends once and sleeps on the clock; a spinning one sends without end.
        for _ in 0..<100_000 where harness.clock.sleeperCount == 0 && harness.transport.requests.count < 50 {
            await Task.yield()
        }
        #expect(harness.transport.requests.count == 1, "one pass, then a wait on the clock")
        #expect(harness.clock.sleeperCount == 1)
        #expect(try harness.store.pending(limit: 10).map(\.attempts) == [0])
    }

    @Test("Manual reset closes the breaker, clears the multiplier and sends at once", arguments: BreakerKind.allCases)
    func manualReset(breaker: BreakerKind) async throws {
        let harness = SyncHarness([.status(429), .status(429), .status(429)], breaker: breaker.make())
        try harness.enqueue(["a", "b", "c"])
        await harness.engine.performSync()
        #expect(await harness.engine.isCircuitBreakerTripped())
        await harness.engine.resetCircuitBreaker()
        #expect(harness.engine.state == .idle)
        #expect(harness.multiplier == 1)
        #expect(await harness.engine.consecutiveRateLimitErrors == 0)
        let report = await harness.engine.performSync()
        #expect(report.synced == 3)
    }

    @Test("An isolated breaker holds the queue for a poll interval at a time: run() does not pass again every 1 ms")
    func isolatedBreakerWaitsThePollInterval() async throws {
        let breaker = SeedRateLimitBreakerDouble()
        let harness = SyncHarness(breaker: breaker, pollInterval: .seconds(30))
        try harness.enqueue(["a"])
        _ = breaker.isolate(now: .origin)
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 0)
        #expect(report.nextAttempt == .init(offset: .seconds(30)), "an isolated breaker names no end of its own")
        #expect(report.finalState == .rateLimited(until: .init(offset: .seconds(30)), pending: 1))
        let runner = Task { await harness.engine.run() }
        defer { runner.cancel() }
        await harness.clock.waitForSleepers(count: 1)
        let wait = try #require(harness.clock.nextDeadline).offset - harness.clock.now.offset
        #expect(wait == .seconds(30), "run() waits the poll interval, not 1 ms, while the breaker is isolated")
        #expect(harness.transport.requests.isEmpty)
        #expect(await harness.engine.isCircuitBreakerTripped())
    }

    @Test("clearPendingMutations returns the count, marks entities failed on request, resets the breaker")
    func clearPending() async throws {
        let harness = SyncHarness([.status(429), .status(429), .status(429)])
        try harness.enqueue(["a", "b", "c", "d"])
        await harness.engine.performSync()
        #expect(try await harness.engine.clearPendingMutations(markEntitiesFailed: true) == 4)
        #expect(harness.delegate.failedEntities.value == ["a", "b", "c", "d"])
        #expect(!(await harness.engine.isCircuitBreakerTripped()))
        #expect(harness.engine.state == .idle)
        try harness.enqueue(["e"])
        #expect(try await harness.engine.clearPendingMutations(markEntitiesFailed: false) == 1)
        #expect(harness.delegate.failedEntities.value.count == 4)
    }

    @Test("clearPendingMutations during a pass: the pass sends none of the cleared mutations")
    func clearPendingDuringPass() async throws {
        let gate = CallGate()
        let harness = SyncHarness([.held(gate, status: 201)])
        try harness.enqueue(["a", "b", "c"])
        let pass = Task { await harness.engine.performSync() }
        while gate.waitingCount == 0 { await Task.yield() }
        #expect(try await harness.engine.clearPendingMutations(markEntitiesFailed: true) == 3)
        #expect(harness.delegate.failedEntities.value == ["a", "b", "c"])
        gate.open()
        let report = await pass.value
        #expect(harness.transport.requests.count == 1, "b and c were cleared (and marked failed) before they went out")
        #expect(harness.delegate.applied.value == ["a"], "the request in flight still gets its answer")
        #expect(report.remaining == 0)
    }

    @Test("A pass asked for while another is under way returns at once and reports what is still pending")
    func passDuringPassReportsPending() async throws {
        let gate = CallGate()
        let harness = SyncHarness([.held(gate, status: 201)])
        try harness.enqueue(["a", "b", "c"])
        let first = Task { await harness.engine.performSync() }
        while gate.waitingCount == 0 { await Task.yield() }
        let skipped = await harness.engine.performSync()
        #expect(skipped.requestsSent == 0)
        #expect(skipped.finalState == .syncing)
        #expect(skipped.remaining == 3, "a is in flight, b and c wait: none has left the store")
        gate.open()
        let report = await first.value
        #expect(report.synced == 3)
        #expect(report.remaining == 0)
    }

    @Test("A run() loop whose pass finds another under way waits for a wake-up, not spinning beside it")
    func runBesidePassDoesNotSpin() async throws {
        let gate = CallGate()
        let store = CountingStore()
        let engine = SyncEngine(
            store: store, transport: ScriptedSyncTransport([.held(gate, status: 201)]),
            requestBuilder: EventsRequestBuilder(), pipeline: syncPipeline(SeedRateLimitBreakerDouble()),
            clock: .manual(ManualClock()))
        for id in ["a", "b"] {
            _ = try store.enqueue(MutationDraft(entityType: "event", entityID: id, operation: .create))
        }
        let first = Task { await engine.performSync() }
        while gate.waitingCount == 0 { await Task.yield() }
        let before = store.counts
        let runner = Task { await engine.run() }
        defer { runner.cancel() }
        // Its first pass does not start (a and b are pending): a spinning loop counts them without end.
        for _ in 0..<20_000 where store.counts - before < 50 { await Task.yield() }
        #expect(store.counts - before == 1, "one skipped pass, then a wait")
        gate.open()
        #expect(await first.value.synced == 2)
    }

    @Test("A run() loop woken during a performSync() pass that ends in error passes again after the poll interval")
    func runBesideFailingPassPollsAgain() async throws {
        let gate = CallGate()
        let store = CountingStore()
        let clock = ManualClock()
        let transport = ScriptedSyncTransport([.held(gate, status: 500)], fallback: .status(201))
        var configuration = SyncEngine.Configuration()
        configuration.pollInterval = .seconds(30)
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(SeedRateLimitBreakerDouble()), configuration: configuration,
            clock: .manual(clock))
        // run() drains the empty queue and waits for a wake-up.
        let runner = Task { await engine.run() }
        defer { runner.cancel() }
        while store.counts == 0 { await Task.yield() }
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        let pass = Task { await engine.performSync() }
        while gate.waitingCount == 0 { await Task.yield() }
        // An enqueue wakes run() during the pass: it finds the pass under way.
        let before = store.counts
        try await engine.enqueue(MutationDraft(entityType: "event", entityID: "b", operation: .create))
        for _ in 0..<20_000 where store.counts == before { await Task.yield() }
        #expect(store.counts == before + 1)
        gate.open()
        let report = await pass.value
        #expect(report.failedAttempts == 1)
        #expect(report.finalState.name == "error")
        // The pass left a failure behind: run() looks again after the poll interval, not only at the next enqueue.
        for _ in 0..<20_000 where clock.sleeperCount == 0 { await Task.yield() }
        #expect(clock.sleeperCount == 1, "run() waits on the clock for the poll interval")
        #expect(clock.nextDeadline?.offset == .seconds(30))
        clock.advance(by: .seconds(30))
        for _ in 0..<20_000 where (try? store.inner.pendingCount()) != 0 { await Task.yield() }
        #expect(try store.inner.pendingCount() == 0, "a is sent again after the poll interval")
    }

    @Test("A pass started while clearPendingMutations marks entities failed sends none of the mutations it clears")
    func passDuringClear() async throws {
        let harness = SyncHarness()
        try harness.enqueue(["a", "b"])
        let gate = CallGate()
        harness.delegate.markGate.mutate { $0 = gate }
        let clear = Task { try await harness.engine.clearPendingMutations(markEntitiesFailed: true) }
        while gate.waitingCount == 0 { await Task.yield() }
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 0, "a and b are being cleared and marked failed")
        #expect(report.remaining == 2, "not cleared yet: the report says what is still pending")
        gate.open()
        #expect(try await clear.value == 2)
        #expect(harness.transport.requests.isEmpty)
    }

    @Test("A clear that fails wakes the run() loop it held back: what is still pending goes out at once")
    func failedClearWakesRun() async throws {
        let store = CountingStore()
        let delegate = RecordingSyncDelegate()
        let gate = CallGate()
        delegate.markGate.mutate { $0 = gate }
        let transport = ScriptedSyncTransport()
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(SeedRateLimitBreakerDouble()), delegate: delegate, clock: .manual(ManualClock()))
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        store.inner.failNextWrite(with: MutationStoreError(.storageBusy, message: "the file is locked"))
        let clear = Task { try await engine.clearPendingMutations(markEntitiesFailed: true) }
        while gate.waitingCount == 0 { await Task.yield() }
        let before = store.counts
        let runner = Task { await engine.run() }
        defer { runner.cancel() }
        // run()'s first pass finds the clear under way: it counts the queue, sends nothing, and waits to be woken.
        while store.counts == before { await Task.yield() }
        #expect(transport.requests.isEmpty)
        gate.open()
        await #expect(throws: MutationStoreError.self) { try await clear.value }
        for _ in 0..<20_000 where transport.requests.isEmpty { await Task.yield() }
        #expect(transport.requests.count == 1, "the clear failed, so a is still pending, and run() sends it")
    }

    @Test(
        "The breaker's cooldown survives a restart, aged by the wall time that passed", arguments: BreakerKind.allCases)
    func persistedCooldown(breaker: BreakerKind) async throws {
        let store = InMemoryMutationStore()
        let wallClock = LockedBox(Date(timeIntervalSince1970: 10_000))
        let first = SyncHarness(
            fallback: .status(429), store: store, breaker: breaker.make(), currentDate: { wallClock.value })
        try first.enqueue(["a", "b", "c"])
        await first.engine.performSync()
        #expect(await first.engine.isCircuitBreakerTripped())

        // The app is killed and relaunched 10 s later: a new process, a new monotonic clock.
        wallClock.mutate { $0 += 10 }
        let second = SyncHarness(store: store, breaker: breaker.make(), currentDate: { wallClock.value })
        guard case .rateLimited(let until, let pending) = second.engine.state else {
            Issue.record("restarted engine is \(second.engine.state)")
            return
        }
        #expect(until == ResilienceInstant(offset: .seconds(20)))
        #expect(pending == 3)
        #expect(await second.engine.performSync().requestsSent == 0)
        second.clock.advance(by: .seconds(20))
        let report = await second.engine.performSync()
        #expect(report.synced == 3)
        #expect(second.transport.requests.count == 3)
    }

    @Test(
        "The multiplier is persisted too: the next trip after a restart waits longer", arguments: BreakerKind.allCases)
    func persistedMultiplier(breaker: BreakerKind) async throws {
        let store = InMemoryMutationStore()
        let first = SyncHarness(fallback: .status(429), store: store, breaker: breaker.make())
        try first.enqueue(["a", "b", "c"])
        await first.engine.performSync()
        let second = SyncHarness(fallback: .status(429), store: store, breaker: breaker.make())
        second.clock.advance(by: .seconds(30))
        let report = await second.engine.performSync()
        guard case .rateLimited(let until, _) = report.finalState else {
            Issue.record("ended in \(report.finalState)")
            return
        }
        #expect(until.offset == .seconds(90), "second trip: 60 s after the 30 s already waited")
    }

    @Test("Batch creates report per item: a partial batch keeps its failed items queued")
    func partialBatch() async throws {
        let harness = SyncHarness([.batch([201, 409, 503, 201])], builder: EventsRequestBuilder(supportsBatches: true))
        try harness.enqueue(["a", "b", "c", "d"])
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 1)
        #expect(report.synced == 3)
        #expect(report.duplicates == 1)
        #expect(report.failedAttempts == 1)
        let left = try harness.store.pending(limit: 10)
        #expect(left.map(\.entityID) == ["c"])
        #expect(left.first?.attempts == 1)
        #expect(harness.delegate.deletedDuplicates.value == ["b"])
        let key = harness.transport.requests.first?.headers["Idempotency-Key"]
        #expect(key?.hasPrefix("batch-4-") == true)
    }

    @Test("A 409 'already exists' answering a whole batch deletes no item's local data: it cannot say which exists")
    func batchLevelConflictDeletesNothing() async throws {
        let harness = SyncHarness(
            [.json(409, ConflictBodies.exists)], builder: EventsRequestBuilder(supportsBatches: true))
        try harness.enqueue(["a", "b", "c"])
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 1)
        #expect(harness.delegate.deletedDuplicates.value.isEmpty, "no item is confirmed to exist")
        #expect(report.duplicates == 0)
        #expect(try harness.store.pending(limit: 10).map(\.entityID) == ["a", "b", "c"])
        #expect(try harness.store.pending(limit: 10).map(\.attempts) == [1, 1, 1], "an ambiguous 409 per item")
    }

    @Test("A batch answered with the wrong number of results fails every item, losing none")
    func malformedBatch() async throws {
        let harness = SyncHarness([.batch([201])], builder: EventsRequestBuilder(supportsBatches: true))
        try harness.enqueue(["a", "b"])
        let report = await harness.engine.performSync()
        #expect(report.failedAttempts == 2)
        #expect(try harness.store.pending(limit: 10).map(\.attempts) == [1, 1])
    }

    @Test("A request the builder cannot build counts as a failed attempt")
    func unbuildableRequest() async throws {
        let harness = SyncHarness(builder: EventsRequestBuilder(failingEntity: "bad"))
        try harness.enqueue(["bad", "good"])
        let report = await harness.engine.performSync()
        #expect(report.synced == 1 && report.failedAttempts == 1 && report.requestsSent == 1)
    }

    @Test("Told offline during a pass: the pass sends nothing more and ends offline")
    func offlineDuringPass() async throws {
        let gate = CallGate()
        let harness = SyncHarness([.held(gate, status: 201)])
        try harness.enqueue(["a", "b", "c"])
        let pass = Task { await harness.engine.performSync() }
        while gate.waitingCount == 0 { await Task.yield() }
        await harness.engine.setNetworkAvailable(false)
        gate.open()
        let report = await pass.value
        #expect(harness.transport.requests.count == 1, "b and c wait for the network")
        #expect(report.finalState == .offline)
        #expect(harness.engine.state == .offline)
        #expect(try harness.store.pending(limit: 10).map(\.entityID) == ["b", "c"])

        // Told offline while the last request of a pass is out: the pass still ends offline.
        let lastGate = CallGate()
        let last = SyncHarness([.held(lastGate, status: 201)])
        try last.enqueue(["only"])
        let lastPass = Task { await last.engine.performSync() }
        while lastGate.waitingCount == 0 { await Task.yield() }
        await last.engine.setNetworkAvailable(false)
        lastGate.open()
        #expect(await lastPass.value.finalState == .offline)
        #expect(try last.store.pendingCount() == 0, "the request that was out got its answer")
    }

    @Test("Offline: no requests while unavailable; an unreachable network ends the pass as offline")
    func offline() async throws {
        let harness = SyncHarness([.fail(TestNetworkError.unreachable)])
        try harness.enqueue(["a", "b"])
        await harness.engine.setNetworkAvailable(false)
        #expect(harness.engine.state == .offline)
        #expect(await harness.engine.performSync().requestsSent == 0)
        await harness.engine.setNetworkAvailable(true)
        let report = await harness.engine.performSync()
        #expect(report.requestsSent == 1)
        #expect(report.finalState == .offline)
        let next = await harness.engine.performSync()
        #expect(next.synced == 2 && next.finalState == .idle)
    }

    @Test(
        "Following a connectivity monitor: offline pauses the engine, the path's return drains the queue",
        .timeLimit(.minutes(1)))
    func followsTheMonitor() async throws {
        let harness = SyncHarness()
        try harness.enqueue(["a", "b"])
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let engine = harness.engine
        let following = Task { await engine.run(following: monitor) }
        var states = engine.stateUpdates().makeAsyncIterator()
        while await states.next() != .offline {}
        #expect(harness.transport.deliveries.isEmpty, "nothing is sent while offline")
        monitor.setOnline(true)
        while try harness.store.pendingCount() > 0 { await Task.yield() }
        #expect(harness.transport.applied == ["key-a-create": 1, "key-b-create": 1])
        following.cancel()
        await following.value
    }

    @Test(
        "A connectivity monitor that stops while offline no longer holds the queue: the pipeline's failures decide",
        .timeLimit(.minutes(1)))
    func stoppedMonitorReleasesTheEngine() async throws {
        let harness = SyncHarness([.fail(TestNetworkError.unreachable)])
        try harness.enqueue(["a", "b"])
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let engine = harness.engine
        let following = Task { await engine.follow(monitor) }
        var states = engine.stateUpdates().makeAsyncIterator()
        while await states.next() != .offline {}
        monitor.stop()
        await following.value
        #expect(engine.state != .offline, "a stopped monitor cannot say the network is back: its offline is not kept")
        // The network is treated as available: a pass runs, and an unreachable failure (NET_001) ends it offline
        // for the engine to probe again after the poll interval.
        let probe = await engine.performSync()
        #expect(probe.requestsSent == 1)
        #expect(probe.finalState == .offline)
        let drained = await engine.performSync()
        #expect(drained.synced == 2 && drained.finalState == .idle)

        // A monitor already stopped when the engine starts following it, its last path offline.
        let late = SyncHarness()
        try late.enqueue(["c"])
        let stopped = ScriptedConnectivityMonitor(.unsatisfied)
        stopped.stop()
        await late.engine.setNetworkAvailable(stopped.currentPath.isSatisfied)
        await late.engine.follow(stopped)
        #expect(late.engine.state != .offline)
        #expect(await late.engine.performSync().synced == 1)
    }

    @Test("A storage failure ends the pass in the error state and loses nothing")
    func storageFailure() async throws {
        let harness = SyncHarness()
        try harness.enqueue(["a", "b"])
        harness.store.failNextWrite(with: MutationStoreError(.diskFull, message: "disk full"))
        let report = await harness.engine.performSync()
        #expect(report.finalState.name == "error")
        #expect(try harness.store.pendingCount() == 2, "the applied mutation stays queued; its key makes a resend safe")
        let next = await harness.engine.performSync()
        #expect(next.synced == 2)
        #expect(harness.transport.deliveries == ["key-a-create": 2, "key-b-create": 1])
        #expect(harness.transport.applied == ["key-a-create": 1, "key-b-create": 1])
    }

    @Test("States are observable as a stream and every transition emits telemetry")
    func observation() async throws {
        let harness = SyncHarness([.status(429), .status(429), .status(429)])
        try harness.enqueue(["a", "b", "c"])
        let updates = harness.engine.stateUpdates()
        await harness.engine.performSync()
        await harness.engine.resetCircuitBreaker()
        await harness.engine.performSync()
        var seen: [String] = []
        for await state in updates {
            seen.append(state.name)
            if seen.count == 6 { break }
        }
        #expect(seen == ["idle", "syncing", "rate-limited", "idle", "syncing", "idle"])
        let events = harness.telemetry.events
        let changes = events.filter { $0.kind == .syncStateChanged }.compactMap(\.detail)
        #expect(
            changes == [
                "idle → syncing", "syncing → rate-limited", "rate-limited → idle", "idle → syncing",
                "syncing → idle",
            ])
        #expect(events.contains { $0.kind == .breakerTransition && $0.transition?.to == .open })
    }

    @Test("run() drains after an enqueue, sleeps through a cooldown on the clock, then drains again")
    func runLoop() async throws {
        let harness = SyncHarness([.status(429), .status(429), .status(429)])
        let updates = harness.engine.stateUpdates()
        let runner = Task { await harness.engine.run() }
        defer { runner.cancel() }
        for name in ["a", "b", "c"] {
            _ = try await harness.engine.enqueue(
                MutationDraft(entityType: "event", entityID: name, operation: .create))
        }
        var iterator = updates.makeAsyncIterator()
        while let state = await iterator.next(), state.name != "rate-limited" {}
        await harness.clock.waitForSleepers(count: 1)
        #expect(try harness.store.pendingCount() == 3)
        harness.clock.advance(by: .seconds(30))
        while let state = await iterator.next() {
            if state == .idle, try harness.store.pendingCount() == 0 { break }
        }
        #expect(harness.transport.applied.count == 3)
    }

    @Test("Two run() loops on one engine both wake for work and both end when cancelled")
    func twoRunLoops() async throws {
        let harness = SyncHarness()
        let ended = LockedBox(0)
        let first = Task {
            await harness.engine.run()
            ended.mutate { $0 += 1 }
        }
        let second = Task {
            await harness.engine.run()
            ended.mutate { $0 += 1 }
        }
        for _ in 0..<1_000 { await Task.yield() }
        _ = try await harness.engine.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        for _ in 0..<100_000 where try harness.store.pendingCount() > 0 { await Task.yield() }
        #expect(try harness.store.pendingCount() == 0, "an enqueue wakes a loop")
        first.cancel()
        second.cancel()
        for _ in 0..<100_000 where ended.value < 2 { await Task.yield() }
        #expect(ended.value == 2, "a cancelled run() returns")
    }

    @Test("A state stream ends when its engine is gone")
    func stateStreamEndsWithEngine() async throws {
        var harness: SyncHarness? = SyncHarness()
        let updates = try #require(harness?.engine.stateUpdates())
        let ended = LockedBox(false)
        let reader = Task {
            for await _ in updates {}
            ended.mutate { $0 = true }
        }
        harness = nil
        for _ in 0..<100_000 where !ended.value { await Task.yield() }
        #expect(ended.value, "a reader of a released engine's states is not left waiting for ever")
        reader.cancel()
    }

    @Test("run() passes again after the fixed poll interval: the engine grows no delay of its own")
    func runLoopPollsAtAFixedInterval() async throws {
        let unreachable = ScriptedSyncTransport.Step.fail(TestNetworkError.unreachable)
        let harness = SyncHarness([unreachable, unreachable, unreachable, unreachable], maxRetries: 10)
        try harness.enqueue(["a"])
        let updates = harness.engine.stateUpdates()
        let runner = Task { await harness.engine.run() }
        defer { runner.cancel() }
        var iterator = updates.makeAsyncIterator()
        for pass in 1...4 {
            while let state = await iterator.next(), state != .offline {}
            await harness.clock.waitForSleepers(count: 1)
            #expect(harness.transport.requests.count == pass)
            let wait = try #require(harness.clock.nextDeadline).offset - harness.clock.now.offset
            #expect(wait == .seconds(30), "pass \(pass): the same 30 s poll interval after every failed pass")
            harness.clock.advance(by: .seconds(29))
            #expect(harness.transport.requests.count == pass, "nothing before the poll interval")
            harness.clock.advance(by: .seconds(1))
        }
        while let state = await iterator.next() {
            if state == .idle, try harness.store.pendingCount() == 0 { break }
        }
        #expect(harness.transport.requests.count == 5)
        #expect(harness.clock.now.offset == .seconds(120))
    }

    @Test("A failure breaker in the pipeline spaces failed passes 10/20/40 s; run() waits for the instant it names")
    func runLoopSpacedByPipelineBreaker() async throws {
        let harness = SyncHarness(
            [.status(500), .status(500), .status(500)], maxRetries: 10, failureBreaker: failureSpacingBreaker(),
            pollInterval: .seconds(1))
        try harness.enqueue(["a", "b"])
        let updates = harness.engine.stateUpdates()
        let runner = Task { await harness.engine.run() }
        defer { runner.cancel() }
        var iterator = updates.makeAsyncIterator()
        var sendTimes: [Duration] = []
        var seen: [SyncState] = []
        for expectedWait in [10, 20, 40] {
            while let state = await iterator.next() {
                seen.append(state)
                if case .error = state { break }
            }
            await harness.clock.waitForSleepers(count: 1)
            sendTimes.append(harness.clock.now.offset)
            let wait = try #require(harness.clock.nextDeadline).offset - harness.clock.now.offset
            #expect(wait == .seconds(expectedWait), "the breaker's cooldown, not the 1 s poll interval")
            #expect(harness.transport.requests.count == sendTimes.count, "b is held back, never sent")
            harness.clock.advance(by: wait)
        }
        while let state = await iterator.next() {
            seen.append(state)
            if state == .idle, try harness.store.pendingCount() == 0 { break }
        }
        #expect(sendTimes == [.seconds(0), .seconds(10), .seconds(30)])
        #expect(harness.clock.now.offset == .seconds(70))
        #expect(harness.transport.requests.count == 5, "three failed sends of a, then a and b")
        #expect(!seen.contains { $0.name == "rate-limited" }, "a server error is not a rate limit")
        #expect(await !harness.engine.isCircuitBreakerTripped())
        #expect(harness.delegate.applied.value == ["a", "b"])
    }

    @Test("A pass the failure breaker holds back keeps showing the last failure, and costs no attempt")
    func heldBackPassKeepsState() async throws {
        let harness = SyncHarness(
            [.fail(TestNetworkError.unreachable)], maxRetries: 10, failureBreaker: failureSpacingBreaker())
        try harness.enqueue(["a"])
        let first = await harness.engine.performSync()
        #expect(first.finalState == .offline)
        #expect(first.nextAttempt == nil, "nothing held the first pass back")
        harness.clock.advance(by: .seconds(1))
        let held = await harness.engine.performSync()
        #expect(held.requestsSent == 0)
        #expect(held.finalState == .offline, "still offline, not rate limited")
        #expect(held.nextAttempt == .init(offset: .seconds(10)))
        #expect(try harness.store.pending(limit: 1).first?.attempts == 1)
    }

    @Test("Over SQLite: the cooldown is in the file, so a relaunch reopening it stays rate limited")
    func persistedInSQLiteFile() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let transport = ScriptedSyncTransport(fallback: .status(429))
        var configuration = SyncEngine.Configuration()
        configuration.currentDate = { Date(timeIntervalSince1970: 5_000) }
        do {
            let store = try SQLiteMutationStore(path: path)
            defer { try? store.close() }
            for name in ["a", "b", "c"] {
                _ = try store.enqueue(MutationDraft(entityType: "event", entityID: name, operation: .create))
            }
            let breaker = RateLimitBreaker()
            let engine = SyncEngine(
                store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
                pipeline: syncPipeline(breaker), breaker: breaker, configuration: configuration,
                clock: .manual(ManualClock()))
            #expect(await engine.performSync().finalState.name == "rate-limited")
        }
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        let clock = ManualClock()
        let breaker = RateLimitBreaker()
        let engine = SyncEngine(
            store: reopened, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(breaker), breaker: breaker, configuration: configuration, clock: .manual(clock))
        #expect(engine.state == .rateLimited(until: ResilienceInstant(offset: .seconds(30)), pending: 3))
        #expect(await engine.performSync().requestsSent == 0)
        #expect(transport.requests.count == 3)
    }

    @Test("A breaker state the store refuses to save (its metadata table full) is reported, and saved once it fits")
    func unsavedBreakerStateIsReported() async throws {
        let store = InMemoryMutationStore(maximumMetadataKeyCount: 2)
        try store.setMetadata(Data([1]), forKey: "cursor.events")
        try store.setMetadata(Data([1]), forKey: "cursor.people")
        let harness = SyncHarness(fallback: .status(429), store: store)
        try harness.enqueue(["a", "b", "c"])
        await harness.engine.performSync()
        #expect(await harness.engine.isCircuitBreakerTripped())
        let key = SyncEngine.Configuration().breakerStateKey
        #expect(try store.metadata(forKey: key) == nil)
        let failures = harness.telemetry.events.filter { $0.kind == .syncStoreFailed }
        // One for each save it tried: each 429 changed the state to save.
        #expect(!failures.isEmpty)
        #expect(failures.allSatisfy { $0.key == SyncEngine.Configuration().telemetryKey })
        #expect(
            failures.allSatisfy { $0.detail?.hasPrefix("save breaker state: DB_003") == true }, "\(failures)")
        #expect(failures.allSatisfy { $0.classification?.category == .storage })

        // Room again: the next pass saves the state it could not save before.
        try store.setMetadata(nil, forKey: "cursor.people")
        harness.clock.advance(by: .seconds(1))
        await harness.engine.performSync()
        #expect(try store.metadata(forKey: key) != nil)
    }

    @Test("Unreadable persisted breaker state is reported as an error state, not ignored")
    func unreadablePersistedState() async throws {
        let store = InMemoryMutationStore()
        try store.setMetadata(Data("not json".utf8), forKey: SyncEngine.Configuration().breakerStateKey)
        let harness = SyncHarness(store: store)
        #expect(harness.engine.state.name == "error")
        try harness.enqueue(["a"])
        #expect(await harness.engine.performSync().finalState == .idle)
    }

    @Test(
        "A stored cooldown the store cannot read at start (busy) is neither overwritten nor ignored: passes send nothing until it is read"
    )
    func unreadableStoredCooldownIsReadAgain() async throws {
        let store = FlakyMetadataStore()
        let first = SyncHarness(fallback: .status(429), store: store.inner)
        try first.enqueue(["a", "b", "c"])
        await first.engine.performSync()
        let key = SyncEngine.Configuration().breakerStateKey
        let stored = try #require(try store.inner.metadata(forKey: key))

        // The relaunch: the first two reads of the stored cooldown find the database busy.
        store.failingReads.withLock { $0 = 2 }
        let clock = ManualClock()
        let telemetry = RecordingTelemetrySink()
        let transport = ScriptedSyncTransport(fallback: .status(201))
        var configuration = SyncEngine.Configuration()
        configuration.currentDate = { Date(timeIntervalSince1970: 1_000) }
        let breaker = SeedRateLimitBreakerDouble()
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(breaker), breaker: breaker,
            configuration: configuration, clock: .manual(clock), telemetry: telemetry)
        #expect(engine.state.name == "error")
        let failures = telemetry.events.filter { $0.kind == .syncStoreFailed }
        #expect(failures.map(\.detail) == ["read breaker state: DB_006: database is locked"])

        let blind = await engine.performSync()
        #expect(blind.requestsSent == 0, "the cooldown is unknown: nothing goes out")
        #expect(blind.finalState.name == "error")
        #expect(try store.inner.metadata(forKey: key) == stored, "the stored cooldown is not saved over")
        #expect(telemetry.events.filter { $0.kind == .syncStoreFailed }.count == 2)

        // The next read succeeds: the 30 s cooldown is restored, and still holds the queue.
        let restored = await engine.performSync()
        #expect(restored.requestsSent == 0)
        #expect(restored.finalState == .rateLimited(until: ResilienceInstant(offset: .seconds(30)), pending: 3))
        clock.advance(by: .seconds(30))
        #expect(await engine.performSync().synced == 3)
    }
}

/// A store whose reads of metadata fail while `failingReads` is above zero (a database busy for a moment).
final class FlakyMetadataStore: ForwardingMutationStore, @unchecked Sendable {
    let failingReads = Mutex(0)

    override func metadata(forKey key: String) throws -> Data? {
        let fails = failingReads.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        if fails { throw MutationStoreError(.storageBusy, message: "database is locked") }
        return try inner.metadata(forKey: key)
    }
}

/// A store whose count of pending mutations fails a given number of times (a database busy for a moment).
final class FlakyCountStore: ForwardingMutationStore, @unchecked Sendable {
    private let failuresLeft: Mutex<Int>

    init(failingCounts: Int) { failuresLeft = Mutex(failingCounts) }

    override func pendingCount() throws -> Int {
        let fails = failuresLeft.withLock { left in
            guard left > 0 else { return false }
            left -= 1
            return true
        }
        if fails { throw MutationStoreError(.storageBusy, message: "database is locked") }
        return try inner.pendingCount()
    }
}

@Suite("SyncEngine when counting fails")
struct SyncEngineCountFailureTests {
    @Test("A pass whose closing count fails ends as a storage error, not as an empty queue, and run() polls again")
    func failedCountIsNoEmptyQueue() async throws {
        let clock = ManualClock()
        let store = FlakyCountStore(failingCounts: 1)
        let transport = ScriptedSyncTransport([], fallback: .status(200))
        var configuration = SyncEngine.Configuration()
        configuration.pollInterval = .seconds(5)
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(SeedRateLimitBreakerDouble()), configuration: configuration,
            clock: .manual(clock))
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        let runner = Task { await engine.run() }
        defer { runner.cancel() }
        // The first pass sends "a", then cannot count what is left: it must not wait for an enqueue that may
        // never come (another connection may have written to the queue meanwhile).
        for _ in 0..<20_000 where clock.sleeperCount == 0 { await Task.yield() }
        #expect(clock.sleeperCount == 1, "the engine waits for the poll interval, not for an enqueue")
        guard case .error(let message) = engine.state else {
            Issue.record("the pass ended as \(engine.state), not as a storage error")
            return
        }
        #expect(message.contains("storage failed"))
        _ = try store.inner.enqueue(MutationDraft(entityType: "event", entityID: "b", operation: .create))
        clock.advance(by: .seconds(5))
        for _ in 0..<20_000 where (try? store.inner.pendingCount()) != 0 { await Task.yield() }
        #expect(try store.inner.pendingCount() == 0)
        #expect(transport.applied.count == 2)
    }
}

/// A store that counts how often its pending mutations are counted.
final class CountingStore: ForwardingMutationStore, @unchecked Sendable {
    private let countCalls = Mutex(0)

    /// How many times ``pendingCount()`` was called.
    var counts: Int { countCalls.withLock { $0 } }

    override func pendingCount() throws -> Int {
        countCalls.withLock { $0 += 1 }
        return try inner.pendingCount()
    }
}

@Suite("SyncEngine with hostile settings", .serialized)
struct SyncEngineHostileSettingsTests {
    @Test(
        "A page size of 0 or less reads pages of 1: clearing still marks every entity failed",
        arguments: [0, -1, Int.min])
    func nonPositivePageSize(pageSize: Int) async throws {
        let harness = SyncHarness(pageSize: pageSize)
        try harness.enqueue(["a", "b", "c"])
        #expect(try await harness.engine.clearPendingMutations(markEntitiesFailed: true) == 3)
        #expect(harness.delegate.failedEntities.value == ["a", "b", "c"])
    }

    /// One engine at a time: before the clamp the engine's loop never suspended, and two of them took every
    /// thread of the cooperative pool.
    @Test("A poll interval of zero or less waits 1 ms between failing passes instead of spinning")
    func nonPositivePollInterval() async throws {
        for pollInterval in [Duration.zero, .seconds(-5)] {
            let clock = ManualClock()
            let store = FlakyCountStore(failingCounts: Int.max)
            var configuration = SyncEngine.Configuration()
            configuration.pollInterval = pollInterval
            let engine = SyncEngine(
                store: store, transport: ScriptedSyncTransport([], fallback: .status(200)),
                requestBuilder: EventsRequestBuilder(), pipeline: syncPipeline(SeedRateLimitBreakerDouble()),
                configuration: configuration, clock: .manual(clock))
            let runner = Task { await engine.run() }
            for _ in 0..<20_000 where clock.sleeperCount == 0 { await Task.yield() }
            #expect(clock.sleeperCount == 1, "the engine waits on its clock after a failing pass (\(pollInterval))")
            #expect(clock.nextDeadline == .init(offset: .milliseconds(1)))
            runner.cancel()
            await runner.value
        }
    }
}

/// A store whose first `record(.givenUp…)` fails: the disk fills between the two writes of a give-up (the last
/// attempt counted, the move to the failed list not), as a crash between them would leave it.
final class FailingGiveUpStore: ForwardingMutationStore, @unchecked Sendable {
    private let failuresLeft = Mutex(1)

    override func record(_ outcome: MutationOutcome, for id: Int64) throws {
        if case .givenUp = outcome {
            let fails = failuresLeft.withLock { left in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            if fails { throw MutationStoreError(.diskFull, message: "database or disk is full") }
        }
        try inner.record(outcome, for: id)
    }
}

@Suite("SyncEngine when a give-up cannot be recorded")
struct SyncEngineInterruptedGiveUpTests {
    @Test("A mutation at its retry limit whose move to the failed list failed is not sent again; it is moved next pass")
    func interruptedGiveUpIsFinishedWithoutSending() async throws {
        let store = FailingGiveUpStore()
        let transport = ScriptedSyncTransport([], fallback: .status(500))
        let delegate = RecordingSyncDelegate()
        var configuration = SyncEngine.Configuration()
        configuration.maxRetries = 2
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: syncPipeline(SeedRateLimitBreakerDouble()), delegate: delegate, configuration: configuration,
            clock: .manual(ManualClock()))
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "b", operation: .create))
        _ = await engine.performSync()
        let interrupted = await engine.performSync()
        #expect(interrupted.finalState.name == "error")
        #expect(delegate.failedEntities.value == ["a"], "the delegate was told before the store failed")
        #expect(try store.pending(limit: 10).map(\.attempts) == [2, 1], "a's last attempt was counted")

        let next = await engine.performSync()
        #expect(transport.requests.count == 4, "a, b; a (the pass stops); then only b: a's entity is marked failed")
        #expect(next.movedToFailed == 2)
        #expect(try store.pendingCount() == 0)
        #expect(try store.failed().map(\.entityID) == ["a", "b"])
        #expect(try store.failed().map(\.attempts) == [2, 2])
        #expect(delegate.failedEntities.value == ["a", "a", "b"], "told again: the first call may not have run")
    }
}
