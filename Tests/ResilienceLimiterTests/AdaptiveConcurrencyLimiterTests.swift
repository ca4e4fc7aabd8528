import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("AdaptiveConcurrencyLimiter")
struct AdaptiveConcurrencyLimiterTests {
    static func limiter(
        initial: Int = 20, minimum: Int = 4, maximum: Int = 1_000, queued: Int = 0,
        algorithm: AdaptiveLimitAlgorithm = .gradient2()
    ) -> AdaptiveConcurrencyLimiter {
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = initial
        configuration.minimumLimit = minimum
        configuration.maximumLimit = maximum
        configuration.maximumQueued = queued
        configuration.algorithm = algorithm
        return AdaptiveConcurrencyLimiter(configuration)
    }

    @Test func shedsTheLowestPriorityFirst() {
        let limiter = Self.limiter(initial: 20)
        // Sheddable calls fill 75 % of the limit, default ones all of it, critical ones 125 %.
        var admitted: [RequestPriority: Int] = [:]
        for priority in [RequestPriority.sheddable, .default, .critical] {
            while limiter.tryAcquire(now: at(0), priority: priority).permit != nil {
                admitted[priority, default: 0] += 1
            }
        }
        #expect(admitted == [.sheddable: 15, .default: 5, .critical: 5])
        #expect(limiter.tryAcquire(now: at(0), priority: .sheddable).permit == nil)
        #expect(limiter.occupancy.running == 25)
    }

    @Test func criticalCallsNeverTakeTheCallsInFlightPastTheMaximum() {
        // At the maximum the room kept for critical calls is what is left under it: none.
        let atMaximum = Self.limiter(initial: 8, minimum: 1, maximum: 8)
        var admitted = 0
        while atMaximum.tryAcquire(now: at(0), priority: .critical).permit != nil { admitted += 1 }
        #expect(admitted == 8)
        // Below it, critical calls fill up to 125 % of the limit, or to the maximum when that is less.
        let near = Self.limiter(initial: 8, minimum: 1, maximum: 9)
        admitted = 0
        while near.tryAcquire(now: at(0), priority: .critical).permit != nil { admitted += 1 }
        #expect(admitted == 9)
    }

    @Test func vegasDoesNotTakeAnInstantAnswerForTheRoundTripWithoutQueueing() {
        let limiter = Self.limiter(initial: 20, minimum: 1, maximum: 40, algorithm: .vegas())
        /// Fills the limit at `start` and completes every call `roundTrip` later.
        func round(at start: Double, roundTrip: Double) {
            var permits: [RateLimitPermit] = []
            while let permit = limiter.tryAcquire(now: at(start)).permit { permits.append(permit) }
            for permit in permits { limiter.release(permit, outcome: .accepted, now: at(start + roundTrip)) }
        }
        for step in 0..<5 { round(at: Double(step), roundTrip: 0.1) }
        let learned = limiter.occupancy.limit
        #expect(learned == 40)
        // One call answered at the instant it was admitted (a manual clock that did not move, an answer from
        // memory): no time is no round trip, and the same backend's 100 ms afterwards is no queue.
        let instant = limiter.tryAcquire(now: at(10)).permit!
        limiter.release(instant, outcome: .accepted, now: at(10))
        for step in 0..<5 {
            round(at: 20 + Double(step), roundTrip: 0.1)
            #expect(limiter.occupancy.limit == learned)
        }
        // A drop answered in no time still counts.
        let dropped = limiter.tryAcquire(now: at(30)).permit!
        limiter.release(dropped, outcome: .rejectedByBackend, now: at(30))
        #expect(limiter.occupancy.limit < learned)
    }

    @Test func priorityClassesFollowTheRawValue() {
        let limiter = Self.limiter(initial: 4)
        for _ in 0..<3 { _ = limiter.tryAcquire(now: at(0), priority: .sheddable) }
        // 150 sits between sheddable and default: it is shed with the sheddable class.
        #expect(limiter.tryAcquire(now: at(0), priority: RequestPriority(rawValue: 150)).permit == nil)
        #expect(limiter.tryAcquire(now: at(0), priority: RequestPriority(rawValue: 250)).permit != nil)
    }

    @Test func aRejectionCarriesAHint() {
        let limiter = Self.limiter(initial: 1, minimum: 1)
        let held = limiter.tryAcquire(now: at(0)).permit!
        limiter.release(held, outcome: .accepted, now: at(0.2))
        _ = limiter.tryAcquire(now: at(1)).permit!
        guard case .rejected(let code, let hint) = limiter.tryAcquire(now: at(1)) else {
            Issue.record("a full limiter admitted")
            return
        }
        #expect(code == .bulkheadFull)
        #expect(hint != nil && hint! > .zero)
    }

