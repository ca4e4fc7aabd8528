import ResiliencePolicies
import ResilienceTesting
import Testing

/// A manual clock that counts how many sleeps have ended: every wake-up of a waiter that sleeps on it.
final class WakeCountingClock: Clock, Sendable {
    typealias Instant = ManualClock.Instant
    let manual = ManualClock()
    private let wakes = LockedBox(0)

    var now: Instant { manual.now }
    var minimumResolution: Duration { manual.minimumResolution }
    /// Sleeps that ended (woken by time or by cancellation).
    var wakeUps: Int { wakes.value }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        defer { wakes.mutate { $0 += 1 } }
        try await manual.sleep(until: deadline, tolerance: tolerance)
    }

    /// The clock as the library sees it (offset zero at the manual clock's origin).
    var resilienceClock: ResilienceClock { ResilienceClock(self, origin: Instant(offset: .zero)) }

    /// Starts `count` waiters on `limiter` one after another (each asleep on this clock before the next
    /// arrives); each appends its index and the instant it was admitted at to `admitted`.
    func queueWaiters(
        _ count: Int, on limiter: any RateLimiter, admitted: LockedBox<[(Int, ResilienceInstant)]>,
        context: () -> ResilienceContext
    ) async -> [Task<Void, any Error>] {
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<count {
            let context = context()
            tasks.append(
                Task {
                    let permit = try await limiter.waitForPermit(context: context)
                    admitted.mutate { $0.append((index, permit.admittedAt)) }
                })
            await manual.waitForSleepers(count: index + 1)
        }
        return tasks
    }
}

@Suite("Waiting in order: a token bucket's waiters", .timeLimit(.minutes(1)))
struct TokenBucketWaitingTests {
    let clock = WakeCountingClock()

    func context(deadline: Double? = nil) -> ResilienceContext {
        ResilienceContext(key: "bucket", deadline: deadline.map(at), clock: clock.resilienceClock)
    }

    @Test("Waiters are admitted first come, first served, one token time apart, with one wake-up each")
    func firstComeFirstServedWithOneWakeUpEach() async throws {
        let limiter = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(5, on: limiter, admitted: admitted) { context() }
        #expect(clock.wakeUps == 0)
        for step in 1...5 {
            clock.manual.advance(to: .init(offset: .seconds(step)))
            await eventually { admitted.value.count == step }
            // Only the waiter whose token came is woken: the others sleep on.
            #expect(clock.wakeUps == step)
            #expect(clock.manual.sleeperCount == 5 - step)
        }
        for task in tasks { try await task.value }
        #expect(admitted.value.map(\.0) == [0, 1, 2, 3, 4])
        #expect(admitted.value.map(\.1) == (1...5).map { at(Double($0)) })
    }

    @Test("A caller asking later never overtakes one already waiting")
    func tryAcquireDoesNotJumpTheQueue() async throws {
        let limiter = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(3, on: limiter, admitted: admitted) { context() }
        // At 1 s a token comes, but it is the first waiter's: a newcomer is told to wait behind all three.
        #expect(limiter.tryAcquire(now: at(1)) == .delayed(retryAfter: .seconds(3)))
        // One turn at a time, so the order recorded is the limiter's, not the scheduler's.
        for step in 1...3 {
            clock.manual.advance(to: .init(offset: .seconds(step)))
            await eventually { admitted.value.count == step }
        }
        for task in tasks { try await task.value }
        #expect(admitted.value.map(\.0) == [0, 1, 2])
        #expect(limiter.tryAcquire(now: at(3)) == .delayed(retryAfter: .seconds(1)))
    }

