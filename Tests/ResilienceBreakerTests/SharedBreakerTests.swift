import Foundation
import ResilienceTesting
import Testing

@testable import ResiliencePolicies

@Suite("Shared breaker")
struct SharedBreakerTests {
    let clock = ManualClock()
    var resilienceClock: ResilienceClock { ResilienceClock(clock, origin: clock.now) }
    var now: ResilienceInstant { ResilienceInstant(offset: clock.now.offset) }

    /// A fresh in-memory store behind a fault injector, both on the test's clock.
    func faultInjectingStore() -> FaultInjectingCoordinationStore {
        FaultInjectingCoordinationStore(
            wrapping: InMemoryCoordinationStore(clock: resilienceClock), clock: resilienceClock)
    }

    func configuration(
        _ replica: String, mode: SharedStateFailureMode = .failOpen(expectedReplicas: 2)
    )
        -> SharedBreaker.Configuration
    {
        var configuration = SharedBreaker.Configuration(key: "api", replica: replica)
        configuration.failureThreshold = 3
        configuration.openDuration = .constant(.seconds(5))
        configuration.failureMode = mode
        return configuration
    }

    func fail(_ breaker: SharedBreaker, times: Int) -> BreakerTransition? {
        var last: BreakerTransition?
        for _ in 0..<times {
            guard let permit = breaker.admit(now: now).permit else { return last }
            last = breaker.record(.failure(Failures.server), for: permit, now: now) ?? last
        }
        return last
    }

    /// Advances one refresh interval once every breaker's refresh task sleeps and the store calls already
    /// started have had their turns (a call whose task has not run yet must not see its deadline pass).
    func refreshAll(_ count: Int) async {
        await clock.waitForSleepers(count: count)
        for _ in 0..<200 { await Task.yield() }
        clock.advance(by: .milliseconds(250))
        for _ in 0..<200 { await Task.yield() }
    }

    /// The store's record of "api" once `reached` holds for it: breakers write on their own tasks.
    func storedRecord(
        in store: some CoordinationStore, until reached: (BreakerRecord?) -> Bool = { $0 != nil }
    ) async throws -> BreakerRecord? {
        var stored = try await store.breakerRecord(key: "api")
        for _ in 0..<20_000 where !reached(stored) {
            await Task.yield()
            stored = try await store.breakerRecord(key: "api")
        }
        return stored
    }

    @Test("A store record whose open time does not fit the clock opens the breaker for the longest open period")
    func storeRecordBeyondTheClock() throws {
        let now = ResilienceInstant.origin.advanced(by: .seconds(500))
        let year = Duration.seconds(86_400 * 365)
        // A record from a corrupt row or a third-party store: any pair of 64-bit halves decodes as a Duration.
        let beyond = try JSONDecoder().decode(Duration.self, from: Data("[9223372036854775807,0]".utf8))
        var machine = SharedBreakerMachine(configuration("a"), generator: PseudoRandomGenerator(seed: 1))
        let open = BreakerRecord(key: "api", state: .open, version: 1, remainingOpen: beyond)
        #expect(machine.adopt(open, receivedAt: now, wrote: false, conflicted: false)?.to == .open)
        // The same version again keeps the open period in step with the store's clock.
        #expect(machine.adopt(open, receivedAt: now, wrote: false, conflicted: false) == nil)
        #expect(machine.state(now: now.advanced(by: year)) == .open)
        // A negative time left is an open period that is over.
        machine = SharedBreakerMachine(configuration("a"), generator: PseudoRandomGenerator(seed: 1))
        let over = BreakerRecord(key: "api", state: .open, version: 1, remainingOpen: .seconds(-5))
        _ = machine.adopt(over, receivedAt: now, wrote: false, conflicted: false)
        #expect(machine.state(now: now) != .closed)
    }

    @Test func aTripOnOneReplicaStopsTheOthersWithinARefresh() async throws {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let sink = RecordingTelemetrySink()
        let first = SharedBreaker(store: store, configuration("a"), clock: resilienceClock)
        let second = SharedBreaker(store: store, configuration("b"), clock: resilienceClock, telemetry: sink)
        defer {
            first.shutdown()
            second.shutdown()
        }
        #expect(fail(first, times: 3)?.to == .open)
        let stored = try await storedRecord(in: store)
        #expect(stored?.state == .open)
        #expect(second.admit(now: now).permit != nil)
        await refreshAll(2)
        #expect(await settles { second.metrics(now: now).state == .open })
        #expect(second.admit(now: now).rejection?.state == .open)
        // The refresh task changes the state, then emits: wait for the event, not only the state.
        #expect(await settles { !sink.events(.sharedBreakerSynced).isEmpty })
        #expect(sink.events(.sharedBreakerSynced).first?.transition?.to == .open)
    }

