import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Retry stage")
struct RetryStrategyTests {
    let policy = StandardRetryPolicy(
        maxAttempts: 4, backoff: .exponential(base: .seconds(1), multiplier: 2, cap: .seconds(30)), jitter: .none)

    @Test("Retries on the clock's schedule, sets attempt numbers, emits events")
    func retriesOnSchedule() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let operation = ScriptedOperation<String>([
            .failure(TestFailure.serverError), .failure(TestFailure.serverError), .success("ok"),
        ])
        let retry = RetryStrategy(policy: policy, random: SharedRandomSource(seed: 1))
        let context = makeContext(clock, sink: sink)
        let task = Task { try await retry.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline?.offset == .seconds(1))
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline?.offset == .seconds(3))
        clock.advance(by: .seconds(2))
        #expect(try await task.value == "ok")
        #expect(operation.attempts == [1, 2, 3])
        #expect(sink.events(.retryScheduled).map(\.duration) == [.seconds(1), .seconds(2)])
        #expect(sink.events(.attemptFailed).count == 2)
        #expect(sink.events(.attemptSucceeded).count == 1)
        #expect(sink.events(.attemptStarted).map(\.attempt) == [1, 2, 3])
    }

    @Test("Gives up after max attempts with the operation's own error")
    func givesUp() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let retry = RetryStrategy(policy: policy, random: SharedRandomSource(seed: 1))
        let context = makeContext(clock)
        let task = Task { try await retry.execute(context, next: operation.callAsFunction) }
        await #expect(throws: TestFailure.serverError) { try await drive(clock, task, sleeps: 3) }
        #expect(operation.callCount == 4)
    }

    @Test("Cancellation is never retried, and a cancelled wait ends at once")
    func cancellationNotRetried() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(CancellationError())])
        let retry = RetryStrategy(policy: policy)
        await #expect(throws: CancellationError.self) {
            try await retry.execute(makeContext(clock), next: operation.callAsFunction)
        }
        #expect(operation.callCount == 1)

        let failing = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let context = makeContext(clock)
        let task = Task { try await retry.execute(context, next: failing.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(failing.callCount == 1)
    }

    @Test("In a pipeline, an attempt cancelled while it waits on the server is not retried and schedules no backoff")
    func cancelledAttemptInAPipelineNotRetried() async throws {
        let clock = ManualClock()
        let calls = LockedBox(0)
        let sink = RecordingTelemetrySink()
        let pipeline = Pipeline { RetryStrategy(policy: policy) }
        let context = makeContext(clock, sink: sink)
        let task = Task {
            try await pipeline.execute(context) { context -> Int in
                calls.mutate { $0 += 1 }
                try await context.clock.sleep(for: .seconds(30))
                throw TestFailure.serverError
            }
        }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(calls.value == 1)
        #expect(sink.events(.retryScheduled).isEmpty, "a retry was scheduled after the cancellation")
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("An attempt an enforced deadline outside the stage cuts off is reported failed as a timeout, not cancelled")
    func attemptCutOffByAnOuterDeadlineTimedOut() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let pipeline = Pipeline {
            TimeoutStrategy(.seconds(2), mode: .enforced)
            RetryStrategy(policy: policy)
        }
        let task = Task {
            try await pipeline.execute(makeContext(clock, sink: sink)) { context -> Int in
                try await context.clock.sleep(for: .seconds(30))
                return 1
            }
        }
        // The operation's sleep and the enforced timeout's timer.
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(2))
        _ = await #expect(throws: ResilienceError.self) { try await task.value }
        #expect(sink.events(.attemptCancelled).isEmpty, "the attempt was reported as cancelled by its caller")
        let failed = try #require(sink.events(.attemptFailed).first)
        #expect(failed.classification?.category == .timeout)
        #expect(failed.duration == .seconds(2))
        #expect(sink.events(.retryScheduled).isEmpty)
    }

    @Test("Circuit-open rejections are never retried, even by a policy that would")
    func circuitOpenNotRetried() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(ResilienceError(.circuitOpen, retryAfter: .seconds(5)))])
        let retry = RetryStrategy(policy: AlwaysRetry())
        await #expect(throws: ResilienceError.self) {
            try await retry.execute(makeContext(clock), next: operation.callAsFunction)
        }
        #expect(operation.callCount == 1)
    }

    @Test("A failure a stage inside classified as circuit-open is passed on as it is, never retried")
    func classifiedCircuitOpenPassedOn() async {
        let clock = ManualClock()
        // Not a `ResilienceError`: only its classification, which the limiter inside asks for, says circuit-open.
        let remoteRejection = TestFailure(category: .circuitOpen)
        let operation = ScriptedOperation<Int>([.failure(remoteRejection)])
        let pipeline = Pipeline {
            RetryStrategy(policy: AlwaysRetry())
            RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1_000, burst: 1_000)))
        }
        await #expect(throws: remoteRejection) {
            try await pipeline.execute(makeContext(clock), operation.callAsFunction)
        }
        #expect(operation.callCount == 1)
    }

    @Test("A transient failure a stage inside already classified is still retried")
    func classifiedTransientFailureRetried() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(7)])
        let pipeline = Pipeline {
            RetryStrategy(policy: policy)
            RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1_000, burst: 1_000)))
        }
        let context = makeContext(clock)
        let task = Task { try await pipeline.execute(context, operation.callAsFunction) }
        #expect(try await drive(clock, task, sleeps: 1) == 7)
        #expect(operation.callCount == 2)
    }

    @Test("Non-transient failures and non-idempotent sent requests are not retried")
    func guardApplies() async {
        let clock = ManualClock()
        let notFound = ScriptedOperation<Int>([.failure(TestFailure.notFound)])
        let retry = RetryStrategy(policy: policy)
        await #expect(throws: TestFailure.notFound) {
            try await retry.execute(makeContext(clock), next: notFound.callAsFunction)
        }
        #expect(notFound.callCount == 1)
        let post = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        await #expect(throws: TestFailure.serverError) {
            try await retry.execute(makeContext(clock, idempotency: .nonIdempotent), next: post.callAsFunction)
        }
        #expect(post.callCount == 1)
    }

    @Test("Retry-After waits not counted as attempts still stop at the hard limit")
    func uncountedHintsAreBounded() async throws {
        let clock = ManualClock()
        var hinted = policy
        hinted.retryAfter = RetryAfterRule(countsAsAttempt: false)
        let operation = ScriptedOperation<Int>([.failure(TestFailure.rateLimited(after: .seconds(1)))])
        let retry = RetryStrategy(policy: hinted, maximumTotalAttempts: 6)
        let context = makeContext(clock)
        let task = Task { try await retry.execute(context, next: operation.callAsFunction) }
        await #expect(throws: TestFailure.self) { try await drive(clock, task, sleeps: 5) }
        #expect(operation.callCount == 6)
        #expect(clock.now.offset == .seconds(5))
    }

    @Test("Does not sleep past the context's deadline")
    func respectsDeadline() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        var context = makeContext(clock)
        context.deadline = ResilienceInstant(offset: .milliseconds(500))
        await #expect(throws: TestFailure.serverError) {
            try await RetryStrategy(policy: policy).execute(context, next: operation.callAsFunction)
        }
        #expect(operation.callCount == 1)
    }

    @Test("An exhausted budget stops retrying with budgetExhausted, the refused retry's delay and an event")
    func budget() async {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0, minimumPerSecond: 0), clock: .manual(clock))
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let retry = RetryStrategy(policy: policy, budget: budget)
        do {
            _ = try await retry.execute(makeContext(clock, sink: sink), next: operation.callAsFunction)
            Issue.record("expected a failure")
        } catch let error as ResilienceError {
            #expect(error.code == .budgetExhausted)
            #expect(error.underlying?.category == .serverError)
            // The first retry would have waited 1 s: a caller trying again by hand waits as long.
            #expect(error.retryAfter == .seconds(1))
            #expect(error.classification.retryAfter == .seconds(1))
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(operation.callCount == 1)
        #expect(sink.events(.budgetExhausted).count == 1)
    }

    @Test("Seeded jitter gives the same schedule twice")
    func seededJitter() async throws {
        func schedule() async throws -> [Duration?] {
            let clock = ManualClock()
            let sink = RecordingTelemetrySink()
            let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
            let retry = RetryStrategy(policy: StandardRetryPolicy.standard, random: SharedRandomSource(seed: 77))
            let context = makeContext(clock, sink: sink)
            let task = Task { try await retry.execute(context, next: operation.callAsFunction) }
            _ = try? await drive(clock, task, sleeps: 2)
            return sink.events(.retryScheduled).map(\.duration)
        }
        let first = try await schedule()
        #expect(first.count == 2)
        #expect(first == (try await schedule()))
    }
}

/// A policy that retries every failure at once: what only the stage's own rules can stop.
private struct AlwaysRetry: RetryPolicy {
    func decide<R: RandomNumberGenerator>(_ attempt: RetryAttempt, using random: inout R) -> RetryDecision {
        .retry(after: .zero)
    }

    var policyDescription: String { "always" }
}