    @Test("A waiter cancelled while queued gives its token back; those behind it keep their turns")
    func cancellationGivesTheTokenBack() async throws {
        let limiter = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(3, on: limiter, admitted: admitted) { context() }
        #expect(limiter.availableTokens(now: at(0)) == -3)
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        #expect(limiter.availableTokens(now: at(0)) == -2)
        // One turn at a time, so the order recorded is the limiter's, not the scheduler's.
        clock.manual.advance(to: .init(offset: .seconds(1)))
        await eventually { admitted.value.count == 1 }
        clock.manual.advance(to: .init(offset: .seconds(3)))
        try await tasks[0].value
        try await tasks[2].value
        #expect(admitted.value.map(\.0) == [0, 2])
        #expect(admitted.value.map(\.1) == [at(1), at(3)])
        // burst 1 + 3 s × 1/s = 4 calls by 3 s: the first, two waiters, and the cancelled waiter's token.
        #expect(limiter.tryAcquire(now: at(3)).permit != nil)
        #expect(limiter.tryAcquire(now: at(3)) == .delayed(retryAfter: .seconds(1)))
    }

    @Test("Every waiter cancelled leaves the bucket as if nobody had waited")
    func cancellingEveryWaiterLeaksNothing() async {
        // 50 waiters at 10/s: the last one's turn (5 s) is within the standard 30 s maximum wait.
        let limiter = TokenBucketLimiter(.rate(10, burst: 2))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(50, on: limiter, admitted: admitted) { context() }
        for task in tasks.reversed() { task.cancel() }
        for task in tasks { _ = await task.result }
        #expect(admitted.value.isEmpty)
        #expect(limiter.availableTokens(now: at(0)) == 0)
        #expect(abs(limiter.availableTokens(now: at(0.15)) - 1.5) < 1e-9)
    }

    @Test("A waiter whose turn would come after its deadline is rejected at once, with the wait as its hint")
    func aTurnPastTheDeadlineIsRejectedAtOnce() async throws {
        let limiter = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(2, on: limiter, admitted: admitted) { context() }
        await #expect(throws: ResilienceError(.rateLimited, key: "bucket", retryAfter: .seconds(3))) {
            _ = try await limiter.waitForPermit(context: context(deadline: 2.5))
        }
        // Rejected without sleeping and without booking a token.
        #expect(clock.manual.sleeperCount == 2)
        #expect(limiter.availableTokens(now: at(0)) == -2)
        let inTime = Task { [context = context(deadline: 3)] in try await limiter.waitForPermit(context: context) }
        await clock.manual.waitForSleepers(count: 3)
        clock.manual.advance(to: .init(offset: .seconds(3)))
        #expect(try await inTime.value.admittedAt == at(3))
        for task in tasks { try await task.value }
    }

    @Test("A cancelled task books nothing")
    func aCancelledTaskBooksNothing() async {
        let limiter = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let waiter = Task { [context = context()] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await limiter.waitForPermit(context: context)
        }
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(limiter.availableTokens(now: at(0)) == 0)
    }
}

@Suite("Waiting in order: a bulkhead's waiters", .timeLimit(.minutes(1)))
struct BulkheadWaitingTests {
    @Test("A released slot wakes exactly one waiter, the oldest")
    func oneWakeUpPerRelease() async throws {
        let limiter = ConcurrencyLimiter(.limit(2, queued: 10))
        let held = [limiter.tryAcquire(now: at(0)).permit!, limiter.tryAcquire(now: at(0)).permit!]
        let context = ResilienceContext(key: "bulkhead")
        let admitted = LockedBox<[Int]>([])
        var tasks: [Task<RateLimitPermit, any Error>] = []
        for index in 0..<6 {
            tasks.append(
                Task {
                    let permit = try await limiter.waitForPermit(context: context)
                    admitted.mutate { $0.append(index) }
                    return permit
                })
            await eventually { limiter.occupancy.queued == index + 1 }
        }
        limiter.release(held[0], outcome: .accepted, now: at(0))
        await eventually { admitted.value.count == 1 }
        for _ in 0..<1_000 { await Task.yield() }
        #expect(admitted.value == [0])
        #expect(limiter.occupancy == (2, 5))
        limiter.release(held[1], outcome: .accepted, now: at(0))
        await eventually { admitted.value.count == 2 }
        #expect(limiter.occupancy == (2, 4))
        // Each release hands its slot to the next waiter in line; each admission is observed before the next
        // release, so the order recorded is the limiter's, not the scheduler's.
        for (index, task) in tasks.enumerated() {
            limiter.release(try await task.value, outcome: .accepted, now: at(0))
            await eventually { admitted.value.count >= min(index + 3, tasks.count) }
        }
        #expect(admitted.value == [0, 1, 2, 3, 4, 5])
        #expect(limiter.occupancy == (0, 0))
    }

