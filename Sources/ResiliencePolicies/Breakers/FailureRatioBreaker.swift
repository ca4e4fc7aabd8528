/// Opens when the failure ratio (or slow-call ratio) over a sliding window reaches a threshold.
///
/// resilience4j / Polly semantics: the window is the last N calls or the last T seconds; nothing is judged
/// until it holds `minimumThroughput` calls; then a failure ratio at or above `failureRatio` (or, when slow
/// calls are measured, a slow-call ratio at or above `slowCallRatio`) opens the breaker. Half-open admits a
/// few probes; enough successes close it, any counted failure reopens it.
///
/// ```swift
/// var settings = FailureRatioBreaker.Configuration.standard
/// settings.slowCallThreshold = .seconds(2)
/// let breaker = FailureRatioBreaker(settings)
/// ```
public final class FailureRatioBreaker: BreakerPolicy {
    private let machine: LockedState<FailureRatioMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker; `random` feeds the open duration's jitter when one is configured.
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: FailureRatioMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Admits the call when closed, or as a probe when half-open; rejects it when open or isolated.
    public func admit(now: ResilienceInstant) -> BreakerAdmission {
        machine.withLock { $0.cycle.admit(now: now) }
    }

    /// Adds the outcome to the window (closed) or judges the probe (half-open).
    @discardableResult
    public func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        machine.withLock { $0.record(outcome, for: permit, now: now) }
    }

    /// Forces the breaker open until ``reset(now:)``.
    @discardableResult
    public func isolate(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.cycle.isolate(now: now) }
    }

    /// Closes the breaker and empties the window.
    @discardableResult
    public func reset(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.reset(now: now) }
    }

    /// The breaker's counters at `now`.
    public func metrics(now: ResilienceInstant) -> BreakerMetrics {
        machine.withLock { $0.metrics(now: now) }
    }

    /// Calls, failures and slow calls currently in the window.
    public func windowCounts(now: ResilienceInstant) -> (calls: Int, failures: Int, slow: Int) {
        let totals = machine.withLock { $0.windowTotals(now: now) }
        return (totals.calls, totals.failures, totals.slow)
    }

    /// State, time left open, trips in a row and total opens (the window is not persisted).
    public func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        machine.withLock { $0.export(now: now) }
    }

    /// Restores a snapshot from ``exportState(now:)`` with an empty window.
    @discardableResult
    public func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.restore(snapshot, now: now) }
    }

    /// `failure-ratio(window: 30 s, ratio: 0.5, minimum: 20)`.
    public var policyDescription: String {
        let window: String
        switch configuration.window {
        case .count(let calls): window = "\(calls) calls"
        case .time(let duration, _): window = "\(duration)"
        }
        var text = "failure-ratio(window: \(window), ratio: \(configuration.failureRatio), "
        text += "minimum: \(configuration.minimumThroughput)"
        if let slow = configuration.slowCallThreshold {
            text += ", slow: \(slow) at \(configuration.slowCallRatio)"
        }
        return text + ")"
    }
}
