import ResiliencePolicies
import ResilienceTesting
import Testing

/// `Pipeline` runs output-agnostic chains through a specialised runner and everything else generically;
/// both must behave the same.
@Suite("Output-agnostic pipelines")
struct OutputAgnosticPipelineTests {
    @Test("An agnostic chain returns the output of the attempt that succeeded")
    func agnosticReturnsLastSuccess() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            RetryStrategy(
                policy: StandardRetryPolicy(backoff: .constant(.seconds(1)), jitter: .none),
                random: SharedRandomSource(seed: 1))
            TimeoutStrategy(.seconds(10))
        }
        let operation = ScriptedOperation<[String]>([.failure(TestFailure.serverError), .success(["a", "b"])])
        let task = Task { try await pipeline.execute(makeContext(clock)) { try await operation($0) } }
        #expect(try await drive(clock, task, sleeps: 1) == ["a", "b"])
        #expect(operation.callCount == 2)
    }

    @Test("Fallback still produces its value through a pipeline (generic path)")
    func fallbackThroughPipeline() async throws {
        let pipeline = Pipeline {
            FallbackStrategy<[String]>(.value("cached", ["cached"]))
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 1), random: SharedRandomSource(seed: 1))
        }
        let value = try await pipeline.execute(makeContext(ManualClock())) { _ -> [String] in
            throw TestFailure.serverError
        }
        #expect(value == ["cached"])
    }

    @Test("Hedging through a pipeline returns the first success (generic path)")
    func hedgingThroughPipeline() async throws {
        let pipeline = Pipeline { HedgingStrategy(delay: .seconds(1)) }
        let value = try await pipeline.execute(makeContext(ManualClock())) { context in context.attempt }
        #expect(value == 1)
    }

    @Test("Errors and cancellation leave an agnostic chain unchanged")
    func agnosticErrors() async throws {
        let pipeline = Pipeline { TimeoutStrategy(.seconds(5)) }
        await #expect(throws: TestFailure.self) {
            try await pipeline.execute(makeContext(ManualClock())) { _ -> Int in throw TestFailure.notFound }
        }
        let clock = ManualClock()
        let task = Task {
            try await pipeline.execute(makeContext(clock)) { context -> Int in
                try await context.clock.sleep(for: .seconds(60))
                return 1
            }
        }
        await clock.waitForSleepers(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
