// retry-playground: prints the retry schedules of a few presets (seeded, deterministic) and runs a
// scripted failing operation through a pipeline on a fast clock.
import Foundation
import ResilienceKit

/// A failure that classifies itself, standing in for a transport error.
struct PlaygroundFailure: ClassifiedError {
    var classification: FailureClassification
}

/// A clock that never waits: sleeping just moves its time forward, so the demo runs instantly.
final class FastClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }
    private let time = LockedState(initialState: Duration.zero)
    var now: Instant { Instant(offset: time.withLock { $0 }) }
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        time.withLock { $0 = max($0, deadline.offset) }
    }
}

func printSchedules() {
    print("== Retry schedules (seed 42) ==")
    let failure = FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503)
    let presets: [(String, any RetryPolicy)] = [
        ("StandardRetryPolicy.standard", StandardRetryPolicy.standard),
        ("StandardRetryPolicy.apiClient (seed 002)", StandardRetryPolicy.apiClient),
        ("StandardRetryPolicy.rateLimitManager (seed 000 §1.2)", StandardRetryPolicy.rateLimitManager),
        ("CategoryRetryPolicy.standard, HTTP 503 (seed 000 App. B)", CategoryRetryPolicy.standard),
    ]
    for (name, policy) in presets {
        var random = PseudoRandomGenerator(seed: 42)
        var delays: [String] = []
        var previous: Duration?
        for number in 1...12 {
            let decision = policy.decide(
                RetryAttempt(number: number, failure: failure, previousDelay: previous), using: &random)
            guard let delay = decision.delay else {
                delays.append("stop(\(decision.stopReason?.rawValue ?? "?"))")
                break
            }
            delays.append(format(delay))
            previous = delay
        }
        print("\(name):\n  \(delays.joined(separator: ", "))")
    }
    let pure = Backoff.exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300))
    print("Seed 000 §1.2 without jitter: " + (1...10).map { format(pure.delay(forRetry: $0)) }.joined(separator: ", "))
}

func runScriptedPipeline() async {
    print("\n== A failing operation through a pipeline (fast clock) ==")
    let clock = ResilienceClock(FastClock())
    let registry = PipelineRegistry(clock: clock) { _ in
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            RetryStrategy(policy: StandardRetryPolicy.apiClient, random: SharedRandomSource(seed: 7))
            TimeoutStrategy(.seconds(10))
        }
    }
    let pipeline = registry.pipeline(for: "jobs.example.com")
    print("pipeline: \(pipeline.pipelineDescription)")
    let calls = Counter()
    let context = ResilienceContext(
        key: "jobs.example.com", operation: "fetch", telemetry: PrintingSink(), clock: clock)
    do {
        let result = try await pipeline.execute(context) { context in
            if calls.increment() < 3 {
                throw PlaygroundFailure(
                    classification: FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503))
            }
            return "42 jobs (attempt \(context.attempt))"
        }
        print("result: \(result) at \(clock.now())")
    } catch {
        print("failed: \(error)")
    }
}

/// The place where the breakers branch's demo ("a breaker tripping") plugs in after merging.
func runBreakerDemo() async {
    print("\n== Circuit breaker ==")
    print("(the circuit-breaker stage ships in the policies-breakers branch)")
}

/// Prints events as they happen.
struct PrintingSink: TelemetrySink {
    func receive(_ event: ResilienceEvent) {
        var line = "  [\(event.time)] \(event.kind) attempt \(event.attempt)"
        if let duration = event.duration { line += " \(format(duration))" }
        if let classification = event.classification { line += " \(classification.category)" }
        print(line)
    }
}

/// Counts calls.
final class Counter: Sendable {
    private let value = LockedState(initialState: 0)
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}

func format(_ duration: Duration) -> String {
    let components = duration.components
    let seconds = Double(components.seconds) + Double(components.attoseconds) * 1e-18
    return String(format: "%.3fs", seconds)
}

printSchedules()
await runScriptedPipeline()
await runBreakerDemo()
