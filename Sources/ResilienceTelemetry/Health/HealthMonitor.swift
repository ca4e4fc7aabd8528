import ResilienceCore

/// Evaluates a rule set against a ``TelemetryRecorder`` on the recorder's (injected) clock.
///
/// ```swift
/// let monitor = HealthMonitor(recorder: recorder)            // the standard rules
/// let report = monitor.evaluate()
/// if !report.isHealthy { page(report.alerts) }
/// ```
public struct HealthMonitor: Sendable {
    /// The rules, evaluated in order.
    public var rules: [HealthRule]
    /// Where events come from.
    public let recorder: TelemetryRecorder

    /// Creates a monitor with `rules` (the standard rules by default).
    ///
    /// - Parameters:
    ///   - recorder: Where events come from.
    ///   - rules: The rules, evaluated in order. Default: `HealthRule.standard()`.
    public init(recorder: TelemetryRecorder, rules: [HealthRule] = HealthRule.standard()) {
        self.recorder = recorder
        self.rules = rules
    }

    /// Evaluates every rule now.
    public func evaluate() -> HealthReport {
        let now = recorder.clock.now()
        let triedSince = now.advanced(by: .zero - recorder.configuration.window)
        var breakerStates: [String: BreakerState] = [:]
        var failingSince: [String: ResilienceInstant] = [:]
        var triedKeys: Set<String> = []
        var fetchFailingKeys: Set<String> = []
        for (key, metrics) in recorder.metrics().sources {
            if let state = metrics.breakerState { breakerStates[key] = state }
            if let since = metrics.failingSince { failingSince[key] = since }
            if let tried = metrics.lastTried, tried >= triedSince { triedKeys.insert(key) }
            if metrics.lastFetchFailed { fetchFailingKeys.insert(key) }
        }
        let input = HealthInput(
            events: recorder.snapshot(), breakerStates: breakerStates, failingSince: failingSince,
            triedKeys: triedKeys, fetchFailingKeys: fetchFailingKeys, recentCounts: recorder.recentCounts(),
            now: now)
        return Self.evaluate(rules, input: input)
    }

    /// Evaluates the rules every `interval` on the recorder's clock and yields each report, until the stream
    /// is dropped or its consumer is cancelled. An interval under 1 ms (zero or negative included) is taken as
    /// 1 ms, so the monitor always waits on its clock between reports.
    public func reports(every interval: Duration) -> AsyncStream<HealthReport> {
        let interval = max(interval, .milliseconds(1))
        let (stream, continuation) = AsyncStream.makeStream(of: HealthReport.self, bufferingPolicy: .bufferingNewest(1))
        let monitor = self
        let task = Task {
            while !Task.isCancelled {
                do {
                    try await monitor.recorder.clock.sleep(for: interval)
                } catch {
                    break
                }
                continuation.yield(monitor.evaluate())
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Evaluates `rules` against `input`.
    public static func evaluate(_ rules: [HealthRule], input: HealthInput) -> HealthReport {
        HealthReport(evaluatedAt: input.now, alerts: rules.compactMap { $0.evaluate(input) })
    }
}
