import Foundation
import Logging
import ResilienceCore
import ResiliencePolicies
import ResilienceServiceLifecycle
import ResilienceSync
import ResilienceTelemetry
import ResilienceTesting
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// `POST https://api.example.com/events` for every mutation.
struct EventsAPI: SyncRequestBuilder {
    func request(for mutation: Mutation) throws -> HTTPRequest {
        HTTPRequest(method: .post, url: URL(string: "https://api.example.com/events")!, body: mutation.payload)
    }
}

/// Polls `condition` (yielding between polls) until it holds; the bound only stops a broken test.
func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<10_000 {
        if try await condition() { return true }
        await Task.yield()
    }
    return false
}

/// Keeps every log line's level and message.
struct CapturingLogHandler: LogHandler {
    let lines: LockedBox<[(level: Logger.Level, message: String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.mutate { $0.append((event.level, "\(event.message)")) }
    }

    /// A logger whose every line lands, with its level, in the box returned beside it.
    static func logger() -> (Logger, LockedBox<[(level: Logger.Level, message: String)]>) {
        let lines = LockedBox<[(level: Logger.Level, message: String)]>([])
        return (Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }, lines)
    }
}

@Suite("SyncEngineService")
struct SyncEngineServiceTests {
    static func engine(
        _ answers: [ScriptedHTTPTransport.Answer], clock: ManualClock, store: InMemoryMutationStore,
        telemetry: (any TelemetrySink)? = nil
    ) -> SyncEngine {
        var configuration = SyncEngine.Configuration()
        configuration.pollInterval = .seconds(60)
        let breaker = RateLimitBreaker()
        return SyncEngine(
            store: store, transport: ScriptedHTTPTransport(sequence: answers, clock: .manual(clock)),
            requestBuilder: EventsAPI(), pipeline: Pipeline { CircuitBreakerStrategy(breaker: breaker) },
            breaker: breaker, configuration: configuration, clock: .manual(clock), telemetry: telemetry)
    }

    /// A store holding one mutation, event "a".
    static func storeWithOneMutation() throws -> InMemoryMutationStore {
        let store = InMemoryMutationStore()
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        return store
    }

    /// Runs `service` until its engine's first pass is done and its loop waits, calls `beforeShutdown`, then
    /// triggers graceful shutdown and waits for `run()` to return.
    static func runUntilGracefulShutdown(
        _ service: SyncEngineService, clock: ManualClock, beforeShutdown: () -> Void = {}
    ) async throws {
        try await testGracefulShutdown { trigger in
            let running = Task { try await service.run() }
            await clock.waitForSleepers()
            beforeShutdown()
            trigger.triggerGracefulShutdown()
            try await running.value
        }
    }

