import ResiliencePolicies
import ResilienceTesting
import Testing

/// The coalescing stage inside a pipeline: shared runs, retries shared too, events, description.
@Suite("CoalescingStrategy")
struct CoalescingStrategyTests {
    static func settle(_ what: Comment, _ condition: () -> Bool) async {
        for _ in 0..<200_000 {
            if condition() { return }
            await Task.yield()
        }
        Issue.record("never settled: \(what)")
    }

    @Test("1,000 concurrent calls through a pipeline: one operation run, 999 coalesced events, no leak")
    func thousandCallsThroughPipeline() async throws {
        let stage = CoalescingStrategy()
        let pipeline = Pipeline {
            stage
            TimeoutStrategy(.seconds(10))
        }
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext.test(key: "jobs", operation: "fetch", telemetry: sink)
        let gate = CallGate()
        let runs = LockedState(initialState: 0)
        let callers = 1_000
        let values = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    try await pipeline.execute(context) { _ in
                        runs.withLock { $0 += 1 }
                        try await gate.pass()
                        return "jobs"
                    }
                }
            }
            await Self.settle("every call waits") { stage.flights.callerCount(for: "jobs fetch") == callers }
            gate.open()
            var values: [String] = []
            for try await value in group { values.append(value) }
            return values
        }
        #expect(runs.withLock { $0 } == 1)
        #expect(values == Array(repeating: "jobs", count: callers))
        #expect(sink.count(.requestCoalesced) == callers - 1)
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("Callers share the retries of the stages inside; a non-idempotent call runs on its own")
    func retriesSharedAndMutationsAlone() async throws {
        let clock = ManualClock()
        let stage = CoalescingStrategy()
        let pipeline = Pipeline {
            stage
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 3), random: SharedRandomSource(seed: 1))
        }
        let operation = ScriptedOperation<String>([.failure(TestFailure.serverError), .success("ok")])
        let context = makeContext(clock)
        let first = Task { try await pipeline.execute(context, operation.callAsFunction) }
        await clock.waitForSleepers(count: 1)
        let second = Task { try await pipeline.execute(context) { _ in "not run" } }
        await Self.settle("the second call joined") { stage.flights.callerCount(for: "test call") == 2 }
        clock.advanceToNextDeadline()
        #expect(try await first.value == "ok")
        #expect(try await second.value == "ok")
        #expect(operation.attempts == [1, 2])

        let mutation = makeContext(clock, idempotency: .nonIdempotent)
        let alone = try await pipeline.execute(mutation) { _ in "posted" }
        #expect(alone == "posted")
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("A custom key decides what is shared; the pipeline description names the stage")
    func customKeyAndDescription() async throws {
        let stage = CoalescingStrategy(keyOf: { $0.operation == "skip" ? nil : "custom:\($0.key)" })
        let pipeline = Pipeline { stage }
        #expect(pipeline.pipelineDescription == "coalescing(key: custom)")
        #expect(
            Pipeline { CoalescingStrategy() }.pipelineDescription == "coalescing(key: key+operation, idempotent only)")
        let gate = CallGate()
        let context = ResilienceContext.test(key: "a")
        let first = Task {
            try await pipeline.execute(context) { _ in
                try await gate.pass()
                return 1
            }
        }
        await Self.settle("the run started") { stage.flights.callerCount(for: "custom:a") == 1 }
        let skipped = try await pipeline.execute(ResilienceContext.test(key: "a", operation: "skip")) { _ in 2 }
        #expect(skipped == 2)
        gate.open()
        #expect(try await first.value == 1)
    }

    @Test("Callers that got the run's error emit request-coalesced too, with its classification")
    func sharedFailureReported() async throws {
        let stage = CoalescingStrategy()
        let pipeline = Pipeline { stage }
        let gate = CallGate()
        let operation: @Sendable (ResilienceContext) async throws -> String = { _ in
            try await gate.pass()
            throw TestFailure.serverError
        }
        let clock = ManualClock()
        // One caller without a deadline, one with: both ways of waiting report the shared failure.
        let contexts = [
            ResilienceContext.test(clock: clock), ResilienceContext.test(clock: clock),
            ResilienceContext.test(clock: clock, timeout: .seconds(30)),
        ]
        let callers = contexts.map { context in Task { try await pipeline.execute(context, operation) } }
        await Self.settle("every caller waits") { stage.flights.callerCount(for: "test call") == 3 }
        gate.open()
        for caller in callers { await #expect(throws: TestFailure.serverError) { try await caller.value } }
        let coalesced = contexts.flatMap { $0.recordingSink?.events(.requestCoalesced) ?? [] }
        #expect(coalesced.count == 2)
        #expect(coalesced.allSatisfy { $0.classification?.code == "HTTP_503" })
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("A caller that joined waits no longer than its own deadline; the run goes on for the others")
    func joinerDeadline() async throws {
        let clock = ManualClock()
        let stage = CoalescingStrategy()
        let pipeline = Pipeline { stage }
        let gate = CallGate()
        let runs = LockedState(initialState: 0)
        let operation: @Sendable (ResilienceContext) async throws -> String = { _ in
            runs.withLock { $0 += 1 }
            try await gate.pass()
            return "jobs"
        }
        let patient = ResilienceContext.test(clock: clock, timeout: .seconds(30))
        let hurried = ResilienceContext.test(clock: clock, timeout: .seconds(1))
        let first = Task { try await pipeline.execute(patient, operation) }
        await Self.settle("the run started") { gate.waitingCount == 1 }
        let finished = LockedState(initialState: false)
        let joiner = Task {
            defer { finished.withLock { $0 = true } }
            return try await pipeline.execute(hurried, operation)
        }
        await Self.settle("the joiner waits") { stage.flights.callerCount(for: "test call") == 2 }
        await Self.settle("both deadlines armed") { clock.sleeperCount == 2 }
        clock.advance(by: .seconds(1))
        await Self.settle("the joiner gave up at its deadline") { finished.withLock { $0 } }
        #expect(stage.flights.callerCount(for: "test call") == 1)
        gate.open()
        await #expect(throws: DeadlineExceededError.self) { try await joiner.value }
        #expect(try await first.value == "jobs")
        #expect(runs.withLock { $0 } == 1)
        #expect(gate.cancellations == 0)
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("A deadline passed on arrival throws at once and starts nothing; one that passes while waiting frees the key")
    func deadlines() async throws {
        let clock = ManualClock()
        let stage = CoalescingStrategy()
        let pipeline = Pipeline { stage }
        let runs = LockedState(initialState: 0)
        let late = ResilienceContext.test(clock: clock, timeout: .zero)
        await #expect(throws: DeadlineExceededError.self) {
            try await pipeline.execute(late) { _ in runs.withLock { $0 += 1 } }
        }
        #expect(runs.withLock { $0 } == 0)
        let gate = CallGate()
        let alone = Task {
            try await pipeline.execute(ResilienceContext.test(clock: clock, timeout: .seconds(1))) { _ in
                try await gate.pass()
            }
        }
        await Self.settle("the run waits") { gate.waitingCount == 1 && clock.sleeperCount == 1 }
        clock.advance(by: .seconds(1))
        // The only caller left: the run is cancelled, and the caller returns once it has ended.
        await #expect(throws: DeadlineExceededError.self) { try await alone.value }
        #expect(gate.cancellations == 1)
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("Key \"a b\" with operation \"c\" and key \"a\" with operation \"b c\" never share a run")
    func keyAndOperationStayApart() async throws {
        let stage = CoalescingStrategy()
        let pipeline = Pipeline { stage }
        let gate = CallGate()
        let runs = LockedState(initialState: 0)
        let first = ResilienceContext.test(key: "a b", operation: "c")
        let second = ResilienceContext.test(key: "a", operation: "b c")
        #expect(CoalescingStrategy.idempotentCallKey(first) != CoalescingStrategy.idempotentCallKey(second))
        // A space that a combining mark follows is one character with it, and still ends no key.
        let marked = ResilienceContext.test(key: "a \u{301}", operation: "z")
        let plain = ResilienceContext.test(key: "a", operation: "\u{301} z")
        #expect(CoalescingStrategy.idempotentCallKey(marked) != CoalescingStrategy.idempotentCallKey(plain))
        #expect(CoalescingStrategy.idempotentCallKey(.test(key: "a\\", operation: "b")) == "a\\\\ b")
        let calls = [first, second].map { context in
            Task {
                try await pipeline.execute(context) { context in
                    runs.withLock { $0 += 1 }
                    try await gate.pass()
                    return context.key + "|" + context.operation
                }
            }
        }
        await Self.settle("both calls run") { runs.withLock { $0 } == 2 }
        gate.open()
        #expect(try await calls[0].value == "a b|c")
        #expect(try await calls[1].value == "a|b c")
        #expect(stage.flights.inFlightCount == 0)
    }

    @Test("Calls of different priorities never share a run: a critical call is not held behind a sheddable one")
    func prioritiesApart() async throws {
        let clock = ManualClock()
        let stage = CoalescingStrategy()
        // Four slots, three of them taken: a sheddable call (75 % of four) must wait, a critical one starts.
        let bulkhead = ConcurrencyLimiter(.limit(4, queued: 8))
        let held = (0..<3).compactMap { _ -> RateLimitPermit? in
            if case .admitted(let permit) = bulkhead.tryAcquire(now: ResilienceInstant(offset: .zero)) { return permit }
            return nil
        }
        let pipeline = Pipeline {
            stage
            RateLimiterStrategy(limiter: bulkhead, waits: true)
        }
        var prefetch = ResilienceContext.test(key: "feed", operation: "fetch", clock: clock)
        prefetch.priority = .sheddable
        var payment = ResilienceContext.test(key: "feed", operation: "fetch", clock: clock)
        payment.priority = .critical
        let sheddable = Task { try await pipeline.execute(prefetch) { context in "\(context.priority)" } }
        await Self.settle("the sheddable call waits for a slot") { bulkhead.occupancy.queued == 1 }
        let done = LockedState(initialState: false)
        let critical = Task {
            defer { done.withLock { $0 = true } }
            return try await pipeline.execute(payment) { context in "\(context.priority)" }
        }
        await Self.settle("the critical call ran at once") { done.withLock { $0 } }
        for permit in held { bulkhead.release(permit, outcome: .accepted, now: ResilienceInstant(offset: .zero)) }
        #expect(try await critical.value == "critical")
        #expect(try await sheddable.value == "sheddable")
        #expect(stage.flights.inFlightCount == 0)
        #expect(bulkhead.occupancy == (0, 0))
    }
}
