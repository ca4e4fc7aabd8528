import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Fallback and hedging")
struct FallbackHedgingTests {
    @Test("Fallback picks the first alternative matching the category and emits fallbackUsed")
    func fallbackByCategory() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let stage = FallbackStrategy<[String]>(
            .value("cache", when: [.networkUnreachable], ["cached"]),
            .value("empty", when: [.notFound], []))
        let offline = ScriptedOperation<[String]>([.failure(TestFailure.unreachable)])
        #expect(try await stage.execute(makeContext(clock, sink: sink), next: offline.callAsFunction) == ["cached"])
        #expect(sink.events(.fallbackUsed).map(\.detail) == ["cache"])
        let missing = ScriptedOperation<[String]>([.failure(TestFailure.notFound)])
        #expect(try await stage.execute(makeContext(clock), next: missing.callAsFunction) == [])
        let server = ScriptedOperation<[String]>([.failure(TestFailure.serverError)])
        await #expect(throws: TestFailure.serverError) {
            try await stage.execute(makeContext(clock), next: server.callAsFunction)
        }
    }

    @Test("A failing alternative moves to the next; all failing gives fallbackExhausted")
    func fallbackOrder() async throws {
        let clock = ManualClock()
        let failing = FallbackAlternative<Int>("broken") { _, _ in throw TestFailure.serverError }
        let stage = FallbackStrategy<Int>(failing, .value("zero", 0))
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        #expect(try await stage.execute(makeContext(clock), next: operation.callAsFunction) == 0)
        let exhausted = FallbackStrategy<Int>(failing)
        let error = await #expect(throws: ResilienceError.self) {
            try await exhausted.execute(makeContext(clock), next: operation.callAsFunction)
        }
        #expect(error?.code == .fallbackExhausted)
        #expect(error?.underlying?.category == .serverError)
    }

    @Test("Cancellation never falls back; other output types pass through")
    func fallbackCancellation() async {
        let clock = ManualClock()
        let stage = FallbackStrategy<Int>(.value("zero", 0))
        let cancelled = ScriptedOperation<Int>([.failure(CancellationError())])
        await #expect(throws: CancellationError.self) {
            try await stage.execute(makeContext(clock), next: cancelled.callAsFunction)
        }
        let text = ScriptedOperation<String>([.failure(TestFailure.serverError)])
        await #expect(throws: TestFailure.serverError) {
            try await stage.execute(makeContext(clock), next: text.callAsFunction)
        }
    }

    @Test("Hedging launches a second attempt after the delay; first success wins, loser cancelled")
    func hedging() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let operation = ScriptedOperation<String>([
            .delayed(.seconds(10), .success("slow")), .delayed(.seconds(1), .success("fast")),
        ])
        let stage = HedgingStrategy(delay: .seconds(2))
        let context = makeContext(clock, sink: sink)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(2))
        await clock.waitForSleepers(count: 2)
        #expect(sink.events(.hedgeLaunched).map(\.duration) == [.seconds(2)])
        clock.advance(by: .seconds(1))
        #expect(try await task.value == "fast")
        #expect(operation.attempts == [1, 2])
        #expect(clock.sleeperCount == 0)
    }

    @Test("Hedges add at most maxExtraLoad of the calls plus what is saved up, however far apart the calls come")
    func hedgingAllowance() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        // Every attempt fails at once with a transient failure, so every call asks for a hedge at once.
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let stage = HedgingStrategy(delay: .seconds(1))
        let calls = 200
        var hedgesAtHalf = 0
        for index in 0..<calls {
            // A busy client, then one that calls once a minute: calls fund the hedges, not seconds.
            if index == calls / 2 { hedgesAtHalf = sink.events(.hedgeLaunched).count }
            if index >= calls / 2 { clock.advance(by: .seconds(60)) }
            await #expect(throws: TestFailure.serverError) {
                try await stage.execute(makeContext(clock, sink: sink), next: operation.callAsFunction)
            }
        }
        let hedges = operation.callCount - calls
        #expect(hedges == sink.events(.hedgeLaunched).count)
        #expect(hedges <= calls / 10 + 10)  // 10 % of the calls plus the 10 saved up
        #expect(hedges >= calls / 10 + 9)
        #expect(sink.events(.hedgeWithheld).count == calls - hedges)
        // In the quiet half, one call in ten still hedges.
        #expect(hedges - hedgesAtHalf == calls / 2 / 10)
    }

    @Test("A hedge whose request was never sent (refused inside, no network) gives its hedge back; a sent one does not")
    func refusedHedgeGivesItsHedgeBack() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        // One hedge saved up, a hundredth earned per call. Each call's first attempt fails at once and asks for a
        // hedge: the first call's hedge is refused before it is sent, the later ones are sent and fail.
        let operation = ScriptedOperation<Int>([
            .failure(TestFailure.serverError), .failure(TestFailure.unreachable), .failure(TestFailure.serverError),
        ])
        let stage = HedgingStrategy(delay: .seconds(1), maxExtraLoad: 0.01)
        for _ in 0..<3 {
            await #expect(throws: TestFailure.serverError) {
                try await stage.execute(makeContext(clock, sink: sink), next: operation.callAsFunction)
            }
        }
        // The refused hedge was given back, so the second call hedged too; that one was sent and spent it.
        #expect(sink.events(.hedgeLaunched).count == 2)
        #expect(sink.events(.hedgeWithheld).count == 1)
        #expect(operation.callCount == 5)
    }

    @Test("maxExtraLoad 0 never hedges; .infinity hedges every call")
    func hedgingAllowanceExtremes() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let slow = ScriptedOperation<Int>([.delayed(.seconds(5), .success(1))], clock: .manual(clock))
        let never = HedgingStrategy(delay: .seconds(1), maxExtraLoad: 0)
        let context = makeContext(clock, sink: sink)
        let task = Task { try await never.execute(context, next: slow.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        for _ in 0..<10_000 where sink.events(.hedgeWithheld).isEmpty { await Task.yield() }
        #expect(sink.events(.hedgeWithheld).map(\.duration) == [.seconds(1)])
        clock.advance(by: .seconds(4))
        #expect(try await task.value == 1)
        #expect(slow.callCount == 1)

        let failing = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let unbounded = HedgingStrategy(delay: .seconds(1), maxExtraLoad: .infinity)
        for _ in 0..<50 {
            await #expect(throws: TestFailure.serverError) {
                try await unbounded.execute(makeContext(clock), next: failing.callAsFunction)
            }
        }
        #expect(failing.callCount == 100)
    }

    @Test("Hedging does not hedge non-idempotent operations")
    func hedgingIdempotency() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(5), .success(1))])
        let stage = HedgingStrategy(delay: .seconds(1))
        let context = makeContext(clock, idempotency: .nonIdempotent)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))
        #expect(try await task.value == 1)
        #expect(operation.callCount == 1)
    }

    @Test("Hedging does not hedge a request made safe to retry by an idempotency key: never two at once")
    func hedgingKeyedRequest() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(5), .success(1)), .success(2)])
        let stage = HedgingStrategy(delay: .seconds(1))
        let context = makeContext(clock, sink: sink, idempotency: .keyed("order-42"))
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        for _ in 0..<100 { await Task.yield() }  // a hedge timer, if any, is asleep too
        clock.advance(by: .seconds(1))
        for _ in 0..<100 { await Task.yield() }
        clock.advance(by: .seconds(4))
        #expect(try await task.value == 1)
        #expect(operation.callCount == 1)
        #expect(sink.events(.hedgeLaunched).isEmpty)
    }

    @Test("Hedging: a transient failure launches the hedge at once; all failing rethrows the last failure")
    func hedgingFailures() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(2)])
        let value = try await HedgingStrategy(delay: .seconds(60)).execute(
            makeContext(clock), next: operation.callAsFunction)
        #expect(value == 2)
        let failing = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        await #expect(throws: TestFailure.serverError) {
            try await HedgingStrategy(delay: .seconds(60)).execute(makeContext(clock), next: failing.callAsFunction)
        }
        #expect(failing.callCount == 2)
    }

    @Test("When every attempt fails, the failure that is not transient is rethrown, not a later hedge's timeout")
    func definitiveFailureWins() async throws {
        let clock = ManualClock()
        // The first attempt is slow and then times out; the hedge gets a 404 at once.
        let operation = ScriptedOperation<Int>([
            .delayed(.seconds(30), .failure(TestFailure.timeout)), .failure(TestFailure.notFound),
        ])
        let context = makeContext(clock)
        let task = Task {
            try await HedgingStrategy(delay: .seconds(1)).execute(context, next: operation.callAsFunction)
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))  // the hedge is launched and fails with the 404
        while operation.callCount < 2 { await Task.yield() }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(29))  // the first attempt times out last
        await #expect(throws: TestFailure.notFound) { try await task.value }
    }

    @Test("A hedge that a stage inside refused before sending it is not the answer: the attempt's failure is")
    func refusedHedgeIsNotTheAnswer() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        // The first attempt holds the bulkhead's one slot and times out; the hedge finds the bulkhead full.
        let operation = ScriptedOperation<Int>([
            .delayed(.seconds(30), .failure(TestFailure.timeout)), .success(2),
        ])
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 2), random: SharedRandomSource(seed: 1))
            HedgingStrategy(delay: .seconds(1))
            RateLimiterStrategy(limiter: ConcurrencyLimiter(.limit(1, queued: 0)))
        }
        let context = makeContext(clock, sink: sink)
        let task = Task { try await pipeline.execute(context, operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        let refusals = { sink.events(.rateLimited).filter(MetricSchema.isRejection) }
        for _ in 0..<10_000 where refusals().isEmpty { await Task.yield() }
        #expect(refusals().map(\.detail) == ["bulkhead-full"])  // the hedge was refused, never sent
        clock.advance(by: .seconds(29))  // the first attempt times out: a transient failure, which is retried
        for _ in 0..<10_000 where clock.sleeperCount == 0 { await Task.yield() }  // the retry's backoff
        _ = clock.advanceToNextDeadline()
        #expect(try await task.value == 2)
        #expect(operation.callCount == 2)
    }

    @Test("A hedge launched after a failure resets the delay: the next one waits the delay from it")
    func hedgeDelayAfterFailure() async throws {
        let clock = ManualClock()
        let launches = LockedBox<[Duration]>([])
        let operation = ScriptedOperation<Int>([
            .delayed(.seconds(5), .failure(TestFailure.serverError)), .delayed(.seconds(100), .success(2)),
        ])
        let stage = HedgingStrategy(delay: .seconds(10), maxHedges: 2)
        let context = makeContext(clock)
        let task = Task {
            try await stage.execute(context) { attemptContext in
                launches.mutate { $0.append(clock.now.offset) }
                return try await operation(attemptContext)
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))  // the first attempt fails: the second is launched at once
        await clock.waitForSleepers(count: 3)
        clock.advance(by: .seconds(5))  // the first launch's timer, which no longer counts
        for _ in 0..<100 { await Task.yield() }
        clock.advance(by: .seconds(5))  // ten seconds after the second launch
        while operation.callCount < 3 { await Task.yield() }
        #expect(launches.value == [.zero, .seconds(5), .seconds(15)])
        task.cancel()
        _ = try? await task.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("No hedge is launched once the deadline has passed: a transient failure at the deadline is rethrown")
    func noHedgePastDeadline() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let operation = ScriptedOperation<Int>([.untilDeadline(TestFailure.timeout), .success(2)])
        var context = makeContext(clock, sink: sink)
        context.deadline = ResilienceInstant(offset: .seconds(5))
        let hedged = context
        let task = Task {
            try await HedgingStrategy(delay: .seconds(10)).execute(hedged, next: operation.callAsFunction)
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: TestFailure.timeout) { try await task.value }
        #expect(operation.callCount == 1)
        #expect(sink.events(.hedgeLaunched).isEmpty)
        #expect(clock.sleeperCount == 0)
    }
}

