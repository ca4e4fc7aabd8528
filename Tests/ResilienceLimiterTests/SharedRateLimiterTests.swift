import ResilienceTesting
import Testing

@testable import ResiliencePolicies

@Suite("Shared rate limiter", .timeLimit(.minutes(1)))
struct SharedRateLimiterTests {
    let clock = ManualClock()
    var resilienceClock: ResilienceClock { ResilienceClock(clock, origin: clock.now) }
    var now: ResilienceInstant { ResilienceInstant(offset: clock.now.offset) }

    /// A limiter with `settings` on a fresh in-memory store behind a fault injector, and the sink its events
    /// go to, all on the test's clock.
    func limiterOnFaultInjectingStore(
        _ settings: SharedRateLimiter.Configuration
    ) -> (FaultInjectingCoordinationStore, SharedRateLimiter, RecordingTelemetrySink) {
        let store = FaultInjectingCoordinationStore(
            wrapping: InMemoryCoordinationStore(clock: resilienceClock), clock: resilienceClock)
        let sink = RecordingTelemetrySink()
        return (store, SharedRateLimiter(store: store, settings, clock: resilienceClock, telemetry: sink), sink)
    }

    func configuration(
        _ mode: SharedStateFailureMode = .failOpen(expectedReplicas: 2)
    ) -> SharedRateLimiter.Configuration {
        var configuration = SharedRateLimiter.Configuration(
            key: "api", quota: SharedRateQuota(permits: 20, per: .seconds(1)))
        configuration.failureMode = mode
        return configuration
    }

    /// Drives `limiters` in 5 ms steps for `duration`, each taking every slot that is due, and moving the clock
    /// only once `idle` holds; returns the admission times.
    func drive(
        _ limiters: [SharedRateLimiter], for duration: Duration, idle: () -> Bool = { true }
    ) async -> [Duration] {
        var admissions: [Duration] = []
        let end = clock.now.offset + duration
        while clock.now.offset < end {
            for limiter in limiters {
                while case .admitted = limiter.tryAcquire(now: now) { admissions.append(clock.now.offset) }
            }
            for _ in 0..<300 { await Task.yield() }
            for limiter in limiters {
                while case .admitted = limiter.tryAcquire(now: now) { admissions.append(clock.now.offset) }
            }
            await eventually(idle)
            clock.advance(by: .milliseconds(5))
        }
        return admissions
    }

    /// The documented bound for a 1 s window at 20/s: `burst + (W + slotGrace) / interval` = 1 + 20.5, plus
    /// the replicas' round trips to the store over the interval. A round trip here is the virtual time that
    /// passes before a lease's task runs: none on a quiet machine, a 5 ms step or more under load, and the
    /// lease's slots start that much later. Hence 22, not 21.
    let windowBound = 22

    func maximumPerWindow(_ admissions: [Duration], window: Duration = .seconds(1)) -> Int {
        admissions.map { start in admissions.filter { $0 >= start && $0 < start + window }.count }.max() ?? 0
    }

    @Test func leasesInBatchesAndAdmitsWithoutAStoreCallPerCall() async {
        let (store, limiter, _) = limiterOnFaultInjectingStore(configuration())
        let admissions = await drive([limiter], for: .seconds(3))
        #expect(admissions.count >= 54 && admissions.count <= 61)
        #expect(maximumPerWindow(admissions) <= windowBound)
        #expect(store.calls * 2 <= admissions.count + 4)
    }

    @Test func replicasShareOneLimit() async {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let replicas = (0..<4).map { _ in SharedRateLimiter(store: store, configuration(), clock: resilienceClock) }
        let admissions = await drive(replicas, for: .seconds(3))
        #expect(maximumPerWindow(admissions) <= windowBound)
        #expect(admissions.count >= 54)
    }

    @Test func failsOpenAtItsShareAndResumesWhenTheStoreReturns() async {
        let (store, limiter, sink) = limiterOnFaultInjectingStore(configuration())
        store.fault = .unavailable
        _ = limiter.tryAcquire(now: now)
        await eventually { limiter.isDegraded }
        // The lease's task changes the state, then emits: wait for the event, not only the state.
        await eventually { sink.events(.coordinationStoreFailed).count == 1 }
        let local = await drive([limiter], for: .seconds(2))
        // Half of 20/s while the store is down.
        #expect(local.count >= 18 && local.count <= 22)
        #expect(sink.events(.coordinationStoreFailed).count == 1)
        store.fault = nil
        clock.advance(by: .seconds(1))
        _ = limiter.tryAcquire(now: now)
        await eventually { !limiter.isDegraded }
        await eventually { sink.events(.coordinationStoreRecovered).count == 1 }
        let shared = await drive([limiter], for: .seconds(2))
        #expect(shared.count >= 36)
        #expect(sink.events(.coordinationStoreFailed).count == 1)
        #expect(sink.events(.coordinationStoreRecovered).count == 1)
    }