    @Test("A waiter whose deadline passes in the middle of the queue leaves it; the rest keep their order")
    func deadlineExpiryInTheMiddleOfTheQueue() async throws {
        let clock = ManualClock()
        let limiter = ConcurrencyLimiter(.limit(1, queued: 10))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let admitted = LockedBox<[Int]>([])
        var tasks: [Task<RateLimitPermit, any Error>] = []
        for index in 0..<3 {
            let deadline = index == 1 ? at(2) : at(60)
            let context = ResilienceContext(key: "bulkhead", deadline: deadline, clock: .manual(clock))
            tasks.append(
                Task {
                    let permit = try await limiter.waitForPermit(context: context)
                    admitted.mutate { $0.append(index) }
                    return permit
                })
            await eventually { limiter.occupancy.queued == index + 1 }
        }
        await clock.waitForSleepers(count: 3)
        clock.advance(to: .init(offset: .seconds(2)))
        await #expect(throws: ResilienceError(.bulkheadFull, key: "bulkhead")) { _ = try await tasks[1].value }
        #expect(limiter.occupancy == (1, 2))
        limiter.release(held, outcome: .accepted, now: at(2))
        limiter.release(try await tasks[0].value, outcome: .accepted, now: at(2))
        limiter.release(try await tasks[2].value, outcome: .accepted, now: at(2))
        #expect(admitted.value == [0, 2])
        #expect(limiter.occupancy == (0, 0))
    }

    @Test("Thousands of waiters leaving from anywhere in the queue leak no slot and keep the order")
    func manyDeparturesFromAnywhere() async throws {
        let count = 2_000
        let limiter = ConcurrencyLimiter(.limit(1, queued: count))
        let held = limiter.tryAcquire(now: at(0)).permit!
        let context = ResilienceContext(key: "bulkhead")
        let admitted = LockedBox<[Int]>([])
        var tasks: [Task<Void, any Error>] = []
        for index in 0..<count {
            tasks.append(
                Task {
                    let permit = try await limiter.waitForPermit(context: context)
                    admitted.mutate { $0.append(index) }
                    limiter.release(permit, outcome: .accepted, now: at(0))
                })
            await eventually { limiter.occupancy.queued == index + 1 }
        }
        let leaving = Set((0..<count).filter { $0 % 7 == 3 || $0 % 5 == 0 })
        for index in leaving.sorted(by: >) { tasks[index].cancel() }
        await eventually { limiter.occupancy.queued == count - leaving.count }
        limiter.release(held, outcome: .accepted, now: at(0))
        for (index, task) in tasks.enumerated() where !leaving.contains(index) { try await task.value }
        #expect(admitted.value == (0..<count).filter { !leaving.contains($0) })
        #expect(limiter.occupancy == (0, 0))
    }
}

@Suite("Waiting in order: a server quota's waiters", .timeLimit(.minutes(1)))
struct ServerQuotaWaitingTests {
    let clock = WakeCountingClock()

    @Test("Spread calls are booked first come, first served, one wake-up each")
    func spreadSlotsInOrder() async throws {
        let limiter = ServerQuotaLimiter(.init(maximumWait: nil, spreadsEvenly: true))
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(8)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(3, on: limiter, admitted: admitted) {
            ResilienceContext(key: "api", clock: clock.resilienceClock)
        }
        for step in 1...3 {
            clock.manual.advance(to: .init(offset: .seconds(2 * step)))
            await eventually { admitted.value.count == step }
            #expect(clock.wakeUps == step)
        }
        for task in tasks { try await task.value }
        #expect(admitted.value.map(\.0) == [0, 1, 2])
        #expect(admitted.value.map(\.1) == [at(2), at(4), at(6)])
        #expect(limiter.remaining(now: at(6)) == 0)
    }

