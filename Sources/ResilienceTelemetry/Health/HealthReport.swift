import ResilienceCore

/// The result of evaluating a rule set: every alert that fired, most urgent first.
public struct HealthReport: Sendable, Hashable {
    /// When it was evaluated, on the injected clock.
    public var evaluatedAt: ResilienceInstant
    /// The alerts, most urgent first, then by rule id.
    public var alerts: [HealthAlert]

    /// Creates a report; alerts are sorted most urgent first.
    ///
    /// - Parameters:
    ///   - evaluatedAt: When it was evaluated, on the injected clock.
    ///   - alerts: The alerts, most urgent first, then by rule id.
    public init(evaluatedAt: ResilienceInstant, alerts: [HealthAlert]) {
        self.evaluatedAt = evaluatedAt
        self.alerts = alerts.sorted { lhs, rhs in
            lhs.severity != rhs.severity ? lhs.severity > rhs.severity : lhs.rule < rhs.rule
        }
    }

    /// The most urgent severity, or `nil` when nothing fired.
    public var status: HealthSeverity? { alerts.first?.severity }

    /// True when no warning or critical alert fired (info alerts are fine).
    public var isHealthy: Bool { (status ?? .info) == .info }

    /// The alerts of one severity.
    public func alerts(_ severity: HealthSeverity) -> [HealthAlert] { alerts.filter { $0.severity == severity } }

    /// The alert from `rule`, if it fired.
    public func alert(_ rule: String) -> HealthAlert? { alerts.first { $0.rule == rule } }
}
