import Benchmark
import BenchmarkSupport
import ResilienceKit

/// 2, 8 and 64 tasks sharing one breaker stage, one token-bucket stage, and the actor reference breaker.
/// Each iteration runs 1,000,000 operations in total, split across the tasks.
func registerContentionBenchmarks() {
    for tasks in [2, 8, 64] {
        let breakerStage = CircuitBreakerStrategy(
            breaker: ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1)))
        Benchmark("contention: breaker stage, \(tasks) tasks", configuration: contended) { benchmark in
            try await runConcurrently(tasks: tasks, operations: benchmark.scaledIterations.count) {
                blackHole(try await breakerStage.execute(quietContext) { _ in await bare() })
            }
        }
        let bucketStage = RateLimiterStrategy(limiter: unlimitedBucket())
        Benchmark("contention: token-bucket stage, \(tasks) tasks", configuration: contended) { benchmark in
            try await runConcurrently(tasks: tasks, operations: benchmark.scaledIterations.count) {
                blackHole(try await bucketStage.execute(quietContext) { _ in await bare() })
            }
        }
        let shared = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1))
        Benchmark("contention: raw breaker admit+record, \(tasks) tasks", configuration: contended) { benchmark in
            let now = benchClock.now()
            await runConcurrentlySynchronous(tasks: tasks, operations: benchmark.scaledIterations.count) {
                guard case .admitted(let permit, _) = shared.admit(now: now) else { return }
                blackHole(shared.record(.success, for: permit, now: now))
            }
        }
        let reference = ActorReferenceBreaker()
        Benchmark("contention: actor reference breaker, \(tasks) tasks", configuration: contended) { benchmark in
            try await runConcurrently(tasks: tasks, operations: benchmark.scaledIterations.count) {
                guard await reference.canAttempt() else { return }
                blackHole(await bare())
                await reference.recordSuccess()
            }
        }
    }
}
