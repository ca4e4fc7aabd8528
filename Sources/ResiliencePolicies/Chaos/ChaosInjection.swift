import ResilienceCore

/// When a chaos stage injects: the share of calls (``rate``), the run-time switch, and the seeded random
/// source that draws for each call. Shared by the fault, outcome, latency and behaviour stages.
///
/// A call is injected when the switch is on and a draw from ``random`` falls below ``rate``. With a seeded
/// source, the same calls in the same order get the same injections (the traces of two runs are equal
/// byte for byte). A switched-off stage draws nothing and costs one relaxed atomic load and a branch.
public struct ChaosInjection: Sendable {
    /// The share of calls injected, in `0...1`.
    public let rate: Double
    /// Whether injection is on now.
    public let enabled: ChaosSwitch
    /// The source of the draws; seed it for reproducible runs.
    public let random: SharedRandomSource

    /// Creates the settings.
    ///
    /// - Parameters:
    ///   - rate: The share of calls injected, in `0...1`.
    ///   - enabled: Whether injection is on now. Default: a switch of its own, on.
    ///   - random: The source of the draws. Default: seeded from the system.
    /// - Throws: ``ChaosConfigurationError`` when `rate` is not a number in `0...1`.
    public init(
        rate: Double, enabled: ChaosSwitch = ChaosSwitch(), random: SharedRandomSource = SharedRandomSource()
    )
        throws(ChaosConfigurationError)
    {
        guard rate.isFinite, (0...1).contains(rate) else { throw ChaosConfigurationError.rateOutOfRange(rate) }
        self.rate = rate
        self.enabled = enabled
        self.random = random
    }

    /// Whether this call is injected: the switch first, then one draw.
    @inlinable @inline(__always)
    public func fires() -> Bool {
        guard enabled.isEnabled else { return false }
        return random.nextUnit() < rate
    }

    /// The stage's settings for its description: `rate`, and `enabled` as the switch reads now.
    var settings: [StageDescription.Setting] {
        [.init("rate", "\(rate)"), .init("enabled", "\(enabled.isEnabled)")]
    }
}

/// The steps (`StageDriver.swift`) of a chaos stage that does something before an injected call goes on
/// (``ChaosLatencyStrategy`` sleeps, ``ChaosBehaviourStrategy`` runs its closure) or instead of it
/// (``ChaosFaultStrategy`` throws its fault): `enter` stops an injected call, `resume` runs
/// ``inject(_:at:)`` and then `next`; a failure passes through untouched. The stage alone (its `execute`)
/// does the same without the driver.
@usableFromInline
protocol ChaosPreludeStage: SteppedStage {
    /// When to inject.
    var injection: ChaosInjection { get }
    /// What happens before an injected call goes on; its error fails the call.
    func inject(_ context: ResilienceContext, at start: ResilienceInstant) async throws
}

extension ChaosPreludeStage {
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        injection.fires() ? StageStop(.injected) : nil
    }

    /// The stage alone: a call that is not injected goes straight on (no clock read, no frame); an injected
    /// one runs ``inject(_:at:)`` at the clock's reading and then `next`, as the steps do. Always inlined: a
    /// call that is not injected costs the switch's load and a branch in the caller's frame, not one more
    /// async frame.
    @inlinable @inline(__always)
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard injection.fires() else { return try await next(context) }
        try await inject(context, at: context.clock.now())
        return try await next(context)
    }

    @inlinable
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard case .injected = stop.reason else { throw stop.failure(key: context.key) }
        try await inject(context, at: frame.start)
        return try await next(context)
    }
}