    @Test("graceful shutdown in a ServiceGroup stops the loop while it waits to retry, and drains the queue")
    func drainsOnGracefulShutdown() async throws {
        let clock = ManualClock()
        let store = InMemoryMutationStore()
        for id in ["a", "b"] {
            _ = try store.enqueue(MutationDraft(entityType: "event", entityID: id, operation: .create))
        }
        let engine = Self.engine([.status(503), .status(201)], clock: clock, store: store)
        let group = ServiceGroup(
            services: [SyncEngineService(engine: engine, clock: .manual(clock))], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // The first pass sent "a" (503: it stays) and "b" (201); the loop now sleeps 60 s (manual time)
            // before the next pass.
            await clock.waitForSleepers()
            #expect(try store.pendingCount() == 1)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try store.pendingCount() == 0)
        #expect(clock.now.offset == .zero)  // nobody waited out the retry delay
    }

    @Test("a last pass that outlasts the drain timeout is cancelled; the mutation stays in the store")
    func drainTimeout() async throws {
        let clock = ManualClock()
        let store = try Self.storeWithOneMutation()
        let engine = Self.engine([.status(503), .status(201, after: .seconds(20))], clock: clock, store: store)
        let service = SyncEngineService(
            engine: engine, configuration: .init(drainTimeout: .seconds(2)), clock: .manual(clock))
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await service.run() }
                await clock.waitForSleepers()
                trigger.triggerGracefulShutdown()
                // The last pass's request waits 20 s, the drain timeout 2 s.
                await clock.waitForSleepers(count: 2)
                clock.advance(by: .seconds(2))
                try await tasks.waitForAll()
            }
        }
        #expect(try store.pendingCount() == 1)
    }

    @Test("a last pass cut short by cancellation (a second signal, the group's hard stop) is logged as cancelled")
    func drainCancelled() async throws {
        let clock = ManualClock()
        let store = try Self.storeWithOneMutation()
        let engine = Self.engine([.status(503), .status(201, after: .seconds(20))], clock: clock, store: store)
        let (logger, lines) = CapturingLogHandler.logger()
        let service = SyncEngineService(engine: engine, clock: .manual(clock), logger: logger)
        try await testGracefulShutdown { trigger in
            let running = Task { try await service.run() }
            await clock.waitForSleepers()
            trigger.triggerGracefulShutdown()
            // The last pass's request waits 20 s, the drain timeout 10 s; neither has passed when it is cancelled.
            await clock.waitForSleepers(count: 2)
            running.cancel()
            try await running.value
        }
        #expect(try store.pendingCount() == 1)
        #expect(clock.now.offset == .zero)
        let last = try #require(lines.value.last)
        #expect(last.level == .warning)
        #expect(last.message.contains("cancelled"), "\(last.message)")
        #expect(!last.message.contains("timed out"), "\(last.message)")
    }

    @Test("a last pass that the store fails (a database that went away) is logged as a warning with the failure")
    func drainStoreFailure() async throws {
        let clock = ManualClock()
        let store = try Self.storeWithOneMutation()
        let engine = Self.engine([.status(503), .status(201)], clock: clock, store: store)
        let (logger, lines) = CapturingLogHandler.logger()
        let service = SyncEngineService(engine: engine, clock: .manual(clock), logger: logger)
        try await Self.runUntilGracefulShutdown(service, clock: clock) {
            // The database goes away before the last pass records the server's answer.
            store.failNextWrite(with: MutationStoreError(.diskFull, message: "disk full"))
        }
        #expect(try store.pendingCount() == 1)
        let last = try #require(lines.value.last)
        #expect(last.level == .warning)
        #expect(last.message.contains("storage failed"), "\(last.message)")
        #expect(!last.message.contains("drained"), "\(last.message)")
    }

    @Test("a drain timeout of zero skips the last pass and says so, instead of reporting a pass that timed out")
    func zeroDrainTimeout() async throws {
        let clock = ManualClock()
        let store = try Self.storeWithOneMutation()
        let engine = Self.engine([.status(503), .status(201)], clock: clock, store: store)
        let (logger, lines) = CapturingLogHandler.logger()
        let service = SyncEngineService(
            engine: engine, configuration: .init(drainTimeout: .zero), clock: .manual(clock), logger: logger)
        try await Self.runUntilGracefulShutdown(service, clock: clock)
        #expect(try store.pendingCount() == 1)
        let last = try #require(lines.value.last)
        #expect(last.level == .info)
        #expect(last.message.contains("skipped"), "\(last.message)")
        #expect(!last.message.contains("timed out"), "\(last.message)")
    }

    @Test("without draining, graceful shutdown only stops the loop")
    func noDrain() async throws {
        let clock = ManualClock()
        let store = try Self.storeWithOneMutation()
        let engine = Self.engine([.status(503), .status(201)], clock: clock, store: store)
        let service = SyncEngineService(
            engine: engine, configuration: .init(drainOnShutdown: false), clock: .manual(clock))
        try await Self.runUntilGracefulShutdown(service, clock: clock)
        #expect(try store.pendingCount() == 1)
    }
}

@Suite("BufferedSinkService and PeriodicFlushService")
struct TelemetryServiceTests {
    static func event(_ kind: ResilienceEventKind) -> ResilienceEvent {
        ResilienceEvent(kind: kind, key: "lever", time: .origin)
    }

