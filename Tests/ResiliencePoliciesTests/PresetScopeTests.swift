import ResilienceTesting
import Testing

@testable import ResiliencePolicies

@Suite("Preset scopes")
struct PresetScopeTests {
    @Test("The keys of one scope share a breaker: failures spread over keys trip it for all of them")
    func sharedBreaker() async throws {
        let clock = ManualClock()
        let scope = PresetScope("api.example", preset: .standard, clock: .manual(clock), random: .init(seed: 1))
        let settings: (inout PipelinePreset) -> Void = { $0.retry = nil }
        let keys = (0..<5).map { _ in
            Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 2), scope: scope, settings)
        }
        let context = makeContext(clock)
        // Five failures a second, each key in turn, for a whole 10 s window: no key alone reaches the breaker's
        // 40 calls in its window, the scope does.
        for step in 0...50 {
            if step > 0 { clock.advance(by: .milliseconds(200)) }
            await #expect(throws: TestFailure.self) {
                try await keys[step % keys.count].execute(context) { _ -> Int in throw TestFailure.serverError }
            }
        }
        let unscoped = Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 2), settings)
        for key in keys {
            let rejection = await #expect(throws: ResilienceError.self) {
                try await key.execute(context) { _ in 1 }
            }
            #expect(rejection?.code == .circuitOpen)
        }
        // A pipeline built without the scope keeps its own breaker, still closed.
        #expect(try await unscoped.execute(context) { _ in 2 } == 2)
        let measured = scope.breaker as? any MeasurableBreaker
        #expect(measured?.metrics(now: ResilienceClock.manual(clock).now()).state == .open)
    }

    @Test("The keys of one scope draw retries from one budget")
    func sharedBudget() async throws {
        let clock = ManualClock()
        var preset = PipelinePreset.standard
        preset.retryBudget = RetryBudgetConfiguration(ratio: 0.5, minimumPerSecond: 0, window: .seconds(30))
        let scope = PresetScope("api.example", preset: preset, clock: .manual(clock))
        let first = Pipeline.preset(preset, clock: .manual(clock), scope: scope)
        let second = Pipeline.preset(preset, clock: .manual(clock), scope: scope)
        let context = makeContext(clock)
        // Four successful requests through the first key earn the scope two retries (50 %).
        for _ in 0..<4 { _ = try await first.execute(context) { _ in 1 } }
        #expect(scope.budget?.usage.requests == 4)
        #expect(scope.budget?.usage.allowance == 2)
        // The second key's requests are counted in the same budget, and its retry draws from it.
        _ = try await second.execute(context) { _ in 2 }
        #expect(scope.budget?.usage.requests == 5)
        #expect(scope.budget?.tryWithdraw() == true)
        #expect(scope.budget?.tryWithdraw() == true)
        #expect(scope.budget?.tryWithdraw() == false)
    }

    @Test("A directory hands out one scope per name, built from its preset")
    func directory() {
        let scopes = PresetScopes(.interactive, clock: .manual(ManualClock()))
        let first = scopes.scope(named: "a.example")
        #expect(scopes.scope(named: "a.example") === first)
        let second = scopes.scope(named: "b.example")
        #expect(second !== first)
        #expect(scopes.names == ["a.example", "b.example"])
        #expect(first.budget?.configuration == PipelinePreset.interactive.retryBudget)
        #expect(first.description == "scope(a.example)")
        #expect(first.serverQuota != nil && first.breaker != nil)
    }

    @Test("A scope lives while a pipeline holds it; once none does, the name gets a fresh scope")
    func scopeLivesWithItsPipelines() async throws {
        let clock = ManualClock()
        let scopes = PresetScopes(.standard, clock: .manual(clock))
        var pipeline: Pipeline? = Pipeline.preset(
            .standard, clock: .manual(clock), scope: scopes.scope(named: "api.example"))
        let context = ResilienceContext(key: "api.example/jobs", operation: "fetch", clock: .manual(clock))
        _ = try await pipeline?.execute(context) { _ in 1 }
        // The pipeline keeps the scope, and its budget counted the request.
        #expect(scopes.scope(named: "api.example").budget?.usage.requests == 1)
        #expect(scopes.names == ["api.example"])
        pipeline = nil
        #expect(scopes.names.isEmpty)
        #expect(scopes.scope(named: "api.example").budget?.usage.requests == 0)
    }

    @Test("A directory asked for a hundred thousand hosts that nobody keeps holds a bounded number of names")
    func directoryIsBounded() {
        let scopes = PresetScopes(.standard, clock: .manual(ManualClock()))
        let kept = scopes.scope(named: "kept.example")
        for host in 0..<100_000 { _ = scopes.scope(named: "host-\(host).example") }
        #expect(scopes.storedNameCount <= 128)
        #expect(scopes.names == ["kept.example"])
        #expect(scopes.scope(named: "kept.example") === kept)
    }

    @Test("A preset without a budget or breaker builds a scope without them, and its pipelines have none")
    func emptyScope() {
        var preset = PipelinePreset.standard
        preset.retryBudget = nil
        preset.breaker = nil
        let scope = PresetScope("quiet", preset: preset, clock: .manual(ManualClock()))
        #expect(scope.budget == nil)
        #expect(scope.breaker == nil)
        let pipeline = Pipeline.preset(preset, clock: .manual(ManualClock()), scope: scope)
        #expect(!pipeline.stages.map(\.name).contains("circuit-breaker"))
    }
}
