import Benchmark
import BenchmarkSupport
import ResilienceKit

/// The five-stage pipeline of issue 2 §6 (the same five strategies as Polly v8's published benchmark).
func fiveStagePipeline() -> Pipeline {
    let random = SharedRandomSource(seed: 1)
    return Pipeline {
        TotalDeadlineStrategy(.seconds(30))
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
        RateLimiterStrategy(limiter: unlimitedBucket())
        TimeoutStrategy(.seconds(10))
    }
}

/// The same five stages as one concrete value (what `Pipeline`'s builder produces before it is stored as an
/// existential): calls specialise for the operation's output type in the caller's module.
@PipelineBuilder func fiveStageChain() -> some ResilienceStrategy {
    let random = SharedRandomSource(seed: 1)
    TotalDeadlineStrategy(.seconds(30))
    RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
    CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
    RateLimiterStrategy(limiter: unlimitedBucket())
    TimeoutStrategy(.seconds(10))
}

func registerPipelineBenchmarks() {
    benchmarkPipeline("pipeline: passthrough", PassthroughPipeline())
    benchmarkPipeline("pipeline: five stages", fiveStagePipeline())
    // The adaptive concurrency stage alone in a pipeline: its cost over the bare call (two lock round trips,
    // a second clock read and the algorithm's arithmetic per call).
    benchmarkPipeline(
        "pipeline: adaptive concurrency", Pipeline { AdaptiveConcurrencyStage(limiter: AdaptiveConcurrencyLimiter()) })
    // The same stage added to the five: what it costs a pipeline that already reads the clock once per call.
    let stageRandom = SharedRandomSource(seed: 1)
    benchmarkPipeline(
        "pipeline: five stages + adaptive concurrency",
        Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(
                policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: stageRandom)
            CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: stageRandom))
            RateLimiterStrategy(limiter: unlimitedBucket())
            AdaptiveConcurrencyStage(limiter: AdaptiveConcurrencyLimiter())
            TimeoutStrategy(.seconds(10))
        })
    // How sources and the registry hold a pipeline: `any ResiliencePipeline`, so nothing specialises for
    // the output type at the call.
    let erased: any ResiliencePipeline = fiveStagePipeline()
    Benchmark("pipeline: five stages, as any ResiliencePipeline", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await erased.execute(quietContext) { _ in await bare() })
        }
    }
    benchmarkPipeline("pipeline: five stages + counting sink", fiveStagePipeline(), context: listenedContext)
    // The same stages with a fallback outermost: the fallback runs through its own `execute(_:next:)` (it is not
    // output-agnostic), the five inside it as one chain of steps composed when the pipeline is built.
    let random = SharedRandomSource(seed: 2)
    benchmarkPipeline(
        "pipeline: five stages + fallback outermost",
        Pipeline {
            FallbackStrategy<Int>(.value("zero", 0))
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(
                policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
            CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
            RateLimiterStrategy(limiter: unlimitedBucket())
            TimeoutStrategy(.seconds(10))
        })
    // The five with a stage that is not stepped innermost (a switched-off chaos outcome, where it belongs: beside
    // the operation): the five run as one chain of steps whose operation is that stage's `execute(_:next:)`.
    let switchedOff = try! ChaosInjection(rate: 1, enabled: ChaosSwitch(isEnabled: false), random: random)
    benchmarkPipeline(
        "pipeline: five stages + chaos outcome innermost, switched off",
        Pipeline {
            fiveStageChain()
            ChaosOutcomeStrategy(switchedOff, outcome: 0)
        })
    // Ten times the calls per sample: if the mallocs per sample stay the same, they belong to the harness
    // (the task allocator's slabs), not to the calls.
    let pipeline = fiveStagePipeline()
    Benchmark("pipeline: five stages, 10,000 calls per sample (malloc check)", configuration: perOperation) {
        benchmark in
        for _ in 0..<(benchmark.scaledIterations.count * 10) {
            blackHole(try await pipeline.execute(quietContext) { _ in await bare() })
        }
    }
    benchmarkStage("pipeline: five stages, concrete chain", fiveStageChain())
    registerFailurePathBenchmarks()
    benchmarkPipeline(
        "pipeline: standard preset",
        Pipeline.standard(clock: benchClock, random: SharedRandomSource(seed: 1)))
}

/// What failing calls cost: the same five stages with the breaker forced open (every call rejected before
/// the operation runs), and with an operation that throws an error the retry stage never retries.
func registerFailurePathBenchmarks() {
    let random = SharedRandomSource(seed: 3)
    let openBreaker = ConsecutiveFailureBreaker(.standard, random: random)
    openBreaker.isolate(now: benchClock.now())
    let rejecting = Pipeline {
        TotalDeadlineStrategy(.seconds(30))
        RetryStrategy(policy: StandardRetryPolicy.standard, budget: RetryBudget(clock: benchClock), random: random)
        CircuitBreakerStrategy(breaker: openBreaker)
        RateLimiterStrategy(limiter: unlimitedBucket())
        TimeoutStrategy(.seconds(10))
    }
    Benchmark("pipeline: five stages, rejected by an open breaker", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            do { blackHole(try await rejecting.execute(quietContext) { _ in await bare() }) } catch { blackHole(error) }
        }
    }
    let pipeline = fiveStagePipeline()
    // `circuitOpen` is never retried, so each call fails once, through every stage's failure handling.
    let failure = ResilienceError(.circuitOpen, key: "boards.greenhouse.io")
    Benchmark("pipeline: five stages, operation fails (not retried)", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            do {
                blackHole(
                    try await pipeline.execute(quietContext) { _ -> Int in
                        _ = await bare()
                        throw failure
                    })
            } catch {
                blackHole(error)
            }
        }
    }
}