    /// A service flushing every 60 s to an exporter whose destination never answers: each flush counts itself in
    /// `started`, then waits an hour on `clock` unless cancelled.
    static func hangingFlushService(
        clock: ManualClock, logger: Logger, started: LockedBox<Int> = LockedBox(0)
    ) -> PeriodicFlushService {
        PeriodicFlushService(every: .seconds(60), clock: .manual(clock), logger: logger) {
            started.mutate { $0 += 1 }
            try? await clock.sleep(for: .seconds(3_600))
        }
    }

    @Test("graceful shutdown flushes every buffered event downstream, then the service returns")
    func bufferedSinkFlushes() async throws {
        let downstream = RecordingTelemetrySink()
        let buffered = BufferedSink(capacity: 1_000, downstream: downstream)
        let group = ServiceGroup(services: [BufferedSinkService(buffered)], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for _ in 0..<500 { buffered.receive(Self.event(.attemptSucceeded)) }
            buffered.receive(Self.event(.fetchCompleted))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(downstream.events.count == 501)
        #expect(downstream.kinds.last == .fetchCompleted)
        #expect(buffered.droppedCount == 0)
    }

    @Test("events emitted after graceful shutdown are discarded and counted, not lost silently")
    func eventsAfterShutdownCounted() async throws {
        let downstream = RecordingTelemetrySink()
        let buffered = BufferedSink(capacity: 1_000, downstream: downstream)
        let group = ServiceGroup(services: [BufferedSinkService(buffered)], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            buffered.receive(Self.event(.attemptSucceeded))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        buffered.receive(Self.event(.attemptFailed))
        buffered.receive(Self.event(.attemptFailed))
        #expect(downstream.kinds == [.attemptSucceeded])
        #expect(buffered.droppedCount == 2)
    }

    @Test("a periodic flush runs every interval and once more on graceful shutdown")
    func periodicFlush() async throws {
        let clock = ManualClock()
        let flushes = LockedBox(0)
        let service = PeriodicFlushService(every: .seconds(10), clock: .manual(clock)) {
            flushes.mutate { $0 += 1 }
        }
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { await service.run() }
                await clock.waitForSleepers()
                clock.advance(by: .seconds(10))
                #expect(await eventually { flushes.value == 1 })
                await clock.waitForSleepers()
                clock.advance(by: .seconds(10))
                #expect(await eventually { flushes.value == 2 })
                await clock.waitForSleepers()
                trigger.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
        #expect(flushes.value == 3)
        #expect(clock.now.offset == .seconds(20))
    }

    @Test("flushes start on the interval's schedule: a slow flush neither delays the next one nor makes them overlap")
    func flushesKeepTheirSchedule() async throws {
        let clock = ManualClock()
        let starts = LockedBox<[Duration]>([])
        let durations = LockedBox<[Duration]>([.seconds(4), .seconds(70), .zero])
        let service = PeriodicFlushService(every: .seconds(60), clock: .manual(clock)) {
            starts.mutate { $0.append(clock.now.offset) }
            let duration = durations.mutate { $0.isEmpty ? .zero : $0.removeFirst() }
            try? await clock.sleep(for: duration)
        }
        let running = Task { await service.run() }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(60))  // the first flush starts and takes 4 s
        #expect(await eventually { starts.value.count == 1 && clock.sleeperCount == 1 })
        clock.advance(by: .seconds(4))
        await clock.waitForSleepers()
        clock.advance(by: .seconds(56))  // 120 s: the second flush starts on time, and takes 70 s
        #expect(await eventually { starts.value.count == 2 && clock.sleeperCount == 1 })
        clock.advance(by: .seconds(70))  // 190 s: it ends after the 180 s tick, which is skipped
        await clock.waitForSleepers()
        #expect(starts.value.count == 2, "no flush overlaps or follows the slow one at once")
        clock.advance(by: .seconds(50))  // 240 s: the next tick
        #expect(await eventually { starts.value.count == 3 })
        running.cancel()
        await running.value
        #expect(starts.value == [.seconds(60), .seconds(120), .seconds(240)])
    }

    @Test("graceful shutdown during a periodic flush, then cancellation before it ends, is logged as cancelled")
    func periodicFlushCancelledDuringShutdown() async throws {
        let clock = ManualClock()
        let (logger, lines) = CapturingLogHandler.logger()
        let service = Self.hangingFlushService(clock: clock, logger: logger)
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            await clock.waitForSleepers()
            clock.advance(by: .seconds(60))
            #expect(await eventually { clock.sleeperCount == 1 })
            trigger.triggerGracefulShutdown()
            // The hanging flush's wait and the shutdown's time limit; neither has passed when it is cancelled.
            #expect(await eventually { clock.sleeperCount == 2 })
            running.cancel()
            await running.value
        }
        #expect(clock.now.offset == .seconds(60))
        let last = try #require(lines.value.last, "the shutdown's end is logged")
        #expect(last.level == .warning)
        #expect(last.message.contains("cancelled"), "\(last.message)")
    }

