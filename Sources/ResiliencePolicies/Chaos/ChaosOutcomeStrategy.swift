import ResilienceCore

/// The chaos outcome stage: returns ``outcome`` instead of running the call, for the share of calls
/// ``ChaosInjection`` picks whose output type is `Value` (Polly's outcome strategy): a 503 response for a
/// transport pipeline, an empty page for a source. Calls with another output type always run.
///
/// It produces the output, so it runs through its own `execute` rather than the built-in steps; a ``Pipeline``
/// of built-in stages leaves it out of every call it would pass through (its switch's flag off, or another
/// output type), so switched off it costs that pipeline only the switch's load. Each injection emits
/// ``ResilienceEventKind/chaosInjected`` with detail `outcome`.
///
/// ```swift
/// ChaosOutcomeStrategy(try ChaosInjection(rate: 0.1, enabled: chaos), outcome: HTTPResponse(status: 503))
/// ```
public struct ChaosOutcomeStrategy<Value: Sendable>: ResilienceStrategy {
    /// When to inject.
    public let injection: ChaosInjection
    /// What an injected call returns.
    public let outcome: Value

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - injection: When to inject.
    ///   - outcome: What an injected call returns.
    public init(_ injection: ChaosInjection, outcome: Value) {
        self.injection = injection
        self.outcome = outcome
    }

    /// Returns ``outcome`` for an injected call of output `Value`, runs `next` for any other.
    /// Always inlined: a call that is not injected costs the switch's load and a branch in the caller's
    /// frame, not one more async frame.
    @inlinable @inline(__always)
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard Output.self == Value.self, injection.fires() else { return try await next(context) }
        return injected(context) as! Output
    }

    /// Emits the injection and returns the outcome.
    @usableFromInline
    func injected(_ context: ResilienceContext) -> Value {
        context.emit(.chaosInjected) { $0.detail = "outcome" }
        return outcome
    }

    /// `chaos-outcome(rate: 0.1, enabled: true, outcome: HTTPResponse)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "chaos-outcome", settings: injection.settings + [.init("outcome", "\(Value.self)")])
    }
}