    @Test("A cancelled waiter gives its slot back to the window")
    func cancellationGivesTheSlotBack() async throws {
        let limiter = ServerQuotaLimiter(.init(maximumWait: nil, spreadsEvenly: true))
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(8)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(2, on: limiter, admitted: admitted) {
            ResilienceContext(key: "api", clock: clock.resilienceClock)
        }
        #expect(limiter.remaining(now: at(0)) == 1)
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        #expect(limiter.remaining(now: at(0)) == 2)
        clock.manual.advance(to: .init(offset: .seconds(2)))
        try await tasks[0].value
        #expect(admitted.value.map(\.1) == [at(2)])
    }

    @Test("Waiters for a reset wake once, at the reset, and all pass")
    func everyoneWaitingForTheResetWakesOnce() async throws {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(10)), now: at(0))
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(20, on: limiter, admitted: admitted) {
            ResilienceContext(key: "api", clock: clock.resilienceClock)
        }
        clock.manual.advance(to: .init(offset: .seconds(10)))
        for task in tasks { try await task.value }
        #expect(clock.wakeUps == 20)
        #expect(admitted.value.allSatisfy { $0.1 == at(10) })
    }

    @Test("A caller waiting for the reset goes as soon as a new quota makes room, not at the old reset")
    func aNewQuotaWithRoomWakesTheResetWaiters() async throws {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 5, resetAfter: .seconds(60)), now: at(0))
        let permits = (0..<5).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        // The first answer says 4 left, which the four calls still in flight may take: no room for a sixth.
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(60)), now: at(0))
        #expect(limiter.remaining(now: at(0)) == 0)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(1, on: limiter, admitted: admitted) {
            ResilienceContext(key: "api", clock: clock.resilienceClock)
        }
        clock.manual.advance(to: .init(offset: .seconds(2)))
        for permit in permits { limiter.release(permit, outcome: .accepted, now: at(2)) }
        // The last answer: 3 left and nothing in flight beside it. The waiter goes now, before any newcomer.
        limiter.observe(ServerQuota(remaining: 3, resetAfter: .seconds(58)), now: at(2))
        await eventually { admitted.value.count == 1 }
        #expect(admitted.value.map(\.1) == [at(2)])
        #expect(limiter.remaining(now: at(2)) == 2)
        clock.manual.advance(to: .init(offset: .seconds(60)))
        for task in tasks { try await task.value }
    }

    @Test("A slot booked against a quota the server has since replaced is asked for again")
    func aNewQuotaVoidsTheBookings() async throws {
        let limiter = ServerQuotaLimiter(.init(maximumWait: nil, spreadsEvenly: true))
        limiter.observe(ServerQuota(remaining: 2, resetAfter: .seconds(8)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let admitted = LockedBox<[(Int, ResilienceInstant)]>([])
        let tasks = await clock.queueWaiters(1, on: limiter, admitted: admitted) {
            ResilienceContext(key: "api", clock: clock.resilienceClock)
        }
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(20)), now: at(1))
        clock.manual.advance(to: .init(offset: .seconds(4)))
        // Woke at its old slot, found the new quota spent, and sleeps until the new reset.
        await clock.manual.waitForSleepers(count: 1)
        #expect(admitted.value.isEmpty)
        clock.manual.advance(to: .init(offset: .seconds(21)))
        try await tasks[0].value
        #expect(admitted.value.map(\.1) == [at(21)])
    }

    @Test("A turn after the deadline is refused at once, booking nothing")
    func aTurnPastTheDeadlineIsRefused() async {
        let limiter = ServerQuotaLimiter(.init(maximumWait: nil, spreadsEvenly: true))
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(8)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        let context = ResilienceContext(key: "api", deadline: at(1), clock: clock.resilienceClock)
        await #expect(throws: ResilienceError(.rateLimited, key: "api", retryAfter: .seconds(2))) {
            _ = try await limiter.waitForPermit(context: context)
        }
        #expect(limiter.remaining(now: at(0)) == 3)
        #expect(clock.wakeUps == 0)
    }
}