    @Test("a last flush that hangs at shutdown is cancelled after finalFlushTimeout (10 s by default) and logged")
    func lastFlushTimesOut() async throws {
        let clock = ManualClock()
        let started = LockedBox(0)
        let (logger, lines) = CapturingLogHandler.logger()
        let service = Self.hangingFlushService(clock: clock, logger: logger, started: started)
        let returned = LockedBox(false)
        await testGracefulShutdown { trigger in
            let running = Task {
                await service.run()
                returned.mutate { $0 = true }
            }
            await clock.waitForSleepers()
            trigger.triggerGracefulShutdown()
            // The last flush's wait and the time limit's timer.
            #expect(await eventually { started.value == 1 && clock.sleeperCount == 2 })
            clock.advance(by: .seconds(10))
            #expect(await eventually { returned.value }, "the shutdown waits for the last flush no longer")
            // Lets a service without a limit end, so the test fails instead of hanging.
            clock.advance(by: .seconds(3_600))
            await running.value
        }
        #expect(started.value == 1)
        let last = try #require(lines.value.last)
        #expect(last.level == .warning)
        #expect(last.message.contains("timed out"), "\(last.message)")
    }

    @Test("graceful shutdown during a periodic flush that hangs: that flush is cancelled after finalFlushTimeout")
    func hangingFlushAtShutdown() async throws {
        let clock = ManualClock()
        let started = LockedBox(0)
        let (logger, lines) = CapturingLogHandler.logger()
        // The exporter's destination stops answering during the first periodic flush.
        let service = Self.hangingFlushService(clock: clock, logger: logger, started: started)
        let returned = LockedBox(false)
        await testGracefulShutdown { trigger in
            let running = Task {
                await service.run()
                returned.mutate { $0 = true }
            }
            await clock.waitForSleepers()
            clock.advance(by: .seconds(60))
            #expect(await eventually { started.value == 1 && clock.sleeperCount == 1 })
            // SIGTERM while that flush hangs: the shutdown may wait for it no longer than finalFlushTimeout.
            trigger.triggerGracefulShutdown()
            #expect(await eventually { clock.sleeperCount == 2 }, "the shutdown's time limit is running")
            clock.advance(by: .seconds(10))
            #expect(await eventually { returned.value }, "the shutdown waits for the hanging flush no longer")
            // Lets a service without a limit end, so the test fails instead of hanging.
            for _ in 0..<4 where !returned.value {
                clock.advance(by: .seconds(3_600))
                _ = await eventually { returned.value }
            }
            await running.value
        }
        #expect(clock.now.offset == .seconds(70))
        #expect(started.value == 1, "no second flush to the destination that stopped answering")
        let last = try #require(lines.value.last)
        #expect(last.level == .warning)
        #expect(last.message.contains("timed out"), "\(last.message)")
    }