@Suite("Cancellation through racing stages")
struct RacingCancellationTests {
    @Test("Cancelling the caller of a hedged operation cancels every attempt and surfaces cancellation")
    func hedgingCancelled() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(100), .success(1))])
        let stage = HedgingStrategy(delay: .seconds(1))
        let context = makeContext(clock)
        let task = Task { try await stage.execute(context, next: operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(count: 2)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(operation.callCount == 2)
        #expect(clock.sleeperCount == 0)
    }

    @Test("A hedge timer that fired just before the caller cancelled launches no attempt")
    func hedgeTimerAfterCancellation() async {
        let clock = ManualClock()
        // Cancels the caller while it launches the second hedge, when the other timer has already fired.
        let sink = CancellingTelemetrySink(cancelAtEvent: .hedgeLaunched, count: 2)
        let operation = ScriptedOperation<Int>([
            .failure(TestFailure.serverError), .delayed(.seconds(100), .success(2)),
        ])
        let stage = HedgingStrategy(delay: .seconds(10), maxHedges: 3)
        var context = makeContext(clock)
        context.telemetry = sink
        let hedged = context
        let task = Task { try await stage.execute(hedged, next: operation.callAsFunction) }
        sink.cancels(task)
        // The first attempt failed at once: the second runs, beside the first's timer and its own.
        await clock.waitForSleepers(count: 3)
        clock.advance(by: .seconds(10))
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(operation.callCount == 3)
        #expect(sink.recorder.events(.hedgeLaunched).count == 2)
        #expect(clock.sleeperCount == 0)
    }

    @Test("Enforced total deadline stops a retry loop whose operation ignores deadlines")
    func enforcedTotalDeadline() async {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(100), .success(1))])
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(5), mode: .enforced)
            RetryStrategy(policy: StandardRetryPolicy.standard)
        }
        let context = makeContext(clock)
        let task = Task { try await pipeline.execute(context, operation.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: ResilienceError.self) { try await task.value }
        #expect(error?.code == .deadlineExceeded)
        #expect(operation.callCount == 1)
    }
}

/// Records events and cancels a task when the `count`th event of a kind arrives (synchronously, inside the
/// stage that emits it).
final class CancellingTelemetrySink: TelemetrySink {
    let recorder = RecordingTelemetrySink()
    private let kind: ResilienceEventKind
    private let count: Int
    private let task = LockedBox<Task<Int, any Error>?>(nil)

    init(cancelAtEvent kind: ResilienceEventKind, count: Int) {
        self.kind = kind
        self.count = count
    }

    func cancels(_ task: Task<Int, any Error>) { self.task.mutate { $0 = task } }

    func receive(_ event: ResilienceEvent) {
        recorder.receive(event)
        if event.kind == kind && recorder.events(kind).count == count { task.value?.cancel() }
    }
}