    @Test func exactlyOneReplicaProbesAndItsVerdictReachesEveryone() async throws {
        let store = faultInjectingStore()
        let replicas = (0..<4).map { SharedBreaker(store: store, configuration("r\($0)"), clock: resilienceClock) }
        defer { replicas.forEach { $0.shutdown() } }
        _ = fail(replicas[0], times: 3)
        var stored = try await storedRecord(in: store)
        #expect(stored?.state == .open)
        await refreshAll(4)
        #expect(await settles { replicas.allSatisfy { $0.metrics(now: now).state == .open } })
        // The refreshes have returned from the store and been heard before the open period ends (no replica
        // waits for a store call, so none can time out when the clock jumps).
        #expect(await settles { replicas.allSatisfy { $0.storeCallsAwaited == 0 } })
        for _ in 0..<5_000 { await Task.yield() }
        clock.advance(by: .seconds(5))
        // Every replica asks; the store grants the lease to one.
        for replica in replicas { #expect(replica.admit(now: now).permit == nil) }
        // The store's answers arrive on the replicas' own tasks. Until a replica holds the lease, asking it
        // again changes nothing (its request is in flight or was refused), so poll until one holds it, then
        // keep asking the others a while: a second probe would be a failure.
        var probes: [(SharedBreaker, BreakerPermit)] = []
        var quietRounds = 0
        for _ in 0..<200_000 where quietRounds < 2_000 {
            for replica in replicas where !probes.contains(where: { $0.0 === replica }) {
                if let permit = replica.admit(now: now).permit { probes.append((replica, permit)) }
            }
            if !probes.isEmpty { quietRounds += 1 }
            await Task.yield()
        }
        #expect(probes.count == 1)
        #expect(probes.first?.1.isProbe == true)
        guard let (prober, permit) = probes.first else { return }
        #expect(prober.record(.success, for: permit, now: now)?.to == .closed)
        #expect(await settles { replicas.filter { $0.metrics(now: now).state == .closed }.count == 1 })
        // The verdict reaches the store on the prober's own task; the others learn it at their next refresh.
        stored = try await storedRecord(in: store) { $0?.state == .closed }
        #expect(stored?.state == .closed)
        await refreshAll(4)
        #expect(await settles { replicas.allSatisfy { $0.metrics(now: now).state == .closed } })
    }

    @Test func failsOpenAsALocalBreakerAndPublishesWhenTheStoreReturns() async throws {
        let base = InMemoryCoordinationStore(clock: resilienceClock)
        let store = FaultInjectingCoordinationStore(wrapping: base, clock: resilienceClock)
        let sink = RecordingTelemetrySink()
        let breaker = SharedBreaker(store: store, configuration("a"), clock: resilienceClock, telemetry: sink)
        defer { breaker.shutdown() }
        store.fault = .unavailable
        await refreshAll(1)
        #expect(await settles { breaker.isDegraded })
        #expect(fail(breaker, times: 3)?.to == .open)
        #expect(breaker.admit(now: now).rejection?.state == .open)
        // The open period ends while the store is still down: the replica probes on its own.
        clock.advance(by: .seconds(5))
        let probe = breaker.admit(now: now).permit
        #expect(probe?.isProbe == true)
        if let probe { breaker.record(.failure(Failures.server), for: probe, now: now) }
        store.fault = nil
        await refreshAll(1)
        clock.advance(by: .seconds(1))
        for _ in 0..<10 where try await base.breakerRecord(key: "api") == nil { await refreshAll(1) }
        #expect(try await base.breakerRecord(key: "api")?.state == .open)
        #expect(await settles { !breaker.isDegraded })
        #expect(await settles { sink.events(.coordinationStoreRecovered).count == 1 })
        #expect(sink.events(.coordinationStoreFailed).count == 1)
    }

    @Test func openPeriodsComeFromTheBreakerBackoffAndGrowWithTripsInARow() async {
        let store = faultInjectingStore()
        var settings = configuration("a")
        settings.openDuration = BreakerBackoff(
            base: .seconds(5), growthFactor: 2, maximumMultiplier: 3, maximum: .seconds(15))
        let breaker = SharedBreaker(store: store, settings, clock: resilienceClock)
        defer { breaker.shutdown() }
        // With the store down the replica runs the state machine on its own, probes included.
        store.fault = .unavailable
        await refreshAll(1)
        #expect(await settles { breaker.isDegraded })
        var periods: [Duration?] = [fail(breaker, times: 3)?.openFor]
        for _ in 0..<2 {
            clock.advance(by: (periods.last ?? nil) ?? .zero)
            guard let probe = breaker.admit(now: now).permit else {
                Issue.record("the open period ended without a probe")
                return
            }
            periods.append(breaker.record(.failure(Failures.server), for: probe, now: now)?.openFor)
        }
        #expect(periods == [.seconds(5), .seconds(10), .seconds(15)])
        #expect(breaker.exportState(now: now).values["trips"] == 3)
    }

    @Test func aSlowFailureAnsweredAfterANewerSuccessIsNoOutage() async throws {
        let store = faultInjectingStore()
        let sink = RecordingTelemetrySink()
        var slowStore = configuration("a")
        slowStore.storeDeadline = .seconds(1)
        let breaker = SharedBreaker(store: store, slowStore, clock: resilienceClock, telemetry: sink)
        defer { breaker.shutdown() }
        // A refresh stalls until its deadline; meanwhile the store comes back and takes the breaker's trip.
        store.fault = .stall
        await refreshAll(1)
        await clock.waitForSleepers(count: 2)  // the stalled call and its deadline
        store.fault = nil
        #expect(fail(breaker, times: 3)?.to == .open)
        let stored = try await storedRecord(in: store)
        #expect(stored?.state == .open)
        // The store holds the write before the breaker hears its answer: the write has returned from the store
        // (only the stalled call is left there), its deadline timer has gone, and the answer's few hops back to
        // the breaker have had thousands of turns to run.
        #expect(await settles { store.callsInFlight == 1 && breaker.storeCallsAwaited == 1 })
        for _ in 0..<20_000 where clock.sleeperCount > 2 { await Task.yield() }
        for _ in 0..<5_000 { await Task.yield() }
        // The stalled refresh now times out: older than the write that succeeded, it says nothing new.
        clock.advance(by: .seconds(1))
        for _ in 0..<2000 { await Task.yield() }
        #expect(!breaker.isDegraded)
        #expect(sink.events(.coordinationStoreFailed).isEmpty)
    }

    @Test func aStoreThatIgnoresCancellationIsLeftAtTheDeadline() async throws {
        let store = faultInjectingStore()
        let sink = RecordingTelemetrySink()
        let breaker = SharedBreaker(store: store, configuration("a"), clock: resilienceClock, telemetry: sink)
        defer { breaker.shutdown() }
        /// Moves the clock 50 ms `count` times, each once `idle` holds.
        func step(_ count: Int, idle: () -> Bool = { true }) async {
            for _ in 0..<count {
                for _ in 0..<300 { await Task.yield() }
                #expect(await settles(idle))
                clock.advance(by: .milliseconds(50))
            }
        }
        store.fault = .unresponsive
        await refreshAll(1)
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(250))
        #expect(await settles { breaker.isDegraded })
        // Twenty seconds of refreshes and retries while every call hangs: only a few are left running, and
        // the replica runs the breaker on its own.
        await step(400)
        #expect(store.heldCalls == 4)
        #expect(breaker.isDegraded)
        #expect(fail(breaker, times: 3)?.to == .open)
        // Released, the held calls end; the next retry publishes the trip. Every step waits until no caller
        // waits for the store (counted from before a call's deadline is set until its caller has the answer): a
        // healthy call's deadline must not pass while its task only waits for a thread, which a busy machine
        // can keep from running for longer than any number of yields.
        store.fault = nil
        await step(100) { breaker.storeCallsAwaited == 0 }
        #expect(!breaker.isDegraded)
        #expect(try await store.breakerRecord(key: "api")?.state == .open)
        #expect(sink.events(.coordinationStoreRecovered).count == 1)
        #expect(sink.events(.coordinationStoreFailed).count == 1)
    }

