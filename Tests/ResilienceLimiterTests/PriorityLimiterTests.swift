import ResilienceCore
import ResiliencePolicies
import ResilienceTesting
import Testing

/// Priorities reach every limiter through the stages (`RateLimiterStrategy` asks
/// `tryAcquire(now:priority:)` with the context's priority): sheddable calls are refused first, critical ones
/// last, and waiters are served highest class first.
@Suite("Priorities through the limiter stages")
struct PriorityLimiterTests {
    static func context(_ priority: RequestPriority, clock: ManualClock = ManualClock()) -> ResilienceContext {
        ResilienceContext(key: "api", clock: .manual(clock), priority: priority)
    }

    @Test func aBulkheadKeepsItsLastSlotsFromSheddableCalls() async throws {
        let bulkhead = ConcurrencyLimiter(.limit(4, queued: 0))
        let stage = RateLimiterStrategy(limiter: bulkhead, waits: false)
        let held = (0..<3).compactMap { _ in bulkhead.tryAcquire(now: at(0)).permit }
        // 3 of 4 slots in use: 75 % of 4 is all a sheddable call may fill; a default one still starts.
        await #expect(throws: ResilienceError(.bulkheadFull, key: "api")) {
            try await stage.execute(Self.context(.sheddable)) { _ in 1 }
        }
        #expect(try await stage.execute(Self.context(.default)) { _ in 2 } == 2)
        #expect(try await stage.execute(Self.context(.critical)) { _ in 3 } == 3)
        for permit in held { bulkhead.release(permit, outcome: .accepted, now: at(0)) }
        #expect(try await stage.execute(Self.context(.sheddable)) { _ in 4 } == 4)
        #expect(bulkhead.occupancy == (0, 0))
    }

    @Test func aBulkheadHandsAFreedSlotToTheHighestPriorityWaiter() async throws {
        let clock = ManualClock()
        let bulkhead = ConcurrencyLimiter(.limit(1, queued: 4))
        let stage = RateLimiterStrategy(limiter: bulkhead)
        let held = bulkhead.tryAcquire(now: at(0)).permit!
        let order = OrderRecorder()
        let ordinary = Task {
            try await stage.execute(Self.context(.default, clock: clock)) { _ in order.append("default") }
        }
        await eventually { bulkhead.occupancy.queued == 1 }
        let critical = Task {
            try await stage.execute(Self.context(.critical, clock: clock)) { _ in order.append("critical") }
        }
        await eventually { bulkhead.occupancy.queued == 2 }
        // A sheddable caller finds default and critical waiters ahead of it and is refused at once.
        #expect(bulkhead.tryAcquire(now: at(0), priority: .sheddable).permit == nil)
        bulkhead.release(held, outcome: .accepted, now: at(0))
        try await critical.value
        try await ordinary.value
        #expect(order.values == ["critical", "default"])
        #expect(bulkhead.occupancy == (0, 0))
    }

    @Test func aFullQueueRefusesItsNewestLowestPriorityWaiterRatherThanAHigherArrival() async throws {
        let clock = ManualClock()
        let bulkhead = ConcurrencyLimiter(.limit(1, queued: 2))
        let stage = RateLimiterStrategy(limiter: bulkhead)
        let held = bulkhead.tryAcquire(now: at(0)).permit!
        let order = OrderRecorder()
        let older = Task {
            try await stage.execute(Self.context(.sheddable, clock: clock)) { _ in order.append("older sheddable") }
        }
        await eventually { bulkhead.occupancy.queued == 1 }
        let newerEnded = LockedState(initialState: false)
        let newer = Task {
            defer { newerEnded.withLock { $0 = true } }
            try await stage.execute(Self.context(.sheddable, clock: clock)) { _ in order.append("newer sheddable") }
        }
        await eventually { bulkhead.occupancy.queued == 2 }
        // The queue is full of sheddable waiters: a critical caller takes the newest one's place, which is
        // refused as a full queue refuses; a caller of the lowest class queued is still refused at once.
        let critical = Task {
            try await stage.execute(Self.context(.critical, clock: clock)) { _ in order.append("critical") }
        }
        await eventually { newerEnded.withLock { $0 } }
        newer.cancel()
        await #expect(throws: ResilienceError(.bulkheadFull, key: "api")) { try await newer.value }
        try #require(bulkhead.occupancy.queued == 2)
        await #expect(throws: ResilienceError(.bulkheadFull, key: "api")) {
            try await stage.execute(Self.context(.sheddable, clock: clock)) { _ in order.append("late sheddable") }
        }
        bulkhead.release(held, outcome: .accepted, now: at(0))
        try await critical.value
        try await older.value
        #expect(order.values == ["critical", "older sheddable"])
        #expect(bulkhead.occupancy == (0, 0))
    }

    @Test func anAdaptiveLimiterBehindTheRateLimiterStageShedsByPriority() async throws {
        var configuration = AdaptiveConcurrencyLimiter.Configuration()
        configuration.initialLimit = 4
        configuration.minimumLimit = 4
        configuration.maximumLimit = 4
        let limiter = AdaptiveConcurrencyLimiter(configuration)
        let stage = RateLimiterStrategy(limiter: limiter, waits: false)
        let held = (0..<3).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        await #expect(throws: ResilienceError.self) {
            try await stage.execute(Self.context(.sheddable)) { _ in 1 }
        }
        #expect(try await stage.execute(Self.context(.default)) { _ in 2 } == 2)
        for permit in held { limiter.release(permit, outcome: .abandoned, now: at(0)) }
    }

    @Test func anAdaptiveThrottleThrottlesSheddableCallsFirstAndCriticalOnesLast() {
        func throttle() -> AdaptiveThrottle {
            let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 7))
            // 20 requests, 8 accepted: K·accepts = 16, so a default call is rejected with (20 − 16) ÷ 21.
            for index in 0..<20 {
                let permit = throttle.tryAcquire(now: at(0)).permit!
                throttle.release(permit, outcome: index < 8 ? .accepted : .rejectedByBackend, now: at(0))
            }
            return throttle
        }
        func rejections(_ priority: RequestPriority) -> Int {
            let throttle = throttle()
            return (0..<200).filter { _ in throttle.tryAcquire(now: at(0), priority: priority).permit == nil }.count
        }
        let sheddable = rejections(.sheddable)
        let ordinary = rejections(.default)
        let critical = rejections(.critical)
        #expect(sheddable > ordinary)
        #expect(ordinary > critical)
        // Critical: (20 − 2.5 × 8) ÷ 21 = 0 for the first call.
        let fresh = throttle()
        #expect(fresh.tryAcquire(now: at(0), priority: .critical).permit != nil)
    }

    @Test func aLimiterWithoutPriorityClassesAdmitsEveryPriorityAlike() {
        let bucket = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(bucket.tryAcquire(now: at(0), priority: .sheddable).permit != nil)
        #expect(bucket.tryAcquire(now: at(0), priority: .critical).permit == nil)
    }
}

/// Records labels in order, from any task.
final class OrderRecorder: Sendable {
    private let state = LockedState<[String]>(initialState: [])

    func append(_ label: String) { state.withLock { $0.append(label) } }

    var values: [String] { state.withLock { $0 } }
}
