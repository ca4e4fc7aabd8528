import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("CircuitBreakerStrategy")
struct CircuitBreakerStrategyTests {
    func noJitter() -> ConsecutiveFailureBreaker.Configuration {
        var configuration = ConsecutiveFailureBreaker.Configuration.standard
        configuration.openDuration.jitter = 0
        return configuration
    }

    @Test func tripsRejectsAndEmits() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "jobs", telemetry: sink, clock: .manual(clock))
        let stage = CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(noJitter()))
        let calls = LockedBox(0)
        for _ in 0..<5 {
            await #expect(throws: ScriptedError.self) {
                try await stage.execute(context) { _ -> Int in
                    calls.mutate { $0 += 1 }
                    throw ScriptedError(classification: Failures.server)
                }
            }
        }
        clock.advance(by: .seconds(20))
        await #expect(throws: ResilienceError(.circuitOpen, key: "jobs", retryAfter: .seconds(40))) {
            try await stage.execute(context) { _ in calls.mutate { $0 += 1 } }
        }
        #expect(calls.value == 5)
        let transitions = sink.events(.breakerTransition)
        #expect(transitions.map(\.transition) == [BreakerTransition(from: .closed, to: .open, openFor: .seconds(60))])
        #expect(sink.events(.breakerRejected).map(\.duration) == [.seconds(40)])

        clock.advance(by: .seconds(40))
        let value = try await stage.execute(context) { _ in 7 }
        #expect(value == 7)
        #expect(sink.events(.breakerTransition).last?.transition == BreakerTransition(from: .open, to: .halfOpen))
    }

    @Test func rejectsTheCallThatFindsTheWaitingCallsUnanswered() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "jobs", telemetry: sink, clock: .manual(clock))
        var configuration = FailureRatioBreaker.Configuration.outageOnly
        configuration.openDuration.jitter = 0
        let breaker = FailureRatioBreaker(configuration)
        let stage = CircuitBreakerStrategy(breaker: breaker)
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        // Five calls wait on a hung server (admitted beside the stage, as other callers of the key would be).
        let waiting = (0..<5).compactMap { _ in breaker.admit(now: at(0)).permit }
        #expect(waiting.count == 5)
        clock.advance(by: .seconds(10))
        let calls = LockedBox(0)
        await #expect(throws: ResilienceError(.circuitOpen, key: "jobs", retryAfter: .milliseconds(500))) {
            try await stage.execute(context) { _ in calls.mutate { $0 += 1 } }
        }
        #expect(calls.value == 0)
        #expect(
            sink.events(.breakerTransition).map(\.transition) == [
                BreakerTransition(from: .closed, to: .open, openFor: .milliseconds(500))
            ])
        #expect(sink.events(.breakerRejected).map(\.detail) == ["open"])
    }

    @Test func cancellationReleasesTheProbe() async throws {
        let clock = ManualClock()
        let breaker = ConsecutiveFailureBreaker(noJitter())
        let context = ResilienceContext(key: "jobs", clock: .manual(clock))
        let stage = CircuitBreakerStrategy(breaker: breaker)
        for _ in 0..<5 { call(breaker, .failure(Failures.server), at: at(0)) }
        clock.advance(by: .seconds(60))
        for _ in 0..<3 {
            await #expect(throws: CancellationError.self) {
                try await stage.execute(context) { _ -> Int in throw CancellationError() }
            }
        }
        #expect(breaker.metrics(now: at(60)).state == .halfOpen)
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        #expect(try await stage.execute(context) { _ in 2 } == 2)
        #expect(breaker.metrics(now: at(60)).state == .closed)
    }

    @Test func clientErrorsDoNotCount() async {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        let stage = CircuitBreakerStrategy(breaker: breaker)
        let context = ResilienceContext(key: "jobs", clock: .manual(ManualClock()))
        for _ in 0..<10 {
            await #expect(throws: ScriptedError.self) {
                try await stage.execute(context) { _ -> Int in throw ScriptedError(classification: Failures.client) }
            }
        }
        #expect(breaker.metrics(now: at(0)).state == .closed)
    }

    @Test func slowCallsAreTimedOnTheClock() async throws {
        let clock = ManualClock()
        var configuration = FailureRatioBreaker.Configuration.standard
        configuration.window = .count(3)
        configuration.minimumThroughput = 3
        configuration.slowCallThreshold = .seconds(2)
        configuration.slowCallRatio = 1
        let breaker = FailureRatioBreaker(configuration)
        let stage = CircuitBreakerStrategy(breaker: breaker)
        let context = ResilienceContext(key: "slow", clock: .manual(clock))
        for _ in 0..<3 {
            _ = try await stage.execute(context) { _ in clock.advance(by: .seconds(3)) }
        }
        #expect(breaker.windowCounts(now: at(0)) == (0, 0, 0))
        #expect(breaker.metrics(now: at(9)).state == .open)
    }

    @Test func describesItself() {
        let stage = CircuitBreakerStrategy.circuitBreaker(RateLimitBreaker())
        #expect(stage.stageDescription.name == "circuit-breaker")
        #expect(stage.stageDescription.description.contains("rate-limit(threshold: 3"))
    }
}
