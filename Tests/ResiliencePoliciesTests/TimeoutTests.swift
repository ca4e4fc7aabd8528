import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Timeouts")
struct TimeoutTests {
    func code(of error: any Error) -> ResilienceError.Code? { (error as? ResilienceError)?.code }

    @Test("Cooperative: narrows the deadline and reports a timeout, not cancellation")
    func cooperative() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let operation = ScriptedOperation<Int>([.untilDeadline(CancellationError())])
        let stage = TimeoutStrategy(.seconds(10))
        let context = makeContext(clock, sink: sink)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        #expect(operation.contexts.first?.deadline == ResilienceInstant(offset: .seconds(10)))
        clock.advance(by: .seconds(10))
        let error = await #expect(throws: ResilienceError.self) { try await task.value }
        #expect(error?.code == .attemptTimedOut)
        #expect(error?.classification.category == .timeout)
        #expect(error?.classification.isTransient == true)
        #expect(sink.events(.timedOut).first?.duration == .seconds(10))
    }

    @Test("Only narrows: an earlier outer deadline is kept")
    func onlyNarrows() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.success(1)])
        var context = makeContext(clock)
        context.deadline = ResilienceInstant(offset: .seconds(2))
        _ = try await TimeoutStrategy(.seconds(10)).execute(context, next: operation.callAsFunction)
        #expect(operation.contexts.first?.deadline == ResilienceInstant(offset: .seconds(2)))
    }

    @Test("A failure before the deadline is passed through unchanged")
    func earlyFailure() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        await #expect(throws: TestFailure.serverError) {
            try await TimeoutStrategy(.seconds(10)).execute(makeContext(clock), next: operation.callAsFunction)
        }
    }

    @Test("The caller's cancellation stays cancellation")
    func callerCancellation() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(100), .success(1))])
        let stage = TimeoutStrategy(.seconds(10))
        let context = makeContext(clock)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("Enforced: cancels an operation that ignores the deadline and reports a timeout")
    func enforced() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(100), .success(1))])
        let stage = TimeoutStrategy(.seconds(3), mode: .enforced)
        let context = makeContext(clock)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(3))
        let error = await #expect(throws: ResilienceError.self) { try await task.value }
        #expect(error?.code == .attemptTimedOut)
        #expect(clock.now.offset == .seconds(3))
    }

    @Test("Enforced: a fast result wins and the timer is cancelled")
    func enforcedFast() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(1), .success(7))])
        let stage = TimeoutStrategy(.seconds(3), mode: .enforced)
        let context = makeContext(clock)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        #expect(try await task.value == 7)
        #expect(clock.sleeperCount == 0)
    }

    @Test("Enforced: an operation's own withDeadline timing out first is a timeout, retried, never a cancellation")
    func enforcedKeepsTheOperationsOwnTimeout() async throws {
        let clock = ManualClock()
        let calls = LockedBox(0)
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 2, backoff: .constant(.zero), jitter: .none))
            TimeoutStrategy(.seconds(10), mode: .enforced)
        }
        let context = makeContext(clock)
        let task = Task {
            try await pipeline.execute(context) { context -> Int in
                let call = calls.mutate { count -> Int in
                    count += 1
                    return count
                }
                guard call == 1 else { return 7 }
                // The operation bounds its own hung call to 2 s, well within the stage's 10 s.
                return try await withDeadline(after: .seconds(2), clock: context.clock) {
                    try await context.clock.sleep(for: .seconds(60))
                    return 0
                }
            }
        }
        // The stage's timer, the operation's own timer and its hung call.
        await clock.waitForSleepers(count: 3)
        clock.advance(by: .seconds(2))
        #expect(try await task.value == 7)
        #expect(calls.value == 2)
    }

    @Test("Total deadline over retries: deadlineExceeded, not retried")
    func totalDeadline() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.untilDeadline(TestFailure.serverError)])
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(25))
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 10, backoff: .constant(.seconds(1)), jitter: .none))
            TimeoutStrategy(.seconds(10))
        }
        let context = makeContext(clock)
        let task = Task { try await pipeline.execute(context, operation.callAsFunction) }
        var error: ResilienceError?
        for _ in 0..<5 {
            await clock.waitForSleepers(count: 1)
            clock.advanceToNextDeadline()
        }
        do {
            _ = try await task.value
        } catch let thrown {
            error = thrown as? ResilienceError
        }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.classification.isTransient == false)
        #expect(operation.callCount == 3)
        #expect(operation.contexts.map(\.deadline?.offset) == [.seconds(10), .seconds(21), .seconds(25)])
    }
}
