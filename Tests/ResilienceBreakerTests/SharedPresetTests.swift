import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Shared policies in presets")
struct SharedPresetTests {
    @Test func oneLineDropsSharedPoliciesIntoAPreset() {
        let manual = ManualClock()
        let clock = ResilienceClock(manual, origin: manual.now)
        let store = InMemoryCoordinationStore(clock: clock)
        let limiter = SharedRateLimiter(
            store: store, .init(key: "api", quota: SharedRateQuota(permits: 20, per: .seconds(1))), clock: clock)
        let breaker = SharedBreaker(store: store, .init(key: "api", replica: "a"), clock: clock)
        defer { breaker.shutdown() }
        let pipeline = Pipeline.standard(clock: clock) {
            $0.limiter = .shared(limiter)
            $0.breaker = .shared(breaker)
        }
        let descriptions = pipeline.stages.map(\.description).joined(separator: " ")
        #expect(descriptions.contains("shared-rate(key: api"))
        #expect(descriptions.contains("shared-breaker(key: api"))
    }
}
