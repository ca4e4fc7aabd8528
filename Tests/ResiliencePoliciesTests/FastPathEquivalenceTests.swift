import ResilienceTesting
import Testing

@testable import ResiliencePolicies

/// A third-party stage that only calls `next`: putting it outermost makes `Pipeline` run every stage through
/// its public `execute(_:next:)` (the general path) instead of the built-in stages' synchronous steps.
struct ForwardingStage: ResilienceStrategy {
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await next(context)
    }

    var stageDescription: StageDescription { StageDescription(name: "forwarding") }
}

/// What one call of the scripted operation does.
enum ScriptedStep: Sendable {
    case succeed
    case fail(TestFailure)
    /// Throws `CancellationError` (the operation saw its task cancelled).
    case cancelled
    /// Sleeps on the context's clock, then fails.
    case stallThenFail(Duration, TestFailure)
}

/// How an execution reaches the stages.
enum ExecutionPath: CaseIterable {
    /// Every stage through its public `execute(_:next:)` (a third-party stage outermost).
    case general
    /// `Pipeline.execute` on the built-in stages alone: their synchronous steps, and the fast path's
    /// `resume` and `recover` once a stage stops or the operation throws.
    case fast
}

/// The five built-in stages must behave the same on `Pipeline`'s fast path and on the general path:
/// same results, same calls, same events at the same instants, same breaker and limiter state.
@Suite("Fast path equivalence")
struct FastPathEquivalenceTests {
    /// Runs `executions` executions of the five stages, each calling an operation that follows `script`
    /// (one step per call, `succeed` once it runs out), and describes everything observable.
    func observe(
        _ path: ExecutionPath, _ layout: StageLayout, executions: Int, script: [ScriptedStep]
    ) async throws -> [String] {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        var breakerConfiguration = ConsecutiveFailureBreaker.Configuration.standard
        breakerConfiguration.failureThreshold = 2
        breakerConfiguration.openDuration.jitter = 0
        let breaker = CircuitBreakerStrategy(
            breaker: ConsecutiveFailureBreaker(breakerConfiguration, random: SharedRandomSource(seed: 3)))
        let bucket = TokenBucketLimiter(.rate(1, burst: 1), random: SharedRandomSource(seed: 4))
        let retry = RetryStrategy(
            policy: StandardRetryPolicy(maxAttempts: 4, backoff: .constant(.seconds(1)), jitter: .none),
            budget: RetryBudget(clock: .manual(clock)), random: SharedRandomSource(seed: 1))
        let limiter = RateLimiterStrategy(limiter: bucket)
        let pipeline =
            switch (path, layout) {
            case (.general, .nested):
                Pipeline(root: ComposedStrategy(outer: ForwardingStage(), inner: nestedStages(retry, breaker, limiter)))
            case (.fast, .nested): Pipeline(root: nestedStages(retry, breaker, limiter))
            case (.general, .built):
                Pipeline(
                    root: ComposedStrategy(
                        outer: ForwardingStage(), inner: builtStages(retry, breaker, limiter, skipping: false)))
            case (.fast, .built): Pipeline(root: builtStages(retry, breaker, limiter, skipping: false))
            }
        #expect((pipeline.box.fastPath == nil) == (path == .general), "only the built-in stages alone get steps")
        let calls = LockedBox(0)
        // What each call was handed: the deadline stages narrow the context in place on the fast path and
        // must restore it, so a retry's later attempt sees the total deadline again, narrowed afresh.
        let handed = LockedBox<[String]>([])
        let finished = LockedBox(false)
        let task = Task { () -> [String] in
            var results: [String] = []
            for _ in 0..<executions {
                do {
                    let operation: @Sendable (ResilienceContext) async throws -> Int = { context in
                        let index = calls.mutate { count -> Int in
                            count += 1
                            return count - 1
                        }
                        handed.mutate {
                            $0.append(
                                "call \(index) attempt \(context.attempt) deadline \(context.deadline.map { "\($0)" } ?? "none")"
                            )
                        }
                        switch index < script.count ? script[index] : .succeed {
                        case .succeed: return index
                        case .fail(let failure): throw failure
                        case .cancelled: throw CancellationError()
                        case .stallThenFail(let pause, let failure):
                            try await context.clock.sleep(for: pause)
                            throw failure
                        }
                    }
                    let context = makeContext(clock, sink: sink)
                    let value = try await pipeline.execute(context, operation)
                    results.append("value \(value)")
                } catch {
                    results.append("error \(error)")
                }
            }
            finished.mutate { $0 = true }
            return results
        }
        for _ in 0..<100_000 where !finished.value {
            if clock.sleeperCount > 0 { _ = clock.advanceToNextDeadline() }
            await Task.yield()
        }
        var observed = await task.value
        observed.append("calls \(calls.value)")
        observed += handed.value
        observed += sink.events.map { event in
            "\(event.kind) attempt \(event.attempt) at \(event.time) \(event.duration.map { "\($0)" } ?? "")"
                + " \(event.detail ?? "")"
        }
        let end = ResilienceInstant(offset: .seconds(1000))
        observed.append("breaker \(breaker.breaker.admit(now: end))")
        observed.append("limiter \(bucket.tryAcquire(now: end))")
        return observed
    }

