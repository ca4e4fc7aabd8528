import ResiliencePolicies
import ResilienceTesting
import Testing

/// Built-in stages share one clock reading per execution (handed inward, never stored in the context);
/// these tests pin down when that reading must not be reused.
@Suite("Known instant")
struct KnownInstantTests {
    @Test("Stages inside a deadline share one clock reading; the operation sees the full limit")
    func sharedReading() async throws {
        let clock = CountingClock(ManualClock(now: .seconds(5)))
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(policy: StandardRetryPolicy.standard, random: SharedRandomSource(seed: 1))
            TimeoutStrategy(.seconds(10))
        }
        let context = ResilienceContext(key: "test", clock: clock.resilienceClock)
        let (readsByStages, remaining) = try await pipeline.execute(context) { context in
            let reads = clock.reads
            return (reads, context.remaining(now: context.clock.now()))
        }
        #expect(readsByStages == 1, "three stages took \(readsByStages) clock readings before the operation ran")
        #expect(remaining == .seconds(10))
    }

    @Test("The stages that need the instant a call returned at share one reading of it")
    func sharedEndReading() async throws {
        let clock = CountingClock(ManualClock(now: .seconds(5)))
        // The standard preset: its failure-ratio breaker (silence rule) and its quota pacing both need the
        // instant the call returned at, and the stages enter on one reading.
        let pipeline = Pipeline.standard(clock: clock.resilienceClock, random: SharedRandomSource(seed: 1))
        let reads = try await Self.clockReads(pipeline, clock)
        #expect(reads.before == 1)
        #expect(reads.after == 1, "the stages read the clock \(reads.after) times after the call")
    }

    @Test("Stages whose success does not depend on time read no clock after the call")
    func noEndReadingWhenNoStageNeedsIt() async throws {
        let clock = CountingClock(ManualClock(now: .seconds(5)))
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy.standard, random: SharedRandomSource(seed: 1))
            CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard))
            ServerQuotaStrategy(limiter: ServerQuotaLimiter())
            RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(100, burst: 10)))
        }
        let reads = try await Self.clockReads(pipeline, clock)
        #expect(reads.before == 1)
        #expect(reads.after == 0, "the stages read the clock \(reads.after) times after the call")
    }

    @Test("A sink that is switched off costs the retry stage no clock reading after the call")
    func noEndReadingForASwitchedOffSink() async throws {
        let clock = CountingClock(ManualClock(now: .seconds(5)))
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy.standard, random: SharedRandomSource(seed: 1))
        }
        let context = ResilienceContext(key: "test", telemetry: SwitchedOffSink(), clock: clock.resilienceClock)
        let before = try await pipeline.execute(context) { _ in clock.reads }
        #expect(before == 1)
        #expect(clock.reads == before, "the retry stage read the clock \(clock.reads - before) times after the call")
    }

    /// How often one successful call through `pipeline` read `clock` before the operation ran, and after.
    static func clockReads(_ pipeline: Pipeline, _ clock: CountingClock) async throws -> (before: Int, after: Int) {
        let context = ResilienceContext(key: "test", clock: clock.resilienceClock)
        let before = try await pipeline.execute(context) { _ in clock.reads }
        return (before, clock.reads - before)
    }

    @Test("After a retry's sleep the attempt timeout counts from the new attempt, not the first")
    func freshAfterSleep() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline {
            RetryStrategy(
                policy: StandardRetryPolicy(backoff: .constant(.seconds(4)), jitter: .none),
                random: SharedRandomSource(seed: 1))
            TimeoutStrategy(.seconds(10))
        }
        let seen = LockedBox<[Duration?]>([])
        let task = Task {
            try await pipeline.execute(makeContext(clock)) { context -> Int in
                let now = context.clock.now()
                seen.mutate { $0.append(context.deadline.map { now.duration(to: $0) }) }
                if seen.value.count == 1 { throw TestFailure.serverError }
                return 1
            }
        }
        #expect(try await drive(clock, task, sleeps: 1) == 1)
        #expect(seen.value == [.seconds(10), .seconds(10)])
    }
}

/// A sink that is attached but switched off: emitters must not build events for it.
struct SwitchedOffSink: TelemetrySink {
    func receive(_ event: ResilienceEvent) { Issue.record("a switched-off sink received \(event.kind)") }
    var isEnabled: Bool { false }
}

/// A manual clock that counts how often it is read, to tell one shared reading from several (a manual clock
/// that never moves makes them look the same).
final class CountingClock: Clock, Sendable {
    private let base: ManualClock
    private let readCount = LockedBox(0)

    init(_ base: ManualClock) { self.base = base }

    /// How many times ``now`` has been read.
    var reads: Int { readCount.value }

    /// A ``ResilienceClock`` over this clock, with the manual clock's zero as origin (wrapping reads nothing).
    var resilienceClock: ResilienceClock { ResilienceClock(self, origin: ManualClock.Instant(offset: .zero)) }

    var now: ManualClock.Instant {
        readCount.mutate { $0 += 1 }
        return base.now
    }

    var minimumResolution: Duration { base.minimumResolution }

    func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: deadline, tolerance: tolerance)
    }
}