    @Test("graceful shutdown during a periodic flush that then ends: the last flush runs within the same bound")
    func flushInProgressAtShutdown() async throws {
        let clock = ManualClock()
        let started = LockedBox(0)
        let (logger, lines) = CapturingLogHandler.logger()
        // Each flush takes 4 s (manual time).
        let service = PeriodicFlushService(every: .seconds(60), clock: .manual(clock), logger: logger) {
            started.mutate { $0 += 1 }
            try? await clock.sleep(for: .seconds(4))
        }
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            await clock.waitForSleepers()
            clock.advance(by: .seconds(60))
            #expect(await eventually { started.value == 1 && clock.sleeperCount == 1 })
            trigger.triggerGracefulShutdown()
            #expect(await eventually { clock.sleeperCount == 2 })
            clock.advance(by: .seconds(4))  // the periodic flush ends, 4 s into the shutdown's 10
            #expect(await eventually { started.value == 2 && clock.sleeperCount == 2 })
            clock.advance(by: .seconds(4))  // the last flush ends too, at 8 s
            await running.value
        }
        #expect(started.value == 2)
        let last = try #require(lines.value.last)
        #expect(last.level == .info)
        #expect(last.message.contains("flushed"), "\(last.message)")
    }

    @Test("a last flush cut short by cancellation (a second signal, the group's hard stop) is logged as cancelled")
    func lastFlushCancelled() async throws {
        let clock = ManualClock()
        let (logger, lines) = CapturingLogHandler.logger()
        let service = Self.hangingFlushService(clock: clock, logger: logger)
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            await clock.waitForSleepers()
            trigger.triggerGracefulShutdown()
            // The last flush's wait and the time limit's timer; neither has passed when it is cancelled.
            await clock.waitForSleepers(count: 2)
            running.cancel()
            await running.value
        }
        #expect(clock.now.offset == .zero)
        let last = try #require(lines.value.last)
        #expect(last.level == .warning)
        #expect(last.message.contains("cancelled"), "\(last.message)")
        #expect(!last.message.contains("timed out"), "\(last.message)")
    }

    @Test("a last flush that ends in time is logged as done")
    func lastFlushLogged() async throws {
        let clock = ManualClock()
        let (logger, lines) = CapturingLogHandler.logger()
        let service = PeriodicFlushService(every: .seconds(60), clock: .manual(clock), logger: logger) {}
        await testGracefulShutdown { trigger in
            let running = Task { await service.run() }
            await clock.waitForSleepers()
            trigger.triggerGracefulShutdown()
            await running.value
        }
        let last = try #require(lines.value.last)
        #expect(last.level == .info)
        #expect(last.message.contains("flushed"), "\(last.message)")
    }
}

/// The order of services in a group decides whether the sync engine's last pass is seen (the README's order).
@Suite("Service order in a ServiceGroup")
struct ServiceOrderTests {
    /// Runs the engine (one mutation: 503 on the first pass, 201 on the last) and a buffered sink in a group
    /// in the given order, shuts the group down gracefully while the engine waits to retry, and returns what
    /// reached the sink's downstream.
    static func eventsDownstream(engineListedFirst: Bool) async throws -> [ResilienceEvent] {
        let clock = ManualClock()
        let store = try SyncEngineServiceTests.storeWithOneMutation()
        let downstream = RecordingTelemetrySink()
        let buffered = BufferedSink(capacity: 1_000, downstream: downstream)
        let engine = SyncEngineServiceTests.engine(
            [.status(503), .status(201)], clock: clock, store: store, telemetry: buffered)
        let engineService = SyncEngineService(engine: engine, clock: .manual(clock))
        let sinkService = BufferedSinkService(buffered)
        let services: [any Service] = engineListedFirst ? [engineService, sinkService] : [sinkService, engineService]
        let group = ServiceGroup(services: services, logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await clock.waitForSleepers()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(try store.pendingCount() == 0)  // the last pass sent it either way
        return downstream.events
    }

    /// The engine's report that its queue is empty, which only the last pass can make.
    static func reportsEmptyQueue(_ event: ResilienceEvent) -> Bool {
        event.kind == .syncStateChanged && event.count == 0
    }

    @Test("the sink listed before the engine stops after it: the last pass's events reach downstream")
    func sinkBeforeEngine() async throws {
        let events = try await Self.eventsDownstream(engineListedFirst: false)
        #expect(events.contains(where: Self.reportsEmptyQueue))
    }

    @Test("the sink listed after the engine stops before its last pass: that pass's events are lost")
    func sinkAfterEngine() async throws {
        let events = try await Self.eventsDownstream(engineListedFirst: true)
        #expect(!events.isEmpty)  // the first pass's events arrived
        #expect(!events.contains(where: Self.reportsEmptyQueue))
    }
}
