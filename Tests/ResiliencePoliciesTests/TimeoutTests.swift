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
