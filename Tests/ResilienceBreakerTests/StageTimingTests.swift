import ResiliencePolicies
import ResilienceTesting
import Testing

/// The breaker stage reuses the admission instant after a success only for policies whose success does not
/// depend on time; these tests pin down the ones that do.
@Suite("Stage timing")
struct StageTimingTests {
    @Test("A slow success still counts as slow: the failure-ratio breaker gets the time after the call")
    func slowCallsSeenThroughTheStage() async throws {
        let clock = ManualClock()
        var settings = FailureRatioBreaker.Configuration.standard
        settings.window = .count(4)
        settings.minimumThroughput = 2
        settings.slowCallThreshold = .seconds(1)
        settings.slowCallRatio = 0.5
        let breaker = FailureRatioBreaker(settings, random: SharedRandomSource(seed: 1))
        let stage = CircuitBreakerStrategy(breaker: breaker)
        let context = ResilienceContext(key: "feeds", clock: .manual(clock))
        for _ in 0..<2 {
            let value = try await stage.execute(context) { _ in
                clock.advance(by: .seconds(2))
                return 1
            }
            #expect(value == 1)
        }
        #expect(breaker.metrics(now: at(4)).state == .open)
    }

    @Test("A fast success through the consecutive-failure breaker resets its failure count")
    func consecutiveSuccessResets() async throws {
        let clock = ManualClock()
        let breaker = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1))
        let stage = CircuitBreakerStrategy(breaker: breaker)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        for _ in 0..<4 {
            await #expect(throws: ScriptedError.self) {
                try await stage.execute(context) { _ -> Int in throw ScriptedError(classification: Failures.server) }
            }
        }
        #expect(try await stage.execute(context) { _ in 2 } == 2)
        #expect(breaker.metrics(now: clock.now.resilienceInstant).consecutiveFailures == 0)
    }

}

extension ManualClock.Instant {
    /// The same offset as a ``ResilienceInstant`` (the manual clock's zero is the resilience clock's origin).
    var resilienceInstant: ResilienceInstant { ResilienceInstant(offset: offset) }
}
