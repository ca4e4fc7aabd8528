/// The settings of a ``RetryBudget``.
public struct RetryBudgetConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Retries allowed per request in the window (0.1 = 10 %). A full outage amplifies the load of a key
    /// sending `r` requests per second by at most 1 + (ratio + minimumPerSecond ÷ r) × buckets ÷ (buckets − 1).
    public var ratio: Double = 0.1
    /// Retries per second always allowed, so a quiet key can still retry (Finagle: 10/s; here 1/s by default).
    public var minimumPerSecond: Double = 1
    /// The sliding window over which requests and retries are counted.
    public var window: Duration = .seconds(10)
    /// How many slices the window is divided into (precision of the slide).
    public var buckets: Int = 10

    /// Creates a configuration.
    public init(
        ratio: Double = 0.1, minimumPerSecond: Double = 1, window: Duration = .seconds(10), buckets: Int = 10
    ) {
        self.ratio = ratio
        self.minimumPerSecond = minimumPerSecond
        self.window = window
        self.buckets = buckets
    }

    /// 10 % of requests plus 1 retry per second over 10 s (gRPC A6 / Finagle style).
    public static let standard = RetryBudgetConfiguration()

    /// `ratio: 10%, minimum: 1/s, window: 10 seconds`.
    public var description: String {
        "ratio: \(Int((ratio * 100).rounded()))%, minimum: \(minimumPerSecond)/s, window: \(window)"
    }
}
