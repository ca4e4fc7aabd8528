import ResiliencePolicies
import ResilienceTesting
import Testing

/// Built-in stages share one clock reading per execution (handed inward, never stored in the context);
/// these tests pin down when that reading must not be reused.
@Suite("Known instant")
struct KnownInstantTests {
    @Test("Stages inside a deadline reuse its reading; the operation sees the full limit")
    func sharedReading() async throws {
        let clock = ManualClock(now: .seconds(5))
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(policy: StandardRetryPolicy.standard, random: SharedRandomSource(seed: 1))
            TimeoutStrategy(.seconds(10))
        }
        let remaining = try await pipeline.execute(makeContext(clock)) { context in
            context.remaining(now: context.clock.now())
        }
        #expect(remaining == .seconds(10))
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
