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
public struct ChaosFaultStrategy: ResilienceStrategy {
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

    /// Throws the fault for an injected call, runs `next` for any other. What the stage's steps do, without
    /// the driver around them, and always inlined: a call that is not injected costs the switch's load and a
    /// branch in the caller's frame (no clock read, no frame, no extra async frame).
    @inlinable @inline(__always)
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard injection.fires() else { return try await next(context) }
        throw injectFault(context, at: context.clock.now())
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

// The stage's steps (`StageDriver.swift`), run when it is one of a pipeline's stages: `enter` stops with
// the fault for an injected call; nothing else.
extension ChaosFaultStrategy: SteppedStage {
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        guard injection.fires() else { return nil }
        return StageStop(.failed(injectFault(context, at: frame.start)))
    }

    /// Emits the injection at `now` and returns the fault to throw.
    @usableFromInline
    func injectFault(_ context: ResilienceContext, at now: ResilienceInstant) -> ChaosFault {
        context.emit(.chaosInjected, at: now) { $0.detail = "fault" }
        return fault
    }
}