    @Test func oneCallThatSpannedMinutesBarelyMovesTheHint() {
        let limiter = Self.limiter(initial: 10, minimum: 1, maximum: 10)
        /// Runs one call of `roundTrip` seconds from `start`, alone (too few in flight to move the limit).
        func call(at start: Double, roundTrip: Double) {
            let permit = limiter.tryAcquire(now: at(start)).permit!
            limiter.release(permit, outcome: .accepted, now: at(start + roundTrip))
        }
        /// The hint a call gets when the limit is full.
        func hint(at instant: Double) -> Duration {
            let permits = (0..<10).compactMap { _ in limiter.tryAcquire(now: at(instant)).permit }
            defer { for permit in permits { limiter.release(permit, outcome: .abandoned, now: at(instant)) } }
            guard case .rejected(_, let hint?) = limiter.tryAcquire(now: at(instant)) else {
                Issue.record("a full limiter admitted, or gave no hint")
                return .zero
            }
            return hint
        }
        for step in 0..<50 { call(at: Double(step), roundTrip: 0.1) }
        let usual = hint(at: 60)
        #expect(usual == .milliseconds(10))
        #expect(limiter.occupancy.limit == 10)
        // An app suspended for five minutes mid-call: the hint stays near the backend's, not 300 s × 0.1 ÷ 10.
        call(at: 100, roundTrip: 300)
        #expect(hint(at: 401) <= usual * 2)
        // A backend 100 × slower for good is followed within a few calls.
        for step in 0..<10 { call(at: 500 + Double(step) * 20, roundTrip: 10) }
        #expect(hint(at: 800) >= .milliseconds(500))
    }

    @Test func theLimitGrowsWhileLatencyHoldsAndStaysInItsBounds() {
        let limiter = Self.limiter(initial: 10, minimum: 2, maximum: 12)
        for step in 0..<100 {
            let permits = (0..<10).compactMap { _ in limiter.tryAcquire(now: at(Double(step))).permit }
            for permit in permits { limiter.release(permit, outcome: .accepted, now: at(Double(step) + 0.1)) }
        }
        #expect(limiter.occupancy.limit == 12)
    }

    @Test func dropsShrinkTheLimitToItsMinimum() {
        let limiter = Self.limiter(initial: 20, minimum: 3, algorithm: .aimd())
        for step in 0..<100 {
            let permits = (0..<20).compactMap { _ in limiter.tryAcquire(now: at(Double(step))).permit }
            for permit in permits { limiter.release(permit, outcome: .rejectedByBackend, now: at(Double(step) + 0.1)) }
        }
        #expect(limiter.occupancy.limit == 3)
    }

    @Test func abandonedCallsTeachNothing() {
        let limiter = Self.limiter(initial: 20, algorithm: .aimd())
        let permits = (0..<20).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        for permit in permits { #expect(limiter.complete(permit, outcome: .abandoned, now: at(9)) == nil) }
        #expect(limiter.occupancy == (20, 0, 0))
    }

    @Test func completeReportsTheChange() {
        let limiter = Self.limiter(initial: 20, algorithm: .aimd())
        let permits = (0..<20).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        let change = limiter.complete(permits[0], outcome: .rejectedByBackend, now: at(0.1))
        #expect(change?.from == 20 && change?.to == 18)
    }

    @Test func badSettingsAreClamped() {
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = -3
        configuration.minimumLimit = 0
        configuration.maximumLimit = -1
        configuration.maximumQueued = -9
        configuration.sheddableShare = .infinity
        configuration.criticalShare = 0.1
        let limiter = AdaptiveConcurrencyLimiter(configuration)
        #expect(limiter.configuration.maximumLimit == 1)
        #expect(limiter.configuration.initialLimit == 1)
        #expect(limiter.configuration.maximumQueued == 0)
        #expect(limiter.configuration.sheddableShare == 0.75)
        #expect(limiter.configuration.criticalShare == 1)
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
    }

    @Test func aFreedSlotGoesToTheHighestPriorityWaiter() async throws {
        let clock = ManualClock()
        let limiter = Self.limiter(initial: 1, minimum: 1, maximum: 1, queued: 4)
        let held = limiter.tryAcquire(now: at(0)).permit!
        let sheddable = Task {
            try await limiter.waitForPermit(
                context: ResilienceContext(key: "k", clock: .manual(clock), priority: .sheddable))
        }
        await eventually { limiter.occupancy.queued == 1 }
        let critical = Task {
            try await limiter.waitForPermit(
                context: ResilienceContext(key: "k", clock: .manual(clock), priority: .critical))
        }
        await eventually { limiter.occupancy.queued == 2 }
        limiter.release(held, outcome: .accepted, now: at(0.1))
        let criticalPermit = try await critical.value
        #expect(limiter.occupancy.queued == 1)
        limiter.release(criticalPermit, outcome: .accepted, now: at(0.2))
        _ = try await sheddable.value
        #expect(limiter.occupancy == (1, 1, 0))
    }

    @Test func aFullQueueRejectsAtOnce() async {
        let limiter = Self.limiter(initial: 1, minimum: 1, maximum: 1, queued: 0)
        _ = limiter.tryAcquire(now: at(0)).permit!
        let context = ResilienceContext(key: "k", clock: .manual(ManualClock()))
        await #expect(throws: ResilienceError.self) { _ = try await limiter.waitForPermit(context: context) }
        #expect(limiter.occupancy.running == 1)
    }

    @Test func conforms() async {
        let report = await RateLimiterConformance { Self.limiter(initial: 10, minimum: 10, maximum: 10, queued: 4) }
            .run()
        #expect(report.conforms, "\(report)")
    }
}

@Suite("AdaptiveConcurrencyStage")
struct AdaptiveConcurrencyStageTests {
    @Test func rejectsWithTheHintAndReportsLimitChanges() async throws {
        let sink = RecordingTelemetrySink()
        let clock = ManualClock()
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = 1
        configuration.minimumLimit = 1
        configuration.algorithm = .aimd()
        let limiter = AdaptiveConcurrencyLimiter(configuration)
        let stage = AdaptiveConcurrencyStage(limiter: limiter)
        let context = ResilienceContext(key: "api", telemetry: sink, clock: .manual(clock))
        // Inside the call, the one slot is taken: a second call is rejected with a hint.
        let inner = try await stage.execute(context) { inner -> Bool in
            do {
                _ = try await stage.execute(inner) { _ in 0 }
                return false
            } catch let error as ResilienceError {
                return error.code == .bulkheadFull && error.retryAfter != nil
            }
        }
        #expect(inner)
        #expect(sink.events(.rateLimited).map(\.detail) == ["rejected"])
        // The accepted call (inflight 1 ≥ limit ÷ 2) grew the limit to 2.
        #expect(sink.events(.limitChanged).map(\.count) == [2])
        #expect(sink.events(.limitChanged).map(\.total) == [1])
        #expect(limiter.occupancy.running == 0)
    }