    @Test func failsClosedWhileTheStoreIsDown() async {
        let (store, limiter, _) = limiterOnFaultInjectingStore(configuration(.failClosed))
        store.fault = .unavailable
        _ = limiter.tryAcquire(now: now)
        await eventually { limiter.isDegraded }
        guard case .rejected(.rateLimited, let retryAfter) = limiter.tryAcquire(now: now) else {
            Issue.record("a fail-closed limiter admitted while the store was down")
            return
        }
        #expect(retryAfter != nil)
    }

    @Test func aStalledStoreMeetsTheDeadline() async {
        let (store, limiter, sink) = limiterOnFaultInjectingStore(configuration())
        store.fault = .stall
        _ = limiter.tryAcquire(now: now)
        await clock.waitForSleepers(count: 2)
        #expect(!limiter.isDegraded)
        clock.advance(by: .milliseconds(250))
        await eventually { limiter.isDegraded }
        await eventually { !sink.events(.coordinationStoreFailed).isEmpty }
        #expect(sink.events(.coordinationStoreFailed).first?.duration == .milliseconds(250))
        await eventually { clock.sleeperCount == 0 }
    }

    @Test func aStoreThatIgnoresCancellationIsLeftAtTheDeadline() async {
        var settings = configuration()
        settings.retryInterval = .milliseconds(500)
        let (store, limiter, sink) = limiterOnFaultInjectingStore(settings)
        store.fault = .unresponsive
        _ = limiter.tryAcquire(now: now)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(250))
        await eventually { limiter.isDegraded }
        await eventually { sink.events(.coordinationStoreFailed).first?.duration == .milliseconds(250) }
        // Half of 20/s while every call hangs; a retry every 500 ms, yet only a few calls are left running.
        let local = await drive([limiter], for: .seconds(5))
        #expect(local.count >= 45 && local.count <= 55)
        #expect(store.heldCalls == 4)
        // Released, the held calls end; the next retry reaches the store again. Every step waits until no caller
        // waits for the store (counted from before a call's deadline is set until its caller has the answer): a
        // healthy call's deadline must not pass while its task only waits for a thread.
        store.fault = nil
        let shared = await drive([limiter], for: .seconds(2)) { limiter.storeCallsAwaited == 0 }
        #expect(!limiter.isDegraded)
        #expect(shared.count >= 30)
        #expect(sink.events(.coordinationStoreRecovered).count == 1)
        #expect(sink.events(.coordinationStoreFailed).count == 1)
    }

    @Test func waitsInAPipelineStage() async throws {
        let store = FaultInjectingCoordinationStore(
            wrapping: InMemoryCoordinationStore(clock: resilienceClock), clock: resilienceClock)
        let limiter = SharedRateLimiter(store: store, configuration(), clock: resilienceClock)
        let context = ResilienceContext(key: "api", clock: resilienceClock)
        let done = LockedBox<RateLimitPermit?>(nil)
        let task = Task {
            let permit = try await limiter.waitForPermit(context: context)
            done.mutate { $0 = permit }
        }
        // Step time until the waiter has its permit, each step only once the lease its first ask started has come
        // back from the store: under load that task runs late, and time moved past it would leave the waiter
        // asleep on a clock nobody advances any more. Bounded, so a waiter that never gets a permit fails the
        // test instead of hanging the run (the wait does not end when the test's time limit cancels the test).
        for _ in 0..<400 where done.value == nil {
            await eventually { store.calls > 0 && limiter.storeCallsAwaited == 0 }
            for _ in 0..<300 { await Task.yield() }
            if done.value == nil { clock.advance(by: .milliseconds(5)) }
        }
        guard let permit = done.value else {
            task.cancel()
            Issue.record("the waiter never got a permit")
            return
        }
        try await task.value
        #expect(permit.admittedAt <= ResilienceInstant(offset: .milliseconds(100)))
    }
}