    @Test(
        "The fast path and the general path observe the same",
        arguments: [
            [ScriptedStep.succeed],
            [.fail(.serverError)],
            [.fail(.serverError), .fail(.serverError), .fail(.serverError)],
            [.fail(.notFound)],
            [.stallThenFail(.seconds(8), .serverError)],
            [.fail(.serverError), .stallThenFail(.seconds(6), .unreachable), .fail(.rateLimited(after: .seconds(2)))],
            [.cancelled, .fail(.serverError)],
            [.stallThenFail(.seconds(70), .serverError)],
        ])
    func sameObservations(script: [ScriptedStep]) async throws {
        for layout in [StageLayout.nested, .built] {
            for executions in [1, 3] {
                let general = try await observe(.general, layout, executions: executions, script: script)
                let fast = try await observe(.fast, layout, executions: executions, script: script)
                #expect(fast == general, "\(layout)")
                #expect(fast.count > executions)
            }
        }
    }
}

/// Which pipelines run as synchronous steps.
@Suite("Fast path eligibility")
struct FastPathEligibilityTests {
    func breaker() -> CircuitBreakerStrategy {
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1)))
    }

    @Test("Built-in deadline, timeout, retry, breaker and limiter stages alone run as steps")
    func builtInStagesRunAsSteps() {
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(random: SharedRandomSource(seed: 1))
            breaker()
            RateLimiterStrategy(limiter: TokenBucketLimiter(.standard, random: SharedRandomSource(seed: 2)))
            TimeoutStrategy(.seconds(10))
        }
        #expect(pipeline.box.fastPath != nil)
        #expect(Pipeline.standard(random: SharedRandomSource(seed: 1)).box.fastPath != nil)
    }

    @Test("An enforced timeout, a fallback, a third-party stage or records past the frame take the general path")
    func otherChainsRunTheGeneralPath() async throws {
        let enforced = Pipeline { TimeoutStrategy(.seconds(10), mode: .enforced) }
        let fallback = Pipeline {
            FallbackStrategy<Int>(.value("zero", 0))
            TimeoutStrategy(.seconds(10))
        }
        let thirdParty = Pipeline {
            ForwardingStage()
            TimeoutStrategy(.seconds(10))
        }
        // Four breakers keep four permits: more than the frame holds.
        let manyRecords = Pipeline {
            breaker()
            breaker()
            breaker()
            breaker()
        }
        for pipeline in [enforced, fallback, thirdParty, manyRecords] {
            #expect(pipeline.box.fastPath == nil, "\(pipeline.pipelineDescription)")
            #expect(try await pipeline.execute(makeContext(ManualClock())) { _ in 7 } == 7)
        }
    }
}

/// How the five stages are put together.
enum StageLayout {
    /// Nested by hand.
    case nested
    /// By ``PipelineBuilder``, with `if` and `if`/`else` choosing stages: the chosen ones and the empty
    /// stages of conditions that were false sit in ``EitherStrategy`` values.
    case built
}

/// Total deadline (60 s) → retry → breaker → limiter → attempt timeout (5 s), nested by hand.
func nestedStages(
    _ retry: RetryStrategy, _ breaker: CircuitBreakerStrategy, _ limiter: RateLimiterStrategy
) -> some ResilienceStrategy {
    ComposedStrategy(
        outer: TotalDeadlineStrategy(.seconds(60)),
        inner: ComposedStrategy(
            outer: retry,
            inner: ComposedStrategy(
                outer: breaker,
                inner: ComposedStrategy(outer: limiter, inner: TimeoutStrategy(.seconds(5))))))
}

/// The same stages as ``nestedStages(_:_:_:)`` when `skipping` is false, chosen by conditions.
@PipelineBuilder
func builtStages(
    _ retry: RetryStrategy, _ breaker: CircuitBreakerStrategy, _ limiter: RateLimiterStrategy, skipping: Bool
) -> some ResilienceStrategy {
    TotalDeadlineStrategy(.seconds(60))
    if !skipping { retry }
    if skipping { EmptyStrategy() } else { breaker }
    limiter
    if skipping { TimeoutStrategy(.seconds(1)) }
    TimeoutStrategy(.seconds(5))
}
