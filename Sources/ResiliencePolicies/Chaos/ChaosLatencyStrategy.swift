import ResilienceCore

/// The chaos latency stage: delays the share of calls ``ChaosInjection`` picks by ``latency`` on the
/// context's clock, then runs them (Polly's latency strategy, Toxiproxy's `latency` toxic in process).
///
/// The delay honours the context's deadline: when the deadline comes first the call fails with
/// ``ResilienceError`` code `deadlineExceeded`, as a slow dependency would make it. Put it inside the
/// timeouts it should trip. Each injection emits ``ResilienceEventKind/chaosInjected`` with detail
/// `latency` and the delay as its duration.
///
/// ```swift
/// ChaosLatencyStrategy(try ChaosInjection(rate: 0.05, enabled: chaos), latency: .seconds(3))
/// ```
public struct ChaosLatencyStrategy: ResilienceStrategy, ChaosPreludeStage {
    /// When to inject.
    public let injection: ChaosInjection
    /// How long an injected call is delayed.
    public let latency: Duration

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - injection: When to inject.
    ///   - latency: How long an injected call is delayed (zero or more).
    /// - Throws: ``ChaosConfigurationError/negativeLatency(_:)`` when `latency` is negative.
    public init(_ injection: ChaosInjection, latency: Duration) throws(ChaosConfigurationError) {
        guard latency >= .zero else { throw ChaosConfigurationError.negativeLatency(latency) }
        self.injection = injection
        self.latency = latency
    }

    /// `chaos-latency(rate: 0.05, enabled: true, latency: 3.0 seconds)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "chaos-latency", settings: injection.settings + [.init("latency", "\(latency)")])
    }

    /// Sleeps for ``latency`` on the context's clock, within its deadline.
    @usableFromInline
    func inject(_ context: ResilienceContext, at start: ResilienceInstant) async throws {
        context.emit(.chaosInjected, at: start) { event in
            event.detail = "latency"
            event.duration = latency
        }
        let wake = start.advanced(by: latency)
        if let deadline = context.deadline, deadline < wake {
            try await context.clock.sleep(until: deadline)
            throw ResilienceError(.deadlineExceeded, key: context.key)
        }
        try await context.clock.sleep(until: wake)
    }
}
