import ResilienceCore

/// What a ``HealthRule`` looks at: a snapshot of recorded events, the breakers' current states and the time.
public struct HealthInput: Sendable {
    /// Recorded events, oldest first.
    public var events: [ResilienceEvent]
    /// Each key's breaker state after its last reported transition.
    public var breakerStates: [String: BreakerState]
    /// The evaluation time.
    public var now: ResilienceInstant

    /// Creates an input.
    ///
    /// - Parameters:
    ///   - events: Recorded events, oldest first.
    ///   - breakerStates: Each key's breaker state after its last reported transition. Default: `[:]`.
    ///   - now: The evaluation time.
    public init(events: [ResilienceEvent], breakerStates: [String: BreakerState] = [:], now: ResilienceInstant) {
        self.events = events
        self.breakerStates = breakerStates
        self.now = now
    }

    /// Statistics over the `window` ending now.
    public func statistics(over window: Duration) -> TelemetryStatistics {
        TelemetryStatistics(events: events, now: now, window: window)
    }

    /// Statistics over the `window` ending `offset` before now.
    public func statistics(over window: Duration, endingBefore offset: Duration) -> TelemetryStatistics {
        TelemetryStatistics(events: events, now: now.advanced(by: .zero - offset), window: window)
    }
}
