import ResilienceCore

/// What a ``HealthRule`` looks at: a snapshot of recorded events, the breakers' current states and the time.
public struct HealthInput: Sendable {
    /// Recorded events, oldest first.
    public var events: [ResilienceEvent]
    /// Each key's breaker state after its last reported transition.
    public var breakerStates: [String: BreakerState]
    /// For each key failing since its last success, its first failure since then, from the recorder's cumulative
    /// state (``SourceMetrics/failingSince``): exact even when ``events`` no longer reach back that far.
    public var failingSince: [String: ResilienceInstant]
    /// The evaluation time.
    public var now: ResilienceInstant

    /// Creates an input.
    ///
    /// - Parameters:
    ///   - events: Recorded events, oldest first.
    ///   - breakerStates: Each key's breaker state after its last reported transition. Default: `[:]`.
    ///   - failingSince: For each failing key, its first failure since its last success. Default: `[:]`.
    ///   - now: The evaluation time.
    public init(
        events: [ResilienceEvent], breakerStates: [String: BreakerState] = [:],
        failingSince: [String: ResilienceInstant] = [:], now: ResilienceInstant
    ) {
        self.events = events
        self.breakerStates = breakerStates
        self.failingSince = failingSince
        self.now = now
    }

    /// When `key` started failing: the earlier of ``failingSince`` and `statistics`' own (which reaches back
    /// only as far as ``events``); `nil` when it is not failing.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - statistics: The key's statistics over the events.
    public func failingSince(of key: String, statistics: SourceStatistics) -> ResilienceInstant? {
        switch (failingSince[key], statistics.failingSince) {
        case (let cumulative?, let recorded?): min(cumulative, recorded)
        case (let cumulative, let recorded): cumulative ?? recorded
        }
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
