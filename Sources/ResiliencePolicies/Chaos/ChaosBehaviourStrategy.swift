import ResilienceCore

/// The chaos behaviour stage: runs ``behaviour`` before the share of calls ``ChaosInjection`` picks, then
/// runs the call (Polly's behaviour strategy): restart a dependency, fill a cache with stale data, drop a
/// connection pool, flip another switch.
///
/// When the behaviour throws, the call fails with that error and does not run. Each injection emits
/// ``ResilienceEventKind/chaosInjected`` with detail `behaviour`.
///
/// ```swift
/// ChaosBehaviourStrategy(try ChaosInjection(rate: 0.01, enabled: chaos)) { _ in await cache.removeAll() }
/// ```
public struct ChaosBehaviourStrategy: ResilienceStrategy, ChaosPreludeStage {
    /// When to inject.
    public let injection: ChaosInjection
    /// What runs before an injected call.
    public let behaviour: @Sendable (ResilienceContext) async throws -> Void

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - injection: When to inject.
    ///   - behaviour: What runs before an injected call; its error fails the call.
    public init(
        _ injection: ChaosInjection, behaviour: @escaping @Sendable (ResilienceContext) async throws -> Void
    ) {
        self.injection = injection
        self.behaviour = behaviour
    }

    /// `chaos-behaviour(rate: 0.01, enabled: true)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "chaos-behaviour", settings: injection.settings)
    }

    /// Emits the injection and runs the behaviour.
    @usableFromInline
    func inject(_ context: ResilienceContext, at start: ResilienceInstant) async throws {
        context.emit(.chaosInjected, at: start) { $0.detail = "behaviour" }
        try await behaviour(context)
    }
}
