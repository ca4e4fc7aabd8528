import Benchmark
import ResilienceKit
import ResilienceTesting
import Synchronization

let benchmarks: @Sendable () -> Void = {
    registerLimiterQueueBenchmarks()
}

/// Wall-clock nanoseconds per admitted caller (the whole run divided by the callers it admitted).
let nanosecondsPerAdmission = BenchmarkMetric.custom(
    "ns per admission", polarity: .prefersSmaller, useScalingFactor: false)
/// Sleeps that ended on the clock, per 100 admitted callers (100 = one wake-up each).
let wakeUpsPerHundred = BenchmarkMetric.custom(
    "wake-ups per 100 admissions", polarity: .prefersSmaller, useScalingFactor: false)

/// A token bucket seen only through `tryAcquire` and `release`: it waits with the protocol's default
/// `waitForPermit`, which sleeps until the next token and asks again (what every limiter did before the
/// bucket booked turns). The baseline the queue is compared with.
struct PollingBucket: RateLimiter {
    let bucket: TokenBucketLimiter

    func tryAcquire(now: ResilienceInstant) -> RateLimitDecision { bucket.tryAcquire(now: now) }

    func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        bucket.release(permit, outcome: outcome, now: now)
    }
}

/// A simulation's virtual clock that counts the sleeps that end (every wake-up of a waiter).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class WakeCountingClock: Clock, Sendable {
    typealias Instant = VirtualClock.Instant
    let base: VirtualClock
    private let wakes = Atomic<Int>(0)

    init(_ base: VirtualClock) { self.base = base }

    var now: Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    var wakeUps: Int { wakes.load(ordering: .relaxed) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        defer { wakes.add(1, ordering: .relaxed) }
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}

/// `callers` callers arrive at once at an empty bucket of 1,000 tokens per second and wait for their turns,
/// on a simulation's virtual clock (so the run costs only the work, never the 1 ms between tokens). Returns
/// the wall-clock time of the whole run and the clock's wake-ups.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
func queueOnOneBucket(callers: Int, polling: Bool) throws -> (elapsed: Duration, wakeUps: Int) {
    let simulation = Simulation(seed: 1)
    let clock = WakeCountingClock(simulation.clock)
    let resilienceClock = ResilienceClock(clock, origin: .zero)
    var configuration = TokenBucketLimiter.Configuration.rate(1_000, burst: 1)
    configuration.maximumWait = nil
    let bucket = TokenBucketLimiter(configuration)
    let limiter: any RateLimiter = polling ? PollingBucket(bucket: bucket) : bucket
    let context = ResilienceContext(key: "bench", clock: resilienceClock)
    let start = ContinuousClock.now
    let admitted = try simulation.run {
        // Take the only token, so every caller waits.
        _ = limiter.tryAcquire(now: resilienceClock.now())
        return try await withThrowingTaskGroup(of: Void.self, returning: Int.self) { group in
            for _ in 0..<callers { group.addTask { _ = try await limiter.waitForPermit(context: context) } }
            var admitted = 0
            for try await _ in group { admitted += 1 }
            return admitted
        }
    }
    precondition(admitted == callers, "every caller is admitted")
    return (start.duration(to: .now), clock.wakeUps)
}

/// The cost of waiting for a token bucket: 100, 1,000 and 10,000 callers queued on one bucket, each run
/// reporting the wall-clock cost per admission and the wake-ups per admission. Booked turns should cost the
/// same per admission at every queue length (one wake-up each); the polling baseline wakes every waiter at
/// every token, so its cost per admission grows with the queue (10,000 is left out: it takes minutes).
func registerLimiterQueueBenchmarks() {
    guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else { return }
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, nanosecondsPerAdmission, wakeUpsPerHundred], warmupIterations: 1,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 20)
    let runs: [(callers: Int, polling: Bool)] = [
        (100, false), (1_000, false), (10_000, false), (100, true), (1_000, true),
    ]
    for run in runs {
        let name = run.polling ? "polling (protocol default)" : "booked turns"
        Benchmark(
            "limiter queue: token bucket, \(run.callers) callers queued, \(name)", configuration: configuration
        ) { benchmark in
            let (elapsed, wakeUps) = try queueOnOneBucket(callers: run.callers, polling: run.polling)
            let nanoseconds =
                elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
            benchmark.measurement(nanosecondsPerAdmission, Int(nanoseconds) / run.callers)
            benchmark.measurement(wakeUpsPerHundred, wakeUps * 100 / run.callers)
        }
    }
}
