import ResilienceKit
import ResilienceTesting
import Testing

@Suite("Pipeline registry")
struct PipelineRegistryTests {
    func makeRegistry(_ clock: ManualClock, maximumKeys: Int = 3, built: LockedBox<[String]>) -> PipelineRegistry {
        PipelineRegistry(
            PipelineRegistry.Configuration(maximumKeys: maximumKeys, idleTimeout: .seconds(60)), clock: .manual(clock)
        ) { key in
            built.mutate { $0.append(key) }
            return Pipeline { RetryStrategy(policy: StandardRetryPolicy.standard) }
        }
    }

    @Test("Builds once per key, reuses it, and honours overrides")
    func buildsAndOverrides() {
        let clock = ManualClock()
        let built = LockedBox<[String]>([])
        let registry = makeRegistry(clock, built: built)
        _ = registry.pipeline(for: "a")
        _ = registry.pipeline(for: "a")
        #expect(built.value == ["a"])
        registry.setOverride(for: "b", Pipeline { TimeoutStrategy(.seconds(1)) })
        #expect(registry.pipeline(for: "b").stages.map(\.name) == ["timeout"])
        #expect(registry.pipeline(for: "a").stages.map(\.name) == ["retry"])
        registry.removeOverride(for: "b")
        #expect(registry.pipeline(for: "b").stages.map(\.name) == ["retry"])
        #expect(built.value == ["a", "b"])
    }

    @Test("Bounded: least recently used keys are evicted; overrides are pinned")
    func bounded() {
        let clock = ManualClock()
        let built = LockedBox<[String]>([])
        let registry = makeRegistry(clock, maximumKeys: 2, built: built)
        registry.setOverride(for: "pinned", .passthrough)
        _ = registry.pipeline(for: "a")
        clock.advance(by: .seconds(1))
        _ = registry.pipeline(for: "b")
        clock.advance(by: .seconds(1))
        _ = registry.pipeline(for: "a")
        _ = registry.pipeline(for: "c")
        #expect(registry.cachedKeys == ["a", "c"])
        #expect(registry.overriddenKeys == ["pinned"])
        #expect(registry.evictionCount == 1)
    }

    @Test("Idle keys are evicted on the injected clock")
    func idleEviction() {
        let clock = ManualClock()
        let built = LockedBox<[String]>([])
        let registry = makeRegistry(clock, built: built)
        _ = registry.pipeline(for: "a")
        clock.advance(by: .seconds(30))
        _ = registry.pipeline(for: "b")
        clock.advance(by: .seconds(31))
        #expect(registry.evictIdle() == 1)
        #expect(registry.cachedKeys == ["b"])
        _ = registry.pipeline(for: "a")
        #expect(built.value == ["a", "b", "a"])
    }

    @Test("A pinned key is kept past the bound and however long idle; unpinned, its idle time counts from then")
    func pinnedKeys() {
        let clock = ManualClock()
        let built = LockedBox<[String]>([])
        let registry = makeRegistry(clock, maximumKeys: 2, built: built)
        registry.pin("source")
        _ = registry.pipeline(for: "source")
        _ = registry.pipeline(for: "a")
        registry.pin("a")  // pinned after its pipeline was built
        for key in ["b", "c", "d"] { _ = registry.pipeline(for: key) }
        #expect(registry.cachedKeys == ["a", "c", "d", "source"], "only unpinned keys count against the bound")
        clock.advance(by: .seconds(3_600))
        #expect(registry.evictIdle() == 2)
        #expect(registry.cachedKeys == ["a", "source"])
        registry.unpin("a")
        clock.advance(by: .seconds(59))
        #expect(registry.evictIdle() == 0, "idle for 59 s since it was unpinned")
        clock.advance(by: .seconds(1))
        #expect(registry.evictIdle() == 1)
        #expect(registry.cachedKeys == ["source"])
        _ = registry.pipeline(for: "source")
        #expect(built.value == ["source", "a", "b", "c", "d"], "a pinned key's pipeline is built once")
        #expect(registry.evictionCount == 4)
    }

    @Test("Safe to share: many tasks, one pipeline per key")
    func concurrent() async {
        let clock = ManualClock()
        let built = LockedBox<[String]>([])
        let registry = makeRegistry(clock, maximumKeys: 100, built: built)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask { _ = registry.pipeline(for: "key-\(index % 10)") }
            }
        }
        #expect(registry.cachedKeys.count == 10)
        #expect(Set(built.value).count == 10)
    }
}

@Suite("Registry keeps per-key state")
struct RegistryStateTests {
    @Test("Each key's pipeline has its own retry budget")
    func perKeyBudget() async throws {
        let clock = ManualClock()
        let registry = PipelineRegistry(clock: .manual(clock)) { _ in
            Pipeline {
                RetryStrategy(
                    policy: StandardRetryPolicy(maxAttempts: 2, backoff: .constant(.zero), jitter: .none),
                    budget: RetryBudget(
                        RetryBudgetConfiguration(ratio: 0, minimumPerSecond: 0.1), clock: .manual(clock)))
            }
        }
        struct Unavailable: ClassifiedError {
            var classification: FailureClassification {
                FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: 503)
            }
        }
        func run(_ key: String) async -> Int {
            let operation = ScriptedOperation<Int>([.failure(Unavailable())])
            _ = try? await registry.pipeline(for: key).execute(
                ResilienceContext(key: key, clock: .manual(clock)), operation.callAsFunction)
            return operation.callCount
        }
        #expect(await run("a") == 2)
        #expect(await run("a") == 1)
        #expect(await run("b") == 2)
    }
}
