/// How loudly a failure should be logged; the same levels as swift-log's `Logger.Level`.
public enum LogLevel: Int, Hashable, Sendable, Codable, Comparable, CaseIterable, CustomStringConvertible {
    /// Very fine-grained tracing.
    case trace
    /// Debugging detail.
    case debug
    /// Something worth knowing; not a problem.
    case info
    /// A normal but significant condition.
    case notice
    /// Something went wrong but was handled.
    case warning
    /// An operation failed.
    case error
    /// The system is in danger (data loss, corruption).
    case critical

    /// Orders levels by severity.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name.
    public var description: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }
}
