/// How much a ``SourceCache`` keeps and for how long.
public struct SourceCacheConfiguration: Hashable, Sendable {
    /// The most entries (source × query) kept; at least 1 (0 or less is clamped to 1, here and in `init`).
    public var capacity: Int = 256 {
        didSet { capacity = max(1, capacity) }
    }
    /// How long items count as fresh.
    public var freshFor: Duration = .seconds(300)
    /// The oldest items ever served, or `nil` for no limit.
    public var maximumAge: Duration? = .seconds(24 * 60 * 60)

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - capacity: The most entries (source × query) kept; at least 1. Default: `256`.
    ///   - freshFor: How long items count as fresh. Default: `.seconds(300)`.
    ///   - maximumAge: The oldest items ever served, or `nil` for no limit. Default: `.seconds(86_400)`.
    public init(capacity: Int = 256, freshFor: Duration = .seconds(300), maximumAge: Duration? = .seconds(86_400)) {
        self.capacity = max(1, capacity)
        self.freshFor = freshFor
        self.maximumAge = maximumAge
    }

    /// 256 entries, fresh for 5 minutes, served for up to a day.
    public static let standard = SourceCacheConfiguration()
}
