/// The numbers in the standard alert rules; change any and build the rule set with
/// ``HealthRule/standard(_:)``.
public struct HealthThresholds: Sendable, Hashable {
    /// Critical when every source has been failing for longer than this.
    public var allSourcesFailingFor: Duration = .seconds(300)
    /// Warning when some source has been failing for at least this long (zero: as soon as its last fetch
    /// failed), so a report is never "healthy" while a source fails.
    public var sourceFailingFor: Duration = .zero
    /// Critical error rate…
    public var criticalErrorRate: Double = 0.5
    /// …sustained for this long.
    public var criticalErrorRateFor: Duration = .seconds(120)
    /// Warning error rate…
    public var warningErrorRate: Double = 0.2
    /// …sustained for this long.
    public var warningErrorRateFor: Duration = .seconds(300)
    /// Fewest finished attempts in a window before an error-rate rule may fire.
    public var minimumAttempts: Int = 5
    /// Warning when fewer retries than this succeed…
    public var minimumRetrySuccessRate: Double = 0.5
    /// …with at least this many retries…
    public var minimumRetries: Int = 4
    /// Warning when more fetches than this are partial…
    public var maximumPartialFailureRate: Double = 0.3
    /// …with at least this many fetches.
    public var minimumFetches: Int = 4
    /// The window for the retry-success and partial-failure rules.
    public var ratioWindow: Duration = .seconds(900)
    /// How far back the info rules look (breaker opened, insecure transport blocked, retry succeeded).
    public var recentWindow: Duration = .seconds(300)

    /// The standard thresholds.
    public init() {}

    /// The standard thresholds.
    public static let standard = HealthThresholds()
}