    @Test func failsClosedWhileTheStoreIsDown() async {
        let store = faultInjectingStore()
        let breaker = SharedBreaker(store: store, configuration("a", mode: .failClosed), clock: resilienceClock)
        defer { breaker.shutdown() }
        #expect(breaker.admit(now: now).permit != nil)
        store.fault = .stall
        await refreshAll(1)
        #expect(!breaker.isDegraded)
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .milliseconds(250))
        #expect(await settles { breaker.isDegraded })
        #expect(breaker.admit(now: now).permit == nil)
    }

    @Test func staleOutcomesAfterAnAdoptedChangeAreIgnored() async throws {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let first = SharedBreaker(store: store, configuration("a"), clock: resilienceClock)
        let second = SharedBreaker(store: store, configuration("b"), clock: resilienceClock)
        defer {
            first.shutdown()
            second.shutdown()
        }
        guard let early = second.admit(now: now).permit else {
            Issue.record("a closed breaker rejected")
            return
        }
        _ = fail(first, times: 3)
        // The first breaker writes its opening on its own task: the second's refresh must find it stored.
        let stored = try await storedRecord(in: store) { $0?.state == .open }
        #expect(stored?.state == .open)
        await refreshAll(2)
        #expect(await settles { second.metrics(now: now).state == .open })
        #expect(second.record(.success, for: early, now: now) == nil)
        #expect(second.metrics(now: now).state == .open)
    }
}
