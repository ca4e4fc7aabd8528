import ResiliencePolicies
import ResilienceTesting
import Testing

/// Yields until `condition` holds (no real sleeping); fails the test if it never does.
func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
    for _ in 0..<100_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("condition never became true", sourceLocation: sourceLocation)
}

@Suite("ConcurrencyLimiter")
struct ConcurrencyLimiterTests {
    let context = ResilienceContext(key: "bulkhead")

    @Test func admitsUpToTheLimitThenRejects() {
        let limiter = ConcurrencyLimiter(.limit(2, queued: 0))
        let first = limiter.tryAcquire(now: at(0)).permit!
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.tryAcquire(now: at(0)) == .rejected(.bulkheadFull, retryAfter: nil))
        limiter.release(first, outcome: .accepted, now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.occupancy == (2, 0))
    }

    @Test func waitersAreServedFirstInFirstOut() async throws {
        let limiter = ConcurrencyLimiter(.limit(1, queued: 5))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let order = LockedBox<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<3 {
            tasks.append(
                Task { [context] in
                    let permit = try await limiter.waitForPermit(context: context)
                    order.mutate { $0.append(index) }
                    limiter.release(permit, outcome: .accepted, now: at(0))
                })
            await eventually { limiter.occupancy.queued == index + 1 }
        }
        limiter.release(held, outcome: .accepted, now: at(0))
        for task in tasks { try await task.value }
        #expect(order.value == [0, 1, 2])
        #expect(limiter.occupancy == (0, 0))
    }

    @Test("A long queue (past the ring's first growth) stays first-in-first-out when waiters leave it")
    func longQueueWithDepartures() async throws {
        let limiter = ConcurrencyLimiter(.limit(1, queued: 200))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let order = LockedBox<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<150 {
            tasks.append(
                Task { [context] in
                    let permit = try await limiter.waitForPermit(context: context)
                    order.mutate { $0.append(index) }
                    limiter.release(permit, outcome: .accepted, now: at(0))
                })
            await eventually { limiter.occupancy.queued == index + 1 }
        }
        for index in stride(from: 0, to: 150, by: 3) { tasks[index].cancel() }
        await eventually { limiter.occupancy.queued == 100 }
        limiter.release(held, outcome: .accepted, now: at(0))
        for (index, task) in tasks.enumerated() where index % 3 != 0 { try await task.value }
        #expect(order.value == (0..<150).filter { $0 % 3 != 0 })
        #expect(limiter.occupancy == (0, 0))
    }

    @Test func aFullQueueRejects() async throws {
        let limiter = ConcurrencyLimiter(.limit(1, queued: 1))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let waiter = Task { [context] in try await limiter.waitForPermit(context: context) }
        await eventually { limiter.occupancy.queued == 1 }
        await #expect(throws: ResilienceError(.bulkheadFull, key: "bulkhead")) {
            _ = try await limiter.waitForPermit(context: context)
        }
        limiter.release(held, outcome: .accepted, now: at(0))
        let permit = try await waiter.value
        limiter.release(permit, outcome: .accepted, now: at(0))
        #expect(limiter.occupancy == (0, 0))
    }

    @Test func aCancelledWaiterLeavesNoTrace() async {
        let limiter = ConcurrencyLimiter(.limit(1, queued: 3))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let waiter = Task { [context] in try await limiter.waitForPermit(context: context) }
        await eventually { limiter.occupancy.queued == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(limiter.occupancy == (1, 0))
        limiter.release(held, outcome: .abandoned, now: at(0))
        #expect(limiter.occupancy == (0, 0))
    }

    @Test func aWaiterCancelledBeforeQueueingNeverTakesASlot() async {
        let limiter = ConcurrencyLimiter(.limit(1, queued: 3))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let waiter = Task { [context] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await limiter.waitForPermit(context: context)
        }
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        limiter.release(held, outcome: .accepted, now: at(0))
        #expect(limiter.occupancy == (0, 0))
    }

    @Test func theDeadlineEndsTheWait() async {
        let clock = ManualClock()
        let limiter = ConcurrencyLimiter(.limit(1, queued: 3))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let context = ResilienceContext(
            key: "bulkhead", deadline: ResilienceInstant(offset: .seconds(5)), clock: .manual(clock))
        let waiter = Task { try await limiter.waitForPermit(context: context) }
        await clock.waitForSleepers(count: 1)
        await eventually { limiter.occupancy.queued == 1 }
        clock.advance(by: .seconds(5))
        await #expect(throws: ResilienceError(.bulkheadFull, key: "bulkhead")) { _ = try await waiter.value }
        #expect(limiter.occupancy == (1, 0))
        limiter.release(held, outcome: .accepted, now: at(5))
        #expect(limiter.occupancy == (0, 0))
    }

    @Test("A concurrency limit of Int.max is clamped to 1,000,000 slots, and the limiter admits")
    func hugeLimitIsClamped() {
        for share in [0.75, 1] {
            var configuration = ConcurrencyLimiter.Configuration.limit(Int.max, queued: Int.max)
            configuration.sheddableShare = share
            let limiter = ConcurrencyLimiter(configuration)
            #expect(
                limiter.policyDescription.hasPrefix("bulkhead(concurrent: 1000000,"), "\(limiter.policyDescription)")
            let permit = limiter.tryAcquire(now: at(0), priority: .sheddable).permit
            #expect(permit != nil)
            if let permit { limiter.release(permit, outcome: .accepted, now: at(0)) }
        }
        #expect(
            ConcurrencyLimiter(.limit(Int.min, queued: Int.min)).policyDescription
                == "bulkhead(concurrent: 1, queue: 0)")
    }
}
