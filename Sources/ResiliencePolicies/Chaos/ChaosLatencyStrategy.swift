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
public struct ChaosLatencyStrategy: ResilienceStrategy {
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

    /// Delays an injected call, then runs `next`.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await StageDriver.run(self, context, next)
    }

    /// `chaos-latency(rate: 0.05, enabled: true, latency: 3.0 seconds)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "chaos-latency", settings: injection.settings + [.init("latency", "\(latency)")])
    }

    /// Sleeps for ``latency`` on the context's clock, within its deadline.
    @usableFromInline
    func delay(_ context: ResilienceContext, from start: ResilienceInstant) async throws {
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

// The stage's steps (`StageDriver.swift`): `enter` stops an injected call, `resume` delays it and runs
// `next`.
extension ChaosLatencyStrategy: SteppedStage {
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        injection.fires() ? StageStop(.injected) : nil
    }

    @inlinable
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard case .injected = stop.reason else { throw stop.failure(key: context.key) }
        try await delay(context, from: frame.start)
        return try await next(context)
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw error
    }
}
