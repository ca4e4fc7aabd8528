import ResiliencePolicies
import ResilienceTesting
import Testing

/// Records the order stages run in.
struct TracingStage: ResilienceStrategy {
    let name: String
    let trace: LockedBox<[String]>
    func execute<Output: Sendable>(
        _ context: ResilienceContext, next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        trace.mutate { $0.append("enter \(name)") }
        defer { trace.mutate { $0.append("exit \(name)") } }
        return try await next(context)
    }
    var stageDescription: StageDescription { StageDescription(name: name) }
}

@Suite("Pipeline")
struct PipelineTests {
    @Test("Stages run outermost first and describe themselves in order")
    func order() async throws {
        let trace = LockedBox<[String]>([])
        let includeC = true
        let pipeline = Pipeline {
            TracingStage(name: "a", trace: trace)
            TracingStage(name: "b", trace: trace)
            if includeC {
                TracingStage(name: "c", trace: trace)
            }
        }
        let value = try await pipeline.execute(makeContext(ManualClock())) { _ in
            trace.mutate { $0.append("operation") }
            return 1
        }
        #expect(value == 1)
        #expect(trace.value == ["enter a", "enter b", "enter c", "operation", "exit c", "exit b", "exit a"])
        #expect(pipeline.stages.map(\.name) == ["a", "b", "c"])
    }

    @Test("The default order composes and describes its settings")
    func description() {
        let clock = ManualClock()
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            FallbackStrategy<Int>(.value("zero", 0))
            RetryStrategy(policy: CategoryRetryPolicy.standard, budget: RetryBudget(clock: .manual(clock)))
            TimeoutStrategy(.seconds(10))
        }
        #expect(pipeline.stages.map(\.name) == ["total-deadline", "fallback", "retry", "timeout"])
        #expect(pipeline.pipelineDescription.contains("retry(policy: per-category("))
        #expect(pipeline.pipelineDescription.contains("timeout(limit: 10.0 seconds, mode: cooperative)"))
        #expect(Pipeline {}.stages.isEmpty)
    }

    @Test("Retry around a per-attempt timeout: timeouts are retried, then the operation succeeds")
    func retryAroundTimeout() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<String>([.untilDeadline(CancellationError()), .success("ok")])
        let pipeline = Pipeline {
            RetryStrategy(
                policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.seconds(1)), jitter: .none))
            TimeoutStrategy(.seconds(5))
        }
        let context = makeContext(clock)
        let task = Task { try await pipeline.execute(context, operation.callAsFunction) }
        #expect(try await drive(clock, task, sleeps: 2) == "ok")
        #expect(operation.callCount == 2)
        #expect(clock.now.offset == .seconds(6))
    }

    /// Recognises every error as a server failure and counts how often it is asked.
    struct CountingClassifier: ErrorClassifier {
        let asked = LockedBox(0)

        func classify(_ error: any Error) -> FailureClassification? {
            asked.mutate { $0 += 1 }
            return FailureClassification(category: .serverError, code: .serverUnavailable, message: "down")
        }
    }

    struct BackendDown: Error {}

    @Test("A failure is classified once on its way out through the timeout, limiter, breaker and retry stages")
    func failureClassifiedOnce() async throws {
        let clock = ManualClock()
        var trips = ConsecutiveFailureBreaker.Configuration()
        trips.failureThreshold = 1
        let breaker = ConsecutiveFailureBreaker(trips)
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 1))
            CircuitBreakerStrategy(breaker: breaker)
            RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1_000, burst: 10)))
            TimeoutStrategy(.seconds(10))
        }
        let classifier = CountingClassifier()
        let sink = RecordingTelemetrySink()
        var context = makeContext(clock, sink: sink)
        context.classifier = classifier
        await #expect(throws: BackendDown.self) {
            try await pipeline.execute(context) { _ -> Int in throw BackendDown() }
        }
        #expect(classifier.asked.value == 1)
        // Each stage acted on the one classification: the breaker counted the server failure and opened, and
        // the retry stage reported it.
        #expect(breaker.exportState(now: context.clock.now()).state == .open)
        let failed = try #require(sink.first(.attemptFailed))
        #expect(failed.classification?.category == .serverError)
        #expect(failed.classification?.message == "down")
    }
}
