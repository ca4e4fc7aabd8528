/// One scenario run with every strategy.
public struct ScenarioRun: Sendable {
    /// The scenario.
    public var scenario: Scenario
    /// The backoff schedule the strategies used.
    public var schedule: RetrySchedule
    /// One result per strategy, in the catalog's order.
    public var results: [SimulationResult]

    /// The result of the strategy named `name`.
    public func result(_ name: String) -> SimulationResult? {
        results.first { $0.strategy == name }
    }

    /// When the fault starts (zero without faults).
    public var faultStart: Duration { scenario.faultSpan?.start ?? .zero }
    /// When the fault ends (zero without faults).
    public var faultEnd: Duration { scenario.faultSpan?.end ?? .zero }
    /// When new requests stop arriving.
    public var loadEnd: Duration { scenario.workload.duration }
    /// The window after the fault in which "after" amplification is measured (as long as the fault).
    public var afterEnd: Duration { min(loadEnd, faultEnd + (faultEnd - faultStart)) }

    /// Amplification of `result` while the fault lasts.
    public func amplificationDuring(_ result: SimulationResult) -> Double {
        result.amplification(from: faultStart, to: faultEnd)
    }

    /// Amplification of `result` right after the fault.
    public func amplificationAfter(_ result: SimulationResult) -> Double {
        result.amplification(from: faultEnd, to: afterEnd)
    }

    /// Time from the fault's end until ≥ 95 % of requests succeed for good.
    public func recovery(_ result: SimulationResult) -> Duration? {
        result.recoveryTime(after: faultEnd, loadEnd: loadEnd)
    }
}
