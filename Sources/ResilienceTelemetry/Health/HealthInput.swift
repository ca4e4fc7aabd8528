import ResilienceCore

/// What a ``HealthRule`` looks at: a snapshot of recorded events, the recorder's recent counts, the breakers'
/// current states and the time.
public struct HealthInput: Sendable {
    /// Recorded events, oldest first.
    public var events: [ResilienceEvent]
    /// Each key's breaker state after its last reported transition.
    public var breakerStates: [String: BreakerState]
    /// For each key failing since its last success, its first failure since then, from the recorder's cumulative
    /// state (``SourceMetrics/failingSince``): exact even when ``events`` no longer reach back that far.
    public var failingSince: [String: ResilienceInstant]
    /// The keys tried (a finished attempt or a `source-failed` event) within the recorder's window, from its
    /// cumulative state (``SourceMetrics/lastTried``): the rules count a source the ring no longer holds, as a busy
    /// key's events push a quiet one's out. Empty when the input was built from events alone.
    public var triedKeys: Set<String>
    /// The keys whose last fetch failed (``SourceMetrics/lastFetchFailed``), whatever ``events`` still hold.
    public var fetchFailingKeys: Set<String>
    /// The recorder's counts of finished attempts, failures, retries and fetches over its
    /// ``TelemetryRecorder/Configuration/rateWindow``, whatever the ring still holds; `nil` when the input was
    /// built from events alone. Read them through ``ratioCounts(over:endingBefore:)``.
    public var recentCounts: RecentCounts?
    /// The evaluation time.
    public var now: ResilienceInstant

    /// Creates an input.
    ///
    /// - Parameters:
    ///   - events: Recorded events, oldest first.
    ///   - breakerStates: Each key's breaker state after its last reported transition. Default: `[:]`.
    ///   - failingSince: For each failing key, its first failure since its last success. Default: `[:]`.
    ///   - triedKeys: The keys tried within the recorder's window. Default: none beyond ``events``'.
    ///   - fetchFailingKeys: The keys whose last fetch failed. Default: none beyond ``events``'.
    ///   - recentCounts: The recorder's recent counts; `nil` to count ``events``. Default: `nil`.
    ///   - now: The evaluation time.
    public init(
        events: [ResilienceEvent], breakerStates: [String: BreakerState] = [:],
        failingSince: [String: ResilienceInstant] = [:], triedKeys: Set<String> = [],
        fetchFailingKeys: Set<String> = [], recentCounts: RecentCounts? = nil, now: ResilienceInstant
    ) {
        self.events = events
        self.breakerStates = breakerStates
        self.failingSince = failingSince
        self.triedKeys = triedKeys
        self.fetchFailingKeys = fetchFailingKeys
        self.recentCounts = recentCounts
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

    /// Finished attempts, failures, retries and fetches over the `window` ending `offset` before now: from
    /// ``recentCounts`` when present (in whole buckets of its ``RecentCounts/resolution``, reaching back at most
    /// its ``RecentCounts/span``), else from ``events``.
    ///
    /// - Parameters:
    ///   - window: How long a window.
    ///   - offset: How long before now it ends. Default: `.zero`.
    public func ratioCounts(over window: Duration, endingBefore offset: Duration = .zero) -> RatioCounts {
        let end = now.advanced(by: .zero - offset)
        if let recentCounts { return recentCounts.counts(over: window, endingAt: end) }
        return RatioCounts(TelemetryStatistics(events: events, now: end, window: window))
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
