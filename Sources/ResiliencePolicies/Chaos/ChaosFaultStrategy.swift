import ResilienceCore

/// The chaos fault stage: throws a classified ``ChaosFault`` instead of running the call, for the share of
/// calls ``ChaosInjection`` picks (Polly's fault strategy).
///
/// Put it where the failure would come from: innermost, beside the transport, to prove that the retry,
/// breaker and fallback stages around it handle the failure. Each injection emits
/// ``ResilienceEventKind/chaosInjected`` with detail `fault`.
///
/// ```swift
/// let chaos = ChaosSwitch(isEnabled: isStaging)
/// let pipeline = Pipeline {
///     RetryStrategy(policy: StandardRetryPolicy.standard)
///     ChaosFaultStrategy(try ChaosInjection(rate: 0.1, enabled: chaos), fault: .serviceUnavailable)
/// }
/// ```
public struct ChaosFaultStrategy: ResilienceStrategy, ChaosPreludeStage {
    /// When to inject.
    public let injection: ChaosInjection
    /// What is thrown.
    public let fault: ChaosFault

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - injection: When to inject.
    ///   - fault: What is thrown. Default: ``ChaosFault/serviceUnavailable``.
    public init(_ injection: ChaosInjection, fault: ChaosFault = .serviceUnavailable) {
        self.injection = injection
        self.fault = fault
    }

    /// `chaos-fault(rate: 0.1, enabled: true, fault: server-error HTTP_503)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "chaos-fault",
            settings: injection.settings + [
                .init("fault", "\(fault.classification.category) \(fault.classification.code)")
            ])
    }
}

extension ChaosFaultStrategy {
    /// Emits the injection at `start` and throws the fault: an injected call does not run.
    @usableFromInline
    func inject(_ context: ResilienceContext, at start: ResilienceInstant) async throws {
        context.emit(.chaosInjected, at: start) { $0.detail = "fault" }
        throw fault
    }
}
