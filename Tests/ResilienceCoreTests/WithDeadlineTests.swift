import ResilienceCore
import ResilienceTesting
import Testing

@Suite("withDeadline: the one timer race")
struct WithDeadlineTests {
    struct OperationFailed: Error, Equatable {}

    /// Starts `body` racing a deadline at +5 s on `clock` in a task of its own.
    private func race<Output: Sendable>(
        on clock: ManualClock, _ body: @escaping @Sendable () async throws -> Output
    ) -> Task<Output, any Error> {
        Task {
            try await withDeadline(
                until: ResilienceInstant(offset: .seconds(5)), clock: .manual(clock), operation: body)
        }
    }

    @Test("The timer fires: the operation is cancelled and the caller gets DeadlineExceededError at the deadline")
    func timerFires() async {
        let clock = ManualClock()
        let task = race(on: clock) {
            try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            return "finished"
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(1))
        do {
            _ = try await task.value
            Issue.record("the race returned although the operation was still asleep at the deadline")
        } catch let timeUp as DeadlineExceededError {
            #expect(timeUp.deadline == ResilienceInstant(offset: .seconds(5)))
            #expect(timeUp.operationError is CancellationError)
        } catch {
            Issue.record("expected DeadlineExceededError, got \(error)")
        }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .seconds(5))
    }

    @Test("The timer does not fire: the value comes back and the timer is cancelled")
    func timerDoesNotFire() async throws {
        let clock = ManualClock()
        let task = race(on: clock) {
            try await ResilienceClock.manual(clock).sleep(for: .seconds(2))
            return 42
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(2))
        #expect(try await task.value == 42)
        #expect(clock.sleeperCount == 0)
        #expect(clock.nextDeadline == nil)
    }

    @Test("An operation that throws before the deadline: its own error, not a timeout")
    func operationThrows() async {
        let clock = ManualClock()
        let task = race(on: clock) { () async throws -> Int in
            try await ResilienceClock.manual(clock).sleep(for: .seconds(1))
            throw OperationFailed()
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        await #expect(throws: OperationFailed.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("The caller cancels: the operation and the timer are cancelled, and it is not reported as a timeout")
    func callerCancels() async {
        let clock = ManualClock()
        let sawCancellation = LockedBox(false)
        let task = race(on: clock) { () async throws -> Int in
            do {
                try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            } catch {
                sawCancellation.mutate { $0 = true }
                throw error
            }
            return 1
        }
        await clock.waitForSleepers(count: 2)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(sawCancellation.value)
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("The timer cancels the operation; a value it still returns afterwards is kept")
    func timerCancelsOperation() async throws {
        let clock = ManualClock()
        let sawCancellation = LockedBox(false)
        let task = race(on: clock) {
            do {
                try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            } catch {
                sawCancellation.mutate { $0 = true }
            }
            return "late but done"
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        #expect(try await task.value == "late but done")
        #expect(sawCancellation.value)
        #expect(clock.sleeperCount == 0)
    }

    @Test("A tie is decided by the outcome, never by scheduling: a value wins, a failure is the time running out")
    func tiesAreDeterministic() async throws {
        for _ in 0..<25 {
            let clock = ManualClock()
            let succeeds = race(on: clock) {
                try await ResilienceClock.manual(clock).sleep(until: ResilienceInstant(offset: .seconds(5)))
                return "result"
            }
            await clock.waitForSleepers(count: 2)
            clock.advance(to: ManualClock.Instant(offset: .seconds(5)))
            #expect(try await succeeds.value == "result")

            let other = ManualClock()
            let fails = race(on: other) { () async throws -> String in
                try await ResilienceClock.manual(other).sleep(until: ResilienceInstant(offset: .seconds(5)))
                throw OperationFailed()
            }
            await other.waitForSleepers(count: 2)
            other.advance(to: ManualClock.Instant(offset: .seconds(5)))
            do {
                _ = try await fails.value
                Issue.record("a failing operation returned")
            } catch let timeUp as DeadlineExceededError {
                #expect(timeUp.operationError is OperationFailed)
            }
        }
    }

    @Test("A deadline already passed: the operation never starts")
    func deadlineAlreadyPassed() async {
        let clock = ManualClock(now: .seconds(10))
        let started = LockedBox(false)
        do {
            _ = try await withDeadline(until: ResilienceInstant(offset: .seconds(5)), clock: .manual(clock)) {
                started.mutate { $0 = true }
                return 1
            }
            Issue.record("the race returned a value past its deadline")
        } catch let timeUp as DeadlineExceededError {
            #expect(timeUp.operationError == nil)
        } catch {
            Issue.record("expected DeadlineExceededError, got \(error)")
        }
        #expect(!started.value)
    }

    @Test("A relative limit: negative is zero, an enormous one neither overflows nor fires")
    func relativeLimits() async throws {
        let clock = ManualClock()
        await #expect(throws: DeadlineExceededError.self) {
            try await withDeadline(after: .seconds(-1), clock: .manual(clock)) { 1 }
        }
        let value = try await withDeadline(after: .seconds(Int64.max), clock: .manual(clock)) { 7 }
        #expect(value == 7)
        #expect(clock.sleeperCount == 0)
    }

    @Test("The time running out classifies itself as a transient timeout (NET_002)")
    func classification() {
        let classification = CompositeErrorClassifier.standard.classification(
            of: DeadlineExceededError(deadline: ResilienceInstant(offset: .seconds(5))))
        #expect(classification.category == .timeout)
        #expect(classification.code == .timedOut)
        #expect(classification.isTransient)
    }

    @Test(
        "deadlineAware: a cancellation at or after the context's deadline is that deadline running out; others stay as thrown"
    )
    func deadlineAwareReadsCancellationAtTheDeadlineAsATimeout() throws {
        let clock = ManualClock()
        let deadline = ResilienceInstant(offset: .seconds(5))
        let context = ResilienceContext(key: "k", deadline: deadline, clock: .manual(clock))

        // Before the deadline a cancellation is the caller's; any other failure is never rewritten.
        #expect(context.deadlineAware(CancellationError()) is CancellationError)
        clock.advance(by: .seconds(5))
        #expect(context.deadlineAware(OperationFailed()) as? OperationFailed == OperationFailed())

        let timedOut = try #require(context.deadlineAware(CancellationError()) as? DeadlineExceededError)
        #expect(timedOut.deadline == deadline)
        #expect(timedOut.operationError is CancellationError)
        #expect(context.classify(timedOut).category == .timeout)

        // Without a deadline there is nothing to have run out.
        let unbounded = ResilienceContext(key: "k", clock: .manual(clock))
        #expect(unbounded.deadlineAware(CancellationError()) is CancellationError)
    }
}
