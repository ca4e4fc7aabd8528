import ResiliencePolicies
import ResilienceTesting
import Testing

/// A third-party stage that suspends (here: sleeps on the context's clock) before it calls `next`, as a
/// stage that awaits a token, a lease or a remote decision does.
struct SuspendingStage: ResilienceStrategy {
    var pause: Duration

    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await context.clock.sleep(for: pause)
        return try await next(context)
    }

    var stageDescription: StageDescription { StageDescription(name: "suspending") }
}

/// The rules every stage relies on, checked with stages this package does not know.
@Suite("Strategy contract")
struct StrategyContractTests {
    @Test("An attempt timeout inside a stage that suspends counts from when the attempt starts")
    func timeoutInsideSuspendingStage() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            SuspendingStage(pause: .seconds(5))
            TimeoutStrategy(.seconds(10))
        }
        let seen = LockedBox<Duration?>(nil)
        let task = Task {
            try await pipeline.execute(makeContext(clock)) { context -> Int in
                seen.mutate { $0 = context.remaining(now: context.clock.now()) }
                return 1
            }
        }
        #expect(try await drive(clock, task, sleeps: 1) == 1)
        #expect(seen.value == .seconds(10))
    }

    @Test("A failure 7 s into a 10 s attempt behind a suspending stage is not reported as a timeout")
    func noEarlyTimeout() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            SuspendingStage(pause: .seconds(5))
            TimeoutStrategy(.seconds(10))
        }
        let task = Task {
            try await pipeline.execute(makeContext(clock)) { context -> Int in
                try await context.clock.sleep(for: .seconds(7))
                throw TestFailure.notFound
            }
        }
        await #expect(throws: TestFailure.notFound) { try await drive(clock, task, sleeps: 2) }
    }
}
