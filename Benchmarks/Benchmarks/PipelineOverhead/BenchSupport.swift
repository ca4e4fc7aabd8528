import Benchmark
import BenchmarkSupport
import Foundation
import ResilienceKit

/// The operation every benchmark wraps: an async call that cannot be inlined away.
@inline(never) func bare() async -> Int { 1 }

/// A context without a telemetry sink (the default for most benchmarks).
let quietContext = ResilienceContext(key: "boards.greenhouse.io", operation: "fetch", clock: benchClock)

/// A context with a sink that counts events (stands in for a telemetry recorder).
let listenedContext = ResilienceContext(
    key: "boards.greenhouse.io", operation: "fetch", telemetry: CountingSink(), clock: benchClock)

/// A sink that counts the events it receives under a lock: the cheapest sink that does real work.
final class CountingSink: TelemetrySink, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func receive(_ event: ResilienceEvent) {
        lock.lock()
        count &+= 1
        lock.unlock()
    }

    var received: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// Contention runs: 1,000,000 operations per measured iteration, split across the tasks.
var contended: Benchmark.Configuration {
    Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 1,
        scalingFactor: .mega,
        maxDuration: .seconds(2),
        maxIterations: 8
    )
}

/// Registers a benchmark that runs `stage` around the bare call, 1,000 times per iteration.
func benchmarkStage(
    _ name: String, _ stage: some ResilienceStrategy, context: ResilienceContext = quietContext
) {
    Benchmark(name, configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await stage.execute(context) { _ in await bare() })
        }
    }
}

/// Registers a benchmark that runs `pipeline` around the bare call, 1,000 times per iteration.
func benchmarkPipeline(
    _ name: String, _ pipeline: some ResiliencePipeline, context: ResilienceContext = quietContext
) {
    Benchmark(name, configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await pipeline.execute(context) { _ in await bare() })
        }
    }
}

/// Runs `operations` calls of `body`, split evenly across `tasks` concurrent tasks.
func runConcurrently(
    tasks: Int, operations: Int, _ body: @escaping @Sendable () async throws -> Void
) async throws {
    let share = operations / tasks
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
            group.addTask {
                for _ in 0..<share { try await body() }
            }
        }
        try await group.waitForAll()
    }
}

/// Runs `operations` calls of a synchronous `body`, split evenly across `tasks` concurrent tasks.
func runConcurrentlySynchronous(tasks: Int, operations: Int, _ body: @escaping @Sendable () -> Void) async {
    let share = operations / tasks
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<tasks {
            group.addTask {
                for _ in 0..<share { body() }
            }
        }
        await group.waitForAll()
    }
}
