import ResilienceCore
import ResilienceTesting
import Testing

@Suite("ManualClock")
struct ManualClockTests {
    @Test("A sleeper wakes only when time reaches its deadline")
    func sleeperWakesAtDeadline() async throws {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(5)) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        try await task.value
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .seconds(5))
    }

    @Test("Sleepers wake in deadline order")
    func sleepersWakeInOrder() async throws {
        let clock = ManualClock()
        let order = LockedBox<[Int]>([])
        let tasks = [3, 1, 2].map { second in
            Task {
                try await clock.sleep(for: .seconds(second))
                order.mutate { $0.append(second) }
            }
        }
        await clock.waitForSleepers(count: 3)
        #expect(clock.nextDeadline?.offset == .seconds(1))
        for _ in 0..<3 {
            clock.advanceToNextDeadline()
            // Let the woken task record itself before the next one wakes.
            while order.value.count < Int((clock.now.offset / .seconds(1)).rounded()) { await Task.yield() }
        }
        for task in tasks { try await task.value }
        #expect(order.value == [1, 2, 3])
    }

    @Test("Cancelling a sleeper throws CancellationError without advancing time")
    func cancellationEndsSleep() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("A sleep whose deadline already passed returns at once")
    func pastDeadlineReturns() async throws {
        let clock = ManualClock(now: .seconds(10))
        try await clock.sleep(until: .init(offset: .seconds(3)))
        #expect(clock.sleeperCount == 0)
    }

    @Test("ResilienceClock reads and sleeps on a wrapped ManualClock")
    func resilienceClockWrapsManualClock() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        #expect(clock.now() == .origin)
        let task = Task { try await clock.sleep(for: .milliseconds(250)) }
        await manual.waitForSleepers(count: 1)
        manual.advance(by: .milliseconds(250))
        try await task.value
        #expect(clock.now().offset == .milliseconds(250))
    }
}

@Suite("ResilienceClock origin")
struct ResilienceClockOriginTests {
    @Test("A manual wrapper made after time moved still reports the manual clock's offsets")
    func manualWrapperUsesManualZero() {
        let manual = ManualClock(now: .seconds(42))
        #expect(ResilienceClock.manual(manual).now().offset == .seconds(42))
        #expect(ResilienceClock(manual).now() == .origin)
    }
}
