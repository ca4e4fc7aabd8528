/// How urgent a health alert is.
public enum HealthSeverity: Int, Hashable, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Worth knowing: a breaker opened, a retry rescued a request.
    case info
    /// Degraded: sustained elevated error rate, poor retry success, many partial results.
    case warning
    /// Broken: everything failing, every breaker open.
    case critical

    /// Orders by urgency.
    public static func < (lhs: HealthSeverity, rhs: HealthSeverity) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `info`, `warning` or `critical`.
    public var description: String {
        switch self {
        case .info: "info"
        case .warning: "warning"
        case .critical: "critical"
        }
    }
}