    @Test func aFailedCallReleasesItsSlotAsADrop() async {
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = 10
        configuration.minimumLimit = 1
        configuration.algorithm = .aimd()
        let limiter = AdaptiveConcurrencyLimiter(configuration)
        let stage = AdaptiveConcurrencyStage.adaptiveConcurrency(limiter)
        let context = ResilienceContext(key: "api", clock: .manual(ManualClock()))
        await #expect(throws: ScriptedError.self) {
            try await stage.execute(context) { _ -> Int in throw ScriptedError(classification: Failures.server) }
        }
        #expect(limiter.occupancy == (9, 0, 0))
    }

    @Test func appearsInThePipelineDescription() {
        let pipeline = Pipeline { AdaptiveConcurrencyStage(limiter: AdaptiveConcurrencyLimiter()) }
        #expect(pipeline.pipelineDescription.contains("adaptive-concurrency"))
        #expect(pipeline.pipelineDescription.contains("gradient2"))
    }

    @Test func waitsForASlotWhenAsked() async throws {
        let clock = ManualClock()
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = 1
        configuration.minimumLimit = 1
        configuration.maximumLimit = 1
        configuration.maximumQueued = 1
        let limiter = AdaptiveConcurrencyLimiter(configuration)
        let observer = RecordingHoldObserver()
        let stage = AdaptiveConcurrencyStage(limiter: limiter, waits: true, reportsHoldsTo: observer)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let waiter = Task { try await stage.execute(context) { _ in 7 } }
        await eventually { limiter.occupancy.queued == 1 }
        limiter.release(held, outcome: .accepted, now: at(0))
        #expect(try await waiter.value == 7)
        #expect(limiter.occupancy == (1, 0, 0))
        // The wait was reported as one held call, released before the call went on.
        #expect(observer.events.value == ["held at 0.0 seconds", "released at 0.0 seconds"])
    }
}

@Suite("RetryBudget priorities")
struct RetryBudgetPriorityTests {
    @Test func sheddableRetriesLeaveTheReserve() {
        let budget = RetryBudget(
            RetryBudgetConfiguration(ratio: 0, minimumPerSecond: 1, window: .seconds(10)), clock: .manual(ManualClock())
        )
        var sheddable = 0
        while budget.tryWithdraw(now: at(0), priority: .sheddable) { sheddable += 1 }
        #expect(sheddable == 8)
        #expect(budget.tryWithdraw(now: at(0), priority: .default))
        #expect(budget.tryWithdraw(now: at(0), priority: .critical))
        #expect(!budget.tryWithdraw(now: at(0), priority: .critical))
    }
}
